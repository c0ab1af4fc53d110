"""The offline API makes a reply obey what the request forces, as the real model must.

With ``tool_choice`` ``any`` the reply calls a tool, with ``tool`` it calls the named one, and
in both it holds no text (the API prefills the tool call); with ``output_config.format`` the
answer text is JSON valid against the schema, and a schema with a feature structured
outputs do not take is a 400 with the API's message. Each check goes through the real SDK
client, JSON and SSE.
"""

import json

import anthropic
import pytest

from mini_agent.offline import offline_client
from mini_agent.offline.brains import ScriptedBrain

SONNET = "claude-sonnet-5-5"
ASK = [{"role": "user", "content": "What is in a.py?"}]
READ = {"name": "read_file", "input_schema": {
    "type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["path"]}}
GREP = {"name": "grep", "input_schema": {
    "type": "object", "properties": {"pattern": {"type": "string"},
                                     "mode": {"enum": ["files", "lines"]}},
    "required": ["pattern", "mode"]}}
PROSE = "It defines main()."
CALLS = {"content": [
    {"type": "text", "text": "Let me look."},
    {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
    {"type": "tool_use", "id": "toolu_2", "name": "grep", "input": {"pattern": "x",
                                                                     "mode": "lines"}}],
    "stop_reason": "tool_use"}


def create(brain, stream=False, **kwargs):
    client = offline_client(ScriptedBrain([brain]))
    params = {"model": SONNET, "max_tokens": 800, "messages": ASK, **kwargs}
    if not stream:
        return client.messages.create(**params)
    with client.messages.stream(**params) as events:
        return events.get_final_message()


def calls(reply):
    return [(b.name, b.input) for b in reply.content if b.type == "tool_use"]


# ------------------------------------------------------------------ tool_choice any / tool

@pytest.mark.parametrize("stream", [False, True])
def test_any_makes_a_reply_without_a_call_call_the_first_tool(stream):
    reply = create(PROSE, stream, tools=[READ, GREP], tool_choice={"type": "any"})
    assert [b.type for b in reply.content] == ["tool_use"]      # no text: the call is prefilled
    assert calls(reply) == [("read_file", {"path": ""})]         # required fields only
    assert reply.stop_reason == "tool_use"
    assert reply.content[0].id == "toolu_offline_forced_0001"


@pytest.mark.parametrize("stream", [False, True])
def test_tool_makes_the_reply_call_the_named_tool(stream):
    reply = create(PROSE, stream, tools=[READ, GREP],
                   tool_choice={"type": "tool", "name": "grep"})
    assert calls(reply) == [("grep", {"pattern": "", "mode": "files"})]
    assert reply.stop_reason == "tool_use"


@pytest.mark.parametrize("stream", [False, True])
def test_forced_choice_keeps_the_brains_own_calls_and_drops_its_text(stream):
    reply = create(CALLS, stream, tools=[READ, GREP], tool_choice={"type": "any"})
    assert [b.type for b in reply.content] == ["tool_use", "tool_use"]
    assert [b.id for b in reply.content] == ["toolu_1", "toolu_2"]
    named = create(CALLS, stream, tools=[READ, GREP],
                   tool_choice={"type": "tool", "name": "grep"})
    assert [b.id for b in named.content] == ["toolu_2"]        # the forced call comes first


def test_forced_choice_with_one_call_only_keeps_the_first():
    reply = create(CALLS, tools=[READ, GREP],
                   tool_choice={"type": "any", "disable_parallel_tool_use": True})
    assert [b.id for b in reply.content] == ["toolu_1"]


def test_auto_still_lets_the_model_answer_in_prose():
    reply = create(PROSE, tools=[READ], tool_choice={"type": "auto"})
    assert [b.type for b in reply.content] == ["text"]
    assert reply.stop_reason == "end_turn"


def test_forced_choice_with_manual_thinking_is_refused():
    with pytest.raises(anthropic.BadRequestError) as info:
        create(PROSE, tools=[READ], tool_choice={"type": "tool", "name": "read_file"},
               max_tokens=4000, thinking={"type": "enabled", "budget_tokens": 2048},
               model="claude-sonnet-4-6")
    assert info.value.status_code == 400
    assert info.value.body["error"]["type"] == "invalid_request_error"
    assert "tool_choice forces tool use" in info.value.body["error"]["message"]


# ------------------------------------------------------------------ structured outputs

PERSON = {"type": "object", "properties": {
    "name": {"type": "string"}, "age": {"type": "integer"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "role": {"anyOf": [{"type": "null"}, {"enum": ["dev", "ops"]}]}},
    "required": ["name", "age", "tags", "role"], "additionalProperties": False}


def json_format(schema):
    return {"format": {"type": "json_schema", "schema": schema}}


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_that_is_not_json_becomes_json_valid_for_the_schema(stream):
    reply = create(PROSE, stream, output_config=json_format(PERSON))
    assert [b.type for b in reply.content] == ["text"]
    assert json.loads(reply.content[0].text) == {"name": "", "age": 0, "tags": [],
                                                 "role": None}
    assert reply.stop_reason == "end_turn"


@pytest.mark.parametrize("answer, kept", [
    ('{"name": "Ada", "age": 36, "tags": ["x"], "role": "dev"}', True),
    ('{"name": "Ada", "age": 36, "tags": ["x"]}', False),               # role missing
    ('{"name": "Ada", "age": 36, "tags": [], "role": "cto"}', False),   # not in the enum
    ('{"name": "Ada", "age": 3.5, "tags": [], "role": null}', False),   # not an integer
    ('{"name": "Ada", "age": 3, "tags": [], "role": null, "x": 1}', False),  # closed object
])
def test_a_valid_json_answer_is_kept_and_an_invalid_one_replaced(answer, kept):
    reply = create(answer, output_config=json_format(PERSON))
    assert (reply.content[0].text == answer) is kept
    assert json.loads(reply.content[0].text).keys() == {"name", "age", "tags", "role"}


def test_a_reply_that_calls_a_tool_keeps_its_text():
    reply = create(CALLS, tools=[READ, GREP], output_config=json_format(PERSON))
    assert reply.content[0].text == "Let me look."


@pytest.mark.parametrize("schema, message", [
    ({"type": "object", "properties": {}},
     "For 'object' type, 'additionalProperties' must be explicitly set to false"),
    ({"type": "integer", "minimum": 1},
     "For 'integer' type, property 'minimum' is not supported"),
    ({"type": "integer", "minimum": 1, "maximum": 9},
     "For 'integer' type, properties maximum, minimum are not supported"),
    ({"type": "array", "items": {"type": "string"}, "minItems": 3},
     "For 'array' type, 'minItems' values other than 0 or 1 are not supported"),
    ({"type": "object", "additionalProperties": False,
      "properties": {"n": {"type": "string", "maxLength": 5}}},
     "For 'string' type, property 'maxLength' is not supported"),
    ({"$ref": "#/$defs/node", "$defs": {"node": {
        "type": "object", "additionalProperties": False,
        "properties": {"next": {"$ref": "#/$defs/node"}}}}},
     "Recursive schemas are not supported"),
])
def test_an_unsupported_schema_feature_is_a_400(schema, message):
    with pytest.raises(anthropic.BadRequestError) as info:
        create(PROSE, output_config=json_format(schema))
    assert info.value.status_code == 400
    assert info.value.body["error"] == {"type": "invalid_request_error",
                                        "message": f"output_config.format.schema: {message}"}


@pytest.mark.parametrize("fmt, message", [
    ({"type": "json_object", "schema": PERSON},
     "output_config.format.type: Input should be 'json_schema'"),
    ({"type": "json_schema"}, "output_config.format.schema: Field required"),
    ({"type": "json_schema", "schema": PERSON, "strict": True},
     "output_config.format.strict: Extra inputs are not permitted"),
])
def test_a_format_of_the_wrong_shape_is_a_400(fmt, message):
    client = offline_client(ScriptedBrain([PROSE]))
    with pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(model=SONNET, max_tokens=100, messages=ASK,
                   extra_body={"output_config": {"format": fmt}})
    assert info.value.body["error"]["message"] == message


def test_a_supported_schema_with_defs_formats_and_effort_is_served():
    schema = {"$defs": {"when": {"type": "string", "format": "date"}},
              "type": "object", "additionalProperties": False,
              "properties": {"due": {"$ref": "#/$defs/when"},
                             "items": {"type": "array", "minItems": 1,
                                       "items": {"type": "number"}}},
              "required": ["due", "items"]}
    reply = create(PROSE, output_config={"effort": "low", **json_format(schema)})
    assert json.loads(reply.content[0].text) == {"due": "2026-01-01", "items": [0]}


def test_any_never_makes_up_a_call_to_a_tool_only_code_may_call():
    coded = {**READ, "allowed_callers": ["code_execution_20250825"]}
    reply = create(PROSE, tools=[coded, GREP], tool_choice={"type": "any"})
    assert calls(reply) == [("grep", {"pattern": "", "mode": "files"})]
