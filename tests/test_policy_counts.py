"""The compaction policies count tokens from running counts: the same views and records as
counting every view afresh, request by request, whatever histories they are given."""

from __future__ import annotations

import copy

from mini_agent.core.cache_policies import request_points
from mini_agent.core.compact_policy import CompactPolicy, CompactThresholds
from mini_agent.core.long_session import long_session
from mini_agent.core.policy_views import ServerCompactionView
from mini_agent.core.tokens import approx_request_tokens, approx_tokens
from mini_agent.core.view import ViewContext


class CountingAfresh(CompactPolicy):
    """The reference: every base view counted with ``approx_tokens``."""

    def _base_tokens(self, base, offset, n):
        return self._tokens(base)


class ServerAfresh(ServerCompactionView):
    """The reference: every base view counted with ``approx_tokens``.

    The running counts still take each history: they also hold the exchange starts the
    cut is read from (checked against ``clean_cut_points`` in test_view_fast_paths)."""

    def _view_tokens(self, history, view):
        self._counts.update(history)
        return approx_tokens(view)


def _summarize(messages):
    return f"summary of {len(messages)} messages, the last one {messages[-1]['role']}"


def _histories():
    """Request by request through one session, then another, then the first again, cut."""
    a, ta = long_session(40)
    b, tb = long_session(25, task="Make the CLI print the version.", seconds_per_step=30.0)
    steps = [(a[:i], ta) for i in request_points(a)]
    steps += [(b[:i], tb) for i in request_points(b)[::3]]
    steps += [(a[:i], ta) for i in request_points(a)[::-5]]
    return steps


def test_compact_policy_counts_as_if_afresh():
    th = CompactThresholds(1_500, 2_000, 2_500)
    kw = {"summarize": _summarize, "overhead_tokens": 100, "collapse_keep_recent_tokens": 5_000}
    fast, slow = CompactPolicy(th, **kw), CountingAfresh(th, **kw)
    stages = set()
    for n, (h, t) in enumerate(_histories()):
        ctx = ViewContext(times=tuple(t[:len(h)]), now=t[len(h) - 1] + 60, turn=n + 1)
        before = copy.deepcopy(h)
        assert fast(h, ctx) == slow(h, ctx)
        assert h == before
        assert fast.records[-1] == slow.records[-1]
        assert fast.records[-1]["raw_tokens"] == approx_tokens(h) + 100
        stages |= {s["stage"] for s in fast.records[-1]["stages"]}
    assert {"reuse_summary", "auto_compact", "micro_compact"} <= stages


def test_server_compaction_view_counts_as_if_afresh():
    system = "You are a coding agent. " * 40
    fast = ServerCompactionView(trigger_tokens=3_000, system=system, summarize=_summarize)
    slow = ServerAfresh(trigger_tokens=3_000, system=system, summarize=_summarize)
    for h, _ in _histories():
        view = fast(h)
        assert view == slow(h)
        assert fast._view_tokens(h, fast._kept.base(h)) == approx_tokens(fast._kept.base(h))
    assert fast.summaries == slow.summaries >= 3
    assert approx_request_tokens(messages=view, system=system) < 3_000 + 1_500

