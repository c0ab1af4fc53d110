"""An interrupt right after a reply cut by max_tokens mid tool_use keeps the cut call's note.

When a step ends normally, the tool call ``max_tokens`` cut off is named in the results'
user message (``DROPPED_NOTE``: it was not run). An interrupt (the event stream closed, the
task cancelled) while that step's tools run, or before its reply was stored, settles the
history with the same note after the answers, so the model is told the same thing.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from mini_agent.core.messages import validate_messages
from mini_agent.core.streaming import ToolUseTruncated
from mini_agent.harness.loop import DROPPED_NOTE, MessageAppended, run_loop
from mini_agent.harness.model import sdk_model
from mini_agent.harness.tools import Tool
from mini_agent.offline import FaultPlan, ScriptedBrain, offline_async_client

NOTE = {"type": "text", "text": DROPPED_NOTE.format(name="read", id="toolu_02")}


def use(i: int, **input) -> dict:
    return {"type": "tool_use", "id": f"toolu_{i:02d}", "name": "read", "input": input}


def loop(history: list[dict], gate: threading.Event, ran: list[int]):
    def read(i):
        ran.append(i["n"])
        gate.wait(2)                    # still running when the interrupt comes
        return "ok"
    tools = {"read": Tool("read", "reads", {"type": "object"}, "read-only", read)}
    brain = ScriptedBrain([{"content": [use(1, n=1), use(2, n=2, pad="y" * 30)],
                            "stop_reason": "tool_use"}, "done"])
    client = offline_async_client(brain, faults=FaultPlan(max_tokens_at={1: "tool_use"}))
    model = sdk_model(client, model="claude-sonnet-4-6", max_tokens=1000, tools=tools)
    return run_loop(model, history, tools=tools)


def stored_reply(event) -> bool:
    return isinstance(event, MessageAppended) and event.message["role"] == "assistant"


@pytest.mark.parametrize("when", ["cut seen, reply streaming", "reply stored, tools running"])
@pytest.mark.parametrize("how", ["aclose", "cancel"])
def test_the_settled_history_names_the_cut_call(when, how):
    history = [{"role": "user", "content": "go"}]
    gate, ran = threading.Event(), []
    stop_at = (lambda e: isinstance(e, ToolUseTruncated)) if when.startswith("cut") \
        else stored_reply

    async def main():
        events = loop(history, gate, ran)
        if how == "aclose":                   # the caller closes the event stream
            async for event in events:
                if stop_at(event):
                    break
            gate.set()
            await events.aclose()
            return
        seen = asyncio.Event()                # the task is cancelled while the loop awaits

        async def consume():
            async for event in events:
                if stop_at(event):
                    seen.set()
        task = asyncio.ensure_future(consume())
        await seen.wait()
        task.cancel()
        gate.set()
        with pytest.raises(asyncio.CancelledError):
            await task
    try:
        asyncio.run(main())
    finally:
        gate.set()
    assert ran == [1]                                     # the cut call never ran
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    assert history[1]["content"] == [use(1, n=1)]
    answers = history[2]["content"]
    assert [b.get("tool_use_id") for b in answers[:-1]] == ["toolu_01"]
    assert answers[-1] == NOTE
    validate_messages(history)


def test_without_a_cut_call_the_interrupted_answers_carry_no_note():
    history = [{"role": "user", "content": "go"}]
    gate, ran = threading.Event(), []

    def read(i):
        ran.append(i["n"])
        gate.wait(2)
        return "ok"
    tools = {"read": Tool("read", "reads", {"type": "object"}, "read-only", read)}
    brain = ScriptedBrain([{"content": [use(1, n=1)], "stop_reason": "tool_use"}, "done"])
    model = sdk_model(offline_async_client(brain), model="claude-sonnet-4-6", max_tokens=1000,
                      tools=tools)

    async def main():
        events = run_loop(model, history, tools=tools)
        async for event in events:
            if stored_reply(event):
                break
        gate.set()
        await events.aclose()
    try:
        asyncio.run(main())
    finally:
        gate.set()
    assert [b["type"] for b in history[2]["content"]] == ["tool_result"]
    validate_messages(history)
