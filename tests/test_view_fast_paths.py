"""The policies' view fast paths equal their plain forms, request by request.

Inside ``token_memo()`` (the explorer's replay) the policies read counts from the session's
:class:`~mini_agent.core.history_scan.HistoryScan`: ``approx_tokens`` of a view that is the
history with a few messages replaced (``history_scan.view_tokens``), the running counts of
:class:`~mini_agent.core.exchange_memo.ExchangeMemo`; the summary policies find their cut
from the exchange starts instead of rereading the history. Each test replays a session as
``evaluate_session`` does and compares with the plain code (outside any memo, or the
original expression written out here).
"""

import copy

import pytest

from mini_agent.core.cache_policies import request_points
from mini_agent.core.compact_policy import CompactPolicy, CompactThresholds
from mini_agent.core.compaction import clean_cut_points, micro_compact
from mini_agent.core.exchange_memo import ExchangeMemo, split_exchanges
from mini_agent.core.history_scan import scan_for, view_tokens
from mini_agent.core.lifecycle import LifecyclePolicy
from mini_agent.core.masking import ThresholdMasking, mask_old_observations
from mini_agent.core.messages import assistant, user
from mini_agent.core.policy_views import ServerCompactionView, SummaryPolicy
from mini_agent.core.sample_sessions import sample_transcript
from mini_agent.core.tokens import (_message_chars, approx_request_tokens, approx_tokens,
                                   token_memo)
from mini_agent.core.view import ViewContext


def _sessions():
    for steps, variant in ((3, 0), (12, 1), (25, 4), (40, 2)):
        yield sample_transcript(steps, variant=variant)


def _requests(messages):
    """``(history, ctx)`` per request, as the replay builds them (times 10 minutes apart)."""
    times = [600.0 * i for i in range(len(messages))]
    return [(messages[:i], ViewContext(times=tuple(times[:i]), now=times[i], turn=n + 1))
            for n, i in enumerate(request_points(messages))]


def _plain_tokens(messages):
    """``approx_tokens`` of a list as the plain loop adds it up (no memo, no scan)."""
    chars = images = 0
    for m in messages:
        c, im = _message_chars(m)
        chars, images = chars + c, images + im
    return -(-chars // 4) + images


def test_view_tokens_of_replaced_messages_equal_the_plain_count():
    for transcript in _sessions():
        messages = transcript.messages
        snapshot = copy.deepcopy(messages)
        with token_memo():
            scan_for(messages)   # the session's scan, as the masking policies start it
            for history, ctx in _requests(messages):
                views = [history, micro_compact(history, times=ctx.times, now=ctx.now),
                         micro_compact(history, times=ctx.times, now=1e12),
                         mask_old_observations(history, keep=1),
                         history[:-1] + [user("a replaced last message")] if history else []]
                for view in views:
                    expected = _plain_tokens(view)
                    assert approx_tokens(view) == expected
                    if view and view[0] is messages[0]:
                        assert view_tokens(view) == expected
            # something was replaced: the differences are counted, not the scan's sums
            cleared = micro_compact(messages, times=[0.0] * len(messages), now=1e12)
            assert cleared != messages
            assert view_tokens(cleared) == _plain_tokens(cleared) < _plain_tokens(messages)
        assert messages == snapshot


def test_view_tokens_gives_up_on_unscanned_and_longer_diverging_lists():
    messages = sample_transcript(6, variant=3).messages
    with token_memo():
        assert view_tokens(messages[1:]) is None           # no scan starts there
        scan_for(messages[:5])
        longer = messages[:5] + [user("x" * 40), assistant("y")]
        assert view_tokens(messages) == _plain_tokens(messages)   # a longer history extends it
        other = [messages[0], user("z" * 400), *messages[2:], user("w")]
        assert view_tokens(other) is None                  # longer and diverging
        assert approx_tokens(other) == _plain_tokens(other)
        assert approx_tokens(longer) == _plain_tokens(longer)


def test_exchange_memo_counts_from_the_scan_equal_its_own_counts():
    for transcript in _sessions():
        messages = transcript.messages
        plain_memo, scanned_memo = ExchangeMemo(), ExchangeMemo()
        for history, _ in _requests(messages) + [(messages[:3], None), (messages, None)]:
            ranges = plain_memo.update(history)
            plain = [plain_memo.chars(s, e) for s, e in [(0, len(history)), (0, 1), *ranges]]
            with token_memo():
                alone = ExchangeMemo()   # no scan in this memo: it counts by itself
                alone.update(history)
                assert [alone.chars(s, e) for s, e in [(0, len(history)), *ranges]] == \
                    [plain[0], *plain[2:]]
                assert alone._scan is None
                if len(history) > 2:      # a scan that does not cover it is not extended
                    short = scan_for(history[:2])
                    fresh = ExchangeMemo()
                    fresh.update(history)
                    assert fresh.chars(0, len(history)) == plain[0]
                    assert fresh._scan is None and len(short.messages) == 2
                scan_for(history)        # another policy of the session scanned it
                assert scanned_memo.update(history) == ranges == split_exchanges(history)
                scanned = [scanned_memo.chars(s, e)
                           for s, e in [(0, len(history)), (0, 1), *ranges]]
                assert scanned_memo._scan is not None or not history
            assert scanned == plain
            assert scanned_memo.starts() == [s for s, _ in ranges] == clean_cut_points(history)


def _plain_summary_cut(history, kept_cut, every, keep):
    """``SummaryPolicy._cut`` as first written: the whole history read at every request."""
    replies = [i for i, m in enumerate(history) if m.get("role") == "assistant" and i >= kept_cut]
    if len(replies) <= every:
        return None
    cuts = [c for c in clean_cut_points(history) if c <= replies[-keep]]
    if not cuts or cuts[-1] <= max(1, kept_cut):
        return None
    return cuts[-1]


@pytest.mark.parametrize("every,keep", [(21, 10), (3, 1), (4, 3)])
def test_summary_cut_equals_the_plain_rule(every, keep):
    for transcript in _sessions():
        messages = transcript.messages
        opening = [assistant("I start."), *messages]   # a history opening with a reply
        for session in (messages, opening):
            policy = SummaryPolicy(every_exchanges=every, keep_exchanges=keep,
                                   summarize=lambda ms: "summary")
            for i in range(1, len(session) + 1):
                history = session[:i]
                for kept_cut in sorted({0, 1, policy._kept.cut, max(0, i - 5)}):
                    policy._kept.cut = kept_cut
                    assert policy._cut(history, history) == _plain_summary_cut(
                        history, kept_cut, every, keep), (i, kept_cut)
                policy._kept.cut = 0


def _plain_server_cut(policy, history, view):
    """``ServerCompactionView._cut`` as first written."""
    size = policy._view_tokens(history, view) + approx_request_tokens(
        messages=[], system=policy.system, tools=policy.tools)
    if size < policy.trigger_tokens:
        return None
    cuts = [c for c in clean_cut_points(history) if c > max(1, policy._kept.cut)]
    return cuts[-1] if cuts else None


def test_server_compaction_cut_equals_the_plain_rule():
    for transcript in _sessions():
        messages = transcript.messages
        for trigger in (500, 5_000, 50_000):
            fast = ServerCompactionView(trigger_tokens=trigger, system="You code.")
            plain = ServerCompactionView(trigger_tokens=trigger, system="You code.")
            for history, ctx in _requests(messages):
                view = plain._kept.base(history)
                cut = _plain_server_cut(plain, history, view)
                assert fast._cut(history, fast._kept.base(history)) == cut
                if cut is not None:
                    plain._kept.compact(history, cut)
                    fast._kept.compact(history, cut)
        fast.system = "Another, longer system prompt."   # replacing it counts again
        assert fast._overhead_tokens() == approx_request_tokens(
            messages=[], system="Another, longer system prompt.") != plain._overhead_tokens()


def _replay(make, requests, memo):
    policy = make()
    if memo:
        with token_memo():
            views = [policy(h, ctx) for h, ctx in requests]
    else:
        views = [policy(h, ctx) for h, ctx in requests]
    return views, getattr(policy, "records", None)


@pytest.mark.parametrize("name,make", [
    ("lifecycle", lambda: LifecyclePolicy()),
    ("compact", lambda: CompactPolicy(CompactThresholds().scaled(0.05),
                                      summarize=lambda ms: "the summary")),
    ("compact_micro_only", lambda: CompactPolicy(CompactThresholds(1_500, 60_000, 90_000))),
    ("server_compact", lambda: ServerCompactionView(trigger_tokens=3_000, system="s")),
    ("summary", lambda: SummaryPolicy(every_exchanges=5, keep_exchanges=2,
                                      summarize=lambda ms: f"{len(ms)} messages")),
    ("threshold", lambda: (lambda p: lambda h, ctx: p(h, ctx))(
        ThresholdMasking(keep=2, threshold_tokens=0))),
])
def test_policies_in_a_token_memo_equal_the_plain_policies(name, make):
    for transcript in _sessions():
        messages = transcript.messages
        snapshot = copy.deepcopy(messages)
        requests = _requests(messages)
        fast_views, fast_records = _replay(make, requests, memo=True)
        plain_views, plain_records = _replay(make, requests, memo=False)
        assert fast_views == plain_views, name
        assert fast_records == plain_records, name
        assert messages == snapshot  # never mutated
