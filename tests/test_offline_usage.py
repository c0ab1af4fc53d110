"""An offline reply's ``usage`` has every field of the SDK's ``Usage``, filled as the API fills it.

Each check goes through the real SDK client (JSON and SSE), reads the raw JSON where a field
could be missing yet default to None in the parsed model, and asserts values a wrong fill
would miss: the TTL split of cache writes, the thinking share of the output, the request's
inference geo and speed echoed, ``server_tool_use`` only with a server tool.
"""

import json

import pytest
from anthropic.types import MessageDeltaUsage, Usage
from anthropic.types.beta import BetaUsage

from mini_agent.core.tokens import approx_tokens
from mini_agent.offline import offline_client
from mini_agent.offline.brains import ScriptedBrain
from mini_agent.offline.usage_fields import response_usage, stream_usages

SONNET = "claude-sonnet-5-5"
SYSTEM = "You are a careful coding agent. " * 160          # 5,120 chars: 1,280 tokens
HOUR = {"type": "ephemeral", "ttl": "1h"}
FIVE = {"type": "ephemeral"}
ASK = [{"role": "user", "content": "Hello there"}]


def raw_usage(client, **kwargs):
    """The ``usage`` object of the reply's raw JSON (not the parsed model)."""
    raw = client.messages.with_raw_response.create(model=SONNET, max_tokens=200, **kwargs)
    return raw.http_response.json()["usage"]


def test_every_field_of_the_sdk_usage_is_in_the_raw_reply():
    usage = raw_usage(offline_client(), messages=ASK)
    assert set(Usage.model_fields) <= set(usage)
    assert usage["service_tier"] == "standard"
    assert usage["inference_geo"] == "global"
    assert usage["speed"] == "standard"
    assert usage["server_tool_use"] is None           # no server tool in the request
    assert usage["output_tokens_details"] == {"thinking_tokens": 0}
    assert usage["cache_creation"] == {"ephemeral_5m_input_tokens": 0,
                                       "ephemeral_1h_input_tokens": 0}
    # the beta model has two more: iterations (beta requests) and fallback_credit (only
    # with a fallback_credit_token)
    assert set(BetaUsage.model_fields) - set(usage) == {"iterations", "fallback_credit"}


def test_five_minute_writes_are_counted_under_ephemeral_5m():
    client = offline_client()
    first = client.messages.create(model=SONNET, max_tokens=50, messages=ASK, system=[
        {"type": "text", "text": SYSTEM, "cache_control": FIVE}])
    assert first.usage.cache_creation_input_tokens == 1280
    assert first.usage.cache_creation.ephemeral_5m_input_tokens == 1280
    assert first.usage.cache_creation.ephemeral_1h_input_tokens == 0


def test_one_hour_and_five_minute_writes_are_split_by_ttl():
    client = offline_client()
    long_ask = [{"role": "user", "content": [
        {"type": "text", "text": "Please review. " + "x" * 4096, "cache_control": FIVE}]}]
    reply = client.messages.create(model=SONNET, max_tokens=50, messages=long_ask, system=[
        {"type": "text", "text": SYSTEM, "cache_control": HOUR}])
    split = reply.usage.cache_creation
    assert split.ephemeral_1h_input_tokens == 1280                 # the system prefix
    assert split.ephemeral_5m_input_tokens == approx_tokens(long_ask[0])   # the span after it
    assert split.ephemeral_5m_input_tokens + split.ephemeral_1h_input_tokens == \
        reply.usage.cache_creation_input_tokens
    again = client.messages.create(model=SONNET, max_tokens=50, messages=long_ask, system=[
        {"type": "text", "text": SYSTEM, "cache_control": HOUR}])
    assert again.usage.cache_read_input_tokens == reply.usage.cache_creation_input_tokens
    assert again.usage.cache_creation.model_dump() == {"ephemeral_5m_input_tokens": 0,
                                                       "ephemeral_1h_input_tokens": 0}


def test_a_usage_model_without_a_split_wrote_at_five_minutes():
    class Counted:
        def usage(self, request, *, now):
            return {"input_tokens": 7, "cache_creation_input_tokens": 3,
                    "cache_read_input_tokens": 11}

    reply = offline_client(usage_model=Counted()).messages.create(
        model=SONNET, max_tokens=20, messages=ASK)
    assert reply.usage.cache_creation.ephemeral_5m_input_tokens == 3
    assert reply.usage.cache_creation.ephemeral_1h_input_tokens == 0


def test_inference_geo_and_speed_echo_the_request():
    usage = raw_usage(offline_client(), messages=ASK, inference_geo="us", speed="fast")
    assert (usage["inference_geo"], usage["speed"]) == ("us", "fast")


def test_server_tool_use_is_zeros_once_a_server_tool_is_defined():
    usage = raw_usage(offline_client(), messages=ASK, tools=[
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}])
    assert usage["server_tool_use"] == {"web_search_requests": 0, "web_fetch_requests": 0}
    client_tool = {"name": "read_file", "input_schema": {"type": "object"}}
    assert raw_usage(offline_client(), messages=ASK,
                     tools=[client_tool])["server_tool_use"] is None


def test_thinking_tokens_are_the_thinking_share_of_the_output():
    thought = {"type": "thinking", "thinking": "Let me weigh both options. " * 40,
               "signature": "sig"}
    answer = {"type": "text", "text": "Option B."}
    brain = ScriptedBrain([{"content": [thought, answer], "stop_reason": "end_turn"}])
    reply = offline_client(brain).messages.create(
        model="claude-sonnet-4-6", max_tokens=4000, messages=ASK,
        thinking={"type": "enabled", "budget_tokens": 2048})
    share = approx_tokens(thought)
    assert reply.usage.output_tokens_details.thinking_tokens == share == 270
    assert reply.usage.output_tokens == approx_tokens(
        {"role": "assistant", "content": [thought, answer]})
    assert reply.usage.output_tokens > share


@pytest.mark.parametrize("extra", [
    {},
    {"system": [{"type": "text", "text": SYSTEM, "cache_control": HOUR}],
     "inference_geo": "us",
     "tools": [{"type": "web_fetch_20250910", "name": "web_fetch"}]},
])
def test_a_streamed_reply_ends_with_the_same_usage_as_the_json_one(extra):
    plain = offline_client().messages.create(model=SONNET, max_tokens=200, messages=ASK,
                                             **extra)
    with offline_client().messages.stream(model=SONNET, max_tokens=200, messages=ASK,
                                          **extra) as stream:
        streamed = stream.get_final_message()
    assert streamed.usage.model_dump() == plain.usage.model_dump()
    assert streamed.usage.cache_creation is not None


def test_the_stream_splits_usage_as_the_api_does():
    client = offline_client()
    raw = client.messages.with_raw_response.create(
        model=SONNET, max_tokens=200, messages=ASK, stream=True,
        system=[{"type": "text", "text": SYSTEM, "cache_control": HOUR}])
    events = {}
    for line in raw.http_response.iter_lines():
        if line.startswith("data: "):
            data = json.loads(line[len("data: "):])
            events.setdefault(data["type"], data)
    start = events["message_start"]["message"]["usage"]
    delta = events["message_delta"]["usage"]
    assert start["output_tokens"] == 1 and "output_tokens_details" not in start
    assert (start["service_tier"], start["inference_geo"]) == ("standard", "global")
    assert start["cache_creation"]["ephemeral_1h_input_tokens"] == 1280
    # the delta's counts are cumulative: the input side again, then the output side
    assert delta["cache_creation_input_tokens"] == 1280
    assert delta["output_tokens"] > 1
    assert set(delta) <= set(MessageDeltaUsage.model_fields)
    assert "server_tool_use" not in delta               # null: not sent


def test_response_usage_keeps_extra_keys_and_caps_thinking():
    usage = response_usage({"input_tokens": 5, "iterations": []}, {}, output_tokens=3,
                           thinking=9)
    assert usage["output_tokens_details"] == {"thinking_tokens": 3}
    assert usage["iterations"] == [] and usage["cache_read_input_tokens"] == 0
    start, delta = stream_usages(usage)
    assert "iterations" not in start and delta["iterations"] == []


@pytest.mark.parametrize("stream", [False, True])
def test_a_beta_request_reports_its_one_sampling_iteration(stream):
    client = offline_client()
    params = {"model": SONNET, "max_tokens": 50, "messages": ASK,
              "system": [{"type": "text", "text": SYSTEM, "cache_control": HOUR}],
              "betas": ["context-management-2025-06-27"]}
    if stream:
        with client.beta.messages.stream(**params) as events:
            reply = events.get_final_message()
    else:
        reply = client.beta.messages.create(**params)
    assert isinstance(reply.usage, BetaUsage)
    assert (reply.usage.service_tier, reply.usage.inference_geo) == ("standard", "global")
    assert reply.usage.output_tokens_details.thinking_tokens == 0
    [only] = reply.usage.iterations
    assert only.type == "message"
    assert (only.input_tokens, only.output_tokens, only.cache_creation_input_tokens,
            only.cache_read_input_tokens) == (
        reply.usage.input_tokens, reply.usage.output_tokens, 1280, 0)
    assert only.cache_creation.ephemeral_1h_input_tokens == 1280
