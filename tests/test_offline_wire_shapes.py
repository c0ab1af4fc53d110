"""The offline API refuses the request shapes the real API refuses (a 400, never a crash)."""

import json

import pytest

from mini_agent.offline.wire_shapes import TOOL_NAME_PATTERN, shape_problem

TOOL = {"name": "read_file", "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}
USER = [{"role": "user", "content": "hi"}]


def _post(body: dict, path: str = "/v1/messages"):
    import httpx2

    from mini_agent.offline import EchoBrain
    from mini_agent.offline.transport import OfflineTransport
    client = httpx2.Client(transport=OfflineTransport(EchoBrain()), base_url="http://offline")
    reply = client.post(path, content=json.dumps(body).encode())
    return reply.status_code, (reply.json().get("error") or {}).get("message")


def _turn(tool_use_id="toolu_1", **result):
    return USER + [{"role": "assistant", "content": [
        {"type": "tool_use", "id": tool_use_id, "name": "read_file", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use_id,
                                      "content": "r", **result}]}]


REFUSED = [
    ({"tools": [{**TOOL, "name": "read file"}]}, "tools.0.name: String should match pattern"),
    ({"tools": [{**TOOL, "name": "a" * 129}]}, "tools.0.name: String should match pattern"),
    ({"tools": [{**TOOL, "name": ""}]}, "tools.0.name: String should match pattern"),
    ({"tools": [TOOL, TOOL]}, "tools: Tool names must be unique"),
    ({"tools": [{"name": "t", "description": "d"}]}, "tools.0.input_schema: Field required"),
    ({"tools": [{**TOOL, "input_schema": {"type": "string"}}]},
     "tools.0.input_schema.type: Input should be 'object'"),
    ({"tools": [{**TOOL, "cache_control": {"type": "ephemeral", "ttl": "2h"}}]},
     "tools.0.cache_control: cache_control must be"),
    ({"system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral",
                                                                  "ttl": "2h"}}]},
     "system.0.cache_control: cache_control must be"),
    ({"system": [{"type": "text", "text": ""}]}, "system: text content blocks must be non-empty"),
    # these two used to raise TypeError inside the client instead of answering a 400
    ({"system": [{"type": "text", "text": 5}]}, "system.0.text: Input should be a valid string"),
    ({"model": 5}, "model: Input should be a valid string"),
    ({"system": [{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                              "data": "iVBORw0KGgo="}}]},
     "system.0.type: Input should be 'text'"),
    ({"system": [{"type": "text", "text": "s", "ttl": "1h"}]},
     "system.0.ttl: Extra inputs are not permitted"),
    ({"tools": [TOOL], "tool_choice": {"type": "tool", "name": "grep"}},
     "tool_choice.name: no tool named 'grep' in tools"),
    ({"tool_choice": {"type": "any"}},
     "tool_choice: may only be specified while providing tools"),
    ({"tools": [TOOL], "tool_choice": {"type": "sometimes"}},
     "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'"),
    ({"tools": [TOOL], "tool_choice": "auto"}, "tool_choice: Input should be an object"),
    ({"tools": [TOOL], "tool_choice": {"type": "any"}, "max_tokens": 5000,
      "thinking": {"type": "enabled", "budget_tokens": 1024}},
     "Thinking may not be enabled when tool_choice forces tool use."),
    ({"stop_sequences": "STOP"}, "stop_sequences: Input should be a valid list"),
    ({"stop_sequences": [5]}, "stop_sequences.0: Input should be a valid string"),
    ({"stop_sequences": ["END", ""]}, "stop_sequences: each stop sequence must be non-empty"),
    ({"stop_sequences": ["END", "\n"]},
     "stop_sequences: each stop sequence must contain non-whitespace"),
    ({"tools": [TOOL], "tool_choice": {"type": "auto", "disable_parallel_tool_use": "yes"}},
     "tool_choice.auto.disable_parallel_tool_use: Input should be a valid boolean"),
    ({"tools": [TOOL], "tool_choice": {"type": "none", "disable_parallel_tool_use": True}},
     "tool_choice.none.disable_parallel_tool_use: Extra inputs are not permitted"),
    ({"tools": [TOOL], "tool_choice": {"type": "any", "name": "read_file"}},
     "tool_choice.any.name: Extra inputs are not permitted"),
    ({"inference_geo": "eu"}, "inference_geo: Input should be 'global' or 'us'"),
    ({"stream": "yes"}, "stream: Input should be a valid boolean"),
    ({"metadata": {"user_id": 5}}, "metadata.user_id: Input should be a valid string"),
    ({"metadata": {"team": "x"}}, "metadata.team: Extra inputs are not permitted"),
    ({"service_tier": "fast"}, "service_tier: Input should be 'auto' or 'standard_only'"),
    ({"tools": [TOOL], "messages": _turn("bad id!")},
     "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"),
    ({"tools": [TOOL], "messages": _turn(is_error="yes")},
     "messages.2.content.0.tool_result.is_error: Input should be a valid boolean"),
]


@pytest.mark.parametrize("extra, message", REFUSED, ids=[m for _, m in REFUSED])
def test_the_offline_api_refuses_what_the_real_api_refuses(extra, message):
    body = {"model": "claude-sonnet-4-6", "max_tokens": 100, "messages": USER, **extra}
    status, text = _post(body)
    assert status == 400 and text.startswith(message), text


@pytest.mark.parametrize("extra", [
    {},
    {"tools": [TOOL], "tool_choice": {"type": "tool", "name": "read_file"}},
    {"tools": [TOOL], "tool_choice": {"type": "none"}},
    {"tools": [TOOL, {"type": "memory_20250818", "name": "memory"}]},
    {"tools": [{**TOOL, "name": "a" * 128, "cache_control": {"type": "ephemeral", "ttl": "1h"}}]},
    {"stop_sequences": ["STOP", " END\n"], "stream": False, "metadata": {"user_id": "u-1"},
     "service_tier": "auto", "inference_geo": "us"},
    {"tools": [TOOL], "tool_choice": {"type": "tool", "name": "read_file",
                                      "disable_parallel_tool_use": True},
     "inference_geo": "global"},
    {"metadata": {"user_id": None}},
    {"tools": [TOOL], "messages": _turn("toolu_01A-b_c", is_error=True)},
])
def test_valid_shapes_are_accepted(extra):
    body = {"model": "claude-sonnet-4-6", "max_tokens": 100, "messages": USER, **extra}
    assert shape_problem(body) is None
    assert _post(body)[0] == 200


def test_the_tool_name_pattern_is_the_apis():
    assert TOOL_NAME_PATTERN.pattern == r"[a-zA-Z0-9_-]{1,128}"


THINK = {"type": "thinking", "thinking": "let me see", "signature": "sig"}
TEXT = {"type": "text", "text": "done"}
ON = {"thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 2000}


def _tool_loop(*assistant_blocks):
    return USER + [{"role": "assistant", "content": [
        *assistant_blocks, {"type": "tool_use", "id": "toolu_1", "name": "read_file",
                            "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": "r"}]}]


THINKING_REFUSED = [
    ({"messages": USER + [{"role": "assistant", "content": [TEXT, THINK]},
                          {"role": "user", "content": "go on"}]},
     "messages.1.content.0: If an assistant message contains any thinking blocks, the first "
     "block must be thinking or redacted_thinking. Found text."),
    ({**ON, "tools": [TOOL], "messages": _tool_loop(TEXT)},   # the loop dropped its thinking
     "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
     "`text`. When `thinking` is enabled, a final `assistant` message must start with a "
     "thinking block"),
    ({**ON, "messages": USER + [{"role": "assistant", "content": "Sure"}]},
     "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`"),
    ({"messages": USER + [{"role": "assistant", "content": [THINK, TEXT]}]},
     "messages.1.content.0: When thinking is disabled, an `assistant` message in the final "
     "position cannot contain `thinking`."),
    ({**ON, "messages": USER + [{"role": "assistant", "content": [THINK]}]},
     "messages.1: The final block in an assistant message cannot be `thinking`."),
]


@pytest.mark.parametrize("extra, message", THINKING_REFUSED, ids=range(len(THINKING_REFUSED)))
def test_thinking_blocks_out_of_place_are_refused_as_the_api_refuses_them(extra, message):
    # a model that still takes a final assistant turn (a prefill), so every rule is reachable
    body = {"model": "claude-haiku-4-5", "max_tokens": 100, "messages": USER, **extra}
    status, text = _post(body)
    assert status == 400 and text.startswith(message), text


@pytest.mark.parametrize("extra", [
    {**ON, "tools": [TOOL], "messages": _tool_loop(THINK, TEXT)},
    {**ON, "tools": [TOOL], "messages": _tool_loop({"type": "redacted_thinking", "data": "x"})},
    {"tools": [TOOL], "messages": _tool_loop(THINK)},   # thinking off: past thinking is fine
    {**ON, "messages": USER + [{"role": "assistant", "content": [TEXT]},   # an older turn
                               {"role": "user", "content": "next"}]},
    {**ON, "messages": USER + [{"role": "assistant", "content": [THINK, TEXT]}]},
])
def test_thinking_blocks_in_place_are_accepted(extra):
    body = {"model": "claude-haiku-4-5", "max_tokens": 100, "messages": USER, **extra}
    assert _post(body) == (200, None)


ADAPTIVE = {"thinking": {"type": "adaptive"}, "max_tokens": 2000}


@pytest.mark.parametrize("extra", [
    {**ADAPTIVE, "tools": [TOOL], "messages": _tool_loop(TEXT)},   # the model chose not to think
    {**ADAPTIVE, "tools": [TOOL], "messages": _tool_loop(THINK, TEXT)},
    {**ADAPTIVE, "messages": USER + [{"role": "assistant", "content": [TEXT]},
                                     {"role": "user", "content": "next"}]},
    {**ADAPTIVE, "tools": [TOOL], "tool_choice": {"type": "any"}},   # forced use is fine here
    {"thinking": {"type": "between_tools"}, "tools": [TOOL], "messages": _tool_loop(TEXT)},
])
def test_adaptive_thinking_may_skip_thinking_and_force_tools(extra):
    body = {"model": "claude-sonnet-4-6", "max_tokens": 100, "messages": USER, **extra}
    assert _post(body) == (200, None)


@pytest.mark.parametrize("extra, message", [
    ({**ADAPTIVE, "messages": USER + [{"role": "assistant", "content": [TEXT, THINK]},
                                      {"role": "user", "content": "go on"}]},
     "messages.1.content.0: If an assistant message contains any thinking blocks, the first "
     "block must be thinking or redacted_thinking. Found text."),
    ({**ADAPTIVE, "tools": [TOOL], "messages": _tool_loop(TEXT, THINK)},
     "messages.1.content.0: If an assistant message contains any thinking blocks, the first "
     "block must be thinking or redacted_thinking. Found text."),
    ({**ON, "tools": [TOOL], "tool_choice": {"type": "any"}},
     "Thinking may not be enabled when tool_choice forces tool use."),
])
def test_adaptive_thinking_keeps_the_other_placement_rules(extra, message):
    body = {"model": "claude-sonnet-4-6", "max_tokens": 100, "messages": USER, **extra}
    status, text = _post(body)
    assert status == 400 and text.startswith(message), text


@pytest.mark.parametrize("model, status", [
    ("claude-sonnet-4-6", 400), ("claude-sonnet-5-5", 400), ("claude-opus-4-8", 400),
    ("claude-opus-4-5", 200), ("claude-haiku-4-5", 200),
])
def test_a_final_assistant_turn_is_a_prefill_the_4_6_and_later_models_refuse(model, status):
    body = {"model": model, "max_tokens": 100,
            "messages": USER + [{"role": "assistant", "content": '{"answer":'}]}
    code, text = _post(body)
    assert code == status
    if status == 400:
        assert text == ("This model does not support assistant message prefill. The "
                        "conversation must end with a user message.")
    # a tool loop ends with the user's tool_result: no prefill on any model
    loop = {"model": model, "max_tokens": 100, "tools": [TOOL], "messages": _tool_loop(TEXT)}
    assert _post(loop) == (200, None)


CM_BETA = {"anthropic-beta": "context-management-2025-06-27"}
CLEAR = "clear_tool_uses_20250919"


def _post_beta(body: dict, path: str = "/v1/messages?beta=true"):
    import httpx2

    from mini_agent.offline import EchoBrain
    from mini_agent.offline.transport import OfflineTransport
    client = httpx2.Client(transport=OfflineTransport(EchoBrain()), base_url="http://offline")
    reply = client.post(path, content=json.dumps(body).encode(), headers=CM_BETA)
    return reply.status_code, (reply.json().get("error") or {}).get("message")


CM_REFUSED = [   # each of these used to crash inside the client (ValueError, AttributeError)
    ({"edits": [{"type": CLEAR, "trigger": {"type": "minutes", "value": 5}}]},  # or pass as 200
     f"context_management.edits.0.{CLEAR}.trigger.type: Input should be 'input_tokens' or "
     "'tool_uses'"),
    ({"edits": [{"type": CLEAR, "keep": "3"}]},
     f"context_management.edits.0.{CLEAR}.keep: Input should be a valid dictionary"),
    ({"edits": [{"type": CLEAR, "trigger": {"type": "input_tokens", "value": -5}}]},
     f"context_management.edits.0.{CLEAR}.trigger.value: Input should be greater than or "
     "equal to 0"),
    ({"edits": [{"type": CLEAR, "trigger": {"type": "tool_uses", "value": "3"}}]},
     f"context_management.edits.0.{CLEAR}.trigger.value: Input should be a valid integer"),
    ({"edits": [{"type": CLEAR, "clear_at_least": {"type": "tool_uses", "value": 3}}]},
     f"context_management.edits.0.{CLEAR}.clear_at_least.type: Input should be 'input_tokens'"),
    ({"edits": [{"type": CLEAR, "exclude_tools": "run_bash"}]},
     f"context_management.edits.0.{CLEAR}.exclude_tools: Input should be a valid list"),
    ({"edits": [{"type": CLEAR, "clear_tool_inputs": "yes"}]},
     f"context_management.edits.0.{CLEAR}.clear_tool_inputs: Input should be a valid list"),
    ({"edits": [{"type": CLEAR, "bogus": 1}]},
     f"context_management.edits.0.{CLEAR}.bogus: Extra inputs are not permitted"),
    ({"edits": [{"type": CLEAR}, {"type": "clear_thinking_20251015"}]},
     "context_management.edits.1: the clear_thinking_20251015 edit must be listed first"),
    ({"edits": [{"type": "clear_thinking_20251015", "keep": {"type": "turns", "value": 1}}]},
     "context_management.edits.0.clear_thinking_20251015.keep.type: Input should be "
     "'thinking_turns'"),
    ({"edits": {}}, "context_management.edits: Input should be a valid list"),
    ({"edits": [], "auto": True}, "context_management.auto: Extra inputs are not permitted"),
    ([], "context_management: Input should be a valid dictionary"),
]


@pytest.mark.parametrize("config, message", CM_REFUSED, ids=range(len(CM_REFUSED)))
def test_context_management_edits_of_the_wrong_shape_are_a_400(config, message):
    body = {"model": "claude-sonnet-4-6", "max_tokens": 2000, "messages": USER,
            "thinking": {"type": "enabled", "budget_tokens": 1024}, "context_management": config}
    for path in ("/v1/messages?beta=true", "/v1/messages/count_tokens?beta=true"):
        if "count_tokens" in path:
            body = {k: v for k, v in body.items() if k != "max_tokens"}
        status, text = _post_beta(body, path)
        assert status == 400 and text.startswith(message), (path, text)


@pytest.mark.parametrize("config", [
    {"edits": []},
    {"edits": [{"type": CLEAR, "trigger": {"type": "tool_uses", "value": 3},
                "keep": {"type": "tool_uses", "value": 0}, "clear_at_least": None,
                "exclude_tools": ["memory"], "clear_tool_inputs": ["run_bash"]}]},
    {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}, {"type": CLEAR}]},
    {"edits": [{"type": "clear_thinking_20251015", "keep": {"type": "all"}}]},
    {"edits": [{"type": "clear_thinking_20251015",
                "keep": {"type": "thinking_turns", "value": 2}}]},
])
def test_context_management_edits_of_the_sdks_shapes_are_accepted(config):
    body = {"model": "claude-sonnet-4-6", "max_tokens": 2000, "messages": USER,
            "thinking": {"type": "enabled", "budget_tokens": 1024}, "context_management": config}
    assert _post_beta(body) == (200, None)


@pytest.mark.parametrize("thinking, status", [
    (None, 400), ({"type": "disabled"}, 400), ({"type": "enabled", "budget_tokens": 1024}, 200),
    ({"type": "adaptive"}, 200),
])
def test_clearing_thinking_needs_thinking_on(thinking, status):
    body = {"model": "claude-sonnet-4-6", "max_tokens": 2000, "messages": USER,
            "context_management": {"edits": [{"type": "clear_thinking_20251015"}]}}
    if thinking is not None:
        body["thinking"] = thinking
    code, text = _post_beta(body)
    assert code == status
    if status == 400:
        assert text == "`clear_thinking_20251015` strategy requires `thinking` to be enabled"


PNG = "iVBORw0KGgo="   # the 8 bytes of the PNG signature


def _image(data, media_type="image/png"):
    return {"type": "image", "source": {"type": "base64", "media_type": media_type,
                                        "data": data}}


@pytest.mark.parametrize("messages, message", [
    ([{"role": "user", "content": [_image("iVBOR")]}],
     "messages.0.content.0.image.source.base64.data: invalid base64 data"),
    ([{"role": "user", "content": [_image("not base64!")]}],
     "messages.0.content.0.image.source.base64.data: invalid base64 data"),
    ([{"role": "user", "content": [_image(PNG, "image/jpeg")]}],
     "messages.0.content.0.image.source.base64.data: Image does not match the provided "
     "media type image/jpeg"),
    (_turn(content=[_image("aGVsbG8=")]),    # "hello": no image at all
     "messages.2.content.0.tool_result.content.0.image.source.base64.data: Image does not "
     "match the provided media type image/png"),
])
def test_an_image_the_api_cannot_decode_is_refused(messages, message):
    body = {"model": "claude-sonnet-4-6", "max_tokens": 100, "messages": messages,
            "tools": [TOOL]}
    assert _post(body) == (400, message)


def test_an_image_that_decodes_to_its_media_type_is_accepted():
    body = {"model": "claude-sonnet-4-6", "max_tokens": 100, "tools": [TOOL],
            "messages": _turn(content=[_image(PNG)])}
    assert _post(body) == (200, None)
