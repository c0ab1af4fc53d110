"""micro_compact inside a token memo (cleared copies kept per session, the age short-cut)
equals the plain loop, whatever the message times (unordered, equal, NaN)."""

from __future__ import annotations

import copy
import math

from hypothesis import given, settings, strategies as st

from mini_agent.core.compaction import CLEARED_PLACEHOLDER, micro_compact
from mini_agent.core.tokens import token_memo
from strategies import histories, hostile_histories

TIMES = st.one_of(st.floats(0, 10_000), st.just(math.nan), st.just(0.0))


@settings(max_examples=80, deadline=None)
@given(st.one_of(histories(max_turns=8), hostile_histories(max_turns=30)), st.data(),
       st.floats(0, 12_000), st.sampled_from([0.0, 600.0, 3_600.0]))
def test_micro_compact_in_a_memo_equals_the_plain_loop(history, data, now, max_age):
    times = data.draw(st.lists(TIMES, min_size=len(history), max_size=len(history)))
    snapshot = copy.deepcopy(history)
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(history))), max_size=4))
                      + [len(history)]))
    plain = [micro_compact(history[:k], times=times[:k], now=now, max_age_seconds=max_age)
             for k in cuts]
    with token_memo():
        fast = [micro_compact(history[:k], times=times[:k], now=now, max_age_seconds=max_age)
                for k in cuts]
    assert fast == plain
    assert history == snapshot


def test_the_age_short_cut_keeps_a_young_history_and_clears_an_old_one():
    from mini_agent.core.messages import assistant, tool_result_block, tool_use_block, user
    history = [user("go"), assistant([tool_use_block("t1", "read_file", {"path": "a"})]),
               user([tool_result_block("t1", "line\n" * 200)])]
    with token_memo():
        young = micro_compact(history, times=[0.0, 10.0, 20.0], now=3_000.0)
        old = micro_compact(history, times=[0.0, 10.0, 20.0], now=4_000.0)
    assert young == history
    assert old[2]["content"][0]["content"] == CLEARED_PLACEHOLDER
