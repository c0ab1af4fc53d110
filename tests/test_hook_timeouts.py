"""Python hook handlers get a time limit: one that sleeps past it or never returns cannot hang the agent."""

from __future__ import annotations

import asyncio
import inspect
import subprocess
import sys
import threading
import time
import textwrap

import pytest

from mini_agent.harness.command_hooks import DEFAULT_TIMEOUT_SECONDS
from mini_agent.harness.hook_calls import HANDLER_THREAD_PREFIX
from mini_agent.harness.hooks import HookManager, HookResult


def fire(manager: HookManager, event: str, payload: dict) -> tuple[HookResult, float]:
    """Fire and time it (seconds)."""
    start = time.monotonic()
    result = asyncio.run(manager.fire(event, payload))
    return result, time.monotonic() - start


@pytest.fixture
def gate():
    """An Event a handler waits on forever; set at teardown so no thread outlives the test."""
    event = threading.Event()
    yield event
    event.set()


def hook_threads(event: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"{HANDLER_THREAD_PREFIX}-{event}"]


def test_the_default_limit_is_the_command_hooks_60_seconds():
    default = inspect.signature(HookManager.on).parameters["timeout_seconds"].default
    assert default == DEFAULT_TIMEOUT_SECONDS == 60.0


def test_a_sync_pre_tool_use_handler_that_sleeps_past_its_limit_blocks(gate):
    later: list[str] = []
    m = HookManager()

    def slow_guard(payload):
        gate.wait(5)   # "sleeps" 5 s, woken at teardown
        return {}
    m.on("PreToolUse", slow_guard, timeout_seconds=0.2)
    m.on("PreToolUse", lambda p: later.append("ran") or {})
    result, seconds = fire(m, "PreToolUse", {"tool_name": "run_bash", "tool_input": {}})
    assert 0.2 <= seconds < 1.5
    what = ("PreToolUse hook slow_guard did not return within 0.2 s (its thread is left "
            "running as a daemon: Python cannot stop it)")
    assert result.blocked
    assert result.reason == f"{what}; blocked to be safe (fail closed)"
    assert result.errors == [f"{what}; blocked"]
    assert later == []   # a block returns at once


def test_a_handler_that_never_returns_blocks_a_prompt_and_leaves_a_daemon_thread(gate):
    m = HookManager()
    m.on("UserPromptSubmit", lambda p: gate.wait(), timeout_seconds=0.1)
    result, seconds = fire(m, "UserPromptSubmit", {"prompt": "hi"})
    assert result.blocked and seconds < 1.5
    assert result.reason.startswith("UserPromptSubmit hook <lambda> did not return within 0.1 s")
    stuck = hook_threads("UserPromptSubmit")
    assert stuck and all(t.daemon and t.is_alive() for t in stuck)
    gate.set()
    for thread in stuck:
        thread.join(2)
    assert not any(t.is_alive() for t in stuck)


@pytest.mark.parametrize("event, payload", [
    ("PostToolUse", {"tool_name": "grep", "tool_response": "raw"}),
    ("Stop", {"stop_hook_active": False}),
    ("SessionStart", {"source": "startup"}),
])
def test_elsewhere_a_timeout_is_a_reported_error_and_later_handlers_still_run(
        gate, event, payload):
    m = HookManager()
    m.on(event, lambda p: gate.wait(), timeout_seconds=0.1)
    m.on(event, lambda p: {"systemMessage": "second ran"})
    result, seconds = fire(m, event, payload)
    assert not result.blocked and seconds < 1.5
    assert result.system_message == "second ran"
    assert result.errors == [f"{event} hook <lambda> did not return within 0.1 s (its thread "
                             "is left running as a daemon: Python cannot stop it); ignored"]


def test_an_async_handler_that_awaits_forever_is_cancelled_and_blocks():
    seen: list[str] = []
    m = HookManager()

    async def waits_forever(payload):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
    m.on("PreToolUse", waits_forever, timeout_seconds=0.1)
    result, seconds = fire(m, "PreToolUse", {"tool_name": "run_bash", "tool_input": {}})
    assert seen == ["cancelled"] and seconds < 1.5
    assert result.blocked and result.reason == (
        "PreToolUse hook waits_forever did not return within 0.1 s and was cancelled; "
        "blocked to be safe (fail closed)")


def test_a_late_answer_is_dropped_and_a_handler_in_time_is_unchanged():
    m = HookManager()

    def late_block(payload):
        time.sleep(0.4)
        return {"decision": "block", "reason": "too late"}
    m.on("Stop", late_block, timeout_seconds=0.1)
    result, _ = fire(m, "Stop", {})
    assert not result.blocked and "late_block did not return within 0.1 s" in result.errors[0]
    time.sleep(0.5)   # the thread answers after the event: nothing raises, nothing changes
    assert not result.blocked and len(result.errors) == 1
    quick = HookManager()
    quick.on("PreToolUse", lambda p: {"decision": "block", "reason": "no"}, timeout_seconds=5)
    assert fire(quick, "PreToolUse", {"tool_name": "x"})[0].reason == "no"


def test_a_sync_handler_runs_in_a_named_daemon_thread_with_the_callers_errors():
    where: list[tuple[str, bool]] = []
    m = HookManager()

    def record(payload):
        where.append((threading.current_thread().name, threading.current_thread().daemon))
        raise RuntimeError("broken")
    m.on("Stop", record)
    result, _ = fire(m, "Stop", {})
    assert where == [(f"{HANDLER_THREAD_PREFIX}-Stop", True)]
    assert result.errors == ["Stop hook record raised RuntimeError: broken"]


@pytest.mark.parametrize("limit", [0, -1, float("nan"), float("inf"), True, "5", 10**9])
def test_a_limit_that_would_skip_the_handler_is_refused(limit):
    with pytest.raises(ValueError, match="timeout_seconds must be a number of seconds above 0"):
        HookManager().on("PreToolUse", lambda p: None, timeout_seconds=limit)


def test_the_interpreter_exits_although_a_handler_never_returns():
    code = textwrap.dedent("""
        import asyncio, threading
        from mini_agent.harness.hooks import HookManager
        m = HookManager()
        m.on("PreToolUse", lambda p: threading.Event().wait(), timeout_seconds=0.1)
        print(asyncio.run(m.fire("PreToolUse", {"tool_name": "x"})).blocked)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "True"), done.stderr


def test_the_agent_answers_a_tool_call_whose_guard_hangs_as_blocked_and_goes_on(gate):
    from mini_agent.core.view import full_view
    from mini_agent.harness.agent import Agent
    from mini_agent.harness.tools import Tool
    from mini_agent.offline import ScriptedBrain, offline_async_client
    ran: list[dict] = []
    tool = Tool(name="touch", description="d", input_schema={"type": "object"},
                run=lambda i: ran.append(i) or "ran", safety="write")
    brain = ScriptedBrain([{"content": [{"type": "tool_use", "id": "toolu_1", "name": "touch",
                                         "input": {}}], "stop_reason": "tool_use"}, "done"])
    hooks = HookManager()
    hooks.on("PreToolUse", lambda p: gate.wait(), timeout_seconds=0.2)
    agent = Agent(offline_async_client(brain), tools={"touch": tool}, hooks=hooks,
                  view_policy=full_view)
    start = time.monotonic()
    run = agent.run("go")
    assert time.monotonic() - start < 5
    assert ran == [] and run.exit_status == "completed" and run.text == "done"
    result = agent.history[2]["content"][0]
    assert result["is_error"] is True
    assert result["content"].startswith("Blocked by hook: PreToolUse hook <lambda> did not "
                                        "return within 0.2 s")
