"""BlockMemo.infos answers a prefix of the history from the summaries made at construction."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mini_agent.core.block_memo import BlockMemo
from mini_agent.core.masking import mask_old_observations
from strategies import hostile_histories


def _one_by_one(memo: BlockMemo, view: list[dict]) -> list:
    """The plain rule: :meth:`BlockMemo.info` of each message, in order."""
    return [memo.info(message) for message in view]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=hostile_histories(max_turns=12), cut=st.integers(0, 40))
def test_infos_of_a_history_prefix_are_the_summaries_info_gives(history, cut):
    memo = BlockMemo(history)
    prefix = history[:cut]
    got = memo.infos(prefix)
    want = _one_by_one(memo, prefix)
    assert len(got) == len(want) == min(cut, len(history))
    assert all(a is b for a, b in zip(got, want))   # the very objects, not equal copies
    got.append(None)   # a fresh list each call: the memo's own is not handed out
    assert memo.infos(prefix) == want
    # views that are not a prefix of the same objects take the message-by-message path
    masked = mask_old_observations(history, keep=0)
    assert memo.infos(masked) == _one_by_one(memo, masked)
    longer = [*history, {"role": "user", "content": "one more"}]
    assert memo.infos(longer) == _one_by_one(memo, longer)


def test_a_message_object_kept_twice_is_answered_by_its_one_summary():
    text = {"role": "user", "content": [{"type": "text", "text": "hello"}]}
    reply = {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}
    history = [text, reply, text]
    memo = BlockMemo(history)
    got = memo.infos(history)
    assert [id(i) for i in got] == [id(memo.info(m)) for m in history]
    assert got[0] is got[2]
    assert memo.infos([dict(text)])[0].tokens == got[0].tokens
