"""Generators of Anthropic histories, shared by the property tests and the fuzz benchmark.

``histories()`` draws histories that pass ``validate_messages``: alternating roles starting with
a user message, assistant turns with text and 0-3 ``tool_use`` blocks, each answered in the next
user message by ``tool_result`` blocks (string content, list content with text and images,
some ``is_error``), sometimes followed by user text. Tool names come from a small fixed set
so policies that look at names (exclude_tools, clearable tools) are exercised.

Every generator is written once against a small :class:`Source` of choices, so the same code
serves hypothesis (``histories()``, ``hostile_histories()``: shrinkable strategies) and a
seeded ``random.Random`` (``RandomSource``: the fast generator of ``benchmarks/fuzz.py``).
``hostile_histories`` adds what real agents produce and break on: up to 200 messages, up to
6 parallel tool calls whose results may be logged out of tool_use order, Japanese and other
non-ASCII text, images in list-shaped results, valid ``cache_control`` markers already in the
history, and crash cuts (the history stops anywhere, possibly after an unanswered
``tool_use``). ``reply_pieces`` draws the content pieces of a reply cut by ``max_tokens``
(whitespace-only text pieces included).
"""

from __future__ import annotations

import base64
import random
import struct
import zlib
from typing import Any, Sequence

from hypothesis import strategies as st

TOOL_NAMES = ("read_file", "grep", "glob", "list_dir", "run_bash", "edit_file")

JAPANESE = ("テストを実行します。", "money.py の丸め誤差を修正しました", "ファイルが見つかりません",
            "全角スペース\u3000と改行\nを含む文", "絵文字も 🍣🗾 使います", "ｶﾀｶﾅ と ＡＢＣ")
"""Non-ASCII samples a fuzzer should always try (full-width space, emoji, half-width kana)."""

WHITESPACE = ("\n", "\n\n", " ", "\t", " \n ", "\u3000", "\r\n")
"""Whitespace-only pieces: the API refuses them as text blocks."""


def tiny_png(width: int, height: int) -> str:
    """Return base64 of a valid PNG header + IHDR of the given size (pixels are not needed)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    data = (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk
            + struct.pack(">I", zlib.crc32(chunk)))
    return base64.b64encode(data).decode()


# Non-empty text that is not whitespace-only (the API refuses empty text blocks).
texts = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
            max_size=120).filter(lambda s: s.strip() != ""),
    st.sampled_from(JAPANESE))
observations = st.lists(texts, min_size=1, max_size=8).map("\n".join)


class Source:
    """The choices a generator makes; one implementation per engine."""

    def integer(self, low: int, high: int) -> int: ...
    def boolean(self) -> bool: ...
    def choice(self, options: Sequence[Any]) -> Any: ...
    def text(self) -> str: ...
    def permutation(self, items: list) -> list: ...


class HypothesisSource(Source):
    """Choices drawn by hypothesis (shrinkable)."""

    def __init__(self, draw: Any) -> None:
        self.draw = draw

    def integer(self, low: int, high: int) -> int:
        return self.draw(st.integers(low, high))

    def boolean(self) -> bool:
        return self.draw(st.booleans())

    def choice(self, options: Sequence[Any]) -> Any:
        return self.draw(st.sampled_from(list(options)))

    def text(self) -> str:
        return self.draw(texts)

    def permutation(self, items: list) -> list:
        return list(self.draw(st.permutations(items)))


_ALPHABETS = ("abcdefghijklmnopqrstuvwxyz0123456789 _-./()", "".join(JAPANESE),
              "éüßçñøåœ", "Привет мир", "مرحبا", "\u0301\u200b\u200d", "{}[]\"'\\:,")


class RandomSource(Source):
    """Choices from a seeded ``random.Random`` (fast, reproducible, not shrinkable)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def boolean(self) -> bool:
        return self.rng.random() < 0.5

    def choice(self, options: Sequence[Any]) -> Any:
        return self.rng.choice(list(options))

    def text(self) -> str:
        if self.rng.random() < 0.2:
            return self.rng.choice(JAPANESE)
        alphabet = self.rng.choice(_ALPHABETS)
        size = self.rng.choice((1, 3, 12, 40, 120, 600))
        text = "".join(self.rng.choices(alphabet, k=size))
        if self.rng.random() < 0.3:
            text += self.rng.choice(WHITESPACE)  # trailing whitespace inside text is valid
        return text if text.strip() else "x" + text

    def permutation(self, items: list) -> list:
        items = list(items)
        self.rng.shuffle(items)
        return items


def _observation(src: Source) -> str:
    return "\n".join(src.text() for _ in range(src.integer(1, 8)))


def result_content(src: Source) -> str | list[dict]:
    """A tool_result ``content``: a string, or a list of text (and sometimes image) blocks."""
    if src.boolean():
        return _observation(src)
    parts: list[dict] = [{"type": "text", "text": _observation(src)}]
    if src.boolean():
        w, h = src.integer(1, 2000), src.integer(1, 2000)
        parts.append({"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                  "data": tiny_png(w, h)}})
        if src.boolean():
            parts.append({"type": "text", "text": src.text()})
    return parts


def build_history(src: Source, *, min_turns: int = 1, max_turns: int = 8, max_tools: int = 3,
                  shuffle_results: bool = False) -> list[dict]:
    """A valid history of ``min_turns..max_turns`` exchanges drawn from ``src``."""
    messages: list[dict] = [{"role": "user", "content": src.text()}]
    counter = 0
    for _ in range(src.integer(min_turns, max_turns)):
        n_tools = src.integer(0, max_tools)
        content = []
        if src.boolean() or n_tools == 0:
            content.append({"type": "text", "text": src.text()})
        ids = []
        for _ in range(n_tools):
            counter += 1
            tid = f"toolu_{counter:04d}"
            ids.append(tid)
            content.append({"type": "tool_use", "id": tid, "name": src.choice(TOOL_NAMES),
                            "input": {"path": src.text()}})
        messages.append({"role": "assistant", "content": content})
        if ids:
            results = []
            for tid in ids:
                block = {"type": "tool_result", "tool_use_id": tid,
                         "content": result_content(src)}
                if src.integer(0, 5) == 0:
                    block["is_error"] = True
                results.append(block)
            if shuffle_results and len(results) > 1:
                results = src.permutation(results)
            if src.boolean():
                results.append({"type": "text", "text": src.text()})
            messages.append({"role": "user", "content": results})
        else:
            messages.append({"role": "user", "content": src.text()})
    return messages


def add_cache_markers(src: Source, messages: list[dict]) -> list[dict]:
    """Put 0-3 valid ``cache_control`` markers on markable blocks (5m after any 1h, as the
    API requires); returns a new list."""
    out = [dict(m) for m in messages]
    spots = [(i, j) for i, m in enumerate(out) if isinstance(m["content"], list)
             for j, b in enumerate(m["content"])
             if b.get("type") != "text" or b["text"].strip()]
    if not spots:
        return out
    chosen = sorted({src.choice(spots) for _ in range(src.integer(0, 3))})
    long_first = src.integer(0, len(chosen))
    for k, (i, j) in enumerate(chosen):
        content = list(out[i]["content"])
        marker = {"type": "ephemeral", "ttl": "1h"} if k < long_first else {"type": "ephemeral"}
        content[j] = {**content[j], "cache_control": marker}
        out[i] = {**out[i], "content": content}
    return out


def build_hostile_history(src: Source, *, max_turns: int = 100) -> list[dict]:
    """A history as real runs leave it (see the module docstring); 1-201 messages, and it may
    end after an unanswered tool_use (a crash cut)."""
    turns = (src.choice((0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, max_turns))
             if max_turns > 16 else max_turns)
    history = build_history(src, min_turns=min(turns, 1), max_turns=max(turns, 1), max_tools=6,
                            shuffle_results=src.boolean())
    if src.boolean():
        history = add_cache_markers(src, history)
    if src.integer(0, 3) == 0:
        history = history[:src.integer(1, len(history))]  # crash cut
    return history


def build_reply_pieces(src: Source) -> list[list[dict]]:
    """Content pieces of one reply cut by max_tokens: text (whitespace-only pieces often),
    tool_use blocks (unique ids)."""
    pieces = []
    counter = 0
    for _ in range(src.integer(1, 4)):
        piece = []
        for _ in range(src.integer(0, 3)):
            kind = src.integer(0, 3)
            if kind == 0:
                piece.append({"type": "text", "text": src.choice(WHITESPACE)})
            elif kind == 1:
                counter += 1
                piece.append({"type": "tool_use", "id": f"toolu_p{counter}", "name": "grep",
                              "input": {"pattern": src.text()}})
            else:
                piece.append({"type": "text", "text": src.text()})
        pieces.append(piece)
    return pieces


@st.composite
def tool_result_contents(draw):
    """A tool_result ``content``: a string, or a list of text (and sometimes image) blocks."""
    return result_content(HypothesisSource(draw))


@st.composite
def histories(draw, *, min_turns: int = 1, max_turns: int = 8, shuffle_results: bool = False):
    """A valid history (list of MessageParam dicts) of ``min_turns..max_turns`` exchanges;
    ``shuffle_results`` logs parallel results in any order (still valid)."""
    return build_history(HypothesisSource(draw), min_turns=min_turns, max_turns=max_turns,
                         shuffle_results=shuffle_results)


@st.composite
def hostile_histories(draw, *, max_turns: int = 100):
    """:func:`build_hostile_history` as a hypothesis strategy."""
    return build_hostile_history(HypothesisSource(draw), max_turns=max_turns)


@st.composite
def reply_pieces(draw):
    """:func:`build_reply_pieces` as a hypothesis strategy."""
    return build_reply_pieces(HypothesisSource(draw))


WALK_STEPS = st.lists(st.tuples(st.booleans(), st.integers(0, 30), st.booleans()),
                      min_size=1, max_size=8)
"""Steps of :func:`walk_histories`: (use the second history, where to cut, scan first)."""


def walk_histories(a: list[dict], b: list[dict], steps, scan=None):
    """Yield the histories a policy is given when they grow, shrink and switch.

    Each step ``(use_b, cut, scan_first)`` cuts ``a`` (or ``b``) to at least one message;
    with ``scan_first``, ``scan`` (``history_scan.scan_for``) is first called on the source
    one message further, as another policy of the session would scan (maybe further).
    """
    for use_b, cut, scan_first in steps:
        source = b if use_b else a
        h = source[:max(1, cut % (len(source) + 1))]
        if scan_first and scan is not None:
            scan(list(source[:len(h) + 1]))
        yield h
