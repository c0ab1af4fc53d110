"""Tests for the Stop hook's block: the loop sends the model on with the reason, and a guard ends it."""

import asyncio
import json
import os
import shlex
import sys

import pytest

from mini_agent.core.clock import ManualClock
from mini_agent.core.hook_output import HookNotice
from mini_agent.core.messages import validate_messages
from mini_agent.harness.agent import Agent
from mini_agent.harness.hooks import HookManager
from mini_agent.harness.loop import LoopEnd, StopBlocked, TurnEnd, run_loop
from mini_agent.harness.model import sdk_model
from mini_agent.harness.session import SessionWriter
from mini_agent.harness.stop_hook import (DEFAULT_MAX_STOP_HOOK_BLOCKS, STOP_FEEDBACK_PREFIX,
                                          last_assistant_text, stop_feedback)
from mini_agent.harness.tools import Tool
from mini_agent.core.hook_output import HookResult
from mini_agent.offline import ScriptedBrain, offline_async_client

FEEDBACK = {"role": "user", "content": [{"type": "text",
                                         "text": "Stop hook feedback:\nrun the tests first"}]}


def read_tool():
    return Tool("read_file", "read", {"type": "object"}, "read-only", lambda i: f"{i['path']}: ok")


def reading(i, path):
    return {"content": [{"type": "text", "text": f"Reading {path}."},
                        {"type": "tool_use", "id": f"toolu_{i:02d}", "name": "read_file",
                         "input": {"path": path}}], "stop_reason": "tool_use"}


def loop(brain, hooks, **kwargs):
    """Run the loop over the offline API; return (events, history, client)."""
    client = offline_async_client(brain)
    tools = {"read_file": read_tool()}
    model = sdk_model(client, model="claude-sonnet-4-6", max_tokens=1000, tools=tools)
    history = [{"role": "user", "content": [{"type": "text", "text": "fix the bug"}]}]

    async def collect():
        return [e async for e in run_loop(model, history, tools=tools, hooks=hooks,
                                          clock=ManualClock(), **kwargs)]
    return asyncio.run(collect()), history, client


def sent_messages(events):
    return [e.request["messages"] for e in events if isinstance(e, TurnEnd)]


def once_then_allow(payloads):
    def hook(payload):
        payloads.append(payload)
        if not payload["stop_hook_active"]:
            return {"decision": "block", "reason": "run the tests first"}
        return {}
    return hook


def test_a_block_sends_one_more_request_carrying_the_reason():
    payloads = []
    hooks = HookManager()
    hooks.on("Stop", once_then_allow(payloads))
    events, history, client = loop(ScriptedBrain(["Fixed it.", "Tests pass now."]), hooks)
    assert events[-1] == LoopEnd("completed", 2)
    assert client.offline_transport.request_count == 2
    first, second = sent_messages(events)
    assert second == first + [{"role": "assistant", "content": [
        {"type": "text", "text": "Fixed it."}]}, FEEDBACK]
    assert [p["stop_hook_active"] for p in payloads] == [False, True]
    assert [p["last_assistant_message"] for p in payloads] == ["Fixed it.", "Tests pass now."]
    assert [p["exit_status"] for p in payloads] == ["completed", "completed"]
    assert [e for e in events if isinstance(e, StopBlocked)] == [
        StopBlocked("run the tests first", 1, True)]
    assert history[-2] == FEEDBACK and history[-1]["role"] == "assistant"
    validate_messages(history)


def test_after_the_feedback_the_model_can_use_tools_and_the_flag_stays_true():
    payloads = []
    hooks = HookManager()
    hooks.on("Stop", once_then_allow(payloads))
    brain = ScriptedBrain(["Fixed it.", reading(1, "tests.log"), "Tests pass now."])
    events, history, _ = loop(brain, hooks)
    assert events[-1] == LoopEnd("completed", 3)
    assert [p["stop_hook_active"] for p in payloads] == [False, True]
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant", "user",
                                            "assistant"]
    assert history[4]["content"][0]["type"] == "tool_result"
    for messages in sent_messages(events):
        validate_messages(messages)


def test_an_allowing_hook_ends_the_turn_as_before():
    payloads = []
    hooks = HookManager()
    hooks.on("Stop", lambda p: payloads.append(p) or {"systemMessage": "all good"})
    events, history, client = loop(ScriptedBrain(["Fixed it."]), hooks)
    assert events[-1] == LoopEnd("completed", 1)
    assert client.offline_transport.request_count == 1 and len(history) == 2
    assert [p["stop_hook_active"] for p in payloads] == [False]
    assert not any(isinstance(e, StopBlocked) for e in events)
    assert HookNotice("Stop", "all good") in events


def test_an_always_blocking_hook_ends_at_the_guard():
    hooks = HookManager()
    seen = []
    hooks.on("Stop", lambda p: seen.append(p["stop_hook_active"]) or {
        "decision": "block", "reason": "not yet"})
    events, history, client = loop(ScriptedBrain([], final_text="Done."), hooks,
                                   max_stop_hook_blocks=3)
    assert events[-1] == LoopEnd("stop_hook_limit", 4)
    assert client.offline_transport.request_count == 4
    assert [(e.blocks, e.continuing) for e in events if isinstance(e, StopBlocked)] == [
        (1, True), (2, True), (3, True), (4, False)]
    assert seen == [False, True, True, True]
    # three feedback messages, and the history ends on the model's reply, not a dangling one
    assert [m["content"][0]["text"] for m in history[2::2]] == [STOP_FEEDBACK_PREFIX + "not yet"] * 3
    assert history[-1]["role"] == "assistant"
    validate_messages(history)


def test_the_default_guard_is_claude_codes_eight_blocks():
    assert DEFAULT_MAX_STOP_HOOK_BLOCKS == 8
    hooks = HookManager()
    hooks.on("Stop", lambda p: {"decision": "block", "reason": "again"})
    events, _, client = loop(ScriptedBrain([], final_text="Done."), hooks)
    assert events[-1] == LoopEnd("stop_hook_limit", 9)
    assert client.offline_transport.request_count == 9


def test_no_request_left_under_max_turns_ends_there_without_a_dangling_message():
    hooks = HookManager()
    hooks.on("Stop", lambda p: {"decision": "block", "reason": "not yet"})
    events, history, client = loop(ScriptedBrain(["Fixed it."]), hooks, max_turns=1)
    assert events[-1] == LoopEnd("max_turns_reached", 1)
    assert [e for e in events if isinstance(e, StopBlocked)] == [StopBlocked("not yet", 1, False)]
    assert history[-1]["role"] == "assistant" and client.offline_transport.request_count == 1


def test_continue_false_wins_over_a_block():
    hooks = HookManager()
    hooks.on("Stop", lambda p: {"continue": False, "stopReason": "enough",
                                "decision": "block", "reason": "more"})
    events, _, client = loop(ScriptedBrain(["Fixed it."]), hooks)
    assert events[-1] == LoopEnd("completed", 1) and client.offline_transport.request_count == 1


def test_a_command_hook_exiting_2_sends_its_stderr_the_same_way(tmp_path):
    script = tmp_path / "stop_gate.py"
    script.write_text(
        "import json, sys\n"
        "payload = json.load(sys.stdin)\n"
        "if not payload['stop_hook_active']:\n"
        "    print('run the tests first', file=sys.stderr)\n"
        "    sys.exit(2)\n")
    hooks = HookManager()
    hooks.add_command("Stop", f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}")
    events, history, client = loop(ScriptedBrain(["Fixed it.", "Tests pass now."]), hooks)
    assert events[-1] == LoopEnd("completed", 2)
    assert sent_messages(events)[1][-1] == FEEDBACK
    validate_messages(history)


def test_the_agent_sends_the_model_on_and_logs_the_feedback(tmp_path):
    payloads = []
    hooks = HookManager()
    hooks.on("Stop", once_then_allow(payloads))
    session = SessionWriter(tmp_path, "s1", clock=ManualClock())
    agent = Agent(offline_async_client(ScriptedBrain(["Fixed it.", "Tests pass now."])),
                  tools={"read_file": read_tool()}, clock=ManualClock(), hooks=hooks,
                  session=session)
    result = agent.run("fix the bug")
    assert (result.exit_status, result.turns, result.text) == ("completed", 2, "Tests pass now.")
    assert payloads[0]["session_id"] == "s1" and payloads[0]["cwd"] == os.getcwd()
    assert [p["stop_hook_active"] for p in payloads] == [False, True]
    logged = [json.loads(line) for line in (tmp_path / "s1.jsonl").read_text().splitlines()]
    assert {"role": "user", "content": FEEDBACK["content"]} in [
        e.get("message") for e in logged]
    validate_messages(agent.history)


def test_the_agent_passes_its_guard_to_the_loop():
    hooks = HookManager()
    hooks.on("Stop", lambda p: {"decision": "block", "reason": "again"})
    agent = Agent(offline_async_client(ScriptedBrain([], final_text="Done.")),
                  clock=ManualClock(), hooks=hooks, max_stop_hook_blocks=1)
    result = agent.run("go")
    assert (result.exit_status, result.turns) == ("stop_hook_limit", 2)


def test_feedback_text_and_last_assistant_text():
    assert stop_feedback(HookResult(blocked=True, reason="x\udce9")) == {
        "role": "user", "content": [{"type": "text", "text": "Stop hook feedback:\nx\ufffd"}]}
    assert last_assistant_text([{"role": "user", "content": "hi"}]) == ""
    assert last_assistant_text([{"role": "assistant", "content": [
        {"type": "text", "text": "a"}, {"type": "tool_use", "id": "t", "name": "n", "input": {}},
        {"type": "text", "text": "b"}]}, {"role": "user", "content": "x"}]) == "a\nb"


def test_a_negative_guard_is_refused():
    with pytest.raises(ValueError, match="max_stop_hook_blocks"):
        loop(ScriptedBrain(["x"]), None, max_stop_hook_blocks=-1)
