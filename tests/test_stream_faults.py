"""Streams that break mid-way: an ``error`` event, a dropped connection.

The offline API injects both after the first content block (a tool may already have
started); the SDK raises. The loop retries the request (overloaded, api_error, a dropped
connection; never a 400) without running any tool twice: a tool call that arrived complete
before the break stays in the history with its result, and the retried request carries that
result. When the retries run out, it stops with :class:`StreamFaultError` and a valid history.
"""

import anthropic
import httpx2
import pytest
from hypothesis import given, settings

from mini_agent import Agent, offline_async_client
from mini_agent.core.messages import tool_results, tool_uses, validate_messages
from mini_agent.harness.loop import StreamRetry, TurnEnd, kept_reply
from mini_agent.harness.model import StreamFaultError, stream_fault_kind
from mini_agent.harness.tools import Tool
from mini_agent.offline import FaultPlan, ScriptedBrain, offline_client
from strategies import histories, reply_pieces

SONNET = "claude-sonnet-5-5"
TOOLS = [{"name": "read_file", "input_schema": {"type": "object"}}]
REPLY = {"content": [{"type": "tool_use", "id": "toolu_a", "name": "read_file",
                      "input": {"path": "README.md"}},
                     {"type": "text", "text": "Reading the README."}],
         "stop_reason": "tool_use"}
TEXT_FIRST = {"content": [{"type": "text", "text": "Let me read it."},
                          {"type": "tool_use", "id": "toolu_a", "name": "read_file",
                           "input": {"path": "README.md"}}],
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
    assert stream_fault_kind(info.value) == "overloaded_error"


def test_dropped_connection_mid_stream_raises():
    with pytest.raises(httpx2.RemoteProtocolError) as info:
        stream_events(FaultPlan(stream_drop_at={1}))
    assert stream_fault_kind(info.value) == "connection"


def test_a_400_mid_stream_is_not_a_fault_worth_a_retry():
    with pytest.raises(anthropic.APIStatusError) as info:
        stream_events(FaultPlan(stream_error_at={1: "invalid_request_error"}))
    assert stream_fault_kind(info.value) is None


def test_an_unbroken_stream_is_untouched_by_faults_on_other_requests():
    kinds = stream_events(FaultPlan(stream_error_at={2: "overloaded_error"},
                                    stream_drop_at={3}))
    assert kinds[-1] == "message_stop"


def counting_read(calls):
    def run(input):
        calls.append(input["path"])
        return f"contents of {input['path']}"
    return {"read_file": Tool("read_file", "read a file", {"type": "object"}, "read-only", run)}


def agent_with(script, plan, calls, *, sync=False, **kwargs):
    make = offline_client if sync else offline_async_client
    return Agent(make(ScriptedBrain(script), faults=plan), tools=counting_read(calls),
                 **kwargs)


def assert_valid_for_the_api(agent):
    validate_messages(agent.history)                  # the kit's request rules
    answered = [b["tool_use_id"] for m in agent.history for b in tool_results(m)]
    asked = [b["id"] for m in agent.history for b in tool_uses(m)]
    assert answered == asked


@pytest.mark.parametrize("sync", [False, True])
@pytest.mark.parametrize("plan", [FaultPlan(stream_error_at={1: "overloaded_error"}),
                                  FaultPlan(stream_error_at={1: "api_error"}),
                                  FaultPlan(stream_drop_at={1})])
def test_a_break_after_a_tool_call_keeps_it_runs_it_once_and_retries(plan, sync):
    calls = []
    agent = agent_with([REPLY, "Done."], plan, calls, sync=sync)
    result = agent.run("Read the README.")
    assert result.exit_status == "completed" and result.text == "Done."
    assert calls == ["README.md"]                      # ran exactly once
    assert_valid_for_the_api(agent)
    # the partial reply is kept: the complete tool call, not the text that never arrived
    assert agent.history[1] == {"role": "assistant", "content": [REPLY["content"][0]]}
    assert agent.history[2]["content"] == [{"type": "tool_result", "tool_use_id": "toolu_a",
                                            "content": "contents of README.md"}]
    sent = agent.client.offline_transport.requests
    assert len(sent) == 2 and sent[1]["messages"][-1] == agent.history[2]
    retry, = [e for e in result.events if isinstance(e, StreamRetry)]
    assert (retry.turn, retry.attempt, retry.kept_tool_use_ids, retry.retrying) == (
        1, 1, ("toolu_a",), True)
    assert [e.stop_reason for e in result.events if isinstance(e, TurnEnd)] == [None, "end_turn"]


def test_a_break_on_the_last_allowed_request_says_no_retry_and_ends_at_max_turns():
    calls = []
    agent = agent_with([REPLY, "Done."], FaultPlan(stream_drop_at={1}), calls, max_turns=1)
    result = agent.run("Read the README.")
    assert result.exit_status == "max_turns_reached" and calls == ["README.md"]
    assert len(agent.client.offline_transport.requests) == 1
    retry, = [e for e in result.events if isinstance(e, StreamRetry)]
    assert (retry.kept_tool_use_ids, retry.retrying) == (("toolu_a",), False)
    assert_valid_for_the_api(agent)


def test_a_break_before_any_tool_call_on_the_last_request_is_a_named_error():
    calls = []
    agent = agent_with([TEXT_FIRST, "Done."], FaultPlan(stream_drop_at={1}), calls, max_turns=1)
    with pytest.raises(StreamFaultError, match="max_turns leaves no request to retry"):
        agent.run("Read the README.")
    assert calls == [] and [m["role"] for m in agent.history] == ["user"]


def test_a_break_before_any_tool_call_sends_the_same_request_again():
    calls = []
    agent = agent_with([TEXT_FIRST, "Done."], FaultPlan(stream_drop_at={1}), calls)
    result = agent.run("Read the README.")
    assert result.exit_status == "completed" and calls == ["README.md"]
    sent = agent.client.offline_transport.requests
    assert len(sent) == 3 and sent[0]["messages"] == sent[1]["messages"]
    assert agent.history[1]["content"] == TEXT_FIRST["content"]   # the retried reply, whole
    assert_valid_for_the_api(agent)


def test_retries_run_out_with_a_named_error_and_a_valid_history():
    calls = []
    plan = FaultPlan(stream_error_at={n: "overloaded_error" for n in (1, 2, 3, 4)})
    agent = agent_with([REPLY, "Done."], plan, calls)
    with pytest.raises(StreamFaultError) as info:
        agent.run("Read the README.")
    assert (info.value.kind, info.value.attempts) == ("overloaded_error", 3)
    assert isinstance(info.value.__cause__, anthropic.APIStatusError)
    assert isinstance(info.value, anthropic.APIError)   # caught where the SDK's errors are
    assert agent.client.offline_transport.request_count == 3   # 1 + max_stream_retries
    assert calls == ["README.md"]
    assert_valid_for_the_api(agent)
    assert [m["role"] for m in agent.history] == ["user", "assistant", "user"]
    assert agent.run("Try again.").exit_status == "completed"   # request 5 is unbroken
    assert calls == ["README.md"]
    assert_valid_for_the_api(agent)


def test_zero_retries_gives_up_at_the_first_break_with_nothing_half_kept():
    calls = []
    agent = agent_with([TEXT_FIRST], FaultPlan(stream_drop_at={1}), calls, max_stream_retries=0)
    with pytest.raises(StreamFaultError) as info:
        agent.run("Read the README.")
    assert info.value.kind == "connection" and calls == []
    assert [m["role"] for m in agent.history] == ["user"]


def test_a_400_mid_stream_is_raised_not_retried_and_the_history_stays_valid():
    calls = []
    agent = agent_with([REPLY], FaultPlan(stream_error_at={1: "invalid_request_error"}), calls)
    with pytest.raises(anthropic.APIStatusError):
        agent.run("Read the README.")
    assert agent.client.offline_transport.request_count == 1
    assert calls == ["README.md"]                 # it had started: kept with its result
    assert_valid_for_the_api(agent)


# ------------------------------------------------------------------ what a broken reply keeps


@settings(max_examples=80, deadline=None)
@given(histories(max_turns=4), reply_pieces())
def test_a_kept_reply_and_its_answers_extend_any_history_validly(history, pieces):
    if history[-1]["role"] == "assistant":
        history = history + [{"role": "user", "content": "Go on — 続けて."}]
    before = repr(pieces)
    kept = kept_reply(pieces[:-1], pieces[-1])
    assert repr(pieces) == before                       # input never mutated
    asked = [b["id"] for piece in pieces for b in piece if b["type"] == "tool_use"]
    assert [b["id"] for b in kept if b["type"] == "tool_use"] == asked
    if not asked:
        assert kept == []                               # nothing happened: dropped whole
        return
    assert all(b["text"].strip() for b in kept if b["type"] == "text")
    answers = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": i, "content": "ok"} for i in asked]}
    validate_messages(history + [{"role": "assistant", "content": kept}, answers])


def test_the_repl_reports_exhausted_retries_and_goes_back_to_the_prompt(capsys):
    import io

    from mini_agent.console import repl
    calls = []
    plan = FaultPlan(stream_drop_at={1, 2, 3})
    agent = agent_with([REPLY, "Done."], plan, calls)
    lines = iter(["Read the README.", "Go on.", "/quit"])
    out = io.StringIO()
    assert repl(agent, out=out, read=lambda _prompt: next(lines)) == 0
    err = capsys.readouterr().err
    assert err.startswith("mini-agent: ") and "stream broke 3 time(s) in a row" in err
    assert calls == ["README.md"]
    assert agent.history[-1]["role"] == "assistant"     # "Go on." was answered
    assert_valid_for_the_api(agent)
