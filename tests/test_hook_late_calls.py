"""Time limits hold for every Python handler, and a handler stuck past its limit is not called again.

* An ``async def`` handler that blocks without awaiting (``time.sleep`` in a coroutine) runs on
  its own event loop in a daemon thread, so the caller's wait ends at the limit: in PreToolUse
  the call is blocked (fail closed), as for a sync handler.
* While a call that ran past its limit is still running, the handler is not called again: it
  gives no answer at once (blocked in PreToolUse, a reported error elsewhere), and is called
  as before once that call returns.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from mini_agent.core.messages import validate_messages
from mini_agent.harness.agent import Agent
from mini_agent.harness.hook_calls import HANDLER_THREAD_PREFIX
from mini_agent.harness.hooks import HookManager, HookResult
from mini_agent.harness.tools import Tool
from mini_agent.offline import ScriptedBrain, offline_async_client

PAYLOAD = {"tool_name": "r", "tool_input": {"x": 1}}


@pytest.fixture
def gate():
    """An Event a handler blocks on; set at teardown so no thread outlives the test."""
    event = threading.Event()
    yield event
    event.set()


def fire(manager: HookManager, event: str = "PreToolUse",
         payload: dict | None = None) -> tuple[HookResult, float]:
    start = time.monotonic()
    result = asyncio.run(manager.fire(event, dict(payload or PAYLOAD)))
    return result, time.monotonic() - start


def join_hook_threads(event: str) -> None:
    for thread in threading.enumerate():
        if thread.name == f"{HANDLER_THREAD_PREFIX}-{event}":
            thread.join(2)


def test_a_coroutine_that_blocks_without_awaiting_is_blocked_at_its_limit(gate):
    hooks = HookManager()

    async def sleepy_guard(payload):
        gate.wait(5)   # time.sleep(5) in a coroutine: never yields to an event loop
        return {}
    hooks.on("PreToolUse", sleepy_guard, timeout_seconds=0.3)
    result, seconds = fire(hooks)
    assert 0.3 <= seconds < 1.5
    what = ("PreToolUse hook sleepy_guard did not return within 0.3 s and did not stop when "
            "cancelled (it blocks without awaiting: its thread is left running as a daemon)")
    assert (result.blocked, result.reason) == (True, f"{what}; blocked to be safe (fail closed)")
    assert result.errors == [f"{what}; blocked"]


def test_the_agent_run_returns_with_the_call_blocked(gate):
    ran: list[dict] = []
    tools = {"r": Tool("r", "reads", {"type": "object", "properties": {}}, "read-only",
                       lambda i: ran.append(dict(i)) or "read")}
    hooks = HookManager()

    async def sleepy_guard(payload):
        gate.wait(5)
        return {}
    hooks.on("PreToolUse", sleepy_guard, timeout_seconds=0.3)
    reply = {"content": [{"type": "tool_use", "id": "toolu_01", "name": "r", "input": {"x": 1}}],
             "stop_reason": "tool_use"}
    agent = Agent(offline_async_client(ScriptedBrain([reply, "Done."])), tools=tools,
                  hooks=hooks)
    start = time.monotonic()
    agent.run("go")
    assert time.monotonic() - start < 2.0
    assert ran == []
    answer = agent.history[2]["content"][0]
    assert answer["is_error"] is True and "did not stop when cancelled" in str(answer["content"])
    validate_messages(agent.history)


def test_a_coroutine_that_awaits_runs_in_its_own_thread_with_the_callers_context():
    where: list[tuple[str, str]] = []
    user = contextvars.ContextVar("user", default="nobody")
    hooks = HookManager()

    async def record(payload):
        await asyncio.sleep(0.01)
        where.append((threading.current_thread().name, user.get()))
        return {"systemMessage": "seen"}
    hooks.on("Stop", record, timeout_seconds=5)

    async def run():
        user.set("ada")
        return await hooks.fire("Stop", {})
    assert asyncio.run(run()).system_message == "seen"
    assert where == [(f"{HANDLER_THREAD_PREFIX}-Stop", "ada")]


def test_a_sync_handler_stuck_past_its_limit_is_not_called_again_until_it_returns(gate):
    calls: list[int] = []
    hooks = HookManager()

    def guard(payload):
        calls.append(payload["tool_input"]["x"])
        if len(calls) == 1:
            gate.wait(5)                     # the first call hangs
        return {"decision": "block", "reason": f"checked {payload['tool_input']['x']}"}
    hooks.on("PreToolUse", guard, timeout_seconds=0.2)
    first, _ = fire(hooks)
    assert first.blocked and "did not return within 0.2 s" in first.reason
    second, seconds = fire(hooks, payload={"tool_name": "r", "tool_input": {"x": 2}})
    assert seconds < 0.15 and calls == [1]           # refused at once, not run beside it
    what = ("PreToolUse hook guard was not called: its earlier call ran past its 0.2 s limit "
            "and is still running")
    assert (second.blocked, second.reason) == (True, f"{what}; blocked to be safe (fail closed)")
    assert second.errors == [f"{what}; blocked"]
    gate.set()
    join_hook_threads("PreToolUse")
    third, _ = fire(hooks, payload={"tool_name": "r", "tool_input": {"x": 3}})
    assert calls == [1, 3] and third.reason == "checked 3"


def test_elsewhere_a_stuck_handler_is_a_reported_error_and_the_others_run(gate):
    hooks = HookManager()
    hooks.on("PostToolUse", lambda p: gate.wait(5), timeout_seconds=0.1)
    hooks.on("PostToolUse", lambda p: {"systemMessage": "second ran"})
    payload = {"tool_name": "r", "tool_response": "out"}
    fire(hooks, "PostToolUse", payload)
    result, seconds = fire(hooks, "PostToolUse", payload)
    assert seconds < 0.15 and not result.blocked and result.system_message == "second ran"
    assert result.errors == ["PostToolUse hook <lambda> was not called: its earlier call ran "
                             "past its 0.1 s limit and is still running; ignored"]


def test_a_blocking_coroutine_counts_as_stuck_and_a_cancelled_one_does_not(gate):
    stuck = HookManager()

    async def sleepy(payload):
        gate.wait(5)
        return {}
    stuck.on("Stop", sleepy, timeout_seconds=0.1)
    fire(stuck, "Stop", {})
    assert "was not called" in fire(stuck, "Stop", {})[0].errors[0]

    runs: list[str] = []
    polite = HookManager()

    async def waits(payload):
        runs.append("call")
        await asyncio.sleep(5)               # awaits: cancelled at the limit, stops
    polite.on("Stop", waits, timeout_seconds=0.1)
    assert "and was cancelled" in fire(polite, "Stop", {})[0].errors[0]
    fire(polite, "Stop", {})
    assert runs == ["call", "call"]          # called again: nothing of it still runs


def test_overlapping_calls_within_the_limit_still_run_side_by_side():
    inside = threading.Barrier(2, timeout=2)
    hooks = HookManager()
    hooks.on("PreToolUse", lambda p: inside.wait() and None or {}, timeout_seconds=5)

    async def both():
        return await asyncio.gather(hooks.fire("PreToolUse", dict(PAYLOAD)),
                                    hooks.fire("PreToolUse", dict(PAYLOAD)))
    assert [r.blocked for r in asyncio.run(both())] == [False, False]   # no deadlock


def test_an_interrupted_fire_cancels_the_coroutine_in_its_thread():
    seen = threading.Event()
    started = threading.Event()
    hooks = HookManager()

    async def waits(payload):
        started.set()
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            seen.set()
            raise
    hooks.on("PreToolUse", waits, timeout_seconds=30)

    async def main():
        task = asyncio.ensure_future(hooks.fire("PreToolUse", dict(PAYLOAD)))
        await asyncio.to_thread(started.wait, 2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    asyncio.run(main())
    assert seen.wait(1)


def test_tasks_a_coroutine_handler_leaves_behind_are_cancelled_with_its_loop():
    stopped = threading.Event()
    hooks = HookManager()

    async def spawns(payload):
        async def background():
            try:
                await asyncio.sleep(5)
            except asyncio.CancelledError:
                stopped.set()
                raise
        spawns.task = asyncio.ensure_future(background())   # never awaited
        await asyncio.sleep(0)
        return {"systemMessage": "spawned"}
    hooks.on("Stop", spawns, timeout_seconds=5)
    assert fire(hooks, "Stop", {})[0].system_message == "spawned"
    assert stopped.wait(1)
