"""The offline Claude: real SDK types over our httpx2 transport, with API-shaped errors."""

import anthropic
import pytest

from mini_agent.offline import FaultPlan, ScriptedBrain, offline_async_client, offline_client

MODEL = "claude-sonnet-4-6"
TOOLS = [{"name": "read_file", "description": "Read a file",
          "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]
TOOL_REPLY = {"content": [{"type": "text", "text": "Let me read it."},
                          {"type": "tool_use", "id": "toolu_a", "name": "read_file",
                           "input": {"path": "src/app.py"}},
                          {"type": "tool_use", "id": "toolu_b", "name": "read_file",
                           "input": {"path": "src/util.py"}}],
              "stop_reason": "tool_use"}


def test_json_reply_is_an_sdk_message():
    client = offline_client(ScriptedBrain([TOOL_REPLY]))
    msg = client.messages.create(model=MODEL, max_tokens=200, tools=TOOLS,
                                 messages=[{"role": "user", "content": "read"}])
    assert isinstance(msg, anthropic.types.Message)
    assert msg.stop_reason == "tool_use"
    assert [b.type for b in msg.content] == ["text", "tool_use", "tool_use"]
    assert msg.content[2].input == {"path": "src/util.py"}
    assert msg.usage.input_tokens > 0 and msg.usage.output_tokens > 0
    assert msg.id == "msg_offline_0001"


def test_stream_accumulates_to_the_same_message():
    client = offline_client(ScriptedBrain([TOOL_REPLY]))
    kwargs = dict(model=MODEL, max_tokens=200, tools=TOOLS,
                  messages=[{"role": "user", "content": "read"}])
    plain = client.messages.create(**kwargs)
    with client.messages.stream(**kwargs) as stream:
        kinds = [event.type for event in stream]
        streamed = stream.get_final_message()
    assert kinds.count("content_block_stop") == 3
    assert [b.model_dump(exclude={"parsed_output"}) for b in streamed.content] == \
        [b.model_dump() for b in plain.content]
    assert streamed.stop_reason == "tool_use"
    assert streamed.usage.output_tokens == plain.usage.output_tokens


def test_orphan_tool_result_gets_the_api_400_shape():
    client = offline_client(ScriptedBrain(["x"]), max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(model=MODEL, max_tokens=10, tools=TOOLS, messages=[
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_zz",
                                          "content": "x"}]}])
    body = info.value.body
    assert body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    assert "toolu_zz" in body["error"]["message"]


def test_tool_blocks_without_tools_definition_are_refused():
    client = offline_client(ScriptedBrain(["x"]), max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="must define tools"):
        client.messages.create(model=MODEL, max_tokens=10, messages=[
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [TOOL_REPLY["content"][1]]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a",
                                          "content": "x"}]}])


def test_prompt_too_long():
    client = offline_client(ScriptedBrain(["x"]), context_window_tokens=100, max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(model=MODEL, max_tokens=10,
                               messages=[{"role": "user", "content": "y" * 800}])
    assert info.value.body["error"]["message"] == "prompt is too long: 200 tokens > 100 maximum"


def test_max_tokens_cuts_text():
    client = offline_client(ScriptedBrain(["z" * 400]))
    msg = client.messages.create(model=MODEL, max_tokens=10,
                                 messages=[{"role": "user", "content": "go"}])
    assert msg.stop_reason == "max_tokens"
    assert msg.content[0].text == "z" * 40


def test_fault_cuts_inside_a_tool_use():
    client = offline_client(ScriptedBrain([TOOL_REPLY]),
                            faults=FaultPlan(max_tokens_at={1: "tool_use"}))
    with client.messages.stream(model=MODEL, max_tokens=500, tools=TOOLS,
                                messages=[{"role": "user", "content": "go"}]) as stream:
        partial = [e.delta.partial_json for e in stream
                   if e.type == "content_block_delta" and e.delta.type == "input_json_delta"
                   and e.index == 2]
        msg = stream.get_final_message()
    assert msg.stop_reason == "max_tokens"
    assert len(msg.content) == 3
    text = "".join(partial)
    assert text and text == '{"path": "src/util.py"}'[: len(text)] and len(text) < 23


def test_overloaded_is_retried_by_the_sdk():
    client = offline_client(ScriptedBrain(["fine"]), faults=FaultPlan(overloaded_at={1}))
    msg = client.messages.create(model=MODEL, max_tokens=10,
                                 messages=[{"role": "user", "content": "go"}])
    assert msg.content[0].text == "fine"
    assert client.offline_transport.request_count == 2
    no_retry = offline_client(ScriptedBrain(["fine"]), faults=FaultPlan(overloaded_at={1}),
                              max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as info:
        no_retry.messages.create(model=MODEL, max_tokens=10,
                                 messages=[{"role": "user", "content": "go"}])
    assert info.value.status_code == 529


def test_count_tokens():
    client = offline_client()
    count = client.messages.count_tokens(model=MODEL,
                                         messages=[{"role": "user", "content": "x" * 40}])
    assert count.input_tokens == 10


def test_extra_top_level_field_is_refused():
    client = offline_client(max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="Extra inputs are not permitted"):
        client.messages.create(model=MODEL, max_tokens=10, extra_body={"bogus": 1},
                               messages=[{"role": "user", "content": "go"}])


def test_async_client_streams():
    import asyncio

    async def run():
        client = offline_async_client(ScriptedBrain([TOOL_REPLY]))
        async with client.messages.stream(model=MODEL, max_tokens=200, tools=TOOLS,
                                          messages=[{"role": "user", "content": "go"}]) as s:
            return await s.get_final_message()

    msg = asyncio.run(run())
    assert msg.content[1].input == {"path": "src/app.py"}


def test_request_transforms_and_usage_model_are_applied():
    seen = []

    def transform(request):
        request = dict(request, messages=request["messages"][-1:])
        return request, {"context_management": {"applied_edits": []}}

    class Usage:
        def usage(self, request, *, now):
            seen.append(len(request["messages"]))
            return {"input_tokens": 7, "cache_creation_input_tokens": 3,
                    "cache_read_input_tokens": 11}

    client = offline_client(ScriptedBrain(["ok"]), usage_model=Usage(),
                            request_transforms=[transform])
    msg = client.beta.messages.create(model=MODEL, max_tokens=10, messages=[
        {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
        {"role": "user", "content": "c"}])
    assert seen == [1]
    assert (msg.usage.input_tokens, msg.usage.cache_creation_input_tokens,
            msg.usage.cache_read_input_tokens) == (7, 3, 11)
    assert msg.context_management.applied_edits == []


# --------------------------------------------------------------------------- adversarial bodies

def _post(raw: bytes, path: str = "/v1/messages"):
    import httpx2

    from mini_agent.offline import EchoBrain
    from mini_agent.offline.transport import OfflineTransport
    client = httpx2.Client(transport=OfflineTransport(EchoBrain()), base_url="http://offline")
    reply = client.post(path, content=raw)
    return reply.status_code, reply.json()["error"]["message"]


def test_deeply_nested_body_is_a_400():
    assert _post(b"[" * 100_000 + b"]" * 100_000) == (
        400, "Invalid JSON body: nested too deeply")


@pytest.mark.parametrize("extra, message", [
    ({"system": 5}, "system: Input should be a valid string or a list of text blocks"),
    ({"tools": "read_file"}, "tools: Input should be a list of tool objects, each with a name"),
    ({"tools": [None]}, "tools: Input should be a list of tool objects, each with a name"),
    ({"max_tokens": True}, "max_tokens: Input should be a valid integer"),
])
def test_top_level_fields_of_the_wrong_type_are_a_400(extra, message):
    import json
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
            **extra}
    assert _post(json.dumps(body).encode()) == (400, message)
    if "max_tokens" not in extra:
        del body["max_tokens"]
        assert _post(json.dumps(body).encode(), "/v1/messages/count_tokens") == (400, message)


def test_scripted_brain_answers_from_the_state_of_the_conversation():
    def call(k):
        return {"type": "tool_use", "id": f"toolu_{k}", "name": "read_file",
                "input": {"path": f"f{k}.py"}}

    script = [{"content": [call(k)], "stop_reason": "tool_use"} for k in range(3)] + ["done"]
    brain = ScriptedBrain(script)

    def result(k):
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{k}",
                                             "content": "x"}]}

    full = [{"role": "user", "content": "go"}]
    for k in range(2):
        full += [{"role": "assistant", "content": [call(k)]}, result(k)]
    assert brain.respond({"messages": full})["content"] == [call(2)]
    # a view that dropped the first exchange, and a history with a greeting before the script
    dropped = [{"role": "user", "content": "summary"}, *full[3:]]
    assert brain.respond({"messages": dropped})["content"] == [call(2)]
    greeted = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "Hi!"},
               *full]
    assert brain.respond({"messages": greeted})["content"] == [call(2)]
    assert brain.respond({"messages": [{"role": "user", "content": "go"}]})["content"] == \
        [call(0)]
