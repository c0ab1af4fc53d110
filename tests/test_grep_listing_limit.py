"""grep's time limit bounds the listing of a huge tree, not only the search after it."""

import time

import pytest

from mini_agent.harness import grep_tool, workspace
from mini_agent.harness.workspace import ListingStopped, Workspace


@pytest.fixture
def tree(tmp_path):
    for d in range(4):
        (tmp_path / f"d{d}").mkdir()
        for f in range(500):
            (tmp_path / f"d{d}" / f"f{f}.txt").write_text("x\n")
    return tmp_path


def test_a_slow_listing_is_stopped_at_the_time_limit(tree, monkeypatch):
    real_inside = workspace.inside

    def slow_inside(path, root):  # 2,000 files at 1 ms: 2 s to list without a limit
        time.sleep(0.001)
        return real_inside(path, root)

    monkeypatch.setattr(workspace, "inside", slow_inside)
    started = time.monotonic()
    with pytest.raises(workspace.ToolError) as caught:
        grep_tool.grep(Workspace(tree), {"pattern": "x", "timeout_seconds": 0.3})
    assert time.monotonic() - started < 1.0
    message = str(caught.value)
    assert message.startswith("[grep stopped at its time limit of 0.3 seconds while listing "
                              "the files to search (")
    listed = int(message.split("(")[1].split(" ")[0].replace(",", ""))
    assert 0 < listed < 2_000


def test_walk_files_stops_at_its_deadline_and_lists_all_without_one(tree):
    ws = Workspace(tree)
    with pytest.raises(ListingStopped) as caught:
        ws.walk_files(tree, deadline=time.monotonic() - 1)
    assert caught.value.listed == 0
    files = ws.walk_files(tree, deadline=time.monotonic() + 60)
    assert len(files) == 2_000 and files == ws.walk_files(tree)
    assert [ws.relative(f) for f in files] == sorted(f"d{d}/f{f}.txt" for d in range(4)
                                                     for f in range(500))


def test_grep_over_a_tree_in_time_finds_every_file(tree):
    out = grep_tool.grep(Workspace(tree, max_output_chars=100_000),
                         {"pattern": "^x$", "timeout_seconds": 30})
    assert out.splitlines()[:2] == ["d0/f0.txt:1:x", "d0/f1.txt:1:x"]
    assert len(out.splitlines()) == 2_000
