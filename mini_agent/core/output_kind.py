"""Tell a tool result's text apart: JSON, code, or other tool output (for the token estimate).

:mod:`.calibration` counts a tool result's characters at the rate of its kind: JSON when the
stripped text parses, code when at least 40% of its first 200 non-blank lines look like code
(a bracket or operator anywhere, or an indented, numbered or keyword start), else tool
output. :func:`output_kind` decides the usual ASCII output with ``bytes.translate`` counts
instead of a Python loop over its lines; :func:`output_kind_by_lines` is the reference it
must equal. Pure: no IO.

Source: the kit's evaluation chapter (code and JSON run at fewer characters per token than
prose); ``core/calibration.py`` fits the per-kind rates.
"""

from __future__ import annotations

import json
import re

_CODE_LINE_RE = re.compile(r"[{}();=<>\[\]]|^\s{2,}\S|^\s*\d+[→\t:]|^\s*(def|class|import|from|"
                           r"return|func|if|for|package|const|let|var)\b")
"""A line that looks like code: a bracket or operator anywhere, or an indented, numbered or
keyword start. :func:`output_kind` asks it in two cheaper parts, :data:`_CODE_CHAR_RE`
anywhere then :data:`_CODE_START_RE` at the start (the same lines match:
``tests/test_calibration.py`` checks it)."""
_CODE_CHAR_RE = re.compile(r"[{}();=<>\[\]]")
_CODE_START_RE = re.compile(r"\s{2,}\S|\s*\d+[→\t:]|\s*(def|class|import|from|"
                            r"return|func|if|for|package|const|let|var)\b")
_CODE_BYTES = b"{}();=<>[]"
_MARK_CODE = bytes.maketrans(_CODE_BYTES, b"\x01" * len(_CODE_BYTES))
_NOT_CODE = bytes(c for c in range(256) if c not in _CODE_BYTES and c != 10)
_NOT_NEWLINE = bytes(c for c in range(256) if c != 10)
_MARK_ANY = bytes.maketrans(_NOT_NEWLINE, b"\x01" * len(_NOT_NEWLINE))
_LINE_SPACES = b" \t\x1f"
r"""``bytes.translate`` tables for :func:`output_kind`: ``_MARK_CODE`` with ``_NOT_CODE``
deleted leaves one ``\x01`` per code character (:data:`_CODE_CHAR_RE`) and the newlines;
``_MARK_ANY`` with ``_LINE_SPACES`` deleted leaves one per character that ``str.strip``
keeps (ASCII text without other line breaks)."""
_START_BYTES = b" \t\x1f0123456789dcifrplv"
_MARK_START = bytes.maketrans(_NOT_NEWLINE, bytes(2 if c in _START_BYTES else 1
                                                 for c in _NOT_NEWLINE))
r"""Marks ``\x02`` every byte a code-looking line start (:data:`_CODE_START_RE`) can begin with
(whitespace, a digit, a keyword's first letter), ``\x01`` the other bytes: a line starting
with ``\x02`` may match the start pattern, one starting with ``\x01`` cannot."""


def output_kind(text: str) -> str:
    r"""Tell how a tool result's text is counted: ``"json"``, ``"code"`` or ``"tool_output"``.

    JSON when the stripped text parses; else code when at least 40% of the non-blank lines
    among the first 200 look like code (:data:`_CODE_LINE_RE`); else tool output. The usual
    code output is settled without a Python loop over its lines: in ASCII text whose only
    line break is ``\n``, the lines holding a code character are counted by
    ``bytes.translate`` (:func:`_marked_lines`); when they alone reach the 40% the text is
    code (the indented, numbered and keyword starts could only add lines); when they plus
    every line whose first character could begin such a start stay below it, the text is
    tool output. Otherwise :func:`_lines_kind` asks each line. Must equal
    :func:`output_kind_by_lines`, the line-by-line reference (``tests/test_calibration.py``
    compares the two).

    Args:
        text: a tool result's text (:func:`~mini_agent.core.messages.tool_result_text`).

    Returns:
        ``"json"``, ``"code"`` or ``"tool_output"``.
    """
    # the first character after the leading whitespace, without copying a long text to see
    # it (asked only when the first character is whitespace or may open JSON: "" is in "{[")
    lead = text[:1]
    if lead in "{[" or lead.isspace():
        first = text[:80].lstrip()[:1] or text.lstrip()[:1]
        if first in "{[":
            try:
                json.loads(text.lstrip())
                return "json"
            except ValueError:
                pass
    # ASCII, and none of the line breaks str.splitlines knows besides "\n" (six memchr scans)
    if text.isascii() and "\r" not in text and "\x0b" not in text and "\x0c" not in text \
            and "\x1c" not in text and "\x1d" not in text and "\x1e" not in text:
        # only the first 200 lines count (splitlines()[:200]): a long text is cut first; a
        # short one's newlines are counted in its marks, a far shorter string than the text
        head = _first_lines(text) if len(text) > _CUT_FIRST_CHARS else text
        data = head.encode("ascii")
        marks = data.translate(_MARK_CODE, _NOT_CODE)  # one \x01 per code character, and \n
        newlines = marks.count(b"\n")
        if newlines >= 200:  # a short text of 200 lines or more after all
            head = _first_lines(text)
            data = head.encode("ascii")
            marks = data.translate(_MARK_CODE, _NOT_CODE)
            newlines = marks.count(b"\n")
        code = marks.count(b"\x01\n") + marks.endswith(b"\x01")  # _marked_lines(marks)
        if code >= 0.4 * (newlines + 1):  # 40% of all lines, blank ones too: code
            return "code"
        lines = _marked_lines(data.translate(_MARK_ANY, _LINE_SPACES))  # non-blank lines
        if not lines:
            return "tool_output"
        if code >= 0.4 * lines:
            return "code"
        starts = (b"\n" + data.translate(_MARK_START)).count(b"\n\x02")  # may match a start
        if code + starts < 0.4 * lines:  # even counting every such line the 40% is missed
            return "tool_output"
    return lines_kind(text)


_CUT_FIRST_CHARS = 16_000
"""Texts longer than this are cut to their first 200 lines before they are marked (a longer
text is likely to hold more lines, and marking the whole of it would cost more)."""


def _first_lines(text: str) -> str:
    """``"\\n".join(text.splitlines()[:200])`` for a text whose only line break is ``\\n``."""
    return "\n".join(text.split("\n", 200)[:200]) if text.count("\n") >= 200 else text


def _marked_lines(marks: bytes) -> int:
    r"""Count the lines of ``marks`` (only ``\x01`` and ``\n`` bytes) that hold a ``\x01``.

    A line holding one ends in ``\x01`` right before its ``\n`` (or the end), so each such
    line is one ``b"\x01\n"`` or the final ``\x01``.
    """
    return marks.count(b"\x01\n") + marks.endswith(b"\x01")


def output_kind_by_lines(text: str) -> str:
    """Compute :func:`output_kind` the reference way: the JSON test, then line by line.

    Args:
        text: a tool result's text.

    Returns:
        ``"json"``, ``"code"`` or ``"tool_output"``.
    """
    stripped = text.lstrip()
    if stripped[:1] in "{[":
        try:
            json.loads(stripped)
            return "json"
        except ValueError:
            pass
    return lines_kind(text)


def lines_kind(text: str) -> str:
    """Ask each of the first 200 non-blank lines whether it looks like code.

    Args:
        text: a tool result's text that is not JSON.

    Returns:
        ``"code"`` when at least 40% of them match :data:`_CODE_LINE_RE`, else
        ``"tool_output"``.
    """
    lines = [ln for ln in text.splitlines()[:200] if ln.strip()]
    needed, left, found = 0.4 * len(lines), len(lines), 0
    anywhere, at_start = _CODE_CHAR_RE.search, _CODE_START_RE.match  # = _CODE_LINE_RE.search
    for ln in lines:  # stop as soon as the 40% is reached or out of reach
        if found >= needed or found + left < needed:
            break
        left -= 1
        if anywhere(ln) or at_start(ln):
            found += 1
    return "code" if lines and found >= needed else "tool_output"
