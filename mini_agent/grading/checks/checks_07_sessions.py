"""Graded checks for exercise 07 (resuming a damaged session); ``impl`` is the module under test.

The same checks run against the package (``from mini_agent import ...``). Typical mistakes
caught: crashing on an empty file or on a truncated last line (also one cut inside a multibyte
UTF-8 character: a strict decode raises); stopping at the first bad line; dropping a bad line
without a report; 0-based line numbers or numbers that skip blank lines; calling a damaged
middle line "truncated"; reporting blank or whitespace-only lines; keeping JSON that is not an
object; splitting lines with ``str.splitlines()`` (it also breaks at U+2028, U+2029 and U+0085,
which a JSON string may hold raw); a missing file read as an empty session; a ``str`` path
refused.

Failure messages describe a test file line by line and name its good entries A, B, C (plain
ASCII), J (Japanese text) and U (text holding U+2028).

Source: exercise 07 (``solutions/07_sessions.py``) and its seed, ``resumeSession`` and
pitfall 1 in section 6 of 002_4516104fd432e704.txt (a crash leaves a truncated last line;
skip it, report it, keep the rest).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from mini_agent.grading import check
from mini_agent.grading.runner import DETAIL_CHARS

A = {"type": "message", "message": {"role": "user", "content": "fix the bug"}, "timestamp": 1.0}
B = {"type": "message", "message": {"role": "assistant", "content": "on it"}, "timestamp": 2.0}
C = {"type": "tool_result", "block": {"type": "tool_result", "tool_use_id": "t1",
                                      "content": "ok"}, "timestamp": 3.0}
J = {"type": "message", "message": {"role": "user", "content": "ポート番号は 8443 にしてください"},
     "timestamp": 4.0}
U = {"type": "message", "message": {"role": "user",
                                    "content": "段落1\u2028段落2\u2029end\u0085."}}
NAMES = {"A": A, "B": B, "C": C, "J": J, "U": U}


def line(entry: dict) -> str:
    """Write one session entry as a JSONL line (non-ASCII kept raw, as the kit writes it).

    Args:
        entry: the entry dict.

    Returns:
        The JSON text and a ``"\\n"``.
    """
    return json.dumps(entry, ensure_ascii=False) + "\n"


def name(entry) -> str:
    """Name an entry for a failure message.

    Args:
        entry: an entry the learner's function returned.

    Returns:
        Its letter in :data:`NAMES` ("A", "J"...), else its ``repr`` cut to 40 characters.
    """
    for key, value in NAMES.items():
        if entry == value:
            return key
    text = repr(entry)
    return text if len(text) <= 40 else text[:37] + "..."


def describe(result) -> str:
    """Describe a ``resume_session`` result briefly.

    Args:
        result: ``(entries, problems)``.

    Returns:
        ``"entries [A, B] and problems [(2, 'corrupt_line')]"``.
    """
    entries, problems = result
    return f"entries [{', '.join(name(e) for e in entries)}] and problems {problems}"


def resume(impl, data: str | bytes, *, as_str: bool = False):
    """Write ``data`` to a session file in a temporary folder and resume it.

    Args:
        impl: the implementation under test.
        data: the file's content: UTF-8 text, or raw bytes (a cut multibyte character).
        as_str: pass the path as a ``str`` instead of a ``Path``.

    Returns:
        ``(entries, problems)`` as lists, each problem a tuple.
    """
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        entries, problems = impl.resume_session(str(path) if as_str else path)
    return list(entries), [tuple(p) for p in problems]


def expect(impl, data, entries, problems, file: str, **kwargs):
    """Resume ``data`` and compare with ``(entries, problems)``.

    Args:
        impl: the implementation under test.
        data: the file's content (see :func:`resume`).
        entries: the entries it must return, in order.
        problems: the ``(line number, kind)`` problems it must report.
        file: the data, described line by line for a failure message.
        kwargs: passed to :func:`resume` (``as_str``).

    Raises:
        AssertionError: another result came back, or the call raised.
    """
    expected = (entries, problems)
    try:
        got = resume(impl, data, **kwargs)
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - shown with the input that raised it
        raise AssertionError(f"file [{file}]: expected {describe(expected)}, got "
                             f"{type(exc).__name__}: {exc}"[:DETAIL_CHARS - 1]) from exc
    assert got == expected, \
        f"file [{file}]: expected {describe(expected)}, got {describe(got)}"[:DETAIL_CHARS - 1]


@check(points=1, hint="Split the text into lines and parse each with json.loads, in order; "
                      "path may be a str or a Path.")
def check_clean_round_trip(impl):
    expect(impl, line(A) + line(B) + line(C) + line(J), [A, B, C, J], [], "A, B, C, J")
    expect(impl, line(A) + line(B), [A, B], [], "A, B (path given as a str)", as_str=True)


@check(points=1, hint="An empty file (or one with only blank lines) has no entries and no "
                      "problems: check before parsing.")
def check_empty_and_blank_files(impl):
    for text in ("", "\n\n", "  \n\t\n"):
        expect(impl, text, [], [], repr(text))
    expect(impl, line(A) + "  ", [A], [], "A, then a last line of two spaces without newline")


@check(points=1, hint="A missing file is not an empty session: let FileNotFoundError through.")
def check_missing_file_raises(impl):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "never-written.jsonl"
        try:
            got = impl.resume_session(path)
        except FileNotFoundError:
            return
    raise AssertionError("resume_session(<a path that does not exist>): expected "
                         f"FileNotFoundError, got {describe(got)}"[:DETAIL_CHARS - 1])


@check(points=2, hint="A crash mid-append leaves a cut last line: skip it, report it as "
                      "(line_number, 'truncated_last_line'), do not raise.")
def check_truncated_last_line(impl):
    expect(impl, line(A) + line(B) + line(C)[:17], [A, B], [(3, "truncated_last_line")],
           "A, B, C cut after 17 characters (no final newline)")
    expect(impl, line(A) + "{garbage\n" + line(B) + line(C)[:17], [A, B],
           [(2, "corrupt_line"), (4, "truncated_last_line")],
           "A, '{garbage', B, C cut (no final newline)")


@check(points=2, hint="The file is UTF-8, and a crash can cut it inside a multibyte "
                      "character: read it so that undecodable bytes cannot raise.")
def check_cut_inside_a_multibyte_character(impl):
    cut = line(J).encode("utf-8")[:70]  # ends with 1 of the 3 bytes of 番
    expect(impl, line(A).encode("utf-8") + cut, [A], [(2, "truncated_last_line")],
           "A, J cut inside the 3-byte character 番 (no final newline)")
    expect(impl, line(A).encode("utf-8") + cut + b"\n" + line(B).encode("utf-8"), [A, B],
           [(2, "corrupt_line")], "A, J cut inside 番 + newline, B")


@check(points=2, hint="After a bad line keep reading: later good lines are still entries.")
def check_corrupt_middle_line_does_not_stop_reading(impl):
    expect(impl, line(A) + "{garbage\n" + line(B) + line(C), [A, B, C], [(2, "corrupt_line")],
           "A, '{garbage', B, C")


@check(points=2, hint="A cut line followed by a newline is in the middle: 'corrupt_line'. "
                      "'truncated_last_line' is only the last line of a file without a final "
                      "newline.")
def check_cut_line_in_the_middle_is_corrupt(impl):
    expect(impl, line(A)[:20] + "\n" + line(B), [B], [(1, "corrupt_line")],
           "A cut after 20 characters + newline, B")
    expect(impl, line(A) + line(B)[:20] + "\n", [A], [(2, "corrupt_line")],
           "A, B cut after 20 characters + newline (last)")


@check(points=1, hint="Line numbers count from 1, blank lines included; blank (or "
                      "whitespace-only) lines are not problems; JSON that is not an object is "
                      "not an entry.")
def check_line_numbers_blank_lines_and_non_objects(impl):
    text = "\n" + line(A) + "\n" + "[1, 2]\n" + line(B) + "nope\n" + "   \n" + '"text"\n' + line(C)
    expect(impl, text, [A, B, C], [(4, "corrupt_line"), (6, "corrupt_line"), (8, "corrupt_line")],
           "'', A, '', '[1, 2]', B, 'nope', '   ', '\"text\"', C")


@check(points=2, hint="Lines end at '\\n' only: a JSON string may hold characters that "
                      "str.splitlines() also treats as line ends (U+2028, U+2029, U+0085).")
def check_only_newline_ends_a_line(impl):
    expect(impl, line(A) + line(U) + line(B), [A, U, B], [],
           "A, U (U+2028, U+2029, U+0085 raw in a string), B")


@check(points=1, hint="A last line without a newline that parses is a whole entry: keep it.")
def check_last_line_without_newline_is_kept_when_whole(impl):
    expect(impl, line(A) + json.dumps(J, ensure_ascii=False), [A, J], [],
           "A, J complete but without its final newline")


@check(points=1, hint="Lines written with Windows line ends (\\r\\n) still parse: the "
                      "carriage return is JSON whitespace.")
def check_windows_line_ends(impl):
    text = line(A).replace("\n", "\r\n") + "\r\n" + line(B).replace("\n", "\r\n")
    expect(impl, text, [A, B], [], "A\\r\\n, \\r\\n, B\\r\\n")
