"""Interrupting a run while parallel tools are queued: close the events, cancel the task, Ctrl-C.

The reply asks for a slow read (it starts at once), a write (queued behind the read) and a
read after the write (queued behind the write). Interrupted while the slow read runs, the run
must never start the queued tools (their side effect stays absent, even later), let the slow
read finish, and write an answer for every tool_use to the history AND the session file
before it returns: the read's real result, the queued ones ``is_error`` with
``INTERRUPTED_TEXT``.
"""

import asyncio
import os
import signal
import threading
import time

import pytest

from mini_agent import Agent, offline_async_client
from mini_agent.core.messages import tool_results, tool_uses, validate_messages
from mini_agent.core.session_entries import rebuild_history
from mini_agent.harness.executor import INTERRUPTED_TEXT
from mini_agent.harness.loop import MessageAppended
from mini_agent.harness.session import SessionWriter, resume_session
from mini_agent.harness.tools import Tool
from mini_agent.offline import ScriptedBrain

SLOW_SECONDS = 0.4


def use(i, name):
    return {"type": "tool_use", "id": f"toolu_{i:02d}", "name": name, "input": {}}


REPLY = {"content": [{"type": "text", "text": "Three calls."}, use(1, "slow_read"),
                     use(2, "write"), use(3, "read")], "stop_reason": "tool_use"}


def tools(effects):
    def slow(_input):
        effects.append("slow_read started")
        time.sleep(SLOW_SECONDS)
        effects.append("slow_read ended")
        return "slow read done"

    def mark(name):
        def run(_input):
            effects.append(f"{name} ran")
            return f"{name} done"
        return run
    return {"slow_read": Tool("slow_read", "slow", {"type": "object"}, "read-only", slow),
            "write": Tool("write", "write", {"type": "object"}, "write", mark("write")),
            "read": Tool("read", "read", {"type": "object"}, "read-only", mark("read"))}


def make_agent(tmp_path, effects):
    return Agent(offline_async_client(ScriptedBrain([REPLY, "Done."])), tools=tools(effects),
                 session=SessionWriter(tmp_path / "sessions", "s1"))


def check_settled(agent, effects):
    time.sleep(SLOW_SECONDS)        # a queued tool that was going to start has had its chance
    assert effects == ["slow_read started", "slow_read ended"]   # write and read never ran
    validate_messages(agent.history)
    assert agent.history[-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": "slow read done"},
        {"type": "tool_result", "tool_use_id": "toolu_02", "content": INTERRUPTED_TEXT,
         "is_error": True},
        {"type": "tool_result", "tool_use_id": "toolu_03", "content": INTERRUPTED_TEXT,
         "is_error": True}]
    entries, problems = resume_session(agent.session.path)
    assert problems == []
    logged = [e["block"] for e in entries if e["type"] == "tool_result"]
    assert logged == agent.history[-1]["content"]          # each answer once, in order
    history, _times, report = rebuild_history(entries)
    assert report.interrupted == [] and history == agent.history


async def until_the_slow_read_runs(events, effects):
    async for event in events:
        if isinstance(event, MessageAppended) and event.message["role"] == "assistant":
            while "slow_read started" not in effects:
                await asyncio.sleep(0.01)
            return


def test_closing_the_event_stream_settles_and_logs_every_answer(tmp_path):
    effects = []
    agent = make_agent(tmp_path, effects)

    async def main():
        events = agent.astream("Do three things.")
        await until_the_slow_read_runs(events, effects)
        await events.aclose()
    asyncio.run(main())
    check_settled(agent, effects)


def test_cancelling_the_task_settles_and_logs_every_answer(tmp_path):
    effects = []
    agent = make_agent(tmp_path, effects)

    stored = asyncio.Event()

    def on_event(event):   # the whole reply is stored: all three calls were scheduled
        if isinstance(event, MessageAppended) and event.message["role"] == "assistant":
            stored.set()

    async def main():
        task = asyncio.create_task(agent.arun("Do three things.", on_event=on_event))
        await stored.wait()
        while "slow_read started" not in effects:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    asyncio.run(main())
    check_settled(agent, effects)


def test_ctrl_c_in_run_settles_before_keyboard_interrupt_is_raised(tmp_path):
    effects = []
    agent = make_agent(tmp_path, effects)

    def press_ctrl_c(event):
        if isinstance(event, MessageAppended) and event.message["role"] == "assistant":
            def later():
                while "slow_read started" not in effects:
                    time.sleep(0.01)
                os.kill(os.getpid(), signal.SIGINT)    # lands in the main thread's run()
            threading.Thread(target=later).start()
    with pytest.raises(KeyboardInterrupt):
        agent.run("Do three things.", on_event=press_ctrl_c)
    check_settled(agent, effects)
    # the agent goes on: the next prompt sees every answer
    assert agent.run("Go on.").exit_status == "completed"
    validate_messages(agent.history)


def test_closing_mid_stream_keeps_the_started_calls_with_their_answers(tmp_path):
    """Closed before the reply finished streaming: its complete tool calls are kept."""
    effects = []
    agent = make_agent(tmp_path, effects)

    async def main():
        events = agent.astream("Do three things.")
        async for event in events:
            if getattr(event, "block", {}).get("id") == "toolu_02":   # ToolUseReady of write
                break
        await events.aclose()
    asyncio.run(main())
    time.sleep(SLOW_SECONDS)
    assert "write ran" not in effects and "read ran" not in effects
    validate_messages(agent.history)
    asked = [b["id"] for b in tool_uses(agent.history[-2])]
    assert asked == ["toolu_01", "toolu_02"]             # toolu_03 had not arrived
    answers = {b["tool_use_id"]: b for b in tool_results(agent.history[-1])}
    assert answers["toolu_02"]["content"] == INTERRUPTED_TEXT
    entries, _ = resume_session(agent.session.path)
    history, _t, report = rebuild_history(entries)
    assert report.interrupted == [] and history == agent.history


def test_a_second_ctrl_c_while_settling_still_settles(tmp_path):
    effects = []
    agent = make_agent(tmp_path, effects)

    def press_twice(event):
        if isinstance(event, MessageAppended) and event.message["role"] == "assistant":
            def later():
                while "slow_read started" not in effects:
                    time.sleep(0.01)
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.1)                          # the slow tool is still running
                os.kill(os.getpid(), signal.SIGINT)
            threading.Thread(target=later).start()
    with pytest.raises(KeyboardInterrupt):
        agent.run("Do three things.", on_event=press_twice)
    validate_messages(agent.history)      # at once: run() returned only once settled
    check_settled(agent, effects)
    assert agent.run("Go on.").exit_status == "completed"
    validate_messages(agent.history)
