"""A lone carriage return does not end a line: read_file says so and grep's line numbers
agree with read_file's on files mixing LF, CRLF and lone CR line ends."""

from mini_agent.harness import grep_tool, read_tool
from mini_agent.harness.workspace import Workspace


def test_a_lone_cr_file_reads_as_one_line_and_the_footer_says_how_to_read_it(tmp_path):
    (tmp_path / "mac.txt").write_bytes(b"one\rtwo\rthree\r")
    out = read_tool.read_file(Workspace(tmp_path), {"path": "mac.txt"})
    assert out == ("     1\tone\rtwo\rthree\n"
                   "[1 line(s) shown hold a carriage return (\\r) not followed by \\n: lines "
                   "end at \\n only here, as grep -n and sed count them, so a file with old Mac "
                   "line ends reads as one long line. To read it by lines, convert a copy with "
                   "run_bash, e.g. tr '\\r' '\\n' < mac.txt > mac.txt.lf.txt]")


def test_crlf_alone_gives_no_note(tmp_path):
    (tmp_path / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    assert read_tool.read_file(Workspace(tmp_path), {"path": "dos.txt"}) == (
        "     1\tone\n     2\ttwo")


def test_grep_numbers_lines_as_read_file_does_with_mixed_line_ends(tmp_path):
    (tmp_path / "mixed.txt").write_bytes(
        b"alpha\rbeta\rgamma\ndelta\r\nepsilon\rzeta\neta\n")
    ws = Workspace(tmp_path)
    shown = read_tool.read_file(ws, {"path": "mixed.txt"}).split("\n[")[0]
    rows = dict(row.strip().split("\t", 1) for row in shown.split("\n"))
    assert rows == {"1": "alpha\rbeta\rgamma", "2": "delta", "3": "epsilon\rzeta", "4": "eta"}
    assert "[2 line(s) shown hold a carriage return" in read_tool.read_file(
        ws, {"path": "mixed.txt"})
    for word in ["beta", "delta", "zeta", "^eta$"]:
        [hit] = grep_tool.grep(ws, {"pattern": word}).split("\n")
        name, number, text = hit.split(":", 2)
        assert (name, text) == ("mixed.txt", rows[number])
    assert [h.split(":")[1] for h in grep_tool.grep(ws, {"pattern": "a"}).split("\n")] == [
        "1", "2", "3", "4"]
    # a later page starts where grep says the line is
    assert read_tool.read_file(ws, {"path": "mixed.txt", "offset": 3, "limit": 1}).startswith(
        "     3\tepsilon\rzeta\n[lines 3-3 of 4; pass offset=4 to read more]")
