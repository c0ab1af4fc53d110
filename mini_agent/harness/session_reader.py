"""Reading a write-ahead session file back: every line checked, damage reported, never a hang.

Each line the writer makes ends with ``"crc": "<8 hex>"`` (:data:`CHECKSUM_KEY`), the CRC32
of the line's record serialised without it, so any flipped or lost byte is caught.
:func:`resume_session` reads a file line by line, checks each checksum, recovers the whole
records of a damaged line in linear time and reports every line it could not use.

What this module does not do: write sessions or fold entries into a history (both in
:mod:`mini_agent.harness.session`). IO: reads one file. Taught in ``notebooks/07_sessions.ipynb``.
Source: section 6 of 002_4516104fd432e704.txt (resumeSession, truncated last line pitfall).
"""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path
from typing import Any, NamedTuple

CHECKSUM_KEY = "crc"
"""Every line ends with ``"crc": "<8 hex>"``: the CRC32 of the line's record serialised
without it (the same bytes, with ``}`` in place of ``,"crc":"..."}``). Any damage to a line,
a flipped or lost byte included, is then caught and reported."""

MAX_SALVAGE_LINE_BYTES = 8 * 1_048_576
"""A damaged line longer than this (bytes) is reported without searching it for whole
records: the kit caps what reaches the session (tool results at ``MAX_TOOL_RESULT_CHARS``),
so such a line is damage, and a search must not make a resume hang."""

_CRC_TAIL = re.compile(rb',"crc":"([0-9a-f]{8})"\}')
_CRC_TAIL_BYTES = 18  # len(b',"crc":"') + 8 hex digits + len(b'"}')
_RECORD_START = b'{"timestamp":'
_BOM = b"\xef\xbb\xbf"
_ENTRY_KEYS = frozenset({"type", "timestamp", "message", "block", "event", "model", "cwd",
                         "workspace"})
_HEX8 = re.compile(r"[0-9a-f]{8}")


class _LineKind(NamedTuple):
    line: int
    kind: str


class SessionProblem(_LineKind):
    """One line :func:`resume_session` could not use as it is: the pair ``(line, kind)``.

    ``line``: 1-based line number; ``kind``: "truncated_last_line" | "corrupt_line" |
    "fused_records" | "checksum_mismatch" | "missing_checksum"; ``detail`` (an attribute,
    not part of the pair): what was kept or dropped. It compares as the pair, so
    ``SessionProblem(2, "corrupt_line", "...") == (2, "corrupt_line")``: the shape of
    exercise 07's problems.
    """

    detail: str

    def __new__(cls, line: int, kind: str, detail: str = "") -> "SessionProblem":
        problem = super().__new__(cls, line, kind)
        problem.detail = detail
        return problem

    def __repr__(self) -> str:
        return f"SessionProblem({self.line!r}, {self.kind!r}, {self.detail!r})"

    def __str__(self) -> str:
        return f"line {self.line}: {self.kind}: {self.detail}"


def resume_session(path: str | Path) -> tuple[list[dict], list[SessionProblem]]:
    """Read a session file; return ``(entries, problems)`` and never stop at a bad line.

    An empty file gives ``([], [])``. Each line's checksum (:data:`CHECKSUM_KEY`) is checked;
    the ``"crc"`` key is not part of the returned entries. Damage is skipped and reported
    with its line number: a last line without its newline that does not check (a crash
    mid-append) is "truncated_last_line"; a line whose checksum fails is
    "checksum_mismatch", unless whole records can be recovered from it (two appends fused:
    "fused_records", every record whose own checksum holds is kept); an unparsable line, or
    valid JSON that is not an object, is "corrupt_line" (on the last line of a file without a
    final newline: "truncated_last_line"); a line without a checksum after lines with one, or
    whose checksum field itself was damaged, is "missing_checksum". Blank lines are skipped
    without a report, and so are CRLF line ends and a UTF-8 byte order mark at the start
    (a file that went through an editor or a Windows checkout). Lines written without checksums (plain JSON Lines, or a file from
    before checksums, with none before them) are read as they are, as exercise 07 reads
    them. Problems are ``(line, kind)`` pairs with a ``detail``
    (:class:`SessionProblem`). Time and memory are linear in the file size: a damaged line is
    searched for whole records in a bounded number of passes, and a damaged line over
    :data:`MAX_SALVAGE_LINE_BYTES` is not searched at all.

    Args:
        path: the session file (JSON Lines); only read.

    Returns:
        ``(entries, problems)``: the readable entries in file order, without their ``"crc"``
        key, and one :class:`SessionProblem` per damaged line.

    Raises:
        FileNotFoundError: ``path`` does not exist.

    Source:
        seed 002 section 6 (empty file, truncated last line pitfalls).
    """
    data = Path(path).read_bytes()
    if data.startswith(_BOM):   # an editor's byte order mark is not damage
        data = data[len(_BOM):]
    lines = data.split(b"\n")
    ends_cleanly = lines[-1] == b""
    if ends_cleanly:
        lines.pop()
    # CRLF line ends (an editor or a checkout on Windows) are line ends, not damage: the
    # writer escapes every CR inside a record, so a bare one can only end the line
    lines = [raw[:-1] if raw.endswith(b"\r") else raw for raw in lines]
    entries: list[dict] = []
    problems: list[SessionProblem] = []
    checked_seen = False
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        last = number == len(lines) and not ends_cleanly
        entry, damaged = _read_line(raw)
        if damaged is None and _checked(raw):
            checked_seen = True
            entries.append(entry)
        elif damaged is None and type(entry) is not dict:
            problems.append(SessionProblem(
                number, "truncated_last_line" if last else "corrupt_line",
                f"a JSON {type(entry).__name__}, not an object, skipped"))
        elif damaged is None:  # an object without a checksum
            if checked_seen or _damaged_checksum_field(entry):
                problems.append(SessionProblem(number, "missing_checksum",
                                               "a record without a valid checksum field (a "
                                               "damaged line) skipped"))
            else:
                entries.append(entry)
        elif damaged == "deep":
            problems.append(SessionProblem(number, "corrupt_line",
                                           f"JSON nested too deeply ({len(raw)} bytes) skipped"))
        else:
            salvaged, problem = _salvage(raw, number, last, damaged, checked_seen)
            entries.extend(salvaged)
            problems.append(problem)
    return entries, problems


def _checked(raw: bytes) -> bool:
    return len(raw) >= _CRC_TAIL_BYTES and _CRC_TAIL.fullmatch(raw, len(raw) - _CRC_TAIL_BYTES)


def _read_line(raw: bytes) -> tuple[Any, str | None]:
    """``(entry, None)`` for a line whose checksum holds (or a parsable line without one);
    else ``(None, why)``: "checksum", "unparsable" or "deep"."""
    match = _checked(raw)
    if match:
        body = raw[:-_CRC_TAIL_BYTES] + b"}"
        if zlib.crc32(body) != int(match.group(1), 16):
            return None, "checksum"
        raw = body
    try:
        entry = json.loads(raw)
    except RecursionError:
        return None, "deep"
    except ValueError:
        return None, "unparsable"
    if match and type(entry) is not dict:
        return None, "unparsable"
    return entry, None


def _damaged_checksum_field(entry: dict) -> bool:
    """True if an unchecked record holds what is left of a checksum field (``"crc"`` whose
    value or tail was damaged, or a damaged key holding 8 hex digits)."""
    return CHECKSUM_KEY in entry or any(
        k not in _ENTRY_KEYS and isinstance(v, str) and _HEX8.fullmatch(v)
        for k, v in entry.items())


def _salvage(raw: bytes, number: int, last: bool, why: str, checked_seen: bool
             ) -> tuple[list[dict], SessionProblem]:
    """Recover whole records from a damaged line, in linear time.

    A record the writer made starts with ``{"timestamp":`` and ends with its checksum
    tail; one is kept only if its checksum holds. Records of an unchecked (older) file are
    found by decoding from each ``{`` that could start one (a dict with "type" and
    "timestamp"), only in a file with no checksummed line before this one and a line with no
    trace of a checksum field. Both searches stop after hashing or decoding 4x the line's length, so a
    resume never hangs on a hostile line. Lines over :data:`MAX_SALVAGE_LINE_BYTES` are not
    searched.
    """
    found: list[dict] = []
    kept = 0
    if len(raw) <= MAX_SALVAGE_LINE_BYTES:
        legacy = not checked_seen and b'"crc"' not in raw
        search = _salvage_unchecked if legacy else _salvage_checked
        found, kept = search(raw, budget=4 * len(raw) + 1024)
    lost_chars = len(raw) - kept
    if found:
        detail = f"{len(found)} record(s) recovered from one line"
        if lost_chars:
            detail += f"; {lost_chars} characters of a damaged record dropped"
        return found, SessionProblem(number, "fused_records", detail)
    if last:
        return [], SessionProblem(number, "truncated_last_line",
                                  f"incomplete final record ({len(raw)} bytes) skipped: "
                                  "the process stopped mid-append")
    if len(raw) > MAX_SALVAGE_LINE_BYTES:
        return [], SessionProblem(number, "corrupt_line",
                                  f"damaged line of {len(raw):,} bytes skipped (over the "
                                  f"{MAX_SALVAGE_LINE_BYTES:,}-byte salvage limit)")
    if why == "checksum":
        return [], SessionProblem(number, "checksum_mismatch",
                                  f"a record ({len(raw)} bytes) whose checksum does not match "
                                  "its content (a damaged line) skipped")
    text = raw[:60].decode("utf-8", "replace")
    return [], SessionProblem(number, "corrupt_line",
                              f"unparsable line ({len(raw)} bytes) skipped: {text!r}")


def _salvage_checked(raw: bytes, *, budget: int) -> tuple[list[dict], int]:
    """Records with a valid checksum inside ``raw``: ``(records, bytes they span)``."""
    found: list[dict] = []
    kept = pos = 0
    for tail in _CRC_TAIL.finditer(raw):
        expected = int(tail.group(1), 16)
        start = raw.find(_RECORD_START, pos, tail.start())
        while start >= 0 and budget > 0:
            budget -= tail.start() - start
            body = raw[start:tail.start()] + b"}"
            if zlib.crc32(body) == expected:
                try:
                    record = json.loads(body)
                except (ValueError, RecursionError):
                    break
                found.append(record)
                kept += tail.end() - start
                pos = tail.end()
                break
            start = raw.find(_RECORD_START, start + 1, tail.start())
        if budget <= 0:
            break
    return found, kept


def _salvage_unchecked(raw: bytes, *, budget: int) -> tuple[list[dict], int]:
    """Records of an unchecked file inside ``raw``: dicts with "type" and "timestamp"."""
    text = raw.decode("utf-8", "replace")
    decoder = json.JSONDecoder()
    found: list[dict] = []
    kept = pos = 0
    while budget > 0:
        start = text.find("{", pos)
        if start < 0:
            break
        if not text.startswith(('{"type"', '{"timestamp"'), start):
            pos = start + 1
            continue
        try:
            obj, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            budget -= max(exc.pos - start, 1)
            pos = start + 1
            continue
        except RecursionError:
            budget -= len(text) - start
            pos = start + 1
            continue
        budget -= end - start
        if (isinstance(obj, dict) and "type" in obj and "timestamp" in obj
                and not _damaged_checksum_field(obj)):
            found.append(obj)
            kept += end - start
        pos = end
    return found, kept
