"""API version 2026-10-21 request rules, through the SDK against the default offline client.

Each test makes the call a user would make online and expects the API's answer: the 400's
``error.message`` where the API's wording is known (quoted from real 400 bodies), the status
and the offending path where the kit had to name the wording (see the ASSUMPTION notes in
``mini_agent/core/request_rules.py``). The same calls run online in ``tests/test_online.py``.
"""

import os

import anthropic
import pytest
from anthropic._constants import ANTHROPIC_API_VERSION

from mini_agent.offline import offline_client

SONNET = "claude-sonnet-5-5"   # the current Sonnet: 1M context, 128K output
HAIKU = "claude-haiku-4-5"     # manual extended thinking; 200K context, 64K output
HELLO = [{"role": "user", "content": "Hello"}]


def refusal(call, **kwargs):
    """Run ``call(**kwargs)`` and return the API error's message (a 400 is required)."""
    with pytest.raises(anthropic.BadRequestError) as info:
        call(**kwargs)
    assert info.value.status_code == 400
    assert info.value.body["type"] == "error"
    assert info.value.body["error"]["type"] == "invalid_request_error"
    return info.value.body["error"]["message"]


ONLINE = os.environ.get("MINI_AGENT_ONLINE_TESTS") == "1" and bool(
    os.environ.get("ANTHROPIC_API_KEY", "").strip())


@pytest.fixture(params=["offline", pytest.param("online", marks=[
    pytest.mark.online, pytest.mark.skipif(not ONLINE, reason="online tests need "
                                           "MINI_AGENT_ONLINE_TESTS=1 and ANTHROPIC_API_KEY")])])
def client(request):
    """The default offline client, and the real API when online tests are enabled (the
    refusals cost nothing; the accepted calls a few output tokens each)."""
    if request.param == "online":
        return anthropic.Anthropic(max_retries=0)
    return offline_client(max_retries=0)


def test_the_installed_sdk_sends_2026_10_21():
    assert ANTHROPIC_API_VERSION == "2026-10-21"


@pytest.mark.parametrize("name, value", [("temperature", 1.0), ("temperature", 0.2),
                                         ("top_p", 0.9), ("top_k", 40)])
def test_sampling_parameters_are_refused_even_at_default_values(client, name, value):
    message = refusal(client.messages.create, model=SONNET, max_tokens=16, messages=HELLO,
                      extra_body={name: value})
    assert message == f"{name}: Extra inputs are not permitted"


def test_sampling_parameters_still_work_on_the_old_version(client):
    reply = client.messages.create(model=SONNET, max_tokens=16, messages=HELLO,
                                   extra_body={"temperature": 0.2},
                                   extra_headers={"anthropic-version": "2023-06-01"})
    assert reply.stop_reason == "end_turn"


def test_sampling_parameters_are_refused_by_count_tokens_too(client):
    message = refusal(client.messages.count_tokens, model=SONNET, messages=HELLO,
                      extra_body={"temperature": 1.0})
    assert message == "temperature: Extra inputs are not permitted"


def test_document_block_in_an_assistant_turn_is_refused(client):
    document = {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                               "data": "notes"}}
    message = refusal(client.messages.create, model=SONNET, max_tokens=16, messages=[
        {"role": "user", "content": "Summarise"},
        {"role": "assistant", "content": [document]},
        {"role": "user", "content": "Go on"}])
    assert message.startswith("messages.1.content.0")
    assert "document" in message


def test_non_empty_citations_on_a_user_text_block_are_refused(client):
    citation = {"type": "char_location", "cited_text": "x", "document_index": 0,
                "document_title": None, "start_char_index": 0, "end_char_index": 1}
    message = refusal(client.messages.create, model=SONNET, max_tokens=16, messages=[
        {"role": "user", "content": [{"type": "text", "text": "see", "citations": [citation]}]}])
    assert message.startswith("messages.0.content.0")
    assert "citations" in message
    # an empty list is not a citation
    reply = client.messages.create(model=SONNET, max_tokens=16, messages=[
        {"role": "user", "content": [{"type": "text", "text": "see", "citations": []}]}])
    assert reply.stop_reason == "end_turn"


@pytest.mark.parametrize("content", ["The answer is ", "Done.\n",
                                     [{"type": "text", "text": "Thinking it over\t"}]])
def test_final_assistant_content_cannot_end_with_whitespace(client, content):
    # Haiku 4.5 still takes a prefill (a final assistant turn); 4.6 and later refuse any
    message = refusal(client.messages.create, model=HAIKU, max_tokens=16, messages=[
        *HELLO, {"role": "assistant", "content": content}])
    assert message == "final assistant content cannot end with trailing whitespace"


def test_a_prefill_is_refused_on_the_current_models(client):
    message = refusal(client.messages.create, model=SONNET, max_tokens=16, messages=[
        *HELLO, {"role": "assistant", "content": "The answer is"}])
    assert message == ("This model does not support assistant message prefill. The "
                       "conversation must end with a user message.")
    reply = client.messages.create(model=HAIKU, max_tokens=16, messages=[
        *HELLO, {"role": "assistant", "content": "The answer is"}])
    assert reply.stop_reason in ("end_turn", "max_tokens")


def test_trailing_whitespace_is_fine_before_the_final_turn(client):
    reply = client.messages.create(model=SONNET, max_tokens=16, messages=[
        *HELLO, {"role": "assistant", "content": "Hi!\n"}, {"role": "user", "content": "More"}])
    assert reply.stop_reason == "end_turn"


def test_thinking_budget_below_1024_is_refused(client):
    message = refusal(client.messages.create, model=HAIKU, max_tokens=4000, messages=HELLO,
                      thinking={"type": "enabled", "budget_tokens": 1000})
    assert message == ("thinking.enabled.budget_tokens: Input should be greater than or "
                       "equal to 1024")


def test_thinking_budget_must_be_below_max_tokens(client):
    message = refusal(client.messages.create, model=HAIKU, max_tokens=2048, messages=HELLO,
                      thinking={"type": "enabled", "budget_tokens": 2048})
    assert message == (
        "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
        "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
        "#max-tokens-and-context-window-size")
    reply = client.messages.create(model=HAIKU, max_tokens=2049, messages=HELLO,
                                   thinking={"type": "enabled", "budget_tokens": 2048})
    assert reply.stop_reason == "end_turn"


def test_manual_thinking_is_refused_on_the_current_sonnet(client):
    message = refusal(client.messages.create, model=SONNET, max_tokens=4000, messages=HELLO,
                      thinking={"type": "enabled", "budget_tokens": 2048})
    assert "thinking.type.adaptive" in message
    reply = client.messages.create(model=SONNET, max_tokens=4000, messages=HELLO,
                                   thinking={"type": "adaptive"})
    assert reply.stop_reason == "end_turn"


def test_longer_ttl_after_a_shorter_one_is_refused_with_its_path(client):
    message = refusal(client.messages.create, model=SONNET, max_tokens=16, messages=HELLO,
                      system=[{"type": "text", "text": "rules", "cache_control":
                               {"type": "ephemeral"}},
                              {"type": "text", "text": "more rules", "cache_control":
                               {"type": "ephemeral", "ttl": "1h"}}])
    assert message == (
        "system.1.cache_control.ttl: a ttl='1h' cache_control block must not come after a "
        "ttl='5m' cache_control block. Note that blocks are processed in the following "
        "order: `tools`, `system`, `messages`.")


@pytest.mark.parametrize("model, ceiling", [(SONNET, 128_000), (HAIKU, 64_000)])
def test_max_tokens_has_a_per_model_ceiling(client, model, ceiling):
    # an explicit timeout: the SDK insists on streaming for a large max_tokens otherwise
    message = refusal(client.messages.create, model=model, max_tokens=ceiling + 1,
                      messages=HELLO, timeout=60)
    assert message == (f"max_tokens: {ceiling + 1} > {ceiling}, which is the maximum allowed "
                       f"number of output tokens for {model}")
    assert client.messages.create(model=model, max_tokens=ceiling, messages=HELLO,
                                  timeout=60).content


def test_context_window_is_the_models(client):
    long = [{"role": "user", "content": "word " * 200_000}]   # 250,000 tokens by chars/4
    assert client.messages.create(model=SONNET, max_tokens=16, messages=long).content
    message = refusal(client.messages.create, model=HAIKU, max_tokens=16, messages=long)
    assert message.startswith("prompt is too long: ")
    assert message.endswith(" tokens > 200000 maximum")


def test_consecutive_user_turns_are_combined_as_the_api_does(client):
    reply = client.messages.create(model=SONNET, max_tokens=16, messages=[
        {"role": "user", "content": "Hello"}, {"role": "user", "content": "again"}])
    assert reply.stop_reason == "end_turn"


# --------------------------------------------------------------- error texts as the API words them

TOOLS = [{"name": "read_file", "description": "Read a file",
          "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]
USE = {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a.py"}}


def test_orphan_tool_result_is_reported_at_its_block(client):
    message = refusal(client.messages.create, model=SONNET, max_tokens=16, tools=TOOLS,
                      messages=[*HELLO, {"role": "assistant", "content": "ok"},
                                {"role": "user", "content": [
                                    {"type": "text", "text": "here"},
                                    {"type": "tool_result", "tool_use_id": "toolu_zz",
                                     "content": "x"}]}])
    assert message == (
        "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: "
        "toolu_zz. Each `tool_result` block must have a corresponding `tool_use` block in "
        "the previous message.")


def test_whitespace_only_text_must_contain_non_whitespace(client):
    message = refusal(client.messages.create, model=SONNET, max_tokens=16, messages=[
        {"role": "user", "content": [{"type": "text", "text": " \n "}]}])
    assert message == "messages: text content blocks must contain non-whitespace text"


def test_results_not_first_are_reported_as_missing(client):
    message = refusal(client.messages.create, model=SONNET, max_tokens=16, tools=TOOLS,
                      messages=[*HELLO, {"role": "assistant", "content": [USE]},
                                {"role": "user", "content": [
                                    {"type": "text", "text": "first"},
                                    {"type": "tool_result", "tool_use_id": "toolu_a",
                                     "content": "x"}]}])
    assert message == (
        "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. "
        "Messages following `tool_use` blocks must begin with a matching number of "
        "`tool_result` blocks.")


def test_empty_content_is_only_allowed_for_the_final_assistant_turn(client):
    message = refusal(client.messages.create, model=SONNET, max_tokens=16, messages=[
        *HELLO, {"role": "assistant", "content": []}, {"role": "user", "content": "x"}])
    assert message == ("messages.1: all messages must have non-empty content except for the "
                       "optional final assistant message")


def test_cache_control_on_an_empty_text_block_is_refused(client):
    message = refusal(client.messages.create, model=SONNET, max_tokens=16, messages=[
        {"role": "user", "content": [{"type": "text", "text": "hi"},
                                     {"type": "text", "text": "",
                                      "cache_control": {"type": "ephemeral"}}]}])
    assert message.endswith("cache_control cannot be set for empty text blocks")
