"""Tests for mini_agent.core.feature_counts: the one-pass count equals the per-message one."""

from __future__ import annotations

import copy

from hypothesis import given, settings, strategies as st

from mini_agent.core.cache_policies import request_points
from mini_agent.core.calibration import message_features, request_features
from mini_agent.core.feature_counts import counted_requests, requests_by_message
from mini_agent.core.sample_sessions import sample_transcript
from strategies import histories, hostile_histories

_ODD_BLOCKS = [
    {"type": "text", "text": "fix ```x = 1``` and ```y"},
    {"type": "text", "text": "日本語 ```コード``` done"},
    {"type": "thinking", "thinking": "plan ```a```", "signature": "s"},
    {"type": "thinking", "thinking": "考え"},
    {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "é/a.py", "n": [1, 2]}},
    {"type": "tool_use", "id": "t2", "name": "読む", "input": {}},
    {"type": "tool_use", "id": "t3", "name": "ls"},
    {"type": "tool_result", "tool_use_id": "t1", "content": '  {"a": [1, 2]}'},
    {"type": "tool_result", "tool_use_id": "t1", "content": "def f():\n    return 1\n"},
    {"type": "tool_result", "tool_use_id": "t1", "content": "ok 日本\nfine"},
    {"type": "tool_result", "tool_use_id": "t1", "content": None},
    {"type": "tool_result", "tool_use_id": "t1"},
    {"type": "tool_result", "tool_use_id": "t1", "content": [
        {"type": "text", "text": "a(1)"}, {"type": "image", "source": {"type": "url"}}]},
    {"type": "image", "source": {"type": "url", "url": "x"}},
    {"type": "redacted_thinking", "data": "abc"},
    {"type": "document"},
]


def _split(blocks, roles=("user", "assistant")):
    messages = [{"role": roles[k % 2], "content": [b]} for k, b in enumerate(blocks)]
    messages += [{"role": "user", "content": "plain 日本"}, {"role": "assistant", "content": ""},
                 {"role": "user", "content": "```code``` prose"},
                 {"role": "assistant", "content": None}]
    return messages


def test_counted_requests_equal_the_reference_on_odd_blocks():
    messages = _split(_ODD_BLOCKS)
    before = copy.deepcopy(messages)
    points = list(range(1, len(messages) + 1))
    got = counted_requests(messages, points)
    assert got == requests_by_message(messages, points)
    assert messages == before
    assert list(got[-1]) == ["prose", "code", "json", "tool_output", "cjk", "blocks",
                             "image_tokens"]
    assert got[-1]["cjk"] > 0 and got[-1]["image_tokens"] > 0 and got[-1]["code"] > 0
    # each request's counts are the sum of its messages' message_features
    last = {k: sum(message_features(m)[k] for m in messages) for k in got[-1]}
    assert got[-1] == last


def test_counted_requests_on_a_sample_session():
    messages = sample_transcript(8).messages
    points = request_points(messages)
    got = request_features(messages, points)
    assert got == requests_by_message(messages, points)
    assert got[-1]["code"] > 0 and got[-1]["tool_output"] > 0 and got[-1]["json"] > 0


@given(histories(max_turns=6), st.data())
@settings(max_examples=150, deadline=None)
def test_counted_requests_equal_the_reference(history, data):
    points = sorted(set(data.draw(st.lists(st.integers(0, len(history)), max_size=6))))
    assert counted_requests(history, points) == requests_by_message(history, points)


@given(hostile_histories(max_turns=12))
@settings(max_examples=80, deadline=None)
def test_counted_requests_equal_the_reference_on_hostile_histories(history):
    points = list(range(1, len(history) + 1, 2))
    assert counted_requests(history, points) == requests_by_message(history, points)


def test_the_counts_are_the_calibration_features_plus_image_tokens():
    from mini_agent.core import calibration
    from mini_agent.core.feature_counts import COUNTS
    assert COUNTS == calibration.FEATURES + ("image_tokens",) == calibration._COUNTS
