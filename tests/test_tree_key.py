"""tree_key stands for the canonical JSON of a nested block: equal exactly when the JSON is."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mini_agent.core.block_identity import canonical_identity, flat_key
from mini_agent.core.tree_key import tree_key

_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-1, 1), st.sampled_from(["", "1", "a"]),
                    st.sampled_from([0.0, -0.0, 1.0]))
_VALUE = st.recursive(_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=2),
    st.dictionaries(st.sampled_from(["a", "b", "cache_control"]), inner, max_size=2)),
    max_leaves=5)
_BLOCK = st.dictionaries(st.sampled_from(["type", "input", "id", "cache_control"]), _VALUE,
                         max_size=3)


@given(_BLOCK, _BLOCK)
@settings(max_examples=500, deadline=None)
def test_equal_tree_keys_exactly_when_the_canonical_json_is_equal(a, b):
    ka, kb = tree_key(a), tree_key(b)
    if ka is not None and kb is not None:
        assert (ka == kb) == (canonical_identity(a) == canonical_identity(b))
        hash(ka)
    for block, key in ((a, ka), (b, kb)):
        if key is not None and flat_key(block) is None:
            # never the key of a block of scalars (those take flat_key)
            assert any(kind in (dict, list) for _, kind, _ in key)


def test_a_tool_use_block_gets_a_tree_key_and_floats_and_tuples_do_not():
    block = {"type": "tool_use", "id": "t", "name": "run", "input": {"b": [1, True], "a": "x"}}
    reordered = {"name": "run", "input": {"a": "x", "b": [1, True]}, "id": "t",
                 "type": "tool_use", "cache_control": {"type": "ephemeral"}}
    assert tree_key(block) == tree_key(reordered) is not None
    assert tree_key({**block, "input": {"b": [True, 1], "a": "x"}}) != tree_key(block)
    assert tree_key({**block, "input": {"n": 1.0}}) is None
    assert tree_key({**block, "input": {"n": (1,)}}) is None
    assert tree_key({**block, "input": {1: "x"}}) is None
