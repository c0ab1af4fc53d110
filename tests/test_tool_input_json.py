"""The tool_use input dumped once per session (``core/tokens.tool_input_json``).

Covers: the text equals ``json.dumps(input, ensure_ascii=False)`` inside and outside a token
memo, a replaced input is dumped again, and the calibrated features and identifiers read the
same text.
"""

import json

from hypothesis import given, strategies as st

from mini_agent.core.calibration import message_features
from mini_agent.core.relevance import exchange_texts
from mini_agent.core.tokens import approx_tokens, token_memo, tool_input_json

_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                               max_size=3),
    max_leaves=8)


@given(st.dictionaries(st.text(max_size=5), _JSON_VALUES, max_size=4))
def test_tool_input_json_is_json_dumps(value):
    block = {"type": "tool_use", "id": "t1", "name": "grep", "input": value}
    expected = json.dumps(value, ensure_ascii=False)
    assert tool_input_json(block) == expected
    with token_memo():
        assert tool_input_json(block) == expected
        assert tool_input_json(block) == expected  # the remembered text


def test_missing_input_dumps_as_empty_object():
    block = {"type": "tool_use", "id": "t1", "name": "grep"}
    with token_memo():
        assert tool_input_json(block) == "{}"
        assert tool_input_json(block) == "{}"
    assert tool_input_json({**block, "input": None}) == "null"


def test_replaced_input_is_dumped_again():
    block = {"type": "tool_use", "id": "t1", "name": "grep", "input": {"pattern": "é"}}
    with token_memo():
        assert tool_input_json(block) == '{"pattern": "é"}'
        block["input"] = {"pattern": "abcdef"}
        assert tool_input_json(block) == '{"pattern": "abcdef"}'
        # the count follows: name 4 + JSON 21 + 20 framing = 45 chars -> 12 tokens
        assert approx_tokens(block) == 12


def test_features_and_identifiers_read_the_same_text():
    block = {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "src/app.py"}}
    message = {"role": "assistant", "content": [block]}
    outside = (message_features(message), exchange_texts([message]))
    with token_memo():
        approx_tokens(message)  # the dump is remembered first
        assert (message_features(message), exchange_texts([message])) == outside
    assert outside[1] == ['{"path": "src/app.py"}']
    assert outside[0]["json"] == len('read{"path": "src/app.py"}')
