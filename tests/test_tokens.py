"""approx_tokens: the seed's chars/4 rule with literal expected values."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_agent.core.tokens import approx_request_tokens, approx_tokens, image_size, image_tokens
from strategies import histories, tiny_png


def test_string_and_message():
    assert approx_tokens("") == 0
    assert approx_tokens("abcd") == 1
    assert approx_tokens("abcde") == 2
    assert approx_tokens({"role": "user", "content": "x" * 40}) == 10


def test_tool_use_counts_name_json_and_20():
    block = {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.py"}}
    chars = len(json.dumps({"path": "a.py"})) + len("read_file") + 20
    assert approx_tokens(block) == -(-chars // 4)


def test_tool_result_string_and_list_content():
    s = {"type": "tool_result", "tool_use_id": "t", "content": "x" * 10}
    lst = {"type": "tool_result", "tool_use_id": "t",
           "content": [{"type": "text", "text": "x" * 6}, {"type": "text", "text": "y" * 6}]}
    assert approx_tokens(s) == 3
    assert approx_tokens(lst) == 3


def test_image_from_pixels_not_base64_length():
    block = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": tiny_png(300, 250)}}
    assert image_tokens(block) == 100  # 300*250/750
    big = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                       "data": tiny_png(4000, 4000)}}
    assert image_tokens(big) == 1600  # capped
    assert approx_tokens({"role": "user", "content": [block]}) == 100


def test_image_size_readers():
    import base64
    assert image_size(base64.b64decode(tiny_png(7, 9))) == (7, 9)
    assert image_size(b"GIF89a\x05\x00\x06\x00") == (5, 6)
    assert image_size(b"not an image") is None


def test_unknown_image_source_uses_cap():
    block = {"type": "image", "source": {"type": "url", "url": "https://example.com/x.png"}}
    assert image_tokens(block) == 1600


def test_rejects_other_types():
    with pytest.raises(TypeError):
        approx_tokens(42)


def test_request_tokens_adds_system_and_tools():
    msgs = [{"role": "user", "content": "x" * 8}]
    tool = {"name": "t", "description": "d", "input_schema": {"type": "object"}}
    expected = 2 + 3 + -(-len(json.dumps(tool, sort_keys=True)) // 4)
    assert approx_request_tokens(messages=msgs, system="y" * 12, tools=[tool]) == expected


@settings(max_examples=60, deadline=None)
@given(histories())
def test_history_is_sum_of_parts_up_to_rounding(history):
    total = approx_tokens(history)
    per_message = sum(approx_tokens(m) for m in history)
    assert total <= per_message <= total + len(history)


_JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(),
                               st.text(max_size=6)),
                     lambda inner: st.one_of(st.lists(inner, max_size=3),
                                             st.dictionaries(st.text(max_size=3), inner,
                                                             max_size=3)), max_leaves=8)


@given(_JSON)
@settings(max_examples=300, deadline=None)
def test_the_input_json_encoder_made_once_dumps_as_json_dumps(value):
    from mini_agent.core.tokens import _input_json
    assert _input_json(value) == json.dumps(value, ensure_ascii=False)
