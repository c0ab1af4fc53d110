"""Hostile input for read_file and grep: catastrophic patterns, huge files and lines, binary,
UTF-16, non-UTF-8, CRLF, form feeds. Each gets a clear result or error and loses nothing."""

import codecs
import io
import os
import re
import json
import time

import pytest
from hypothesis import given, strategies as st

from mini_agent.harness import file_tools, grep_tool, grep_worker, read_tool
from mini_agent.harness.executor import run_tool
from mini_agent.harness.tools import build_tools
from mini_agent.harness.workspace import Workspace


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    return 1\n")
    return root


def call(ws, name, max_output_chars=16_000, **input):
    return run_tool(build_tools(Workspace(ws, max_output_chars=max_output_chars)), name, input)


# --------------------------------------------------------------------------- grep time limit

def test_a_catastrophic_pattern_is_stopped_at_the_time_limit_with_the_hits_before(ws):
    (ws / "b.txt").write_text("aaa\n" + "a" * 40 + "b\n")  # (a+)+$ backtracks 2**40 times here
    started = time.monotonic()
    content, is_error = call(ws, "grep", pattern="(a+)+$", timeout_seconds=2.5)
    elapsed = time.monotonic() - started
    assert is_error and 2.5 <= elapsed < 7  # killed at the limit, not when re gives up
    assert content == (
        "b.txt:1:aaa\n"
        "[grep stopped at its time limit of 2.5 seconds while searching b.txt (file 2 of 2); "
        "1 hit(s) found before. On long lines a pattern with nested quantifiers such as (a+)+ "
        "can take exponential time, adjacent ones such as .*.* polynomial time: simplify the "
        "pattern, narrow path or glob, or pass a larger timeout_seconds]")


def test_the_default_time_limit_is_ten_seconds_and_the_model_is_told(ws):
    assert grep_tool.DEFAULT_GREP_TIMEOUT_SECONDS == 10.0
    grep = build_tools(ws)["grep"]
    assert "timeout_seconds, default 10" in grep.description
    assert "(a+)+" in grep.description
    assert grep.input_schema["properties"]["timeout_seconds"]["type"] == "number"


@pytest.mark.parametrize("timeout", [0, -1, float("inf"), float("nan")])
def test_grep_rejects_a_time_limit_that_is_not_positive_and_finite(ws, timeout):
    assert call(ws, "grep", pattern="x", timeout_seconds=timeout) == (
        f"timeout_seconds must be a positive number of seconds, got {timeout!r}", True)


def test_grep_drops_the_cr_of_crlf_lines_so_dollar_matches(ws):
    (ws / "b.txt").write_bytes(b"x = 1\r\ny = 2\r\n")
    # the \r is not part of the line, so "$" matches right after the digit
    assert call(ws, "grep", pattern=r"= \d$") == ("b.txt:1:x = 1\nb.txt:2:y = 2", False)


def test_a_failed_search_process_is_a_clear_error(ws, monkeypatch):
    monkeypatch.setattr(grep_tool, "_WORKER", ws / "missing_worker.py")
    content, is_error = call(ws, "grep", pattern="def")
    assert is_error and content.startswith("grep's search process failed: ")
    assert "missing_worker.py" in content


# --------------------------------------------------------------------------- grep in bounded memory

def test_hits_past_the_output_cap_are_counted_not_sent(ws):
    (ws / "many.txt").write_text("".join(f"hit {n}\n" for n in range(1, 1001)))
    content, is_error = call(ws, "grep", max_output_chars=400, pattern="hit", path="many.txt")
    assert not is_error and len(content) <= 400
    lines = content.splitlines()
    # half of 400 is kept for the notes; "many.txt:1:hit 1\n" is 17 characters and
    # "many.txt:10:hit 10\n" 19: 9 * 17 + 2 * 19 = 191 fit in 200, the 12th does not
    assert lines[:11] == [f"many.txt:{n}:hit {n}" for n in range(1, 12)]
    hidden_chars = sum(len(f"many.txt:{n}:hit {n}\n") for n in range(12, 1001))
    assert lines[11:] == [f"[... 989 more matching lines not shown ({hidden_chars:,} characters; "
                         "1,000 in all): narrow the pattern, path or glob]"]


def test_a_huge_line_is_searched_in_its_first_mib_and_the_hit_is_shown_cut(ws, monkeypatch):
    monkeypatch.setattr(grep_tool, "GREP_LINE_BYTES", 4096)
    (ws / "min.js").write_bytes(b"x" * 1000 + b"NEEDLE" + b"y" * 9000 + b"LATE\nend\n")
    content, is_error = call(ws, "grep", pattern="NEEDLE|LATE|end", path="min.js")
    assert not is_error
    hit, after, note = content.splitlines()
    # 500 characters from 125 before the match; the match at column 1,001 of 4,096 searched
    assert hit == ("min.js:1:" + "x" * 125 + "NEEDLE" + "y" * 369
                   + " [line cut to 500 of 4,096 characters, match at column 1,001]")
    assert after == "min.js:2:end"  # the line after a huge one keeps its number
    assert note == "[1 line(s) longer than 4,096 bytes were searched only in their first " \
                   "4,096 bytes]"


def test_grep_skips_binary_files_and_says_so_and_searches_latin1_as_replacement(ws):
    (ws / "app.bin").write_bytes(b"\x7fELF\x00\x00def f")
    (ws / "old.txt").write_bytes(b"caf\xe9 def\n")
    assert call(ws, "grep", pattern="def") == (
        "a.py:1:def f():\nold.txt:1:caf\ufffd def\n[1 binary file(s) skipped]\n"
        "[1 file(s) hold bytes that are not UTF-8; they were searched as U+FFFD]", False)
    assert call(ws, "grep", pattern="zzz") == (
        "No matches for /zzz/ in .\n[1 binary file(s) skipped]\n"
        "[1 file(s) hold bytes that are not UTF-8; they were searched as U+FFFD]", False)


def test_grep_counts_lines_at_newlines_only_like_grep_n(ws):
    (ws / "ff.c").write_text("a\x0cb\nc\u2028d\nneedle\n")  # form feed and U+2028 inside lines
    assert call(ws, "grep", pattern="needle") == ("ff.c:3:needle", False)


def test_the_worker_reads_one_line_at_a_time():
    f = io.BytesIO(b"ab\n" + b"z" * 50 + b"\ncd\r\n")
    stats = {"long_lines": 0, "not_utf8_files": 0}
    found = [(n, line) for n, line, _ in grep_worker.search_file(f, lambda s: s, 10, stats)]
    assert found == [(1, "ab"), (2, "z" * 10), (3, "cd")]
    assert stats == {"long_lines": 1, "not_utf8_files": 0}


def _reference_hits(data, line_bytes, pattern):
    """What a line-at-a-time grep finds: lines cut at ``line_bytes`` bytes, CR of CRLF dropped."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    found = []
    for n, raw in enumerate(lines, start=1):
        if len(raw) > line_bytes:
            text = codecs.getincrementaldecoder("utf-8")("replace").decode(raw[:line_bytes])
        else:
            text = raw.removesuffix(b"\r").decode("utf-8", "replace")
        if re.search(pattern, text):
            found.append((n, text))
    return found


@given(st.lists(st.sampled_from([b"a", b"b", "\u00e9".encode(), b"\r", b"\n", b"\n"]),
                max_size=80).map(b"".join), st.integers(4, 12), st.sampled_from(["a", "b$", "^$"]))
def test_block_reading_finds_what_reading_line_by_line_finds(data, line_bytes, pattern):
    stats = {"long_lines": 0, "not_utf8_files": 0}
    got = [(n, line) for n, line, _ in grep_worker.search_file(
        io.BytesIO(data), re.compile(pattern).search, line_bytes, stats)]
    assert got == _reference_hits(data, line_bytes, pattern)
    assert stats["not_utf8_files"] == 0  # a character cut at line_bytes is not a bad byte


def test_the_worker_protocol_names_each_file_before_its_hits(ws):
    stdin = io.StringIO(json.dumps({"pattern": "return", "ignore_case": False,
                                    "files": [[str(ws / "a.py"), "a.py"]], "line_bytes": 100,
                                    "hit_chars": 100, "max_chars": 100}))
    out = io.StringIO()
    grep_worker.main(stdin, out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert records[:2] == [["f", 0], ["h", 0, 2, "    return 1"]]
    assert records[2][0] == "s" and records[2][1]["hits"] == 1


# --------------------------------------------------------------------------- read_file

def test_read_file_stops_before_the_cap_and_its_footer_survives(ws):
    (ws / "log.txt").write_text("".join(f"line {n}\n" for n in range(1, 5001)))
    content, is_error = call(ws, "read_file", max_output_chars=400, path="log.txt")
    assert not is_error
    rows = content.splitlines()
    # 200 of 400 are kept for the footer; rows with their newline take 14 characters
    # ("     1\tline 1\n") up to line 9, then 16: 9 * 14 + 4 * 16 = 190 fit, a 14th does not
    assert rows[0] == "     1\tline 1" and rows[-2] == "    13\tline 13"
    assert rows[-1] == "[lines 1-13 of 5,000; pass offset=14 to read more]"
    nxt, _ = call(ws, "read_file", max_output_chars=400, path="log.txt", offset=14, limit=2)
    assert nxt == "    14\tline 14\n    15\tline 15\n[lines 14-15 of 5,000; pass offset=16 to " \
                  "read more]"


def test_read_file_cuts_a_long_line_and_counts_what_it_left_out(ws):
    (ws / "min.js").write_text("a" * 5000 + "\nshort\n")
    content, _ = call(ws, "read_file", path="min.js")
    first, second = content.splitlines()
    assert first == "     1\t" + "a" * 2000 + " [... line cut: 3,000 more characters]"
    assert second == "     2\tshort"


def test_read_file_counts_characters_not_bytes_in_a_cut_line(ws):
    (ws / "u.txt").write_text("é" * 2500)  # 5,000 bytes, no final newline
    content, _ = call(ws, "read_file", path="u.txt")
    assert content == "     1\t" + "é" * 2000 + " [... line cut: 500 more characters]"


def test_read_file_of_a_big_file_reads_only_what_it_shows(ws, monkeypatch):
    big = ws / "big.log"
    with open(big, "wb") as f:
        f.write(b"".join(b"%08d\n" % n for n in range(1, 400_001)))  # 3.6 MB
    monkeypatch.setattr(read_tool, "COUNT_LINES_BYTES", 1 << 20)
    content, _ = call(ws, "read_file", path="big.log", offset=399_999)
    assert content == ("399999\t00399999\n400000\t00400000\n[lines 399999-400000 of 400,000]")
    content, _ = call(ws, "read_file", path="big.log", limit=1)
    # the count stopped after 1 MiB (1,048,576 bytes / 9 per line), so "more than"
    assert content == ("     1\t00000001\n[lines 1-1 of more than 116,509; pass offset=2 to "
                       "read more]")


def test_read_file_refuses_binary_and_names_utf16(ws):
    (ws / "w.txt").write_bytes("hi\n".encode("utf-16"))
    assert call(ws, "read_file", path="w.txt") == (
        "w.txt is UTF-16 text (it starts with a UTF-16 byte order mark); read_file reads "
        "UTF-8. Convert a copy with run_bash, e.g. iconv -f UTF-16 -t UTF-8 w.txt > "
        "w.txt.utf8.txt", True)


def test_read_file_shows_latin1_bytes_as_replacement_and_says_edit_cannot_change_it(ws):
    (ws / "old.txt").write_bytes(b"ok\ncaf\xe9\n")
    assert call(ws, "read_file", path="old.txt") == (
        "     1\tok\n     2\tcaf\ufffd\n[1 line(s) shown hold bytes that are not UTF-8, shown "
        "as U+FFFD; edit_file cannot change this file]", False)
    assert call(ws, "edit_file", path="old.txt", old_string="ok", new_string="OK") == (
        "old.txt is not a UTF-8 text file", True)
    assert (ws / "old.txt").read_bytes() == b"ok\ncaf\xe9\n"


def test_read_file_numbers_lines_as_grep_does_with_crlf_and_form_feeds(ws):
    (ws / "w.c").write_bytes(b"a\r\nb\x0cc\r\nneedle\r\n")
    content, _ = call(ws, "read_file", path="w.c")
    assert content == "     1\ta\n     2\tb\x0cc\n     3\tneedle"  # no \r, no extra line
    assert call(ws, "grep", pattern="needle$")[0] == "w.c:3:needle"


def test_read_file_offset_past_the_end_counts_a_last_line_without_newline(ws):
    (ws / "n.txt").write_text("a\nb")
    assert call(ws, "read_file", path="n.txt", offset=4) == (
        "offset 4 is past the end of n.txt (2 lines)", True)
    assert call(ws, "read_file", path="n.txt", offset=3) == (
        "offset 3 is past the end of n.txt (2 lines)", True)
    assert call(ws, "read_file", path="n.txt", offset=2) == ("     2\tb\n[lines 2-2 of 2]",
                                                             False)


# --------------------------------------------------------------------------- edit_file

def test_edit_file_refuses_a_file_over_its_size_limit_and_changes_nothing(ws, monkeypatch):
    assert file_tools.MAX_EDIT_BYTES == 16 * 1024 * 1024
    monkeypatch.setattr(file_tools, "MAX_EDIT_BYTES", 10)
    (ws / "big.txt").write_text("0123456789A\n")
    assert call(ws, "edit_file", path="big.txt", old_string="A", new_string="B") == (
        "big.txt is 12 bytes; edit_file edits files up to 10 bytes (it loads them whole). "
        "Use run_bash for a larger one (e.g. sed -i), or split it", True)
    assert (ws / "big.txt").read_text() == "0123456789A\n"
    assert not (ws / "big.txt.bak").exists()
    edit = {"path": "big.txt", "old_string": "A", "new_string": "B"}
    assert file_tools.edit_applied(Workspace(ws), edit) == "unknown"


def test_grep_finds_text_in_a_file_whose_name_is_not_utf8(ws):
    with open(os.fsencode(ws) + b"/caf\xe9.txt", "wb") as f:
        f.write(b"needle\n")
    content, is_error = call(ws, "grep", pattern="needle")
    assert (content, is_error) == ("caf\ufffd.txt:1:needle", False)  # encodable for the API


def test_edit_file_changes_only_the_matched_text_of_a_mixed_line_end_file(ws):
    (ws / "mix.txt").write_bytes(b"a\r\nb\nc\rd\n")  # CRLF, LF, a lone CR
    assert call(ws, "edit_file", path="mix.txt", old_string="b", new_string="B")[1] is False
    assert (ws / "mix.txt").read_bytes() == b"a\r\nB\nc\rd\n"


def test_edit_file_matches_lines_copied_from_read_file_in_a_crlf_file(ws):
    (ws / "dos.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    content, is_error = call(ws, "edit_file", path="dos.txt", old_string="one\ntwo",
                             new_string="1\n2\n2.5")
    assert (ws / "dos.txt").read_bytes() == b"1\r\n2\r\n2.5\r\nthree\r\n"
    assert (content, is_error) == ("Edited dos.txt: replaced 1 occurrence at line 1 (backup: "
                                   "dos.txt.bak)\n     1\t1\n     2\t2\n     3\t2.5\n"
                                   "     4\tthree", False)


@given(st.lists(st.text("ab\r", max_size=6), max_size=30), st.booleans(), st.integers(1, 32),
       st.integers(1, 40), st.integers(1, 5))
def test_read_file_pages_show_the_lines_split_at_newlines(tmp_path_factory, lines, last_newline,
                                                          offset, limit, chunk_bytes):
    root = tmp_path_factory.mktemp("page")
    data = "\n".join(lines) + ("\n" if last_newline and lines else "")
    (root / "f.txt").write_text(data, newline="")
    expected = data.split("\n")
    if expected[-1] == "":
        expected.pop()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(read_tool, "_CHUNK_BYTES", chunk_bytes)  # block edges everywhere
        content, is_error = call(root, "read_file", path="f.txt", offset=offset, limit=limit)
    if not expected:
        assert (content, is_error) == ("(f.txt is empty)", False)
    elif offset > len(expected):
        assert (content, is_error) == (
            f"offset {offset} is past the end of f.txt ({len(expected)} lines)", True)
    else:
        shown = expected[offset - 1:offset - 1 + limit]
        rows = [f"{n:>6}\t{line.removesuffix(chr(13))}" for n, line in enumerate(shown, offset)]
        assert content.split("\n")[:len(rows)] == rows
        assert not is_error


def test_read_file_counts_to_the_end_when_the_count_limit_falls_on_it(ws, monkeypatch):
    monkeypatch.setattr(read_tool, "_CHUNK_BYTES", 2)
    monkeypatch.setattr(read_tool, "COUNT_LINES_BYTES", 3)
    (ws / "f.txt").write_text("a\nb\nc")  # after line 1: "b\n" and "c", 3 bytes, no newline
    assert call(ws, "read_file", path="f.txt", limit=1) == (
        "     1\ta\n[lines 1-1 of 3; pass offset=2 to read more]", False)
    (ws / "g.txt").write_text("a\nb\nc\nd\ne\n")  # the count stops after "b\nc\n"
    assert call(ws, "read_file", path="g.txt", limit=1) == (
        "     1\ta\n[lines 1-1 of more than 3; pass offset=2 to read more]", False)


def test_listing_the_files_counts_against_the_time_limit(ws, monkeypatch):
    walk = Workspace.walk_files

    def slow_walk(self, start, **kwargs):
        time.sleep(0.3)
        return walk(self, start)

    monkeypatch.setattr(Workspace, "walk_files", slow_walk)
    content, is_error = call(ws, "grep", pattern="def", timeout_seconds=0.2)
    assert is_error and content.startswith(
        "[grep stopped at its time limit of 0.2 seconds while listing the 1 files to search; "
        "0 hit(s) found before.")
