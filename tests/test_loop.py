"""Tests for mini_agent.harness.loop: the streaming loop through the real SDK over the offline Claude."""

import asyncio
import time

import pytest

from mini_agent.core.continuation import Continuing
from mini_agent.core.messages import NO_RESULT_TEXT, validate_messages
from mini_agent.core.streaming import TextDelta, ToolUseReady, ToolUseTruncated
from mini_agent.harness.loop import (LoopEnd, MessageAppended, ToolResult, TurnEnd, TurnStart,
                                     run_loop)
from mini_agent.harness.model import sdk_model
from mini_agent.offline import FaultPlan, ScriptedBrain, offline_async_client, offline_client
from mini_agent.harness.tools import Tool


def tool(name, safety="read-only", run=None, latency_seconds=0.0):
    return Tool(name=name, description=f"{name} tool", input_schema={"type": "object"},
                safety=safety, run=run or (lambda i, n=name: f"{n} says {sorted(i.items())}"),
                latency_seconds=latency_seconds)


def use(i, name, **input):
    return {"type": "tool_use", "id": f"toolu_{i:02d}", "name": name, "input": input}


def reply(*blocks, stop_reason="tool_use"):
    return {"content": [{"type": "text", "text": b} if isinstance(b, str) else b
                        for b in blocks], "stop_reason": stop_reason}


async def collect(events):
    return [event async for event in events]


def run(client, tools, history, **kwargs):
    model = sdk_model(client, model="claude-sonnet-4-6", max_tokens=kwargs.pop("max_tokens", 1000),
                      tools=tools, stream=kwargs.pop("stream", True))
    return asyncio.run(collect(run_loop(model, history, tools=tools, **kwargs)))


def kinds(events):
    return [type(e).__name__ for e in events]


def test_a_turn_with_parallel_tools_then_an_answer():
    tools = {"read": tool("read"), "slow": tool("slow", latency_seconds=0.05)}
    brain = ScriptedBrain([reply("Reading two files.", use(1, "slow", p="a"),
                                 use(2, "read", p="b")), "Both read."])
    history = [{"role": "user", "content": "go"}]
    events = run(offline_async_client(brain), tools, history)
    assert events[-1] == LoopEnd("completed", 2)
    assert history[1] == {"role": "assistant", "content": [
        {"type": "text", "text": "Reading two files."}, use(1, "slow", p="a"),
        use(2, "read", p="b")]}
    assert [b["tool_use_id"] for b in history[2]["content"]] == ["toolu_01", "toolu_02"]
    assert history[2]["content"][0]["content"] == "slow says [('p', 'a')]"
    assert history[3] == {"role": "assistant", "content": [{"type": "text", "text": "Both read."}]}
    validate_messages(history)
    ends = [e for e in events if isinstance(e, TurnEnd)]
    assert [(e.turn, e.stop_reason, e.message_count) for e in ends] == [(1, "tool_use", 1),
                                                                         (2, "end_turn", 3)]
    assert ends[0].usage["output_tokens"] > 0


def test_results_drained_during_streaming_are_in_the_follow_up():
    """Seed pitfall 1: with a slow stream, early tools finish before the stream ends."""
    tools = {"read": tool("read")}
    blocks = [use(i, "read", n=i) for i in range(6)]
    brain = ScriptedBrain([reply("Many reads at once, please wait.", *blocks), "ok"])
    client = offline_async_client(brain, faults=FaultPlan(stream_delay_seconds=0.002))
    history = [{"role": "user", "content": "go"}]
    events = run(client, tools, history)
    last_tool_use = max(i for i, e in enumerate(events) if isinstance(e, ToolUseReady))
    early = [e for e in events[:last_tool_use] if isinstance(e, ToolResult)]
    assert early, "some results must be drained while the model is still streaming"
    results = [e.block["tool_use_id"] for e in events if isinstance(e, ToolResult)]
    assert results == [b["id"] for b in blocks]
    assert [b["tool_use_id"] for b in history[2]["content"]] == results
    validate_messages(history)


def test_tools_start_while_the_model_is_still_streaming():
    starts = {}
    tools = {"read": tool("read", run=lambda i: starts.setdefault(i["n"], time.perf_counter())
                          and "ok")}
    brain = ScriptedBrain([reply(use(1, "read", n=1), "Some more text after the first tool, "
                                 "streamed slowly so the tool can finish first.",
                                 use(2, "read", n=2)), "done"])
    client = offline_async_client(brain, faults=FaultPlan(stream_delay_seconds=0.003))
    history = [{"role": "user", "content": "go"}]
    events = run(client, tools, history)
    first_result = next(i for i, e in enumerate(events) if isinstance(e, ToolResult))
    second_use = next(i for i, e in enumerate(events)
                      if isinstance(e, ToolUseReady) and e.block["id"] == "toolu_02")
    assert first_result < second_use
    # text between the tools is its own block; no empty text block before the first tool
    assert [b["type"] for b in history[1]["content"]] == ["tool_use", "text", "tool_use"]


def test_whitespace_only_text_is_never_stored():
    brain = ScriptedBrain([reply("  \n", use(1, "read"), "\n"), "done"])
    history = [{"role": "user", "content": "go"}]
    run(offline_async_client(brain), {"read": tool("read")}, history)
    assert [b["type"] for b in history[1]["content"]] == ["tool_use"]
    validate_messages(history)


def test_max_turns_bounds_the_loop():
    brain = ScriptedBrain([reply(use(i, "read")) for i in range(10)])
    history = [{"role": "user", "content": "go"}]
    client = offline_async_client(brain)
    events = run(client, {"read": tool("read")}, history, max_turns=3)
    assert events[-1] == LoopEnd("max_turns_reached", 3)
    assert kinds(events).count("TurnStart") == 3
    assert client.offline_transport.request_count == 3
    assert len(history) == 7 and history[-1]["role"] == "user"
    validate_messages(history)
    with pytest.raises(ValueError, match="max_turns"):
        run(client, {}, [{"role": "user", "content": "x"}], max_turns=0)


def test_a_tool_exception_never_kills_the_loop():
    def explode(i):
        raise RuntimeError("disk on fire")
    tools = {"explode": tool("explode", "write", run=explode), "read": tool("read")}
    brain = ScriptedBrain([reply(use(1, "explode"), use(2, "read")), "recovered"])
    history = [{"role": "user", "content": "go"}]
    events = run(offline_async_client(brain), tools, history)
    assert events[-1] == LoopEnd("completed", 2)
    assert history[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_01",
         "content": "explode failed: RuntimeError: disk on fire", "is_error": True},
        {"type": "tool_result", "tool_use_id": "toolu_02", "content": "Sibling tool aborted",
         "is_error": True}]


class _NotAnException(BaseException):
    """A library's own BaseException subclass (as gevent's or trio's cancellations are)."""


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), GeneratorExit(), asyncio.CancelledError(),
                                 _NotAnException("deep abort")], ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("safety", ["read-only", "write"])
def test_a_base_exception_raised_inside_a_tool_is_that_tools_failure(exc, safety):
    """A tool's thread never receives the user's Ctrl-C (signals go to the main thread), so
    whatever BaseException a tool raises is the tool's failure: an is_error result, the
    siblings handled as for any failure, the run goes on and the history stays valid."""
    def bad(i):
        raise exc
    tools = {"bad": tool("bad", safety, run=bad), "ok": tool("ok", safety)}
    brain = ScriptedBrain([reply(use(1, "ok"), use(2, "bad"), use(3, "ok")), "recovered"])
    history = [{"role": "user", "content": "go"}]
    events = run(offline_async_client(brain), tools, history)
    assert events[-1] == LoopEnd("completed", 2)
    validate_messages(history)
    first, failed, third = history[2]["content"]
    assert first["content"] == "ok says []" and "is_error" not in first
    assert failed == {"type": "tool_result", "tool_use_id": "toolu_02", "is_error": True,
                      "content": f"bad failed: {type(exc).__name__}: {exc}"}
    assert third["content"] == ("ok says []" if safety == "read-only" else "Sibling tool aborted")
    assert history[3]["content"] == [{"type": "text", "text": "recovered"}]


def test_tool_use_cut_by_max_tokens_is_never_run():
    ran = []
    tools = {"edit": tool("edit", "write", run=lambda i: ran.append(i) or "edited")}
    brain = ScriptedBrain([reply("I will edit the file now.",
                                 use(1, "edit", path="a.py", text="x" * 40))])
    client = offline_async_client(brain, faults=FaultPlan(max_tokens_at={1: "tool_use"}))
    history = [{"role": "user", "content": "go"}]
    events = run(client, tools, history)
    assert ran == []
    dropped = [e for e in events if isinstance(e, ToolUseTruncated)]
    assert [(d.id, d.name) for d in dropped] == [("toolu_01", "edit")]
    assert dropped[0].partial_json.startswith('{"path"')
    assert Continuing(1, "continue") in events
    # the continuation (request 2) sees the text only, never the half-written tool_use
    second = client.offline_transport.requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": [
        {"type": "text", "text": "I will edit the file now."}]}
    assert "Continue where you left off" in second[-1]["content"]
    validate_messages(history)
    assert all(b["type"] != "tool_use" for m in history for b in
               (m["content"] if isinstance(m["content"], list) else []))


def test_cut_tool_use_after_complete_ones_ends_the_turn_with_those_tools():
    ran = []
    tools = {"read": tool("read", run=lambda i: ran.append(i["n"]) or "ok")}
    brain = ScriptedBrain([reply(use(1, "read", n=1), use(2, "read", n=2, pad="y" * 30)),
                           "done"])
    client = offline_async_client(brain, faults=FaultPlan(max_tokens_at={1: "tool_use"}))
    history = [{"role": "user", "content": "go"}]
    events = run(client, tools, history)
    assert ran == [1]
    assert [e.stop_reason for e in events if isinstance(e, TurnEnd)] == ["max_tokens", "end_turn"]
    assert not any(isinstance(e, Continuing) for e in events)  # the step ends with its tools
    follow_up = history[2]["content"]
    assert follow_up[0]["tool_use_id"] == "toolu_01"
    assert "toolu_02" in follow_up[1]["text"] and "not run" in follow_up[1]["text"]
    validate_messages(history)


def test_text_cut_by_max_tokens_is_continued_and_joined_into_one_block():
    brain = ScriptedBrain([reply("The first half of a long plan and then", stop_reason="end_turn"),
                           reply(" the second half.", stop_reason="end_turn")])
    client = offline_async_client(brain, faults=FaultPlan(max_tokens_at={1: "text"}))
    history = [{"role": "user", "content": "plan"}]
    events = run(client, {}, history)
    text = history[1]["content"]
    assert len(text) == 1 and text[0]["text"].endswith(" the second half.")
    assert text[0]["text"].startswith("The first half")
    assert [(e.turn, e.stop_reason) for e in events if isinstance(e, TurnEnd)] == [
        (1, "max_tokens"), (2, "end_turn")]  # one turn per model request
    assert events[-1] == LoopEnd("completed", 2)
    sent_back = client.offline_transport.requests[1]["messages"][1]["content"][0]["text"]
    assert sent_back == sent_back.rstrip()


def test_every_append_is_an_event_and_times_follow_the_history():
    """Write-ahead needs to see each message when it is appended: the loop announces it."""
    brain = ScriptedBrain([reply("x", use(1, "read"), use(2, "read")), "done"])
    client = offline_async_client(brain, faults=FaultPlan(stream_delay_seconds=0.002))
    history, times = [{"role": "user", "content": "go"}], [5.0]
    events = run(client, {"read": tool("read")}, history, times=times)
    appended = [e.message for e in events if isinstance(e, MessageAppended)]
    assert appended == history[1:]
    assert len(times) == len(history) and times[0] == 5.0
    order = [type(e).__name__ for e in events if isinstance(e, (MessageAppended, ToolResult))]
    assert order[-3:] == ["ToolResult", "MessageAppended", "MessageAppended"]
    with pytest.raises(ValueError, match="times has 0 entries"):
        run(client, {}, [{"role": "user", "content": "x"}], times=[])


def test_max_turns_counts_continuation_requests():
    brain = ScriptedBrain([reply("A long first answer that gets cut", stop_reason="end_turn"),
                           reply(" and is then finished.", stop_reason="end_turn")])
    client = offline_async_client(brain, faults=FaultPlan(max_tokens_at={1: "text"}))
    history = [{"role": "user", "content": "go"}]
    events = run(client, {}, history, max_turns=1)
    assert client.offline_transport.request_count == 1  # no continuation past the budget
    assert events[-1] == LoopEnd("completed", 1)
    assert history[1]["content"][0]["text"].startswith("A long first")


@pytest.mark.parametrize("stream", [True, False])
def test_streamed_and_plain_requests_both_go_through_the_sdk(stream):
    brain = ScriptedBrain([reply("Look.", use(1, "read", p="x")), "Seen."])
    for client in (offline_async_client(brain), offline_client(brain)):
        history = [{"role": "user", "content": "go"}]
        events = run(client, {"read": tool("read")}, history, stream=stream)
        assert events[-1] == LoopEnd("completed", 2)
        assert [r.get("stream", False) for r in client.offline_transport.requests] == [stream] * 2
        assert history[2]["content"][0]["content"] == "read says [('p', 'x')]"


def test_interrupting_mid_drain_leaves_a_valid_history():
    tools = {"read": tool("read", latency_seconds=0.05), "fast": tool("fast")}
    brain = ScriptedBrain([reply(use(1, "read"), use(2, "fast"))])

    async def main():
        history = [{"role": "user", "content": "go"}]
        model = sdk_model(offline_async_client(brain), model="claude-sonnet-5-5", max_tokens=500, tools=tools)
        events = run_loop(model, history, tools=tools)
        async for event in events:
            if isinstance(event, ToolResult) and len(history) == 2:
                break  # phase 2: the assistant message is stored; "fast" not yet collected
        await events.aclose()
        return history
    history = asyncio.run(main())
    validate_messages(history)
    assert history[2]["content"] == [   # "fast" had run: its real result, not a guess
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": "read says []"},
        {"type": "tool_result", "tool_use_id": "toolu_02", "content": "fast says []"}]


@pytest.mark.parametrize("role", ["assistant", "user"])
def test_stopping_at_an_append_leaves_a_valid_history(role):
    """A consumer may stop right at a MessageAppended (a crash while logging it)."""
    tools = {"read": tool("read")}
    brain = ScriptedBrain([reply("Two reads.", use(1, "read"), use(2, "read"))])

    async def main():
        history = [{"role": "user", "content": "go"}]
        model = sdk_model(offline_async_client(brain), model="claude-sonnet-5-5", max_tokens=500, tools=tools)
        events = run_loop(model, history, tools=tools)
        async for event in events:
            if isinstance(event, MessageAppended) and event.message["role"] == role:
                break
        await events.aclose()
        return history
    history = asyncio.run(main())
    validate_messages(history)
    assert len(history) == 3 and [b["tool_use_id"] for b in history[2]["content"]] == [
        "toolu_01", "toolu_02"]


def test_event_sequence_of_one_turn():
    brain = ScriptedBrain(["Hi."])
    events = run(offline_async_client(brain), {}, [{"role": "user", "content": "hello"}])
    assert isinstance(events[0], TurnStart)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hi."
    assert kinds(events) == ["TurnStart", "TextDelta", "TurnEnd", "MessageAppended", "LoopEnd"]
