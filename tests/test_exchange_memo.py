"""ExchangeMemo, and the lifecycle policy that keeps one: the same answers as computing afresh."""

from __future__ import annotations

import copy

from hypothesis import given, settings, strategies as st

from mini_agent.core.exchange_memo import ExchangeMemo, chars_of
from mini_agent.core.lifecycle import (TIERS, LifecyclePolicy, LifecycleThresholds, _age_run,
                                       _age_tiers, current_request_text, lifecycle_view, split_exchanges,
                                       tier_for_age)
from mini_agent.core.long_session import long_session
from mini_agent.core.sample_sessions import sample_transcript
from mini_agent.core.tokens import approx_tokens
from mini_agent.core.view import ViewContext
from strategies import histories


def _same(text: str) -> str:
    return text


def _check(memo: ExchangeMemo, h: list) -> None:
    """The memo, updated with ``h``, answers as the plain functions do."""
    ranges = memo.update(h)
    assert ranges == split_exchanges(h)
    for s, e in [(0, len(h)), (0, min(1, len(h))), *ranges]:
        assert memo.tokens(s, e) == approx_tokens(h[s:e])
        chars, images = chars_of(h[s:e])
        assert memo.chars(s, e) == (chars, images)
    assert memo.request_fact(_same) == current_request_text(h)
    for k, (s, e) in enumerate(ranges):
        assert memo.fact(k, list) == h[s:e]
        assert memo.counted_fact(k, _part_and_counts) == (h[s:e], *chars_of(h[s:e]))
        cum = [chars_of(h[:i]) for i in range(len(h) + 1)]
        fresh = ExchangeMemo()
        fresh.update(h)
        assert fresh.counted_fact(k, _part_and_counts, ([c for c, _ in cum], [i for _, i in cum])) \
            == (h[s:e], *chars_of(h[s:e]))
    n = len(ranges)
    for lo, hi, arg in [(0, n, 2), (n // 2, n, 2), (max(0, n - 3), n - 1, 2), (1, n, 3),
                        (0, n - 2, 3)]:
        assert memo.matching(_length_divides, arg, lo, hi) == [
            k for k in range(lo, hi) if (ranges[k][1] - ranges[k][0]) % arg == 0]
    for j in (len(ranges), len(ranges) // 2):
        assert memo.run(j, _part_and_index) == [(h[s:e], k) for k, (s, e) in
                                                enumerate(ranges[:j])]


def _length_divides(part, arg):
    return len(part) % arg == 0


def _part_and_counts(part, chars, images):
    return part, chars, images


def _part_and_index(part, k):
    return part, k


@settings(max_examples=40, deadline=None)
@given(histories(min_turns=1, max_turns=8), histories(min_turns=1, max_turns=8),
       st.lists(st.tuples(st.sampled_from(["grow", "cut", "swap", "edit", "same"]),
                          st.integers(0, 40)), min_size=1, max_size=8))
def test_memo_answers_as_the_plain_functions_through_any_sequence_of_histories(a, b, steps):
    memo = ExchangeMemo()
    h: list = []
    for op, n in steps:
        if op == "grow":
            h = h + a[len(h):len(h) + 1 + n % 4]
        elif op == "cut":
            h = h[:n % (len(h) + 1)]
        elif op == "swap":          # another history: a prefix of ``b``
            h = b[:1 + n % len(b)]
        elif op == "edit" and h:    # one message replaced by a different object
            i = n % len(h)
            h = [*h[:i], {"role": h[i]["role"], "content": [{"type": "text", "text": "x" * n}]},
                 *h[i + 1:]]
        _check(memo, h)


def test_a_fact_is_computed_once_per_exchange_and_again_when_it_changes():
    h, _ = long_session(6)
    memo = ExchangeMemo()
    calls = []

    def count(part, tag):
        calls.append(tag)
        return len(part)
    memo.update(h[:5])
    assert memo.fact(0, count, "a") == 2 and memo.fact(0, count, "a") == 2
    assert calls == ["a"]
    memo.update(h)                       # grown: exchange 0 is kept
    assert memo.fact(0, count, "a") == 2 and calls == ["a"]
    assert memo.fact(0, count, "b") == 2 and calls == ["a", "b"]   # other args: recomputed
    memo.update([h[0], copy.deepcopy(h[1]), *h[2:]])  # an equal copy is another object
    assert memo.fact(0, count, "b") == 2 and calls == ["a", "b", "b"]
    memo.update(h[:2])                   # exchange 0 is the last one and only half there
    assert memo.fact(0, count, "b") == 1


def test_matching_asks_again_of_an_exchange_that_grew():
    h, _ = long_session(6)
    memo = ExchangeMemo()
    memo.update(h[:4])                   # exchanges (1, 3) and (3, 4)
    assert memo.matching(_length_divides, 2, 0, 2) == [0]
    memo.update(h[:5])                   # the last one grew to (3, 5)
    assert memo.matching(_length_divides, 2, 0, 2) == [0, 1]
    assert memo.matching(_length_divides, 2, 1, 2) == [1]
    assert memo.matching(_length_divides, 3, 0, 2) == []     # another arg: asked again


def test_age_tiers_are_tier_for_age_of_each_exchange():
    for th in (LifecycleThresholds(), LifecycleThresholds(1, 1, 1), LifecycleThresholds(2, 5, 5),
               LifecycleThresholds(1, 4, 9)):
        for n in range(30):
            ages, counts = _age_run(n, th.hot_exchanges, th.warm_a_exchanges,
                                    th.warm_b_exchanges)
            assert list(ages) == _age_tiers(n, th)
            assert counts == tuple(_age_tiers(n, th).count(t) for t in TIERS)
            assert _age_tiers(n, th) == [tier_for_age(
                n - 1 - k, hot_exchanges=th.hot_exchanges, warm_a_exchanges=th.warm_a_exchanges,
                warm_b_exchanges=th.warm_b_exchanges) for k in range(n)]


def sample_session_messages(steps, *, variant):
    t = sample_transcript(steps, variant=variant)
    return t.messages, t.times


def _requests(history):
    return [i for i in range(1, len(history) + 1) if history[i - 1]["role"] == "user"]


THRESHOLDS = [LifecycleThresholds(), LifecycleThresholds(1, 2, 4, max_relevant=3),
              LifecycleThresholds(2, 3, 5, view_budget_tokens=3_000),
              LifecycleThresholds(1, 1, 1), LifecycleThresholds(2, 4, 6, max_relevant=0)]


def test_the_policy_with_its_kept_memo_equals_a_fresh_lifecycle_view_at_every_request():
    promoted = 0
    for variant in range(3):
        history, times = sample_session_messages(25, variant=variant)
        for th in THRESHOLDS:
            policy = LifecyclePolicy(th)
            for n, i in enumerate(_requests(history)):
                h = history[:i]
                # every other request without times: Warm-B lines are retimed each request
                ctx = ViewContext(times=tuple(times[:i]), now=times[i - 1], turn=n + 1) \
                    if n % 2 else ViewContext(now=float(n), turn=n + 1)
                before = copy.deepcopy(h)
                view = policy(h, ctx)
                assert h == before
                expected, info = lifecycle_view(h, times=ctx.times_for(h), thresholds=th)
                assert view == expected and policy.last_info == info
                record = policy.records[-1]
                assert record["raw_tokens"] == approx_tokens(h)
                assert record["view_tokens"] == approx_tokens(view)
                assert record["counts"] == {t: info["tiers"].count(t) for t in TIERS}
                ages = _age_tiers(len(info["tiers"]), th)
                promoted += sum(a != "hot" and t == "hot" for a, t in zip(ages, info["tiers"]))
    assert promoted > 50  # relevance promotion was exercised, not only the ages


def test_the_policy_is_right_when_the_history_is_not_an_extension_of_the_last_one():
    a, ta = sample_session_messages(30, variant=0)
    b, tb = sample_session_messages(30, variant=1)
    edited = [*a[:20], {**a[20], "content": [{"type": "text", "text": "changed src/app.py"}]},
              *a[21:]]
    policy = LifecyclePolicy(LifecycleThresholds(2, 4, 8))
    for h, t in [(a[:41], ta), (b[:31], tb), (a[:61], ta), (edited[:61], ta), (a[:21], ta),
                 (a[:61], ta), (a[:61], ta)]:
        ctx = ViewContext(times=tuple(t[:len(h)]), now=t[len(h) - 1])
        assert policy(h, ctx) == lifecycle_view(h, times=ctx.times,
                                                thresholds=policy.thresholds)[0]


@settings(max_examples=60, deadline=None)
@given(histories(max_turns=6), histories(max_turns=4),
       st.lists(st.tuples(st.integers(0, 2), st.integers(1, 30), st.booleans()), max_size=8))
def test_scan_sums_kept_between_requests_equal_the_history_counts(a, b, requests):
    """Growing, cut and foreign histories, scanned or not: the kept sums are the counts."""
    from mini_agent.core.history_scan import scan_for
    from mini_agent.core.tier_view import scan_sums
    from mini_agent.core.tokens import token_memo
    memo = ExchangeMemo()
    with token_memo():
        for which, length, scanned in requests:
            source = (a, b, [*a[:len(a) // 2], *b])[which]
            h = source[:length]
            if scanned:
                scan_for(h)
            memo.update(h)
            got, plain = memo.scan_sums(), scan_sums(h)
            assert plain is None or got is not None
            if got is not None:
                cum = [chars_of(h[:i]) for i in range(len(h) + 1)]
                assert got[0][:len(h) + 1] == [c for c, _ in cum]
                assert got[1][:len(h) + 1] == [i for _, i in cum]
