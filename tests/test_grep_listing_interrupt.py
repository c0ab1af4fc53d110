"""An interrupt stops grep while it lists a big tree, not only once its search has started.

The tool call's cancel event (set by the executor on close, cancel or Ctrl-C) is checked by
the listing every 64 files: the call ends with ``[grep interrupted ... while listing the files
to search (N found so far) ...]`` and no search process is started.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
import time

import pytest

from mini_agent.harness import grep_tool, threads, workspace
from mini_agent.harness.workspace import ListingStopped, ToolError, Workspace

FILES = 2_000


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("big")
    for d in range(4):
        (root / f"d{d}").mkdir()
        for f in range(FILES // 4):
            os.close(os.open(root / f"d{d}" / f"f{f:03d}.txt", os.O_CREAT | os.O_WRONLY))
    return root


@pytest.fixture
def slow_listing(monkeypatch):
    """Each file costs 1 ms to list: the whole tree would take about 2 s."""
    real_inside = workspace.inside

    def slow_inside(path, root):
        time.sleep(0.001)
        return real_inside(path, root)
    monkeypatch.setattr(workspace, "inside", slow_inside)


def test_an_interrupt_stops_the_listing_and_starts_no_search(tree, slow_listing, monkeypatch):
    started: list[object] = []
    monkeypatch.setattr(grep_tool.subprocess, "Popen",
                        lambda *a, **k: started.append(a) or subprocess.Popen(*a, **k))
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()

    async def call():
        return await threads.to_thread(grep_tool.grep, Workspace(tree),
                                       {"pattern": "x", "timeout_seconds": 60}, cancel=cancel)
    begun = time.monotonic()
    with pytest.raises(ToolError) as caught:
        asyncio.run(call())
    assert time.monotonic() - begun < 1.0             # not the ~2 s of the whole listing
    message = str(caught.value)
    assert message.startswith("[grep interrupted (the run was closed, cancelled or got "
                              "Ctrl-C) while listing the files to search (")
    assert message.endswith("found so far); no search was started; 0 hit(s) found before]")
    listed = int(message.split("search (")[1].split(" ")[0].replace(",", ""))
    assert 0 < listed < FILES
    assert started == []


def test_walk_files_tells_a_stop_from_a_deadline(tree):
    ws = Workspace(tree)
    told = threading.Event()
    told.set()
    with pytest.raises(ListingStopped) as caught:
        ws.walk_files(tree, deadline=time.monotonic() + 60, stop=told)
    assert (caught.value.interrupted, caught.value.listed) == (True, 0)
    with pytest.raises(ListingStopped) as late:
        ws.walk_files(tree, deadline=time.monotonic() - 1, stop=threading.Event())
    assert late.value.interrupted is False
    assert len(ws.walk_files(tree, stop=threading.Event())) == FILES


def test_a_direct_call_with_no_interrupt_still_lists_and_searches(tree):
    assert grep_tool.grep(Workspace(tree), {"pattern": "x"}).startswith("No matches for /x/")
