"""A subagent leaves no thread behind: its agent's loop and worker threads end with it.

Before, each subagent left its event-loop thread and a worker thread running: 20 subagents
left 41 threads.
"""

from __future__ import annotations

import threading

from mini_agent.harness.agent import LOOP_THREAD_NAME
from mini_agent.harness.subagents import run_subagent
from mini_agent.offline import offline_client
from mini_agent.offline.explorer_brain import ExplorerBrain


def _threads() -> int:
    return threading.active_count()


def _loops() -> int:
    """The agents' loop threads alive now (other tests' agents may still hold theirs)."""
    return sum(t.name == LOOP_THREAD_NAME for t in threading.enumerate())


def test_twenty_subagents_leave_no_thread(tmp_path):
    (tmp_path / "app.py").write_text("def main():\n    return 1\n", encoding="utf-8")
    client = offline_client(ExplorerBrain())
    # the kit's shared tool pool (harness/threads.py, at most 32 threads) starts with the first
    run_subagent("Look at app.py", client=client, workspace=tmp_path, max_summary_tokens=120)
    before, loops = _threads(), _loops()
    for k in range(20):
        result = run_subagent(f"Look at app.py ({k})", client=client, workspace=tmp_path,
                              max_summary_tokens=120)
        assert result.summary
    # at most: threads other tests left may end meanwhile; a leak adds two per subagent
    assert _threads() <= before, [t.name for t in threading.enumerate()]
    assert _loops() == loops


def test_an_agent_runs_again_after_close(tmp_path):
    from mini_agent import Agent
    loops = _loops()
    agent = Agent(offline_client(), tools={})
    assert agent.run("hello").text
    assert _loops() == loops + 1
    agent.close()
    agent.close()   # a second close does nothing
    assert _loops() == loops
    assert agent.run("hello again").text
    agent.close()
    assert _loops() == loops
