"""``FlatPrefix`` against a block-by-block walk, over random request sequences and forks."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from mini_agent.core.block_memo import BlockMemo
from mini_agent.core.flat_prefix import FlatPrefix
from mini_agent.core.sample_sessions import sample_transcript

from flat_walk import flat_walk

MODEL = "claude-sonnet-4-5"
ROOT = ("root", MODEL)
_MESSAGES = sample_transcript(8, variant=3).messages
_MEMO = BlockMemo(_MESSAGES)
_SYSTEM, _ = _MEMO.system("S" * 9000)
_POOL = [*_MEMO.infos(_MESSAGES),
         _MEMO.info({"role": "user", "content": "changed"}),
         _MEMO.info({"role": "user", "content": [{"type": "text", "text": "a"},
                                                 {"type": "text", "text": "b"}]}),
         _MEMO.info({"role": "assistant", "content": [
             {"type": "text", "text": "c"},
             {"type": "tool_use", "id": "u1", "name": "read", "input": {"path": "a"}},
             {"type": "tool_use", "id": "u2", "name": "read", "input": {"path": "b"}}]})]


def _walk(view, chain):
    """The flat lists of ``view`` and its chain ids, by ``chain.setdefault`` per block."""
    return flat_walk([_SYSTEM, *view], chain, chain[ROOT])


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


def _plain_marks(infos, starts, system_marks):
    """``breakpoint_marks`` as a plain list sorted at the end (its earlier form)."""
    from mini_agent.core.messages import MAX_CACHE_CONTROL_MARKERS
    marks = list(system_marks)
    budget = MAX_CACHE_CONTROL_MARKERS - len(system_marks)
    n = len(infos)
    second = range(0)
    if n and budget > 0:
        last = n - 1
        if infos[last].markable is not None:
            marks.append(starts[last + 1] + infos[last].markable)
            budget -= 1
        if budget > 0:
            anchored = [i for i in range(last) if infos[i].anchor is not None]
            if anchored:
                marks.append(starts[anchored[-1] + 1] + infos[anchored[-1]].anchor)
                budget -= 1
        if last >= 2:
            second = range(starts[last - 1], starts[last - 1] + len(infos[last - 2].keys))
            if budget > 0 and infos[last - 2].markable is not None:
                marks.append(starts[last - 1] + infos[last - 2].markable)
    return sorted(set(marks)), second


_fake_infos = st.lists(st.integers(1, 3).flatmap(lambda size: st.builds(
    lambda markable, anchor: _FakeInfo(tuple(range(size)), markable, anchor),
    st.one_of(st.none(), st.integers(0, size - 1)),
    st.one_of(st.none(), st.integers(0, size - 1)))), max_size=8)


class _FakeInfo:
    """The fields of a ``MessageInfo`` that ``breakpoint_marks`` reads."""

    def __init__(self, keys, markable, anchor):
        self.keys, self.markable, self.anchor = keys, markable, anchor


@settings(max_examples=300, deadline=None)
@given(_fake_infos, st.lists(st.integers(0, 3), max_size=4, unique=True).map(sorted),
       st.booleans())
def test_breakpoint_marks_equal_the_sorted_plain_list(infos, system_marks, indexed):
    """The marks built in order equal the plain list sorted and deduplicated, with the
    anchors given by an ``AnchorIndex`` or scanned."""
    from mini_agent.core.flat_prefix import AnchorIndex, breakpoint_marks
    starts = [0]
    for info in [None, *infos]:
        starts.append(starts[-1] + (4 if info is None else len(info.keys)))
    starts.pop()
    anchored = AnchorIndex().update(infos) if indexed else None
    assert breakpoint_marks(infos, starts, system_marks, anchored) == \
        _plain_marks(infos, starts, system_marks)
