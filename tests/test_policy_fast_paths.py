"""The policies' shortcuts over the session's scan equal their plain computations.

Covers: :class:`~mini_agent.core.exchange_counts.ExchangeCounts` (exchange starts and slice
counts read from a history scan) equals ``split_exchanges`` / ``chars_of``; the lifecycle,
compaction and summary policies, called inside a token memo where another policy scanned
each request's history first (as the explorer's replay does), give the views and records
of the plain policies; the break-even scan's kept decision equals ``decide`` and the
policy's boundaries equal ``breakeven_boundary``.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings, strategies as st

from mini_agent.core.breakeven_masking import BreakEvenMasking, breakeven_boundary
from mini_agent.core.breakeven_scan import _prices, _Scan
from mini_agent.core.cache_policies import request_points
from mini_agent.core.compact_policy import CompactPolicy, CompactThresholds
from mini_agent.core.exchange_counts import ExchangeCounts, scan_starts
from mini_agent.core.exchange_memo import chars_of, split_exchanges
from mini_agent.core.history_scan import scan_for
from mini_agent.core.lifecycle import LifecyclePolicy, LifecycleThresholds
from mini_agent.core.masking import ChunkedMasking
from mini_agent.core.policy_views import ServerCompactionView, SummaryPolicy
from mini_agent.core.sample_sessions import sample_transcript
from mini_agent.core.tokens import token_memo
from mini_agent.core.view import ViewContext
from strategies import WALK_STEPS, histories, hostile_histories, walk_histories


def _sessions():
    for steps, variant in ((3, 0), (12, 1), (25, 4), (40, 2)):
        yield sample_transcript(steps, variant=variant).messages


def _requests(messages):
    """``(history, ctx)`` per request, as the replay builds them (times 10 minutes apart)."""
    times = [600.0 * i for i in range(len(messages))]
    return [(messages[:i], ViewContext(times=tuple(times[:i]), now=times[i], turn=n + 1))
            for n, i in enumerate(request_points(messages))]


@settings(max_examples=60, deadline=None)
@given(histories(min_turns=2, max_turns=6), histories(min_turns=1, max_turns=4), WALK_STEPS)
def test_exchange_counts_equal_the_plain_split_and_counts(a, b, steps):
    """Histories grow, shrink and switch; a scan is started (or not) by another reader."""
    counts_outside = ExchangeCounts()
    with token_memo():
        counts = ExchangeCounts()
        for h in walk_histories(a, b, steps, scan=scan_for):
            starts, count = counts.update(h)
            ranges = split_exchanges(h)
            assert starts[:count] == [s for s, _ in ranges]
            for s, e in [(0, len(h)), (0, 1), *ranges]:
                assert counts.chars(s, e) == chars_of(h[s:e])
    for h in walk_histories(a, b, steps):  # outside a token memo: the exchange memo counts
        starts, count = counts_outside.update(h)
        assert starts[:count] == [s for s, _ in split_exchanges(h)]
        assert counts_outside.chars(0, len(h)) == chars_of(h)


def test_scan_starts_grow_with_the_scan():
    messages = next(s for s in _sessions() if len(s) > 20)
    with token_memo():
        scan = scan_for(messages[:7])
        assert scan_starts(scan) == [s for s, _ in split_exchanges(messages[:7])]
        scan_for(messages)  # the scan reads on: the kept starts follow
        assert scan_starts(scan) == [s for s, _ in split_exchanges(messages)]


def _replay(make, requests, *, memo, scan_first):
    policy = make()
    views = []
    if memo:
        with token_memo():
            for h, ctx in requests:
                if scan_first:
                    scan_for(h)  # another policy of the replay scanned this history
                views.append(policy(h, ctx))
    else:
        views = [policy(h, ctx) for h, ctx in requests]
    return views, getattr(policy, "records", None)


@pytest.mark.parametrize("name,make", [
    ("lifecycle", lambda: LifecyclePolicy()),
    ("lifecycle_small", lambda: LifecyclePolicy(LifecycleThresholds(1, 2, 4))),
    ("lifecycle_budget", lambda: LifecyclePolicy(LifecycleThresholds(view_budget_tokens=3_000))),
    ("compact", lambda: CompactPolicy(CompactThresholds().scaled(0.05),
                                      summarize=lambda ms: "the summary")),
    ("server_compact", lambda: ServerCompactionView(trigger_tokens=3_000, system="s")),
    ("summary", lambda: SummaryPolicy(every_exchanges=5, keep_exchanges=2,
                                      summarize=lambda ms: f"{len(ms)} messages")),
    ("breakeven", lambda: BreakEvenMasking(keep=2, min_cacheable_tokens=200)),
])
def test_policies_over_a_session_scan_equal_the_plain_policies(name, make):
    for messages in _sessions():
        snapshot = copy.deepcopy(messages)
        requests = _requests(messages)
        plain = _replay(make, requests, memo=False, scan_first=False)
        for scan_first in (True, False):
            assert _replay(make, requests, memo=True, scan_first=scan_first) == plain, name
        assert messages == snapshot  # never mutated


@settings(max_examples=40, deadline=None)
@given(hostile_histories(max_turns=30), st.integers(0, 4), st.sampled_from([60.0, 400.0]))
def test_kept_decision_equals_decide(history, keep, gap):
    """The decision kept for a request and reused when the next one commits it equals a
    fresh ``decide``; the policy's boundaries, asked as the replay asks (the request sent at
    the time of the message that follows it), equal ``breakeven_boundary``."""
    times = [gap * i for i in range(len(history) + 1)]
    prices = _prices(keep, 1.0, 300.0, 200, 50, (), 1.25, 0.1, 0.6)
    scan = _Scan(prices, timed=True)
    policy = BreakEvenMasking(keep=keep, min_cacheable_tokens=200, fixed_tokens=50)
    starts = [i for i in range(1, len(history) + 1)
              if i == len(history) or history[i].get("role") == "assistant"]
    got = []
    for i in starts:
        scan.advance(history[:i], times[:i])
        assert scan.decision(i, times[i]) == scan.decide(i, times[i])
        got.append(policy.boundary(history[:i], ViewContext(times=tuple(times[:i]),
                                                              now=times[i])))
    want = [breakeven_boundary(history[:i], times=times[:i], now=times[i], keep=keep,
                               min_cacheable_tokens=200, fixed_tokens=50) for i in starts]
    assert got == want


@settings(max_examples=60, deadline=None)
@given(histories(min_turns=2, max_turns=6), histories(min_turns=1, max_turns=4), WALK_STEPS,
       st.data())
def test_exchange_counts_tail_chars_equals_take_then_chars(a, b, steps, data):
    """``tail_chars`` answers as ``take`` then ``chars(start, len)``, scanned or not."""
    with token_memo():
        counts, plain = ExchangeCounts(), ExchangeCounts()
        for h in walk_histories(a, b, steps, scan=scan_for):
            start = data.draw(st.integers(0, len(h)))
            got = counts.tail_chars(h, start)
            plain.take(h)
            assert got == plain.chars(start, len(h)) == chars_of(h[start:])
    counts = ExchangeCounts()   # outside a memo: the exchange memo's counts
    for h in walk_histories(a, b, steps):
        assert counts.tail_chars(h, 1) == chars_of(h[1:])


@settings(max_examples=60, deadline=None)
@given(histories(min_turns=2, max_turns=6), histories(min_turns=1, max_turns=4), WALK_STEPS)
def test_exchange_counts_take_then_last_equals_update(a, b, steps):
    """``take`` then ``last`` (read after the scan has grown further) answers as ``update``."""
    with token_memo():
        counts = ExchangeCounts()
        for h in walk_histories(a, b, steps, scan=scan_for):
            counts.take(h)
            assert counts.chars(0, len(h)) == chars_of(h)
            scan_for(a)   # another policy reads on before the starts are asked for
            starts, count = counts.last
            assert starts[:count] == [s for s, _ in split_exchanges(h)]


@pytest.mark.parametrize("make", [
    lambda: ChunkedMasking(keep=1, chunk=2, threshold_tokens=0),
    lambda: ChunkedMasking(keep=0, chunk=1, threshold_tokens=500),
    lambda: CompactPolicy(CompactThresholds().scaled(0.02), summarize=lambda ms: "sum"),
    lambda: ServerCompactionView(trigger_tokens=800, system="s"),
    lambda: BreakEvenMasking(keep=1, min_cacheable_tokens=100),
])
@settings(max_examples=40, deadline=None)
@given(a=hostile_histories(max_turns=16), b=hostile_histories(max_turns=16), steps=WALK_STEPS)
def test_a_policy_walked_over_diverging_histories_equals_its_plain_self(make, a, b, steps):
    """One policy object asked, inside a memo, for histories that grow, shrink and switch
    to another chain with the same first message (its kept scan covers some of them, not
    others) answers as the same policy outside any memo."""
    b = a[:1] + b
    walk = list(walk_histories(a, b, steps))
    requests = [(h, ViewContext(times=tuple(60.0 * k for k in range(len(h))),
                                now=60.0 * len(h))) for h in walk]
    plain = [_outcome(make(), requests)]
    policy = make()
    with token_memo():
        fast = []
        for (h, ctx), (use_b, cut, scan_first) in zip(requests, steps):
            if scan_first:
                scan_for(list((b if use_b else a)[:len(h) + 1]))  # another policy reads on
            fast.append(_call(policy, h, ctx))
    assert fast == plain[0]


def _call(policy, history, ctx):
    try:
        return "ok", policy(history, ctx)
    except Exception as error:  # the fast path must fail where the plain one does
        return "raise", type(error).__name__


def _outcome(policy, requests):
    return [_call(policy, h, ctx) for h, ctx in requests]
