"""One exchange as one line: the seed's timeline line and the kit's fuller fold.

What this module does: turns an exchange (an assistant message and the user message answering
it) into the single line that stands for it in the Warm-B tier, and into the short label of
the cold index. What it does not do: decide which exchanges are folded (that is
``core/lifecycle.py``). Pure; inputs never mutated; times are passed in, printed in UTC.
Taught in ``notebooks/08_context_lifecycle.ipynb``.
Source: 003_85ccd58041fa7231.txt (``[14:30] read_file (seg-047): src/app.py 120 lines; found
bug in parse()``).
"""

from __future__ import annotations

import datetime as dt
import math
import operator
import re
from typing import Sequence

from mini_agent.core.mask_placeholder import PLACEHOLDER_TEMPLATE, masked_block
from mini_agent.core.messages import Message, content_blocks, tool_result_text
from mini_agent.core.tokens import remember, session_memo

__all__ = ["cold_label", "fold_exchange", "timeline_line"]


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def _first_sentence(text: str, limit: int = 90) -> str:
    """The first sentence of ``text`` (whitespace runs made one space), cut to ``limit`` chars.

    Equal to :func:`_first_sentence_whole` (``tests/test_tier_forms.py`` compares the two),
    reading only the head of a long text: the answer depends on the first ``limit + 1``
    chars of the normalised text only (a sentence end is a whitespace after ``.!?``, seen
    from two neighbouring chars; past ``limit`` the sentence is cut anyway), and normalising
    a head of the text gives a head of the normalised text. When that head is shorter than
    ``limit + 1`` chars (a run of whitespace), the whole text is normalised. The sentence
    ends where ``_SENTENCE_END`` first matches: normalised, the only whitespace left is
    ``" "`` (``str.split`` and the pattern's ``\\s`` agree on what whitespace is), so that is
    the first ``". "``, ``"! "`` or ``"? "``, found by ``str.find`` (asked only of a head
    that holds the mark at all). A short printable ASCII text whose only whitespace is single
    inner spaces is its own normalised form: it is taken as it is, without a split.
    """
    if len(text) <= _HEAD_CHARS and text.isascii() and text.isprintable() and \
            "  " not in text and text[:1] != " " and text[-1:] != " ":
        head = text  # " ".join(text.split()): ASCII printable whitespace is " " only
    else:
        head = " ".join(text[:_HEAD_CHARS].split())
        if len(head) <= limit and len(text) > _HEAD_CHARS:
            head = " ".join(text.split())
    end = len(head)
    for mark in (". ", "! ", "? "):
        if mark in head:
            i = head.find(mark, 0, end)
            if i >= 0:
                end = i + 1
    return head[:end] if end <= limit else head[: limit - 1] + "…"


_HEAD_CHARS = 512
"""Chars of a text :func:`_first_sentence` reads first (more than any ``limit`` it is given)."""


def _first_sentence_whole(text: str, limit: int = 90) -> str:
    """:func:`_first_sentence` on the whole normalised text: what the fast one equals."""
    text = " ".join(text.split())
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def _main_arg(tool_input: dict) -> str:
    for key in ("path", "file_path", "pattern", "command", "query", "url", "id"):
        if isinstance(tool_input.get(key), str):
            return _first_sentence(tool_input[key], 60)
    values = [v for v in tool_input.values() if isinstance(v, str)]
    return _first_sentence(values[0], 60) if values else ""


def _utc_clock(time_seconds: float) -> str:
    """``HH:MM`` of a Unix time in UTC, whatever the machine's time zone.

    Equal to :func:`_utc_clock_datetime` (``tests/test_timeline.py`` compares the two), by
    arithmetic: ``datetime.fromtimestamp`` keeps the whole seconds of ``modf`` and rounds
    the fraction to microseconds half to even, carrying a full second into them; the clock
    reads only those whole seconds. Times outside ``[0, 2**33)`` (and NaN) take the datetime.
    """
    if time_seconds.__class__ is int or time_seconds.__class__ is float:
        if 0 <= time_seconds < 8_589_934_592:  # 2**33 s: the year 2242
            fraction, whole = math.modf(time_seconds)
            seconds = int(whole) + (round(fraction * 1e6) >= 1_000_000)
            return _CLOCKS[seconds // 60 % 1440]
    return _utc_clock_datetime(time_seconds)


_CLOCKS = tuple(f"{m // 60:02d}:{m % 60:02d}" for m in range(1440))
"""``"00:00"`` .. ``"23:59"``, one per minute of a day: :func:`_utc_clock`'s ``HH:MM``,
formatted once."""


def _utc_clock_datetime(time_seconds: float) -> str:
    """``HH:MM`` of a Unix time in UTC through ``datetime``: what :func:`_utc_clock` equals."""
    return dt.datetime.fromtimestamp(time_seconds, tz=dt.timezone.utc).strftime("%H:%M")


def timeline_line(exchange: Sequence[Message], *, segment: str,
                  time_seconds: float) -> str:
    """Fold an exchange into the seed's ONE timeline line, told by its first tool call.

    Shape: ``[HH:MM] <tool> (<segment>): <input> <N> lines; <reasoning>``: HH:MM is
    ``time_seconds`` in UTC; <tool> the name of the assistant's first tool_use (``reply``
    when there is none, and then ``<input> <N> lines; `` is left out); <input> its
    ``input["path"]``, else ``"pattern"``, else ``"command"``, else ""; N the newlines + 1 of
    the text of the tool_result answering it (list content: text parts joined as they are);
    <reasoning> the first line of the assistant's first text block. :func:`fold_exchange` is
    the kit's fuller line (every tool, errors, the user's words).
    Args:
        exchange: an assistant message and the user message answering it; never mutated.
        segment: the segment id, ``seg-047``.
        time_seconds: when the exchange happened (Unix time).
    Returns:
        The line, ``[14:30] read_file (seg-047): src/app.py 120 lines; found bug in parse()``.
    Source: 003_85ccd58041fa7231.txt (timeline line shape); exercise 08.2.
    """
    clock = _utc_clock(time_seconds)
    said = [b for m in exchange if m.get("role") == "assistant" for b in content_blocks(m)]
    reasoning = next((b["text"].split("\n")[0] for b in said if b.get("type") == "text"), "")
    use = next((b for b in said if b.get("type") == "tool_use"), None)
    if use is None:
        return f"[{clock}] reply ({segment}): {reasoning}"
    tool_input = use.get("input") or {}
    arg = next((tool_input[k] for k in ("path", "pattern", "command") if k in tool_input), "")
    result = next((b for m in exchange for b in content_blocks(m)
                   if b.get("type") == "tool_result" and b.get("tool_use_id") == use.get("id")),
                  None)
    lines = (tool_result_text(result) if result else "").count("\n") + 1
    return f"[{clock}] {use.get('name')} ({segment}): {arg} {lines} lines; {reasoning}"


def fold_exchange(messages: Sequence[Message], *, segment: str,
                  time_seconds: float) -> str:
    """Fold one exchange (an assistant message + its answer) into ONE timeline line.

    Shape: ``[HH:MM] <tools> (<segment>): <what happened>; <reasoning>`` where HH:MM is
    ``time_seconds`` in UTC; <tools> the tool names joined by ``+`` (``reply`` when no tool
    was called); <what happened> per tool call ``<main input> <N> lines`` (N = line count of
    the result text) or ``<main input> error: <first line>`` for an ``is_error`` result; the
    reasoning is the first sentence of the assistant's text (90 chars at most); a user text
    in the answer adds ``; user: <first sentence>``. Deterministic, no model involved.

    Args:
        messages: the exchange: the assistant message, then the user message answering it.
        segment: its segment id (``seg-047``).
        time_seconds: when the exchange started, Unix seconds.

    Returns:
        The timeline line.

    Source:
        003_85ccd58041fa7231.txt (``[14:30] Handler (seg-047): #42 → done``).

    >>> fold_exchange([{"role": "assistant", "content": [
    ...     {"type": "text", "text": "Found bug in parse(). Reading on."},
    ...     {"type": "tool_use", "id": "t", "name": "read_file", "input": {"path": "src/app.py"}}]},
    ...     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
    ...      "content": "x\\n" * 119 + "x"}]}], segment="seg-047", time_seconds=52200)
    '[14:30] read_file (seg-047): src/app.py 120 lines; Found bug in parse().'
    """
    return _remembered(_fold, messages, segment, time_seconds)


def _remembered(compute, messages: Sequence[Message], *args) -> str:
    """``compute(messages, *args)``, kept per exchange inside a token memo.

    The lifecycle folds and labels the same old exchanges again at every request; inside
    :func:`~mini_agent.core.tokens.token_memo` the line is kept per (function, the same
    message objects, ``args``), the messages held so their ids stay theirs.
    """
    memo = session_memo()
    if memo is None:
        return compute(messages, *args)
    key = (compute.__name__, *args, *map(id, messages))
    hit = memo.get(key)
    if hit is not None and all(map(operator.is_, hit[0], messages)):
        return hit[1]
    line = compute(messages, *args)
    remember(memo, key, (tuple(messages), line))
    return line


def _fold(messages: Sequence[Message], segment: str, time_seconds: float) -> str:
    """:func:`fold_exchange`'s line, computed."""
    clock = _utc_clock(time_seconds)
    uses, results, reasoning, user_text = [], {}, "", ""
    for m in messages:
        role, content = m.get("role"), m.get("content")
        # the blocks of ``content_blocks(m)``; a string content is one text block
        for b in ({"type": "text", "text": content},) if isinstance(content, str) else \
                content or ():
            kind = b.get("type")
            if kind == "tool_use":
                uses.append(b)
            elif kind == "tool_result":
                results[b.get("tool_use_id")] = b
            elif kind == "text":
                if role == "assistant":
                    if not reasoning:
                        reasoning = _first_sentence(b["text"])
                elif role == "user" and not user_text:
                    user_text = _first_sentence(b["text"])
    if len(uses) == 1 and (name := uses[0].get("name", "?")).__class__ is str:
        tools = name or "reply"  # the usual exchange: one tool, no dict.fromkeys to join
    else:
        tools = "+".join(dict.fromkeys([u.get("name", "?") for u in uses])) or "reply"
    what = []
    for u in uses:
        arg = _main_arg(u.get("input") or {})
        r = results.get(u.get("id"))
        if r is None:
            outcome = "no result"
        elif r.get("is_error"):
            outcome = "error: " + _first_sentence(tool_result_text(r) or "(no message)", 60)
        else:
            outcome = f"{_line_count(r)} lines"
        what.append(f"{arg} {outcome}".strip())
    parts = [", ".join(what)] if what else []
    parts += [reasoning] if reasoning else []
    parts += [f"user: {user_text}"] if user_text else []
    return f"[{clock}] {tools} ({segment}): " + "; ".join(parts or ["(empty)"])


_COUNT_HEAD, _COUNT_TAIL = map(len, PLACEHOLDER_TEMPLATE.split("{lines}"))


def _line_count(result: dict) -> int:
    """``tool_result_text(result).count("\\n") + 1``, the N of ``N lines``.

    Inside a token memo the result's masked copy (``mask_placeholder.masked_block``, kept
    per block: in a replay the Warm-A form made it before the exchange cooled to Warm-B)
    already holds that count in its placeholder, ``[observation masked — N lines
    omitted]``: it is read from there instead of counting a long output again.
    ``tests/test_tier_forms.py`` compares the two.
    """
    memo = session_memo()
    if memo is not None:
        masked = masked_block(result, memo)
        if masked is not None:  # content: placeholder(tool_result_text(result))
            return int(masked["content"][_COUNT_HEAD:-_COUNT_TAIL])
    return tool_result_text(result).count("\n") + 1


def cold_label(messages: Sequence[Message]) -> str:
    """Label an exchange for the cold index.

    Args:
        messages: the exchange: the assistant message, then its answer.

    Returns:
        ``<tools> <main input>``; ``reply`` when no tool was called.
    """
    return _remembered(_label, messages)


def _label(messages: Sequence[Message]) -> str:
    """:func:`cold_label`'s label, computed."""
    uses = [b for m in messages for b in content_blocks(m) if b.get("type") == "tool_use"]
    if not uses:
        return "reply"
    return f"{uses[0].get('name')} {_main_arg(uses[0].get('input') or {})}".strip()
