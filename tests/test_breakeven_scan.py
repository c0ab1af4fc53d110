"""Tests for mini_agent.core.breakeven_scan: the figures read from the session's scan equal those counted."""

from __future__ import annotations

import copy

from hypothesis import given, settings, strategies as st

from mini_agent.core.breakeven_masking import BreakEvenMasking, breakeven_boundary
from mini_agent.core.breakeven_scan import _prices, _Scan
from mini_agent.core.history_scan import scan_for
from mini_agent.core.tokens import token_memo
from mini_agent.core.view import ViewContext
from strategies import histories, hostile_histories


def _figures(scan):
    return scan.cum_tokens, scan.results, scan.cum_saved, scan.boundary, scan.paid


@settings(max_examples=60, deadline=None)
@given(st.one_of(histories(max_turns=8), hostile_histories(max_turns=30)),
       st.integers(0, 5), st.sampled_from([100, 1024]))
def test_scan_read_from_the_session_equals_the_counted_one(history, keep, minimum):
    before = copy.deepcopy(history)
    prices = _prices(keep, 1.0, 300.0, minimum, 50, (), 1.25, 0.1, 0.6)
    counted = _Scan(prices, timed=False)
    counted.advance(history, None)  # outside a token memo: counted message by message
    with token_memo():
        shared = scan_for(history)
        read = _Scan(prices, timed=False)
        read.advance(history, None)
    if shared is not None:  # a malformed history has no scan: both count
        assert _figures(read) == _figures(counted)
    assert history == before


@settings(max_examples=40, deadline=None)
@given(hostile_histories(max_turns=30), st.integers(0, 4))
def test_policy_in_a_replay_equals_the_boundary_counted_alone(history, keep):
    times = [60.0 * i for i in range(len(history))]
    policy = BreakEvenMasking(keep=keep, min_cacheable_tokens=200)
    starts = [i for i in range(1, len(history) + 1)
              if i == len(history) or history[i].get("role") == "assistant"]
    with token_memo():
        got = []
        for i in starts:
            scan_for(history[:i])   # another policy of the replay started the session's scan
            got.append(policy.boundary(history[:i], ViewContext(times=tuple(times[:i]),
                                                                  now=times[i - 1])))
    want = [breakeven_boundary(history[:i], times=times[:i], now=times[i - 1], keep=keep,
                               min_cacheable_tokens=200) for i in starts]
    assert got == want


@settings(max_examples=60, deadline=None)
@given(st.one_of(histories(max_turns=8), hostile_histories(max_turns=30)),
       st.integers(0, 5), st.data())
def test_scan_counted_then_read_from_the_session_equals_the_counted_one(history, keep, data):
    # a scan that counted a prefix by itself, then reads the rest from the session's scan
    # (its sums continue from its own), decides as one that counted everything
    split = data.draw(st.integers(0, len(history)))
    times = [30.0 * i for i in range(len(history))]
    prices = _prices(keep, 1.0, 300.0, 100, 50, (), 1.25, 0.1, 0.6)
    counted = _Scan(prices, timed=True)
    counted.advance(history, times)
    mixed = _Scan(prices, timed=True)
    mixed.advance(history[:split], times[:split])
    with token_memo():
        shared = scan_for(history)
        mixed.advance(history, times)
    if shared is not None:
        assert _figures(mixed) == _figures(counted)
        assert (mixed.requests, mixed.prev_end, mixed.times) == (
            counted.requests, counted.prev_end, counted.times)


def test_a_history_that_diverges_starts_afresh_though_the_session_scans_it():
    """The policy skips comparing its consumed messages only when the session's scan it
    read them from covers the new history: another chain with the same first message (the
    table's scan now) is compared, found different, and decided from the start."""
    from mini_agent.core.messages import tool_result_block, user
    from mini_agent.core.sample_sessions import sample_transcript
    a = sample_transcript(12, variant=1).messages
    cut = next(i for i in range(2, len(a)) if a[i].get("role") == "user"
               and isinstance(a[i]["content"], list))
    use = a[cut]["content"][0]["tool_use_id"]
    b = a[:cut] + [user([tool_result_block(use, "x\n" * 9_000)])] + a[cut + 1:]
    times = [60.0 * i for i in range(len(a) + 1)]
    policy = BreakEvenMasking(keep=1, min_cacheable_tokens=200)

    def ctx(n):
        return ViewContext(times=tuple(times[:n]), now=times[n])

    prices = _prices(1, 1.0, 300.0, 200, 0, (), 1.25, 0.1, 0.6)
    counted = _Scan(prices, timed=True)
    counted.advance(b, times[:len(b)])   # outside a memo: b counted alone
    with token_memo():
        scan_for(a)
        first = policy.boundary(a, ctx(len(a)))
        scan_for(b)   # diverges from a's scan: the table now holds b's
        got = policy.boundary(b, ctx(len(b)))
        figures = _figures(policy._scan[0])
        again = policy.boundary(a, ctx(len(a)))
    assert figures == _figures(counted) and figures[0] != _figures(policy._scan[0])[0]
    assert got == breakeven_boundary(b, times=times[:len(b)], now=times[len(b)], keep=1,
                                     min_cacheable_tokens=200)
    assert again == first
