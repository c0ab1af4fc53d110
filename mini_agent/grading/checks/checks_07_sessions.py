"""Graded checks for exercise 07 (resuming a damaged session); ``impl`` is the module under test.

Each check targets one typical mistake: crashing on an empty file or a truncated last line,
stopping silently at the first bad line, dropping a bad line without a report, 0-based line
numbers, calling a damaged middle line "truncated", reporting blank lines.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from mini_agent.grading import check

A = {"type": "message", "message": {"role": "user", "content": "fix the bug"}, "timestamp": 1.0}
B = {"type": "message", "message": {"role": "assistant", "content": "on it"}, "timestamp": 2.0}
C = {"type": "tool_result", "block": {"type": "tool_result", "tool_use_id": "t1",
                                      "content": "ok"}, "timestamp": 3.0}


def resume(impl, text: str):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        path.write_text(text, encoding="utf-8")
        entries, problems = impl.resume_session(path)
    return list(entries), [tuple(p) for p in problems]


def line(entry: dict) -> str:
    return json.dumps(entry) + "\n"


@check(points=1, hint="Split the text into lines and parse each with json.loads, in order.")
def check_clean_round_trip(impl):
    assert resume(impl, line(A) + line(B) + line(C)) == ([A, B, C], [])


@check(points=1, hint="An empty file (or only newlines) has no entries: check before parsing.")
def check_empty_file(impl):
    assert resume(impl, "") == ([], [])
    assert resume(impl, "\n\n") == ([], [])


@check(points=2, hint="A crash mid-append leaves a cut last line: skip it, report it as "
                      "(line_number, 'truncated_last_line'), do not raise.")
def check_truncated_last_line(impl):
    got = resume(impl, line(A) + line(B) + line(C)[:17])
    assert got == ([A, B], [(3, "truncated_last_line")]), f"got {got}"


@check(points=2, hint="After a bad line keep reading: later good lines are still entries.")
def check_corrupt_middle_line_does_not_stop_reading(impl):
    entries, problems = resume(impl, line(A) + "{garbage\n" + line(B) + line(C))
    assert entries == [A, B, C], f"entries: {entries}"
    assert problems == [(2, "corrupt_line")], f"problems: {problems}"


@check(points=2, hint="A cut line followed by a newline is in the middle: 'corrupt_line'. "
                      "'truncated_last_line' is only the last line of a file without a final "
                      "newline.")
def check_cut_line_in_the_middle_is_corrupt(impl):
    got = resume(impl, line(A)[:20] + "\n" + line(B))
    assert got == ([B], [(1, "corrupt_line")]), f"got {got}"
    got = resume(impl, line(A) + line(B)[:20] + "\n")
    assert got == ([A], [(2, "corrupt_line")]), f"got {got}"


@check(points=1, hint="Line numbers count from 1, blank lines included; blank lines themselves "
                      "are not problems.")
def check_line_numbers_and_blank_lines(impl):
    got = resume(impl, line(A) + "\n" + "[1, 2]\n" + line(B) + "nope\n" + line(C))
    assert got == ([A, B, C], [(3, "corrupt_line"), (5, "corrupt_line")]), f"got {got}"


@check(points=1, hint="A last line without a newline that parses is a whole entry: keep it.")
def check_last_line_without_newline_is_kept_when_whole(impl):
    assert resume(impl, line(A) + json.dumps(B)) == ([A, B], [])
