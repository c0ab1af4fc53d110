"""edit_file refuses a new_string UTF-8 cannot encode before it touches the disk."""

import pytest

from mini_agent.harness.executor import run_tool
from mini_agent.harness.tools import build_tools
from mini_agent.harness.workspace import Workspace


@pytest.fixture
def tools(tmp_path):
    (tmp_path / "c.txt").write_bytes(b"a\r\nb\r\n")
    return build_tools(Workspace(tmp_path))


REFUSED = ("new_string holds U+D800, a lone surrogate that UTF-8 cannot encode; nothing was "
           "changed. Write the character itself or drop it")


def test_a_create_with_a_lone_surrogate_leaves_no_empty_file(tools, tmp_path):
    got = run_tool(tools, "edit_file", {"path": "sub/new.txt", "old_string": "",
                                        "new_string": "x\ud800y"})
    assert got == (REFUSED, True)
    assert not (tmp_path / "sub").exists()


def test_an_edit_with_a_lone_surrogate_changes_nothing_and_keeps_no_backup(tools, tmp_path):
    got = run_tool(tools, "edit_file", {"path": "c.txt", "old_string": "a",
                                        "new_string": "x\ud800y"})
    assert got == (REFUSED, True)
    assert (tmp_path / "c.txt").read_bytes() == b"a\r\nb\r\n"
    assert not (tmp_path / "c.txt.bak").exists()


def test_a_create_still_writes_the_text_as_given(tools, tmp_path):
    got = run_tool(tools, "edit_file", {"path": "n.txt", "old_string": "",
                                        "new_string": "é\r\nz\n"})
    assert got == ("Created n.txt (2 lines)", False)
    assert (tmp_path / "n.txt").read_bytes() == "é\r\nz\n".encode()
