"""Tests for mini_agent.core.scan_handle: a policy's kept scan answers as ``scan_for`` does."""

from __future__ import annotations

import operator

from hypothesis import given, settings, strategies as st

from mini_agent.core.history_scan import HistoryScan, scan_for
from mini_agent.core.messages import assistant, user
from mini_agent.core.scan_handle import ScanHandle
from mini_agent.core.tokens import token_memo
from strategies import WALK_STEPS, hostile_histories, walk_histories


def _covers(scan, history) -> bool:
    return len(history) <= len(scan.messages) and all(map(operator.is_, history, scan.messages))


@settings(max_examples=80, deadline=None)
@given(hostile_histories(max_turns=20), hostile_histories(max_turns=20), WALK_STEPS,
       st.booleans(), st.booleans())
def test_handle_answers_as_scan_for_or_with_a_scan_of_the_same_messages(a, b, steps, create,
                                                                        extend):
    b = a[:1] + b   # the same first message: one scan table entry, diverging histories
    handle = ScanHandle()
    with token_memo():
        for history in walk_histories(a, b, steps, scan_for):
            covering = scan_for(history, create=False, extend=False)  # changes nothing
            got = handle.get(history, create=create, extend=extend)
            want = covering if not (create or extend) else scan_for(history, create=False)
            if want is not None:
                assert got is not None
            if got is None:
                continue
            # scan_for's scan, or the one kept from an earlier history that this history is a
            # prefix of (another history with the same first message took its table entry):
            # either way the scan of these very messages
            assert _covers(got, history)
            counted = HistoryScan()
            counted.extend(history)
            n = len(history)
            assert got.cum_chars[:n + 1] == counted.cum_chars
            assert got.cum_tokens[:n + 1] == counted.cum_tokens
            assert got.positions[:got.results_upto[n]] == counted.positions
            assert got.holders[:got.results_upto[n]] == counted.holders


def test_handle_drops_its_scan_outside_the_memo_and_for_other_messages():
    history = [user("go"), assistant("ok"), user("more")]
    handle = ScanHandle()
    with token_memo():
        scan = handle.get(history)
        assert scan is not None and handle.get(history[:2]) is scan
        other = [history[0], assistant("ok"), user("more")]   # equal, not the same objects
        fresh = handle.get(other)
        assert fresh is not scan and _covers(fresh, other)
    assert handle.get(history) is None      # no token memo: the plain code runs
    with token_memo():
        again = handle.get(history)
        assert again is not scan and _covers(again, history)   # a new memo, a new scan
