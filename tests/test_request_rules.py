"""Top-level request rules of API version 2026-10-21 (``mini_agent.core.request_rules``)."""

from types import SimpleNamespace

import pytest

from anthropic.types import message_count_tokens_params, message_create_params
from anthropic.types.beta import message_create_params as beta_create_params

from mini_agent.core import request_rules as rules

SONNET = SimpleNamespace(max_output_tokens=128_000, manual_thinking=False,
                         adaptive_thinking=True)
HAIKU = SimpleNamespace(max_output_tokens=64_000, manual_thinking=True, adaptive_thinking=False)
BOTH = SimpleNamespace(max_output_tokens=64_000, manual_thinking=True, adaptive_thinking=True)


def test_field_lists_match_the_installed_sdk():
    create = set(message_create_params.MessageCreateParamsBase.__annotations__) | {"stream"}
    assert rules.MESSAGES_FIELDS == create
    count = set(message_count_tokens_params.MessageCountTokensParams.__annotations__)
    assert rules.COUNT_TOKENS_FIELDS == count
    beta = set(beta_create_params.MessageCreateParamsBase.__annotations__) - {"betas"}
    assert beta - create == rules.BETA_FIELDS


def test_sampling_parameters_depend_on_the_version():
    body = {"model": "m", "max_tokens": 1, "messages": [], "top_k": 5}
    assert rules.fields_problem(body) == "top_k: Extra inputs are not permitted"
    assert rules.fields_problem(body, api_version="2023-06-01") is None


def test_beta_fields_need_a_beta_flag():
    body = {"model": "m", "max_tokens": 1, "messages": [], "mcp_servers": []}
    assert rules.fields_problem(body) == "mcp_servers: Extra inputs are not permitted"
    assert rules.fields_problem(body, betas=("mcp-client-2025-11-20",)) is None


def test_max_tokens_zero_is_a_prewarm_and_the_ceiling_names_the_model():
    assert rules.max_tokens_problem({"max_tokens": 0}, "claude-sonnet-5-5", SONNET) is None
    assert rules.max_tokens_problem({"max_tokens": 128_001}, "claude-sonnet-5-5", SONNET) == (
        "max_tokens: 128001 > 128000, which is the maximum allowed number of output tokens "
        "for claude-sonnet-5-5")
    assert rules.max_tokens_problem({}, "m", None) == "max_tokens: Field required"


def test_thinking_rules():
    enabled = {"type": "enabled", "budget_tokens": 1024}
    assert rules.thinking_problem({"max_tokens": 1025, "thinking": enabled}, HAIKU) is None
    assert "budget_tokens" in rules.thinking_problem(
        {"max_tokens": 1024, "thinking": enabled}, HAIKU)
    assert "1024" in rules.thinking_problem(
        {"max_tokens": 9000, "thinking": {"type": "enabled", "budget_tokens": 1023}}, HAIKU)
    assert "thinking.type.adaptive" in rules.thinking_problem(
        {"max_tokens": 9000, "thinking": enabled}, SONNET)
    assert rules.thinking_problem({"thinking": {"type": "adaptive"}}, HAIKU) == \
        "adaptive thinking is not supported on this model."


@pytest.mark.parametrize("thinking, message", [
    ({"type": "enabled"}, "thinking.enabled.budget_tokens: Field required"),
    ({"type": "enabled", "budget_tokens": "2048"},
     "thinking.enabled.budget_tokens: Input should be a valid integer"),
    ({"type": "enabled", "budget_tokens": True},
     "thinking.enabled.budget_tokens: Input should be a valid integer"),
    ({"type": "enabled", "budget_tokens": 2048, "effort": "high"},
     "thinking.enabled.effort: Extra inputs are not permitted"),
    ({"type": "adaptive", "budget_tokens": 2048},
     "thinking.adaptive.budget_tokens: Extra inputs are not permitted"),
    ({"type": "disabled", "budget_tokens": 2048},
     "thinking.disabled.budget_tokens: Extra inputs are not permitted"),
    ({"type": "adaptive", "display": "full"},
     "thinking.adaptive.display: Input should be 'summarized' or 'omitted'"),
    ({"type": "on"}, "thinking: Input tag 'on' found using 'type' does not match any of the "
                     "expected tags: 'enabled', 'disabled', 'between_tools', 'adaptive'"),
    ("enabled", "thinking: Input should be a valid dictionary or object to extract fields "
                "from"),
])
def test_thinking_settings_of_the_wrong_shape_are_refused(thinking, message):
    assert rules.thinking_problem({"max_tokens": 9000, "thinking": thinking}, BOTH) == message


@pytest.mark.parametrize("thinking", [
    {"type": "enabled", "budget_tokens": 8999, "display": "omitted"},
    {"type": "adaptive", "display": "summarized"}, {"type": "adaptive"},
    {"type": "disabled"}, {"type": "between_tools"}, None,
])
def test_well_formed_thinking_settings_pass(thinking):
    assert rules.thinking_problem({"max_tokens": 9000, "thinking": thinking}, BOTH) is None


def test_the_budget_must_stay_below_max_tokens_on_both_sides_of_the_line():
    body = {"thinking": {"type": "enabled", "budget_tokens": 4096}}
    assert rules.thinking_problem({**body, "max_tokens": 4097}, HAIKU) is None
    assert rules.thinking_problem({**body, "max_tokens": 4096}, HAIKU).startswith(
        "`max_tokens` must be greater than `thinking.budget_tokens`.")
    low = {"thinking": {"type": "enabled", "budget_tokens": 1023}, "max_tokens": 9000}
    assert rules.thinking_problem(low, HAIKU) == (
        "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")


@pytest.mark.parametrize("sampling, refused", [
    ({"temperature": 0.2}, "`temperature` may only be set to 1 when thinking is enabled."),
    ({"temperature": 1}, None), ({"temperature": 1.0}, None),
    ({"top_k": 40}, "`top_k` must be unset when thinking is enabled."),
    ({"top_p": 0.9}, "`top_p` must be between 0.95 and 1, or unset, when thinking is enabled."),
    ({"top_p": 0.95}, None), ({"top_p": 1}, None),
])
@pytest.mark.parametrize("thinking", [{"type": "enabled", "budget_tokens": 1024},
                                      {"type": "adaptive"}])
def test_the_legacy_version_refuses_sampling_changes_with_thinking_on(sampling, refused,
                                                                      thinking):
    body = {"model": "m", "max_tokens": 4000, "messages": [], "thinking": thinking, **sampling}
    problem = rules.request_problem(body, api_version=rules.LEGACY_API_VERSION, limits=BOTH)
    if refused is None:
        assert problem is None
    else:
        assert problem.startswith(refused)
        assert problem.endswith("extended-thinking#important-considerations-when-using-"
                                "extended-thinking")
    # thinking off: every value is the caller's; the current version refuses the field itself
    off = {**body, "thinking": {"type": "disabled"}}
    assert rules.request_problem(off, api_version=rules.LEGACY_API_VERSION, limits=BOTH) is None
    field = next(iter(sampling))
    assert rules.request_problem(body, limits=BOTH) == \
        f"{field}: Extra inputs are not permitted"


def test_an_unknown_effort_level_is_refused():
    body = {"model": "m", "max_tokens": 10, "messages": [], "thinking": {"type": "adaptive"}}
    assert rules.request_problem({**body, "output_config": {"effort": "xhigh"}},
                                 limits=SONNET) is None
    assert rules.request_problem({**body, "output_config": {"effort": "extreme"}},
                                 limits=SONNET) == (
        "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'")


def test_context_management_needs_its_flag_and_a_large_enough_trigger():
    clear = {"type": "clear_tool_uses_20250919"}
    compact = {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 49_999}}
    body = {"context_management": {"edits": [clear]}}
    assert rules.context_management_problem(body) == \
        "context_management: Extra inputs are not permitted"
    assert rules.CONTEXT_MANAGEMENT_BETA in rules.context_management_problem(
        body, (rules.COMPACT_BETA,))
    assert rules.context_management_problem(body, (rules.CONTEXT_MANAGEMENT_BETA,)) is None
    body = {"context_management": {"edits": [compact]}}
    assert rules.context_management_problem(body, (rules.COMPACT_BETA,)) == (
        "context_management.edits.0.trigger.value: Input should be greater than or equal "
        "to 50000")


def test_combine_consecutive_turns_never_mutates():
    messages = [{"role": "user", "content": "a"}, {"role": "user", "content": [
        {"type": "text", "text": "b"}]}, {"role": "assistant", "content": "c"}]
    before = repr(messages)
    combined = rules.combine_consecutive_turns(messages)
    assert repr(messages) == before
    assert [m["role"] for m in combined] == ["user", "assistant"]
    assert [b["text"] for b in combined[0]["content"]] == ["a", "b"]


def test_automatic_marker_walks_back_over_thinking_and_empty_text():
    body = {"cache_control": {"type": "ephemeral", "ttl": "1h"}, "system": "rules",
            "messages": [{"role": "user", "content": "q"},
                         {"role": "assistant", "content": [
                             {"type": "text", "text": "partial"},
                             {"type": "thinking", "thinking": "t", "signature": "s"}]}]}
    placed = rules.place_automatic_cache_control(body)
    blocks = placed["messages"][1]["content"]
    assert blocks[0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert "cache_control" not in blocks[1]
    assert "cache_control" not in placed and "cache_control" in body
    assert body["messages"][1]["content"][0] == {"type": "text", "text": "partial"}


def test_automatic_marker_falls_back_to_system_then_tools():
    marker = {"type": "ephemeral"}
    placed = rules.place_automatic_cache_control({"cache_control": marker, "system": "s",
                                                  "messages": []})
    assert placed["system"] == [{"type": "text", "text": "s", "cache_control": marker}]
    placed = rules.place_automatic_cache_control({"cache_control": marker, "tools": [
        {"name": "a"}, {"name": "b"}], "messages": []})
    assert placed["tools"][-1] == {"name": "b", "cache_control": marker}
