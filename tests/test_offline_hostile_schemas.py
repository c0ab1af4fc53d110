"""Hostile schemas through the real SDK client over the offline API: a 400, never an exception.

A structured-outputs schema whose ``$defs`` is not an object, a tool whose ``input_schema``
is nested deeper than the handler can walk, and a forced call to a tool whose input schema
refers to itself: the client gets the API's 400 or a reply, not an ``APIConnectionError``
from an exception raised inside the transport.
"""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import anthropic

from mini_agent.offline import offline_client
from mini_agent.offline.brains import ScriptedBrain
from mini_agent.offline.json_schemas import example_value

SONNET = "claude-sonnet-5-5"
ASK = [{"role": "user", "content": "What is in a.py?"}]


def create(stream, max_tokens=800, **kwargs):
    client = offline_client(ScriptedBrain(["It defines main()."]), max_retries=0)
    params = {"model": SONNET, "max_tokens": max_tokens, "messages": ASK, **kwargs}
    if not stream:
        return client.messages.create(**params)
    with client.messages.stream(**params) as events:
        return events.get_final_message()


def nested(depth):
    schema = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"],
                  "additionalProperties": False}
    return schema


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("key, value", [("$defs", [1]), ("definitions", "x")])
def test_schema_defs_that_are_not_an_object_are_a_400(stream, key, value):
    schema = {"type": "string", key: value}
    with pytest.raises(anthropic.BadRequestError) as info:
        create(stream, output_config={"format": {"type": "json_schema", "schema": schema}})
    assert info.value.status_code == 400
    assert f"output_config.format.schema.{key}: Input should be a valid dictionary" \
        in str(info.value)


@pytest.mark.parametrize("stream", [False, True])
def test_a_tool_schema_nested_too_deeply_is_a_400(stream):
    tool = {"name": "deep", "input_schema": nested(400)}
    with pytest.raises(anthropic.BadRequestError, match="nested too deeply"):
        create(stream, tools=[tool], tool_choice={"type": "any"})


@pytest.mark.parametrize("stream", [False, True])
def test_a_forced_call_to_a_self_referring_tool_stops_at_the_loop(stream):
    schema = {"type": "object", "properties": {"name": {"type": "string"},
                                               "child": {"$ref": "#"}},
              "required": ["name", "child"]}
    reply = create(stream, tools=[{"name": "tree", "input_schema": schema}],
                   tool_choice={"type": "tool", "name": "tree"})
    assert [(b.type, b.name, b.input) for b in reply.content] == [
        ("tool_use", "tree", {"name": "", "child": {"name": "", "child": None}})]
    assert reply.stop_reason == "tool_use"


def test_example_value_follows_a_ref_once_per_branch():
    defs = {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}},
                     "required": ["next"]}}
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/node"},
                                               "b": {"$ref": "#/$defs/node"}},
              "required": ["a", "b"], "$defs": defs}
    # each property expands the node once and stops where it would enter it again
    assert example_value(schema) == {"a": {"next": None}, "b": {"next": None}}


def output(schema):
    return {"output_config": {"format": {"type": "json_schema", "schema": schema}}}


@pytest.mark.parametrize("stream", [False, True])
def test_a_ref_that_points_nowhere_is_a_400_naming_it(stream):
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/nope"}},
              "required": ["a"], "additionalProperties": False}
    with pytest.raises(anthropic.BadRequestError,
                       match="output_config.format.schema: \\$ref '#/\\$defs/nope' does not"):
        create(stream, **output(schema))


@pytest.mark.parametrize("stream", [False, True])
def test_a_ref_with_json_pointer_escapes_resolves(stream):
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/x~1y~0z"}},
              "required": ["a"], "additionalProperties": False,
              "$defs": {"x/y~z": {"type": "integer"}}}
    reply = create(stream, **output(schema))
    assert reply.content[0].text == '{"a":0}'


@pytest.mark.parametrize("stream", [False, True])
def test_the_made_up_answer_takes_an_enum_value_of_the_schemas_type(stream):
    reply = create(stream, **output({"type": "string", "enum": [1, None, "b", "c"]}))
    assert reply.content[0].text == '"b"'



def test_a_target_many_refs_share_is_checked_once_not_once_per_path(monkeypatch):
    """16 definitions, each naming the next twice: 2**16 paths, 17 schemas to check."""
    import mini_agent.offline.json_schemas as json_schemas
    defs = {f"d{i}": {"type": "object", "properties": {"a": {"$ref": f"#/$defs/d{i + 1}"},
                                                      "b": {"$ref": f"#/$defs/d{i + 1}"}},
                      "additionalProperties": False} for i in range(16)}
    defs["d16"] = {"type": "string"}
    schema = {"$ref": "#/$defs/d0", "$defs": defs}
    calls = []
    real = json_schemas._type_problem
    monkeypatch.setattr(json_schemas, "_type_problem",
                        lambda node, kind: calls.append(kind) or real(node, kind))
    assert json_schemas.schema_problem(schema) is None
    assert len(calls) <= 3 * 17 and "string" in calls
    monkeypatch.undo()
    reply = create(False, **output(schema))
    assert reply.content[0].text == "{}"
    defs["d16"]["minLength"] = 1
    with pytest.raises(anthropic.BadRequestError, match="'minLength' is not supported"):
        create(True, **output(schema))


def test_a_made_up_value_too_big_for_any_reply_is_cut_where_max_tokens_cuts_it():
    """30 required definitions naming the next twice: 2**30 strings; the reply stops early."""
    defs = {f"d{i}": {"type": "object", "properties": {"a": {"$ref": f"#/$defs/d{i + 1}"},
                                                      "b": {"$ref": f"#/$defs/d{i + 1}"}},
                      "required": ["a", "b"], "additionalProperties": False}
            for i in range(30)}
    defs["d30"] = {"type": "string"}
    reply = create(True, max_tokens=20, **output({"$ref": "#/$defs/d0", "$defs": defs}))
    assert reply.stop_reason == "max_tokens"
    assert reply.content[0].text.startswith('{"a":{"a":{"a":{"a":{"a":{"a":')
    assert len(reply.content[0].text) <= 4 * 20


def _depth(value):
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab'),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(alphabet='[]{}"\\ab', max_size=3), inner,
                                       max_size=3), max_leaves=20)


@given(_JSON)
def test_body_depth_is_the_nesting_of_the_parsed_value(value):
    """Brackets inside strings (escaped quotes too) never count."""
    from mini_agent.offline.request_check import body_depth
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1)):
        assert body_depth(text.encode()) == _depth(value)


def test_the_depth_limit_is_the_same_for_every_caller():
    """A body one level past MAX_BODY_DEPTH is refused; at the limit it is served."""
    from mini_agent.offline.request_check import MAX_BODY_DEPTH
    levels = (MAX_BODY_DEPTH - 4) // 2   # body, tools, tool, schema: 4 + 2 per level
    ok = {"name": "deep", "input_schema": nested(levels)}
    assert create(False, tools=[ok]).content
    with pytest.raises(anthropic.BadRequestError, match="more than 256 levels"):
        create(False, tools=[{"name": "deep", "input_schema": nested(levels + 1)}])
