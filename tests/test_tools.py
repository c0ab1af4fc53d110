"""Tests for mini_agent.harness.tools: confinement, ignore list, output cap, each tool, errors as data."""

import os
import time

import pytest

from mini_agent.harness.executor import run_tool
from mini_agent.harness.tools import Tool, build_tools
from mini_agent.harness.workspace import DEFAULT_IGNORE, ToolError, Workspace


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("def f():\n    return 1\n# TODO fix\n")
    (root / "pkg" / "a.py.bak").write_text("def f():\n    return 0  # TODO old\n")
    (root / "pkg" / "__pycache__").mkdir()
    (root / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0TODO")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: TODO\n")
    (root / "notes.txt").write_text("one\ntwo TODO\nthree\n")
    (tmp_path / "secret.txt").write_text("TODO secret\n")
    return root


@pytest.fixture
def tools(ws):
    return build_tools(ws)


def call(tools, name, **input):
    return run_tool(tools, name, input)


def test_definitions_and_safety(tools):
    assert list(tools) == ["read_file", "list_dir", "grep", "glob", "run_bash", "edit_file"]
    assert {n: t.safety for n, t in tools.items()} == {
        "read_file": "read-only", "list_dir": "read-only", "grep": "read-only",
        "glob": "read-only", "run_bash": "write", "edit_file": "write"}
    definition = tools["read_file"].definition()
    assert set(definition) == {"name", "description", "input_schema"}
    assert definition["input_schema"]["required"] == ["path"]


def test_read_file_numbers_lines_and_pages(tools):
    assert call(tools, "read_file", path="notes.txt") == (
        "     1\tone\n     2\ttwo TODO\n     3\tthree", False)
    assert call(tools, "read_file", path="notes.txt", offset=2, limit=1) == (
        "     2\ttwo TODO\n[lines 2-2 of 3; pass offset=3 to read more]", False)
    assert call(tools, "read_file", path="notes.txt", offset=3) == (
        "     3\tthree\n[lines 3-3 of 3]", False)


def test_read_file_errors_are_actionable(tools, ws):
    assert call(tools, "read_file", path="missing.py") == (
        "file not found: missing.py. Use list_dir or glob to find the right path", True)
    assert call(tools, "read_file", path="pkg") == (
        "pkg is a directory; use list_dir to see its entries", True)
    assert call(tools, "read_file", path="notes.txt", offset=9) == (
        "offset 9 is past the end of notes.txt (3 lines)", True)
    (ws / "blob.bin").write_bytes(b"\x7fELF\x02\x01\x00\x00")
    assert call(tools, "read_file", path="blob.bin") == (
        "blob.bin looks binary (a NUL byte at byte 6); read_file shows text only. To inspect "
        "it, use run_bash, e.g. xxd blob.bin | head", True)
    (ws / "empty.txt").write_text("")
    assert call(tools, "read_file", path="empty.txt") == ("(empty.txt is empty)", False)


@pytest.mark.parametrize("path", ["../secret.txt", "pkg/../../secret.txt", "/etc/hostname"])
def test_paths_outside_are_refused(tools, path):
    content, is_error = call(tools, "read_file", path=path)
    assert is_error
    assert content == (f"path {path!r} is outside the workspace; use a path relative to the "
                       "workspace root (e.g. 'src/app.py')")


def test_symlink_escape_is_refused(tools, ws):
    os.symlink(ws.parent / "secret.txt", ws / "link.txt")
    os.symlink(ws.parent, ws / "up")
    assert call(tools, "read_file", path="link.txt")[1] is True
    assert call(tools, "read_file", path="up/secret.txt")[1] is True
    assert call(tools, "edit_file", path="link.txt", old_string="TODO",
                new_string="x")[1] is True
    assert call(tools, "grep", pattern="secret") == ("No matches for /secret/ in .", False)
    assert call(tools, "glob", pattern="**/*.txt") == ("notes.txt", False)
    assert (ws.parent / "secret.txt").read_text() == "TODO secret\n"


def test_absolute_path_inside_is_reported_relative(tools, ws):
    assert call(tools, "read_file", path=str(ws / "notes.txt"))[0].startswith("     1\tone")
    assert call(tools, "list_dir", path=str(ws / "pkg")) == ("a.py", False)


def test_ignore_list_hides_bak_git_and_caches(tools):
    assert call(tools, "list_dir") == ("notes.txt\npkg/", False)
    assert call(tools, "list_dir", path="pkg") == ("a.py", False)
    assert call(tools, "grep", pattern="TODO") == (
        "notes.txt:2:two TODO\npkg/a.py:3:# TODO fix", False)
    assert call(tools, "glob", pattern="**/*") == ("notes.txt\npkg/\npkg/a.py", False)
    # Ignored files are still reachable by name.
    assert call(tools, "read_file", path="pkg/a.py.bak")[1] is False
    assert "*.bak" in DEFAULT_IGNORE and ".git" in DEFAULT_IGNORE


def test_custom_ignore_list(ws):
    tools = build_tools(Workspace(ws, ignore=("*.txt",)))
    assert call(tools, "list_dir") == (".git/\npkg/", False)


def test_grep_options_and_errors(tools):
    assert call(tools, "grep", pattern="todo", ignore_case=True, glob="*.py") == (
        "pkg/a.py:3:# TODO fix", False)
    assert call(tools, "grep", pattern="return", path="pkg") == ("pkg/a.py:2:    return 1", False)
    assert call(tools, "grep", pattern="nothing here") == (
        "No matches for /nothing here/ in .", False)
    content, is_error = call(tools, "grep", pattern="(")
    assert is_error and content.startswith("invalid regular expression '(':")
    assert call(tools, "grep", pattern="x", path="nope") == ("path not found: nope", True)


def test_glob_patterns(tools):
    assert call(tools, "glob", pattern="pkg/*.py") == ("pkg/a.py", False)
    assert call(tools, "glob", pattern="*.md") == ("No files match '*.md'", False)
    assert call(tools, "glob", pattern="../*") == (
        "glob pattern '../*' must be relative to the workspace and must not contain '..'", True)


def test_list_dir_errors(tools, ws):
    assert call(tools, "list_dir", path="nope") == ("directory not found: nope", True)
    assert call(tools, "list_dir", path="notes.txt") == (
        "notes.txt is a file, not a directory; use read_file to read it", True)
    (ws / "empty").mkdir()
    assert call(tools, "list_dir", path="empty") == ("(empty is empty)", False)


def test_output_cap_marker(ws):
    (ws / "big.txt").write_text("x" * 5000)
    tools = build_tools(Workspace(ws, max_output_chars=100))
    content, is_error = call(tools, "read_file", path="big.txt")
    assert not is_error
    # half the cap is kept for the footer: "     1\t" + 43 x = 50 characters shown, the
    # line's 5,000 - 43 other characters counted
    assert content == "     1\t" + "x" * 43 + " [... line cut: 4,957 more characters]"


def test_run_bash_exit_code_and_scrubbed_paths(tools, ws):
    assert call(tools, "run_bash", command="echo hi; exit 3") == ("hi\n[exit code: 3]", False)
    assert call(tools, "run_bash", command="echo err >&2") == ("err\n[exit code: 0]", False)
    assert call(tools, "run_bash", command="true") == ("[exit code: 0]", False)
    # The absolute workspace path never reaches an observation.
    assert call(tools, "run_bash", command="pwd; ls $PWD/pkg/a.py") == (
        ".\npkg/a.py\n[exit code: 0]", False)


def test_run_bash_timeout_kills_the_command(tools):
    started = time.monotonic()
    content, is_error = call(tools, "run_bash", command="echo start; sleep 5; echo end",
                             timeout_seconds=0.5)
    assert time.monotonic() - started < 4
    assert is_error
    assert content == ("start\n\n[command timed out after 0.5 seconds and was killed; make it "
                       "faster or pass a larger timeout_seconds]")


def test_edit_file_replaces_unique_text_and_keeps_bak(tools, ws):
    content, is_error = call(tools, "edit_file", path="notes.txt", old_string="two",
                             new_string="2")
    assert (content, is_error) == (
        "Edited notes.txt: replaced 1 occurrence at line 2 (backup: notes.txt.bak)\n"
        "     1\tone\n     2\t2 TODO\n     3\tthree", False)
    assert (ws / "notes.txt").read_text() == "one\n2 TODO\nthree\n"
    assert (ws / "notes.txt.bak").read_text() == "one\ntwo TODO\nthree\n"
    assert call(tools, "list_dir") == ("notes.txt\npkg/", False)


def test_edit_file_errors(tools, ws):
    (ws / "dup.txt").write_text("x = 1\nx = 1\n")
    assert call(tools, "edit_file", path="dup.txt", old_string="x = 1", new_string="y") == (
        "old_string occurs 2 times in dup.txt; include more surrounding lines so it matches "
        "exactly once", True)
    assert call(tools, "edit_file", path="dup.txt", old_string="zzz", new_string="y") == (
        "old_string not found in dup.txt. Re-read the file with read_file and copy the exact "
        "text, including indentation", True)
    assert call(tools, "edit_file", path="dup.txt", old_string="x", new_string="x") == (
        "old_string and new_string are identical; nothing to change", True)
    assert call(tools, "edit_file", path="dup.txt", old_string="", new_string="y") == (
        "old_string is empty but dup.txt already exists; an empty old_string only creates a "
        "new file. To edit, copy the exact text to replace", True)
    assert (ws / "dup.txt").read_text() == "x = 1\nx = 1\n"
    assert not (ws / "dup.txt.bak").exists()


def test_edit_file_creates_a_new_file(tools, ws):
    assert call(tools, "edit_file", path="new/b.py", old_string="", new_string="a\nb\n") == (
        "Created new/b.py (2 lines)", False)
    assert (ws / "new" / "b.py").read_text() == "a\nb\n"


def test_unknown_tool_and_bad_input(tools):
    assert run_tool(tools, "delete_everything", {}) == (
        "Unknown tool: delete_everything (available: edit_file, glob, grep, list_dir, "
        "read_file, run_bash)", True)
    assert run_tool(tools, "read_file", {}) == ("read_file: missing required input 'path'", True)
    assert run_tool(tools, "read_file", {"path": 3}) == (
        "read_file: input 'path' must be of type string", True)
    assert run_tool(tools, "read_file", {"path": "notes.txt", "offset": True}) == (
        "read_file: input 'offset' must be of type integer", True)
    assert run_tool(tools, "read_file", "notes.txt") == (
        "read_file: input must be a JSON object, got str", True)


def test_a_tool_that_raises_becomes_an_error_result():
    def boom(input):
        raise RuntimeError("disk on fire")

    def refuse(input):
        raise ToolError("not allowed here")

    tools = {"boom": Tool("boom", "d", {"type": "object", "properties": {}}, "write", boom),
             "refuse": Tool("refuse", "d", {"type": "object"}, "read-only", refuse)}
    assert run_tool(tools, "boom", {}) == ("boom failed: RuntimeError: disk on fire", True)
    assert run_tool(tools, "refuse", {}) == ("not allowed here", True)


def test_latency_and_tool_validation():
    tool = Tool("slow", "d", {"type": "object"}, "read-only", lambda i: "done").with_latency(0.05)
    started = time.monotonic()
    assert run_tool({"slow": tool}, "slow", {}) == ("done", False)
    assert time.monotonic() - started >= 0.05
    with pytest.raises(ValueError, match="safety must be one of"):
        Tool("x", "d", {}, "dangerous", lambda i: "")
    with pytest.raises(ValueError, match="latency_seconds"):
        Tool("x", "d", {}, "write", lambda i: "", latency_seconds=-1)


def test_workspace_must_exist(tmp_path):
    with pytest.raises(ToolError, match="is not a directory"):
        Workspace(tmp_path / "nope")


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(["..", ".", "pkg", "a.py", "up", "nope", "/", "//"]),
                min_size=1, max_size=6))
def test_resolve_never_leaves_the_workspace(tmp_path_factory, parts):
    root = tmp_path_factory.mktemp("prop") / "ws"
    (root / "pkg").mkdir(parents=True)
    if not (root / "up").exists():
        os.symlink(root.parent, root / "up")
    workspace = Workspace(root)
    try:
        resolved = workspace.resolve("/".join(parts))
    except ToolError as exc:
        assert "outside the workspace" in str(exc)
    else:
        assert resolved == workspace.root or resolved.is_relative_to(workspace.root)


# --------------------------------------------------------------------------- adversarial input

def test_symlink_loop_is_skipped_by_grep_and_glob_and_named_by_read_file(tools, ws):
    os.symlink("loop_b", ws / "loop_a")
    os.symlink("loop_a", ws / "loop_b")
    assert call(tools, "grep", pattern="return 1") == ("pkg/a.py:2:    return 1", False)
    assert call(tools, "glob", pattern="**/*.py") == ("pkg/a.py", False)
    content, is_error = call(tools, "read_file", path="loop_a")
    assert is_error and content.startswith("path 'loop_a' cannot be resolved:")


def test_path_with_nul_byte_is_an_actionable_error(tools):
    assert call(tools, "read_file", path="notes\0.txt") == (
        "path 'notes\\x00.txt' contains a NUL byte; pass a plain relative path", True)


def test_non_utf8_file_name_gives_an_encodable_observation(tools, ws):
    os.close(os.open(os.fsencode(ws) + b"/caf\xe9.txt", os.O_CREAT | os.O_WRONLY))
    content, is_error = call(tools, "list_dir")
    assert not is_error and "caf\ufffd.txt" in content.splitlines()
    content.encode("utf-8")  # a lone surrogate here would break the session log and the API


def test_run_bash_flood_is_capped_and_keeps_the_exit_code(ws):
    tools = build_tools(Workspace(ws, max_output_chars=100))
    content, is_error = call(tools, "run_bash", command="yes | head -c 1000000; exit 3")
    assert not is_error
    assert content == ("y\n" * 50 + "\n[... truncated: 999,900 more characters]\n"
                       "[exit code: 3]")


def test_run_bash_timed_out_flood_is_capped(ws):
    tools = build_tools(Workspace(ws, max_output_chars=100))
    content, is_error = call(tools, "run_bash", command="yes", timeout_seconds=0.3)
    assert is_error and len(content) < 300
    assert content.startswith("y\n" * 50 + "\n[... truncated: ")
    assert content.endswith("[command timed out after 0.3 seconds and was killed; make it "
                            "faster or pass a larger timeout_seconds]")


def test_run_bash_does_not_wait_for_a_daemon_holding_stdout(tools):
    started = time.monotonic()
    content, is_error = call(tools, "run_bash", command="setsid sleep 30 & echo started",
                             timeout_seconds=5)
    assert time.monotonic() - started < 2
    assert (content, is_error) == ("started\n[exit code: 0]", False)


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf")])
def test_run_bash_rejects_a_timeout_that_is_not_positive_and_finite(tools, timeout):
    content, is_error = call(tools, "run_bash", command="true", timeout_seconds=timeout)
    assert is_error and content.startswith("timeout_seconds must be a positive number")


def test_edit_file_keeps_crlf_line_endings_and_an_exact_backup(tools, ws):
    (ws / "dos.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    content, is_error = call(tools, "edit_file", path="dos.txt", old_string="two",
                             new_string="2")
    assert not is_error
    assert (ws / "dos.txt").read_bytes() == b"one\r\n2\r\nthree\r\n"
    assert (ws / "dos.txt.bak").read_bytes() == b"one\r\ntwo\r\nthree\r\n"


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_edit_file_never_writes_its_backup_through_a_link_out_of_the_workspace(tools, ws, link):
    """A hostile repository ships ``a.py.bak`` as a link to a file outside the workspace: the
    backup replaces the link with a file of its own; the outside file is untouched."""
    outside = ws.parent / "secret.txt"
    before = outside.read_bytes()
    bak = ws / "pkg" / "a.py.bak"
    bak.unlink()
    (bak.symlink_to if link == "symlink" else bak.hardlink_to)(outside)
    content, is_error = call(tools, "edit_file", path="pkg/a.py", old_string="return 1",
                             new_string="return 2")
    assert not is_error, content
    assert outside.read_bytes() == before
    assert not bak.is_symlink() and bak.read_text() == "def f():\n    return 1\n# TODO fix\n"
    assert (ws / "pkg" / "a.py").read_text() == "def f():\n    return 2\n# TODO fix\n"


def test_edit_file_refuses_when_its_backup_name_is_a_directory_and_changes_nothing(tools, ws):
    bak = ws / "pkg" / "a.py.bak"
    bak.unlink()
    bak.mkdir()
    content, is_error = call(tools, "edit_file", path="pkg/a.py", old_string="return 1",
                             new_string="return 2")
    assert is_error and content.startswith("cannot keep the backup pkg/a.py.bak")
    assert str(ws) not in content
    assert (ws / "pkg" / "a.py").read_text() == "def f():\n    return 1\n# TODO fix\n"
    assert bak.is_dir() and list(bak.iterdir()) == []


def test_a_fifo_in_the_workspace_is_refused_or_skipped_never_waited_on(tools, ws):
    """Opening a FIFO for reading blocks until a writer comes: a tool thread would wait for
    ever (tools have no timeout). read_file and edit_file refuse it by name, grep skips it."""
    import threading
    os.mkfifo(ws / "pkg" / "pipe")
    answers = {}

    def ask(name, **input):
        answers[name] = call(tools, name, **input)
    threads = [threading.Thread(target=ask, args=(name,), kwargs=input, daemon=True)
               for name, input in [("read_file", {"path": "pkg/pipe"}),
                                   ("edit_file", {"path": "pkg/pipe", "old_string": "a",
                                                  "new_string": "b"}),
                                   ("grep", {"pattern": "TODO", "path": "pkg"})]]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    try:
        assert not any(t.is_alive() for t in threads), f"a tool waited on the FIFO: {answers}"
        for name in ("read_file", "edit_file"):
            assert answers[name] == ("pkg/pipe is not a regular file (a FIFO); only text files "
                                     "can be read or edited", True)
        assert answers["grep"] == ("pkg/a.py:3:# TODO fix", False)
    finally:
        for t in threads:  # release a stuck reader so the test process can end
            if t.is_alive():
                with open(ws / "pkg" / "pipe", "w"):
                    pass


def test_checking_an_interrupted_edit_of_a_fifo_is_unknown_without_waiting(ws):
    from mini_agent.harness.file_tools import edit_applied
    os.mkfifo(ws / "pkg" / "pipe")
    assert edit_applied(Workspace(ws), {"path": "pkg/pipe", "old_string": "a",
                                        "new_string": "b"}) == "unknown"


def test_a_file_where_a_folder_should_be_is_a_tool_error_with_relative_paths(tools, ws):
    content, is_error = call(tools, "edit_file", path="pkg/a.py/new.py", old_string="",
                             new_string="x = 1\n")
    assert is_error and str(ws) not in content
    assert content == ("edit_file could not complete: File exists: pkg/a.py (a file stands "
                       "where a folder is needed, or a folder where a file is)")
    assert (ws / "pkg" / "a.py").read_text() == "def f():\n    return 1\n# TODO fix\n"


@pytest.mark.parametrize("name", ["read file", "fs.read", "", "a" * 129, "émoji", None])
def test_a_tool_name_the_api_refuses_is_refused_when_the_tool_is_made(name):
    with pytest.raises(ValueError, match="the API takes names of 1 to 128 letters"):
        Tool(name, "d", {"type": "object"}, "read-only", lambda i: "x")
    assert Tool("a" * 128, "d", {"type": "object"}, "read-only", lambda i: "x").name == "a" * 128


def test_repeated_double_star_in_a_glob_does_not_blow_up(tools, ws):
    """pathlib walks the tree again for each ``**``: 20 of them in a row took time doubling
    with each (hours). ``**/**`` matches what ``**`` matches, so the run is collapsed."""
    deep = ws.joinpath(*"abcdefg")
    deep.mkdir(parents=True)
    (deep / "z.py").write_text("z = 1\n")
    start = time.perf_counter()
    content, is_error = call(tools, "glob", pattern="**/" * 20 + "*.py")
    assert time.perf_counter() - start < 5
    assert (content, is_error) == call(tools, "glob", pattern="**/*.py") == (
        "a/b/c/d/e/f/g/z.py\npkg/a.py", False)
