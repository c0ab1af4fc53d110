"""Retention: which essential facts of a conversation a policy's view still holds.

A policy that sends 70% fewer tokens must say what it dropped. Following the chapter's lab
("check what a compaction loses"), a conversation comes with its essential facts: decisions,
open problems, identifiers and numbers, each with the text that proves it. A fact is
*recoverable* in a view when its exact string appears in the text of that view (identifiers
and numbers character for character; a summary is checked by the same rule). Counting, per
request, how many of the facts introduced so far are recoverable gives a policy's retention
over time.

On a real transcript nobody has listed the facts, so :func:`extract_facts` picks them
automatically: paths, ``name()`` symbols, error lines, and numbers the user gave.

What it does not do: judge paraphrases (a fact reworded is counted lost), or decide which
facts matter for the rest of the task. Pure: no IO, inputs never mutated. Taught in
``notebooks/11_evaluating_policies.ipynb``; exercise 11 implements :func:`retained_facts`.
Source: 004_b74ef821c58ee4ec.txt (lab: ten essential facts, count what the summary keeps, revise
the prompt until it keeps 9 of 10).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Iterable, Sequence

from mini_agent.core.frozen_rows import frozen_row
from mini_agent.core.messages import Message, content_blocks, tool_result_text

FACT_KINDS = ("decision", "open_problem", "identifier", "number")


@dataclasses.dataclass(frozen=True)
class Fact:
    """One essential fact: ``text`` must appear verbatim in a view for the fact to be kept.

    Attributes: text: the exact string checked (an identifier, a number with its unit, a key
    phrase of a decision); kind: one of :data:`FACT_KINDS`; proof: the sentence or line of
    the conversation that states it; message: index of the first message that states it.
    """

    text: str
    kind: str
    proof: str = ""
    message: int = 0


def view_text(view: Sequence[Message]) -> str:
    """Every string a model would read in ``view``: text, thinking, tool inputs and results.

    One piece per line, in message order: string content, text, thinking, a tool_use's name
    then one ``key: value`` line per input item (so an identifier in an argument counts), a
    tool_result's text (list content: its text parts joined with no separator). Other blocks
    add nothing. The view is not mutated.

    Args:
        view: the messages of one request.

    Returns:
        One str, the pieces joined by newlines.

    >>> view_text([{"role": "user", "content": "fix src/app.py"}])
    'fix src/app.py'
    """
    parts: list[str] = []
    for message in view:
        parts += message_pieces(message)
    return "\n".join(parts)


def message_pieces(message: Message, *, canonical: bool = False) -> list[str]:
    """The pieces :func:`view_text` reads from one message, in order.

    Args:
        message: one message; never mutated.
        canonical: read tool inputs as ``place_breakpoints(canonical=True)`` sends them
            (keys sorted at every level, ``cache_control`` keys removed), so the pieces are
            those of the request as sent.

    Returns:
        A list of str (empty when the message has nothing to read).
    """
    content = message.get("content")
    if type(content) is str:
        return [content]  # one text block (``content_blocks``)
    parts: list[str] = []
    # content_blocks(message) without its copy of a list
    for block in (content if type(content) is list else content_blocks(message)):
        kind = block.get("type")
        if kind == "text":
            parts.append(block.get("text", ""))
        elif kind == "thinking":
            parts.append(block.get("thinking", ""))
        elif kind == "tool_use":
            parts.append(block.get("name", ""))
            tool_input = block.get("input") or {}
            if canonical:
                if type(tool_input) is dict and _SCALARS.issuperset(
                        map(type, tool_input.values())):
                    # no nested dict or list: ``_canonical`` only sorts the keys and drops
                    # ``cache_control``, so the pieces are read straight off the sorted keys
                    parts += [f"{k}: {tool_input[k]}" for k in sorted(tool_input)
                              if k != "cache_control"]
                    continue
                tool_input = _canonical(tool_input) or {}
            parts += [f"{k}: {v}" for k, v in tool_input.items()]
        elif kind == "tool_result":
            parts.append(tool_result_text(block))
    return parts


_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Value types ``_canonical`` leaves as they are (it copies only dicts and lists)."""


def _canonical(obj):
    from mini_agent.core.cache import _sorted_keys, strip_cache_control
    return strip_cache_control(_sorted_keys(obj))


def facts_in_text(text: str, facts: Iterable[Fact]) -> list[bool]:
    """For each fact, whether its exact ``text`` appears in ``text`` (a view's text).

    Args:
        text: the text of a view, as :func:`view_text` gives it.
        facts: the facts to check.

    Returns:
        A list of bools, parallel to ``facts``; an empty fact text is never retained.
    """
    return [bool(f.text) and f.text in text for f in facts]


def retained_facts(view: Sequence[Message], facts: Iterable[Fact]) -> list[bool]:
    """For each fact, whether its exact ``text`` appears in the view's text.

    Exact means character for character: no case folding and no Unicode normalisation, so
    full-width "８４４３" does not keep "8443" and "e" + U+0301 does not keep the NFC "é" (a
    summary that rewrote an identifier has changed it; on Linux the NFC and NFD spellings of a
    file name are two files).

    Args:
        view: the messages one request sends (a policy's view); never mutated.
        facts: the facts to check.
    Returns:
        A list of bools, parallel to ``facts``. An empty fact text is never retained.
    Source: 004_b74ef821c58ee4ec.txt (lab 2: count the facts that stay exact).

    >>> retained_facts([{"role": "user", "content": "port 8443"}],
    ...                [Fact("8443", "number"), Fact("9000", "number")])
    [True, False]
    """
    text = view_text(view)
    return [bool(f.text) and f.text in text for f in facts]


def retention_curve(views: Sequence[Sequence[Message]], points: Sequence[int],
                    facts: Sequence[Fact]) -> list[tuple[int, int]]:
    """Count, per request, the facts recoverable in its view among those stated so far.

    Args:
        views: one view per request.
        points: the history length each request saw (a fact counts once
            ``fact.message < point``), parallel to ``views``.
        facts: the facts.

    Returns:
        ``(kept, introduced)`` per request, parallel to ``views``.

    Raises:
        ValueError: ``views`` and ``points`` differ in length.
    """
    if len(views) != len(points):
        raise ValueError(f"{len(views)} views but {len(points)} points")
    out = []
    for view, point in zip(views, points):
        due = [f for f in facts if f.message < point]
        out.append((sum(retained_facts(view, due)), len(due)))
    return out


# --------------------------------------------------------------------------- automatic facts

_PATH_RE = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)+[\w-]+\.[A-Za-z]{1,6}\b")
_SYMBOL_RE = re.compile(r"\b[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*\(\)")
_ERROR_RE = re.compile(r"\b([A-Z]\w*(?:Error|Exception)|error|FAILED|failed|panic)\b")
_ERROR_WORDS = ("Error", "Exception", "error", "FAILED", "failed", "panic")
"""Every match of ``_ERROR_RE`` contains one of these strings, so a text holding none of them
cannot match: :func:`_first_error_line` checks them first (a substring test is far cheaper than
the regular expression, which tries every position of a long tool output)."""
_ERROR_HINTS = ("rror", "Exception", "FAILED", "failed", "panic")
"""Each of :data:`_ERROR_WORDS` holds one of these ("rror" stands for "Error" and "error"):
the first occurrence of any of them is at or before the first error word, so the scan for
the first error line may start at its line (one pass over the text fewer)."""
_HINT_LETTERS = (("rror", "r"), ("Exception", "E"), ("FAILED", "F"), ("failed", "f"),
                 ("panic", "p"))
"""Each of :data:`_ERROR_HINTS` with one of its own letters: a text lacking the letter cannot
hold the hint, and ``letter in text`` (one ``memchr``, stopping at the first hit) costs far
less than ``text.find(hint)``, which reads the whole of a text without the hint (a capital,
where the hint has one, is the letter a text most often lacks)."""
_NUMBER_RE = re.compile(r"(?<![\w.])\d[\d,._]*(?:\.\d+)?(?:\s?(?:%|ms|s|MB|GB|KB|px|tokens|"
                        r"files|lines|items))?(?![\w])")


def extract_facts(messages: Sequence[Message], *, limit: int = 20) -> list[Fact]:
    """Pick a transcript's essential facts automatically, at most ``limit``, in a fixed order.

    Candidates, in priority order: numbers the user gave (3+ characters, in user text, not
    tool results), paths and ``name()`` symbols the user named, the first line of each
    distinct error in tool results (cut to 80 characters), then paths and symbols named in
    the assistant's own text (most mentioned first). Each kind gets a fair share of ``limit``
    before the rest is filled in that order. A fact's proof is the line that states it.

    Args:
        messages: the history; never mutated.
        limit: maximum number of facts; default 20.

    Returns:
        A list of :class:`Fact` (duplicates removed, first appearance kept).
    """
    # candidates as (text, kind, proof, message) tuples; the picked ones become Facts
    user_numbers, user_idents, errors, assistant_idents = [], [], [], []
    counts: dict[str, int] = {}
    for i, message in enumerate(messages):
        role = message.get("role")
        content = message.get("content")
        # content_blocks(message) without its copy: a string is one text block
        for block in (content if type(content) is list else content_blocks(message)):
            kind = block.get("type")
            if kind == "tool_result":
                line = _first_error_line(tool_result_text(block))
                if line is not None:
                    errors.append((line[:80], "open_problem", line[:200], i))
            elif kind != "text":
                continue
            elif role == "user":
                text = block.get("text", "")
                if text.startswith("<") or "[Summary of the conversation" in text[:80]:
                    continue  # harness-injected reminders and summaries: not the user's words
                for line in text.splitlines():
                    for n in _NUMBER_RE.findall(line):
                        if len(n) >= 3:
                            user_numbers.append((n, "number", line.strip()[:200], i))
                    for ident in _identifiers(line):
                        user_idents.append((ident, "identifier", line.strip()[:200], i))
            elif role == "assistant":
                for line in block.get("text", "").splitlines():
                    for ident in _identifiers(line):
                        seen_times = counts.get(ident, 0) + 1
                        counts[ident] = seen_times
                        if seen_times == 1:
                            assistant_idents.append((ident, "identifier",
                                                     line.strip()[:200], i))
    assistant_idents.sort(key=lambda f: -counts[f[0]])
    groups = [user_numbers, user_idents, errors, assistant_idents]
    seen: set[str] = set()
    picked: list[Fact] = []
    share = max(1, limit // len(groups))
    for rnd in (share, limit):
        for group in groups:
            taken = 0
            for fact in group:
                if len(picked) >= limit or taken >= rnd:
                    break
                if fact[0] in seen:
                    continue
                seen.add(fact[0])
                picked.append(_fact(*fact))  # a Fact for the picked candidates only
                taken += 1
    return picked


def _fact(text: str, kind: str, proof: str, message: int) -> Fact:
    """Build ``Fact(text, kind, proof, message)`` without the frozen ``__init__``'s four
    ``object.__setattr__`` calls: the same object, its ``__dict__`` the fields in field order
    set at once (``tests/test_retention.py`` compares the two)."""
    return frozen_row(Fact, {"text": text, "kind": kind, "proof": proof, "message": message})


def _identifiers(line: str) -> list[str]:
    """Paths then ``name()`` symbols named in one line: ``_PATH_RE`` then ``_SYMBOL_RE`` matches.

    The same lists as :func:`_identifiers_in_line` (``_PATH_RE.findall(line) +
    _SYMBOL_RE.findall(line)``), found faster: neither expression matches across a space, so
    each is run only over the spans between spaces that hold what its matches need (a path a
    ``/``, a symbol a ``()``), in place (``findall``'s ``pos`` and ``endpos``: the lookbehind
    and ``\\b`` still see the space on either side), instead of at every position of the line.
    ``tests/test_retention.py`` compares the two.
    """
    found = _spans_matches(line, "/", _PATH_RE.findall) if "/" in line else []
    if "()" in line:
        found += _spans_matches(line, "()", _SYMBOL_RE.findall)
    return found


def _spans_matches(line: str, needle: str, findall) -> list[str]:
    """``findall`` over each space-delimited span of ``line`` that holds ``needle``, in order."""
    out: list[str] = []
    find, rfind, size = line.find, line.rfind, len(line)
    at = find(needle)
    while at >= 0:
        end = find(" ", at)
        if end < 0:
            end = size
        out += findall(line, rfind(" ", 0, at) + 1, end)
        at = find(needle, end)
    return out


def _identifiers_in_line(line: str) -> list[str]:
    """The reference form of :func:`_identifiers`: both expressions over the whole line."""
    return _PATH_RE.findall(line) + _SYMBOL_RE.findall(line)


def _first_error_line(output: str) -> str | None:
    """The first line of ``output`` that names an error, stripped; None when there is none.

    The same answer as ``next((ln.strip() for ln in output.splitlines() if len(ln.strip()) >= 12
    and _ERROR_RE.search(ln)), None)``, found faster: no line before the first occurrence of
    any :data:`_ERROR_WORDS` string can match (nor before the first of :data:`_ERROR_HINTS`,
    which each of them holds; a hint is looked for only when the output holds its letter
    of :data:`_HINT_LETTERS`), so the scan starts at the line holding that, and
    a line is searched only when it holds one of the strings. (Every ``splitlines`` break is
    a non-word character, so a line's match is the same in the line alone.)
    """
    # the earliest output.find(hint), skipping a hint whose letter the output lacks; once one
    # is found, a later hint is looked for only where it would start before it
    first = -1
    for hint, letter in _HINT_LETTERS:
        if letter in output:
            at = output.find(hint, 0, first + len(hint) - 1) if first >= 0 else \
                output.find(hint)
            if at >= 0:
                first = at
    if first < 0:
        return None
    # the line holding the earliest word starts after the "\n" before it (splitting the rest
    # gives the same lines as the tail of splitting the whole: that "\n" ends a line)
    for line in output[output.rfind("\n", 0, first) + 1:].splitlines():
        if any(word in line for word in _ERROR_WORDS):
            stripped = line.strip()
            if len(stripped) >= 12 and _ERROR_RE.search(line):
                return stripped
    return None
