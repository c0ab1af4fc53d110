"""The identity scans of ``core/block_identity.py`` against plain Python loops."""

from __future__ import annotations

from hypothesis import given, strategies as st

from mini_agent.core.block_identity import first_difference, first_new_info, same_objects

POOL = [{"n": k} for k in range(4)] + [{"n": 0}]   # the last equals the first, another object


def _lists():
    return st.lists(st.integers(0, len(POOL) - 1), max_size=8).map(
        lambda ks: [POOL[k] for k in ks])


def _plain_first_difference(a, b):
    k = 0
    while k < min(len(a), len(b)) and a[k] is b[k]:
        k += 1
    return k


@given(_lists(), _lists())
def test_first_difference_is_the_first_index_of_different_objects(a, b):
    want = _plain_first_difference(a, b)
    assert first_difference(a, b) == want
    assert first_difference(a, a[:len(a)]) == len(a)     # a copy of the list: same objects
    assert same_objects(a, b) == (len(a) == len(b) and want == len(a))


def test_equal_dicts_that_are_different_objects_are_a_difference():
    a, b = [POOL[0], POOL[1]], [POOL[4], POOL[1]]        # POOL[4] == POOL[0], not the same
    assert first_difference(a, b) == 0
    assert not same_objects(a, b)
    assert same_objects(a, list(a))
    assert not same_objects(a, a[:1])


@given(st.lists(st.integers(0, 3), max_size=10), st.lists(st.integers(0, 3), max_size=10))
def test_first_new_info_agrees_with_first_difference_on_identity_only_items(ka, kb):
    objects = [object() for _ in range(4)]               # compare by identity, like infos
    a, b = [objects[k] for k in ka], [objects[k] for k in kb]
    assert first_new_info(a, b) == first_difference(a, b) == _plain_first_difference(a, b)


def _flat_key_by_sets(block):
    """``flat_key`` as first written: the scalar checks as set inclusions, then sorted."""
    if "cache_control" in block:
        block = {k: v for k, v in block.items() if k != "cache_control"}
    types = tuple(map(type, block.values()))
    if not frozenset({str, int, bool, type(None)}).issuperset(types) or \
            not frozenset({str}).issuperset(map(type, block)):
        return None
    return tuple(sorted(zip(block, types, block.values())))


_SCALAR_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.text(max_size=3),
                           st.floats(allow_nan=False), st.sampled_from([0.0, -0.0, 1.0]),
                           st.lists(st.integers(0, 1), max_size=2),
                           st.dictionaries(st.text(max_size=2), st.integers(0, 1), max_size=2))
_KEYS = st.one_of(st.sampled_from(["type", "text", "content", "cache_control", "id"]),
                  st.text(max_size=3), st.integers(0, 2), st.just(True))


@given(st.dictionaries(_KEYS, _SCALAR_VALUES, max_size=5), st.booleans())
def test_flat_key_equals_the_set_inclusion_version(block, marked):
    """Blocks of scalars (with or without a marker, of any value), floats, nested values and
    keys that are not str: the one-pass ``flat_key`` gives the same stand-in or None."""
    from mini_agent.core.block_identity import flat_key
    from mini_agent.core.tree_key import tree_key
    if marked:
        block = {**block, "cache_control": {"type": "ephemeral"}}
    want = _flat_key_by_sets(block)
    assert flat_key(block) == want
    if want is not None:
        assert [type(v) for _, _, v in want] == [t for _, t, _ in want]
        # the block memo may take ``tree_key`` for any block: a flat block gets the same key
        assert tree_key(block) == want
