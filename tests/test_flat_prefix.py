"""``FlatPrefix`` against a block-by-block walk, over random request sequences and forks."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from mini_agent.core.block_memo import BlockMemo
from mini_agent.core.flat_prefix import FlatPrefix
from mini_agent.core.sample_sessions import sample_transcript

MODEL = "claude-sonnet-4-5"
ROOT = ("root", MODEL)
_MESSAGES = sample_transcript(8, variant=3).messages
_MEMO = BlockMemo(_MESSAGES)
_SYSTEM, _ = _MEMO.system("S" * 9000)
_POOL = [*_MEMO.infos(_MESSAGES),
         _MEMO.info({"role": "user", "content": "changed"}),
         _MEMO.info({"role": "user", "content": [{"type": "text", "text": "a"},
                                                 {"type": "text", "text": "b"}]})]


def _walk(view, chain):
    """The flat lists of ``view`` and its chain ids, by ``chain.setdefault`` per block."""
    cum, pos, pid, starts = [], [], [], []
    total, next_pos, parent = 0, 0, chain[ROOT]
    for info in [_SYSTEM, *view]:
        starts.append(len(cum))
        for key, tokens, offset in zip(info.keys, info.tokens, info.offsets):
            total += tokens
            parent = chain.setdefault((parent, key), len(chain))
            cum.append(total)
            pos.append(next_pos + offset)
            pid.append(parent)
        next_pos += info.positions
    return cum, pos, pid, starts


# a view: a run of the history's infos with some replaced; a step: (prefix, fork it first)
_views = st.lists(st.integers(0, len(_POOL) - 1), max_size=14).map(
    lambda picks: [_POOL[k] for k in picks])
_similar = st.tuples(st.integers(0, len(_POOL) - 2), st.integers(0, 12),
                     st.lists(st.tuples(st.integers(0, 30), st.integers(0, len(_POOL) - 1)),
                              max_size=3))


def _similar_view(spec):
    """A view that shares most messages with the history: a slice with a few replaced."""
    start, length, changes = spec
    view = list(_POOL[start:start + length])
    for at, k in changes:
        if view:
            view[at % len(view)] = _POOL[k]
    return view


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.one_of(_views, _similar.map(_similar_view)),
                          st.integers(0, 3), st.booleans()), min_size=1, max_size=12))
def test_the_flat_prefix_equals_a_block_by_block_walk(steps):
    """Each update (on one of several prefixes sharing the table, some forked) gives the walk's
    cumulative tokens, positions, starts and chain ids, and the table the walk's ids."""
    chain = {ROOT: 0}
    prefixes = [FlatPrefix(_MEMO, ROOT, _SYSTEM)]
    for view, which, fork in steps:
        k = which % len(prefixes)
        if fork:
            prefixes.append(prefixes[k].fork())
            k = len(prefixes) - 1
        prefix = prefixes[k]
        prefix.update(view)
        assert (prefix.cum, prefix.pos, prefix.pid, prefix.starts) == _walk(view, chain)
        assert prefix.links() == chain
        for parent_key, chain_id in chain.items():
            if parent_key != ROOT:
                assert prefix.lookup(*parent_key) == chain_id
