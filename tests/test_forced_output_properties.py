"""Properties of the forced reply over any schema the API takes and any brain reply.

For every schema of the structured-outputs subset, :func:`schema_problem` accepts it and the
smallest example value is valid for it; :func:`force_output_format` always ends with an
answer that parses and is valid; :func:`force_tool_choice` always leaves a reply that calls
the forced tool first and holds no text; neither mutates its input.
"""

import copy
import json

from hypothesis import given
from hypothesis import strategies as st

from mini_agent.offline.forced_output import force_output_format, force_tool_choice
from mini_agent.offline.json_schemas import example_value, is_valid, schema_problem

NAMES = st.sampled_from(["a", "b", "path", "mode", "n"])
LEAVES = st.one_of(
    st.sampled_from([{"type": t} for t in ("string", "integer", "number", "boolean", "null")]),
    st.builds(lambda f: {"type": "string", "format": f},
              st.sampled_from(["date", "date-time", "uuid", "email", "uri", "ipv4"])),
    st.lists(st.one_of(st.text(max_size=4), st.integers(-5, 5), st.booleans()),
             min_size=1, max_size=4).map(lambda values: {"enum": values}),
    st.one_of(st.text(max_size=4), st.integers(), st.none()).map(lambda v: {"const": v}))


def _grow(children):
    objects = st.dictionaries(NAMES, children, max_size=4).flatmap(
        lambda props: st.lists(st.sampled_from(sorted(props)) if props else st.nothing(),
                               unique=True, max_size=len(props)).map(
            lambda required: {"type": "object", "properties": props, "required": required,
                              "additionalProperties": False}))
    arrays = st.builds(lambda items, least: {"type": "array", "items": items,
                                             **({"minItems": least} if least is not None
                                                else {})},
                       children, st.sampled_from([None, 0, 1]))
    unions = st.lists(children, min_size=1, max_size=3).map(lambda s: {"anyOf": s})
    return st.one_of(objects, arrays, unions)


SCHEMAS = st.recursive(LEAVES, _grow, max_leaves=12)
TEXT = st.text(max_size=30)


@given(SCHEMAS)
def test_the_smallest_example_of_a_supported_schema_is_valid(schema):
    before = copy.deepcopy(schema)
    assert schema_problem(schema) is None
    value = example_value(schema)
    assert is_valid(value, schema)
    assert is_valid(json.loads(json.dumps(value)), schema)
    assert schema == before


@given(SCHEMAS, st.lists(st.one_of(TEXT.map(lambda t: {"type": "text", "text": t}),
                                   st.just({"type": "thinking", "thinking": "hm",
                                            "signature": "s"})), max_size=4))
def test_a_forced_answer_always_parses_and_matches_the_schema(schema, content):
    body = {"output_config": {"format": {"type": "json_schema", "schema": schema}}}
    before = copy.deepcopy(content)
    out = force_output_format(content, body)
    answer = "".join(b["text"] for b in out if b["type"] == "text")
    assert is_valid(json.loads(answer), schema)
    assert [b for b in out if b["type"] != "text"] == \
        [b for b in content if b["type"] != "text"]
    assert content == before


TOOLS = [{"name": "read", "input_schema": {"type": "object", "properties": {
             "path": {"type": "string"}}, "required": ["path"]}},
         {"name": "grep", "input_schema": {"type": "object"}}]
BLOCKS = st.one_of(
    TEXT.map(lambda t: {"type": "text", "text": t}),
    st.builds(lambda i, name: {"type": "tool_use", "id": f"toolu_{i}", "name": name,
                               "input": {}}, st.integers(0, 9), st.sampled_from(["read",
                                                                                 "grep"])),
    st.just({"type": "thinking", "thinking": "hm", "signature": "s"}))


@given(st.lists(BLOCKS, max_size=6), st.sampled_from(
    [{"type": "any"}, {"type": "tool", "name": "read"}, {"type": "tool", "name": "grep"}]))
def test_a_forced_reply_calls_the_tool_first_and_holds_no_text(content, choice):
    body = {"tools": TOOLS, "tool_choice": choice}
    before = copy.deepcopy(content)
    out, stop_reason = force_tool_choice(content, "end_turn", body, tool_id="toolu_x")
    assert stop_reason == "tool_use"
    assert all(b["type"] in ("thinking", "tool_use") for b in out)
    calls = [b for b in out if b["type"] == "tool_use"]
    assert calls
    if choice["type"] == "tool":
        assert calls[0]["name"] == choice["name"]
    thinking = [b for b in out if b["type"] == "thinking"]
    assert out[:len(thinking)] == thinking                 # thinking only ahead of the calls
    assert content == before
