"""Streams that break mid-way: an ``error`` event, a dropped connection.

The offline API injects both after the first content block (a tool may already have
started); the SDK raises, the agent stops with that error, its history stays valid and the
next prompt runs.
"""

import anthropic
import httpx2
import pytest

from mini_agent import Agent, build_tools, offline_async_client
from mini_agent.core.messages import validate_messages
from mini_agent.demo import copy_demo_workspace
from mini_agent.offline import FaultPlan, ScriptedBrain, offline_client

SONNET = "claude-sonnet-5-5"
TOOLS = [{"name": "read_file", "input_schema": {"type": "object"}}]
REPLY = {"content": [{"type": "tool_use", "id": "toolu_a", "name": "read_file",
                      "input": {"path": "README.md"}},
                     {"type": "text", "text": "Reading the README."}],
         "stop_reason": "tool_use"}


def stream_events(plan):
    client = offline_client(ScriptedBrain([REPLY]), faults=plan, max_retries=0)
    seen = []
    with client.messages.stream(model=SONNET, max_tokens=100, tools=TOOLS,
                                messages=[{"role": "user", "content": "go"}]) as stream:
        for event in stream:
            seen.append(event.type)
    return seen


def test_error_event_mid_stream_raises_the_api_error():
    with pytest.raises(anthropic.APIStatusError) as info:
        stream_events(FaultPlan(stream_error_at={1: "overloaded_error"}))
    assert info.value.body["error"] == {"type": "overloaded_error", "message": "Overloaded"}


def test_dropped_connection_mid_stream_raises():
    with pytest.raises(httpx2.RemoteProtocolError):
        stream_events(FaultPlan(stream_drop_at={1}))


def test_an_unbroken_stream_is_untouched_by_faults_on_other_requests():
    kinds = stream_events(FaultPlan(stream_error_at={2: "overloaded_error"},
                                    stream_drop_at={3}))
    assert kinds[-1] == "message_stop"


@pytest.mark.parametrize("plan", [FaultPlan(stream_error_at={1: "overloaded_error"}),
                                  FaultPlan(stream_drop_at={1})])
def test_agent_stops_with_the_error_and_its_history_stays_valid(tmp_path, plan):
    workspace = copy_demo_workspace(tmp_path / "ws")
    agent = Agent(offline_async_client(ScriptedBrain([REPLY, "Done."]), faults=plan),
                  tools=build_tools(workspace))
    with pytest.raises((anthropic.APIStatusError, httpx2.RemoteProtocolError)):
        agent.run("Read the README.")
    validate_messages(agent.history, request=False)
    assert all(m["role"] == "user" for m in agent.history)   # no half turn was kept
    assert agent.run("Try again.").exit_status == "completed"
    validate_messages(agent.history, request=False)
