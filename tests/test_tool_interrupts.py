"""An interrupted run leaves no process behind: run_bash kills its whole process group
(a background grandchild included) and grep kills its search child, on the executor's
interrupt, on a cancelled task and on a KeyboardInterrupt in a direct call."""

import asyncio
import os
import signal
import subprocess
import threading
import time

import pytest

from mini_agent.harness import bash_tool, grep_tool
from mini_agent.harness.executor import StreamingExecutor, run_serially
from mini_agent.harness.tools import build_tools
from mini_agent.harness.workspace import ToolError, Workspace

SPAWNS = "echo $$ > pgid; echo started; sleep 300 & sleep 300"
"""A command whose shell leaves a background grandchild: both run for 5 minutes."""


def _pgid(root, seconds=10.0):
    path = root / "pgid"
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.02)
    raise AssertionError("the command never started")


def _group_gone(pgid, seconds=10.0):
    """Whether ``os.killpg(pgid, 0)`` raises ProcessLookupError within ``seconds``: dead
    orphans stay zombies until the process that adopted them reaps them."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def _block(command, id="toolu_1"):
    return {"type": "tool_use", "id": id, "name": "run_bash", "input": {"command": command}}


def test_interrupting_the_executor_kills_the_commands_whole_group(tmp_path):
    tools = build_tools(Workspace(tmp_path))

    async def main():
        executor = StreamingExecutor(tools)
        executor.schedule(_block(SPAWNS))
        pgid = await asyncio.to_thread(_pgid, tmp_path)
        assert bash_tool.group_alive(pgid)   # both sleeps run
        started = time.perf_counter()
        [outcome] = await executor.settle()
        return pgid, outcome, time.perf_counter() - started

    pgid, outcome, seconds = asyncio.run(main())
    assert seconds < 3   # not the 300 s of the command, nor bash's 30 s timeout
    assert outcome.is_error
    text = outcome.block["content"]
    assert text.startswith("started\n[command interrupted after ")
    assert text.endswith("(the run was closed, cancelled or got Ctrl-C); its process group "
                         "was killed]")
    assert not bash_tool.group_alive(pgid)          # nothing of the group runs any more
    assert _group_gone(pgid)                         # and the dead are reaped


def test_cancelling_the_task_awaiting_the_call_kills_the_group(tmp_path):
    tools = build_tools(Workspace(tmp_path))

    async def main():
        task = asyncio.ensure_future(run_serially(tools, [_block(SPAWNS)]))
        pgid = await asyncio.to_thread(_pgid, tmp_path)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return pgid

    started = time.perf_counter()
    pgid = asyncio.run(main())
    end = time.monotonic() + 3
    while bash_tool.group_alive(pgid) and time.monotonic() < end:
        time.sleep(0.02)
    assert not bash_tool.group_alive(pgid)
    assert time.perf_counter() - started < 5
    assert _group_gone(pgid)


def _ctrl_c_after(seconds):
    """Send this process SIGINT after ``seconds``, as Ctrl-C does, even under nohup."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(seconds, signal.pthread_kill,
                            (threading.main_thread().ident, signal.SIGINT))
    timer.start()
    return timer, previous


def test_ctrl_c_in_a_direct_call_kills_the_group_before_it_propagates(tmp_path):
    timer, previous = _ctrl_c_after(1.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            bash_tool.run_bash(Workspace(tmp_path), {"command": SPAWNS})
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    pgid = _pgid(tmp_path)
    assert not bash_tool.group_alive(pgid)
    assert _group_gone(pgid)


def test_a_member_ignoring_sigterm_gets_sigkill_after_the_grace(tmp_path, monkeypatch):
    monkeypatch.setattr(bash_tool, "BASH_KILL_GRACE_SECONDS", 0.3)
    started = time.perf_counter()
    with pytest.raises(ToolError, match=r"timed out after 0.5 seconds"):
        bash_tool.run_bash(Workspace(tmp_path), {
            "command": "trap '' TERM; " + SPAWNS, "timeout_seconds": 0.5})
    seconds = time.perf_counter() - started
    pgid = _pgid(tmp_path)
    assert not bash_tool.group_alive(pgid)
    assert 0.8 <= seconds < 3   # the timeout, then the grace before SIGKILL


def test_a_command_that_ends_keeps_its_background_process(tmp_path):
    """Only a stopped command loses its group: a server started in the background stays."""
    out = bash_tool.run_bash(Workspace(tmp_path), {
        "command": "echo $$ > pgid; sleep 300 > /dev/null 2>&1 &"})
    pgid = _pgid(tmp_path)
    try:
        assert out == "[exit code: 0]"
        assert bash_tool.group_alive(pgid)
    finally:
        os.killpg(pgid, signal.SIGKILL)


def test_interrupting_the_executor_kills_the_grep_child(tmp_path, monkeypatch):
    (tmp_path / "b.txt").write_text("a" * 40 + "b\n")  # (a+)+$ runs for hours here
    started = []

    class Recorded(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(grep_tool.subprocess, "Popen", Recorded)
    tools = build_tools(Workspace(tmp_path))

    async def main():
        executor = StreamingExecutor(tools)
        executor.schedule({"type": "tool_use", "id": "toolu_g", "name": "grep",
                           "input": {"pattern": "(a+)+$", "timeout_seconds": 60}})
        while not started:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)   # the child is searching
        began = time.perf_counter()
        [outcome] = await executor.settle()
        return outcome, time.perf_counter() - began

    outcome, seconds = asyncio.run(main())
    assert seconds < 2   # not the 60 s time limit
    assert outcome.is_error
    assert outcome.block["content"] == (
        "[grep interrupted (the run was closed, cancelled or got Ctrl-C); its search process "
        "was killed; 0 hit(s) found before]")
    [proc] = started
    assert proc.returncode is not None and proc.returncode < 0   # killed and reaped
