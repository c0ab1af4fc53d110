"""The per-session memos' shortcuts give what the plain computations give.

Covers: one JSON encoder made once (``tokens._input_json``, ``block_memo._canonical_json``)
equals ``json.dumps`` / ``canonical_identity``; summaries shared between equal messages
equal a fresh summary; ``view_infos``' C-level look-ups equal ``infos`` of a fresh memo;
the exchange memo keeps a closed exchange's facts and drops those of one that grew.
"""

from __future__ import annotations

import copy
import dataclasses
import json

from hypothesis import given, settings, strategies as st

from mini_agent.core.block_identity import canonical_identity
from mini_agent.core.block_memo import BlockMemo, _canonical_json
from mini_agent.core.exchange_memo import ExchangeMemo, split_exchanges
from mini_agent.core.masking import placeholder
from mini_agent.core.tokens import _input_json
from strategies import WALK_STEPS, histories, walk_histories

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                 max_size=3),
    max_leaves=12)


def _values(memo, infos):
    """The summaries by value, each interned key replaced by the identity it stands for (so
    the summaries of two memos compare)."""
    names = {key: identity for identity, key in memo._keys.items()}

    def name(key):
        identity = names[key]
        if isinstance(identity, tuple) and len(identity) == 3 and type(identity[2]) is int:
            return identity[:2] + (names[identity[2]],)  # (role, first, key of the JSON)
        return identity

    return [(tuple(map(name, info.keys)),) + dataclasses.astuple(info)[1:] for info in infos]


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_one_encoder_made_once_writes_what_json_dumps_writes(value):
    assert _input_json(value) == json.dumps(value, ensure_ascii=False)
    block = {"type": "tool_use", "id": "t", "name": "n", "input": value}
    assert _canonical_json(block) == canonical_identity(block)


def test_a_block_with_nested_markers_keys_by_the_stripped_json():
    marked = {"type": "tool_use", "id": "t", "name": "n",
              "input": {"a": [1.5, {"cache_control": {"type": "ephemeral"}, "b": 2}]}}
    plain = {"type": "tool_use", "id": "t", "name": "n", "input": {"a": [1.5, {"b": 2}]}}
    memo = BlockMemo()
    assert memo._block(marked)[0] == memo._block(plain)[0] == memo.key(canonical_identity(plain))
    # the markers are not sent, but approx_tokens counts the input as it is: more characters
    assert memo._block(marked)[5] > memo._block(plain)[5]
    assert memo.info({"role": "assistant", "content": [marked]}).tokens != \
        memo.info({"role": "assistant", "content": [plain]}).tokens


@settings(max_examples=40, deadline=None)
@given(histories(max_turns=5))
def test_equal_copies_share_one_summary_equal_to_a_fresh_one(history):
    memo = BlockMemo(history)
    for message in history:
        twin = copy.deepcopy(message)
        info = memo.info(twin)
        fresh = BlockMemo()
        assert _values(memo, [info]) == _values(fresh, fresh.infos([message]))
        assert memo.info(copy.deepcopy(message)) is info or not isinstance(
            message.get("content"), list)


def test_true_and_1_never_share_a_summary():
    one = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                        "content": "x", "is_error": 1}]}
    true = copy.deepcopy(one)
    true["content"][0]["is_error"] = True
    memo = BlockMemo()
    assert memo.info(one).keys != memo.info(true).keys


@settings(max_examples=40, deadline=None)
@given(histories(min_turns=2, max_turns=6), st.lists(st.integers(0, 3), min_size=2,
                                                     max_size=6))
def test_view_infos_equal_the_infos_of_a_fresh_memo(history, choices):
    """Views mixing the history's messages, kept copies, fresh equal copies and masked
    copies, each against the previous one, as a policy's requests give them."""
    memo = BlockMemo(history)
    kept = {}
    before, before_infos = [], []
    for n, choice in enumerate(choices):
        view = []
        for i, message in enumerate(history[:2 + n % len(history)]):
            pick = (choice + i) % 4
            content = message.get("content")
            if pick == 1:
                message = kept.setdefault(i, copy.deepcopy(message))
            elif pick == 2:
                message = copy.deepcopy(message)
            elif pick == 3 and isinstance(content, list):
                message = {**message, "content": [
                    {**b, "content": placeholder(str(b.get("content")))}
                    if b.get("type") == "tool_result" else b for b in content]}
            view.append(message)
        infos = memo.view_infos(view, before, before_infos)
        fresh = BlockMemo()
        assert _values(memo, infos) == _values(fresh, fresh.infos(view))
        assert memo.infos(view) == infos
        memo.rotate()
        before, before_infos = list(view), infos


def _history(n_exchanges):
    history = [{"role": "user", "content": "task"}]
    for k in range(n_exchanges):
        history += [{"role": "assistant", "content": f"a{k}"},
                    {"role": "user", "content": f"u{k}"}]
    return history


def test_a_closed_exchange_keeps_its_facts_and_one_that_grew_loses_them():
    calls = []

    def fact(part):
        calls.append(len(part))
        return len(part)

    history = _history(3)
    memo = ExchangeMemo()
    memo.update(history[:5])             # exchanges 0 and 1 (the last one closed or not)
    assert [memo.fact(k, fact) for k in range(2)] == [2, 2]
    assert len(calls) == 2
    memo.update(history)                 # grew by an exchange of its own: 1 keeps its fact
    assert [memo.fact(k, fact) for k in range(3)] == [2, 2, 2]
    assert len(calls) == 3
    longer = history + [{"role": "user", "content": "more"}]
    assert memo.update(longer) == split_exchanges(longer)  # continues exchange 2: recomputed
    assert memo.fact(2, fact) == 3
    assert memo.fact(1, fact) == 2 and len(calls) == 4
    shorter = longer[:4]                 # cut inside exchange 1: recomputed
    assert memo.update(shorter) == split_exchanges(shorter)
    assert memo.fact(1, fact) == 1 and len(calls) == 5


def test_a_result_is_masked_or_cleared_exactly_as_the_plain_checks_say():
    from mini_agent.core.cache import CLEARED_TOOL_RESULT
    from mini_agent.core.masking import is_masked
    memo = BlockMemo()
    for content in ["x", "", "[x]", placeholder("a\nb"), " " + placeholder("a"),
                    CLEARED_TOOL_RESULT, [{"type": "text", "text": placeholder("a")}]]:
        block = {"type": "tool_result", "tool_use_id": "t", "content": content}
        assert memo._block(block)[4] == (is_masked(block) or content == CLEARED_TOOL_RESULT)


@settings(max_examples=40, deadline=None)
@given(histories(min_turns=2, max_turns=6), histories(min_turns=1, max_turns=4), WALK_STEPS)
def test_counts_read_from_a_session_scan_equal_the_plain_counts(a, b, steps):
    """Inside a token memo the exchange memo reads counts from the session's scan when one
    covers its history; histories grow, shrink and switch, and scans are started (or not)
    by another reader as the policies would."""
    from mini_agent.core.exchange_memo import chars_of
    from mini_agent.core.history_scan import scan_for
    from mini_agent.core.tokens import token_memo
    with token_memo():
        memo = ExchangeMemo()
        for h in walk_histories(a, b, steps, scan=scan_for):
            memo.update(h)
            for s, e in [(0, len(h)), *memo.update(h)]:
                assert memo.chars(s, e) == chars_of(h[s:e])
