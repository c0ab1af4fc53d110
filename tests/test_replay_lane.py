"""``clear_tool_uses`` on summaries: its running sums give what adding up every info gives."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from mini_agent.core.block_memo import BlockMemo
from mini_agent.core.context_edits import clear_tool_uses_edit
from mini_agent.core.replay_lane import clear_tool_uses
from mini_agent.core.sample_sessions import sample_transcript

_MESSAGES = sample_transcript(10, variant=5).messages
_MEMO = BlockMemo(_MESSAGES)
_INFOS = _MEMO.infos(_MESSAGES)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(_MESSAGES)), st.integers(0, len(_MESSAGES))),
                min_size=1, max_size=8),
       st.sampled_from([0, 300, 2_000, 100_000]), st.integers(0, 3))
def test_running_sums_clear_what_adding_up_every_info_clears(spans, trigger, keep):
    """Views that grow, shrink and drop their first messages, under triggers that fire or
    not: the same messages sent, the same summaries, with and without the running sums."""
    edit = clear_tool_uses_edit(trigger_input_tokens=trigger, keep=keep)
    sums, copies, plain_copies = [[], 0, 0], {}, {}
    for start, end in spans:
        view, infos = _MESSAGES[start:end], _INFOS[start:end]
        got = clear_tool_uses(view, infos, edit, 500, _MEMO, copies, sums)
        want = clear_tool_uses(view, infos, edit, 500, _MEMO, plain_copies)
        assert got[0] == want[0]
        assert [info.keys for info in got[1]] == [info.keys for info in want[1]]
        assert (got[0] is view) == (want[0] is view)
        assert sums[1] == sum(info.chars for info in infos)
        assert sums[2] == sum(info.images for info in infos)
