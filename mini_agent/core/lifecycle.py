"""The four-stage context lifecycle: Hot, Warm-A, Warm-B, Cold; old exchanges cool step by step.

==========  =================================================  ============================
tier        what the view holds                                role
==========  =================================================  ============================
Hot         the exchange, complete                             the current context
Warm-A      tool results masked, reasoning kept                recent train of thought
Warm-B      ONE timeline line, reasoning included:             the historical record
            ``[14:30] read_file (seg-047): src/app.py 120
            lines; found bug in parse()``
Cold        out of the view, stored in SQLite; the view keeps  fetched on demand with the
            ``id + label`` and the model can call              ``recall_segment`` tool
            ``recall_segment(id)``
==========  =================================================  ============================

An *exchange* (a segment, ``seg-NNN`` counted from 1) is one assistant message plus the user
message that answers it (its ``tool_result`` blocks, or the user's next prompt). The first user
message, the task, is always kept; timeline lines and the cold index are appended to it.

When does an exchange cool? The seed left it open; the kit answers with two rules
(:class:`LifecycleThresholds`): by exchange age (an exchange ``age`` exchanges older than the
newest is Hot below ``hot_exchanges``, Warm-A below ``warm_a_exchanges``, Warm-B below
``warm_b_exchanges``, else Cold), and by token budget (while the view is over
``view_budget_tokens``, the oldest exchange of the warmest-but-oldest tier goes one tier down:
Warm-B to Cold first, then Warm-A to Warm-B, then Hot to Warm-A; the newest exchange always
stays Hot). An older exchange that shares an identifier (a path, a ``name()``) with the current
request is promoted back to Hot ("what stays Hot is decided by relevance to the current topic",
seed 003).

Pure: the SQLite cold store and the ``recall_segment`` tool live in ``harness/cold_store.py``,
the timeline line of one exchange in ``core/timeline.py``, identifiers in ``core/relevance.py``,
what a policy remembers between requests in ``core/exchange_memo.py``, the view built from
given tiers in ``core/tier_view.py``. Taught in ``notebooks/08_context_lifecycle.ipynb``.

Source:
    003_85ccd58041fa7231.txt (four tiers, timeline line shape, reheat by id); Warm-A is
    ``masking.mask_old_observations`` (seed 000).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Sequence

from mini_agent.core.exchange_memo import (ExchangeMemo, chars_of,  # noqa: F401
                                           split_exchanges)
from mini_agent.core.messages import Message
from mini_agent.core.relevance import (current_request_text, exchange_identifiers,  # noqa: F401
                                       identifiers, shares_identifier)
from mini_agent.core.tier_forms import (COLD, COLD_INDEX_HEADER, HOT, TIERS,  # noqa: F401
                                        TIMELINE_HEADER, WARM_A, WARM_B, cold_form, segment_id,
                                        warm_a_form, warm_b_form)
from mini_agent.core.timeline import cold_label, fold_exchange, timeline_line  # noqa: F401
from mini_agent.core.tier_view import render_tiers
from mini_agent.core.tokens import CHARS_PER_TOKEN
from mini_agent.core.view import ViewContext


@dataclasses.dataclass(frozen=True)
class LifecycleThresholds:
    """When exchanges cool (ages counted in exchanges; the newest has age 0).

    Attributes:
        hot_exchanges: ages below it are Hot (default 3).
        warm_a_exchanges: ages below it (and not Hot) are Warm-A (default 8).
        warm_b_exchanges: ages below it (and not Warm-A) are Warm-B, older ones Cold (default 20).
        view_budget_tokens: if set, demote oldest-first until the view's approx tokens fit;
            None (the default) applies no budget rule.
        max_relevant: at most this many older Warm exchanges are promoted to Hot for sharing an
            identifier with the current request (default 2).

    Raises:
        ValueError: unless 1 <= hot_exchanges <= warm_a_exchanges <= warm_b_exchanges.
    """

    hot_exchanges: int = 3
    warm_a_exchanges: int = 8
    warm_b_exchanges: int = 20
    view_budget_tokens: int | None = None
    max_relevant: int = 2

    def __post_init__(self) -> None:
        if not 1 <= self.hot_exchanges <= self.warm_a_exchanges <= self.warm_b_exchanges:
            raise ValueError("need 1 <= hot_exchanges <= warm_a_exchanges <= warm_b_exchanges, got "
                             f"{self}")


def tier_for_age(age: int, *, hot_exchanges: int = 3, warm_a_exchanges: int = 8,
                 warm_b_exchanges: int = 20) -> str:
    """Return the tier of an exchange ``age`` exchanges older than the newest one.

    Args:
        age: exchanges between this one and the newest; 0 for the newest exchange.
        hot_exchanges: ages below it are Hot (default 3, as :class:`LifecycleThresholds`).
        warm_a_exchanges: ages below it are Warm-A (default 8).
        warm_b_exchanges: ages below it are Warm-B; older ones are Cold (default 20).

    Returns:
        "hot", "warm_a", "warm_b" or "cold".

    Raises:
        ValueError: age < 0.

    Source:
        003_85ccd58041fa7231.txt (four tiers); exercise 08.1.

    >>> [tier_for_age(a) for a in (0, 3, 8, 20)]
    ['hot', 'warm_a', 'warm_b', 'cold']
    """
    if age < 0:
        raise ValueError(f"age must be >= 0, got {age}")
    if age < hot_exchanges:
        return HOT
    if age < warm_a_exchanges:
        return WARM_A
    return WARM_B if age < warm_b_exchanges else COLD


def eviction_order(segments: Sequence[dict[str, Any]]) -> list[str]:
    """Return the ids of cold segments in the order they leave the store: first stored first.

    Args:
        segments: ``[{"id": str, "time": float, "seq": int}]``; ``seq`` is the store's
            monotonic insertion counter; never mutated.

    Returns:
        The ids by ``seq`` only, never by ``time``: equal times keep their insertion order,
        and a segment stored later with an earlier time (a clock that stepped back) still
        leaves later.

    Source:
        003_85ccd58041fa7231.txt (cold store); exercise 08.3.
    """
    return [s["id"] for s in sorted(segments, key=lambda s: s["seq"])]


# --------------------------------------------------------------------------- tiers
# What an exchange becomes in each tier (core/tier_forms.py) is computed once per exchange and
# kept by the ExchangeMemo (core/exchange_memo.py) for as long as the exchange is unchanged: a
# policy object keeps one memo for its whole life, so a request costs only what it adds. The
# public functions below use a fresh memo per call: the same results, each exchange folded
# once per call.

def _wanted(text: str) -> frozenset[str]:
    return frozenset(identifiers(text))


def _age_tiers(n: int, th: LifecycleThresholds) -> list[str]:
    """``[tier_for_age(n - 1 - k, ...) for k in range(n)]`` built as four runs, oldest first."""
    hot = min(n, th.hot_exchanges)
    warm_a = min(n, th.warm_a_exchanges) - hot
    warm_b = min(n, th.warm_b_exchanges) - hot - warm_a
    return [COLD] * (n - hot - warm_a - warm_b) + [WARM_B] * warm_b + [WARM_A] * warm_a + \
        [HOT] * hot


@functools.lru_cache(maxsize=512)
def _age_run(n: int, hot_exchanges: int, warm_a_exchanges: int,
             warm_b_exchanges: int) -> tuple[tuple[str, ...], tuple[int, int, int, int]]:
    """:func:`_age_tiers` of ``n`` exchanges for these thresholds as a tuple, with how many
    are Hot, Warm-A, Warm-B and Cold; built once per ``n`` (a replay asks for the same
    lengths session after session)."""
    ages = tuple(_age_tiers(n, LifecycleThresholds(hot_exchanges, warm_a_exchanges,
                                                   warm_b_exchanges)))
    return ages, (ages.count(HOT), ages.count(WARM_A), ages.count(WARM_B), ages.count(COLD))


def assign_tiers(history: Sequence[Message], *,
                 thresholds: LifecycleThresholds = LifecycleThresholds(),
                 times: Sequence[float] | None = None) -> list[str]:
    """Return one tier per exchange (see :func:`split_exchanges`), oldest first.

    Rules, in order: exchange age (``thresholds`` ages); relevance (up to ``max_relevant`` older
    Warm exchanges sharing an identifier with :func:`current_request_text` become Hot, newest
    first); budget (while the view is over ``view_budget_tokens``: the oldest Warm-B goes Cold,
    else the oldest Warm-A goes Warm-B, else the oldest Hot but the newest goes Warm-A).
    Pure; deterministic.

    Args:
        history: the full history; never mutated.
        thresholds: the ages, budget and promotion limit.
        times: Unix seconds per message, parallel to ``history``; only the budget rule renders
            timeline lines with them (None: 0.0 for every message).

    Returns:
        "hot", "warm_a", "warm_b" or "cold" for each exchange, oldest first.

    Raises:
        ValueError: ``times`` is given and not parallel to ``history``.
    """
    memo = ExchangeMemo()
    return _assign_tiers(history, memo.update(history), thresholds, times, memo)[0]


def _assign_tiers(history: Sequence[Message], ranges: list[tuple[int, int]],
                  th: LifecycleThresholds, times: Sequence[float] | None,
                  memo: ExchangeMemo,
                  sums: tuple[list[int], list[int]] | None = None
                  ) -> tuple[list[str], dict[str, int] | None]:
    """:func:`assign_tiers` for a kept memo: ``(tiers, {tier: count} or None)``; the counts
    (``tiers.count`` of each, in ``TIERS`` order) follow the age runs and the promotions,
    None when the budget rule moved tiers."""
    n = len(ranges)
    ages, (hot, warm_a, warm_b, cold) = _age_run(n, th.hot_exchanges, th.warm_a_exchanges,
                                                 th.warm_b_exchanges)
    tiers = list(ages)  # _age_tiers(n, th)
    counts: dict[str, int] | None = {HOT: hot, WARM_A: warm_a, WARM_B: warm_b, COLD: cold}
    wanted = memo.request_fact(_wanted)  # identifiers(current_request_text(history))
    limit = th.max_relevant if wanted else 0
    if limit > 0:
        # only exchanges Warm by age can be promoted (ages hot_exchanges .. warm_b_exchanges
        # - 1): the newest ``limit`` of them sharing an identifier
        for k in memo.matching(shares_identifier, wanted, max(0, n - th.warm_b_exchanges),
                               n - th.hot_exchanges)[-limit:]:
            counts[tiers[k]] -= 1
            counts[HOT] += 1
            tiers[k] = HOT
    if th.view_budget_tokens is not None and n:
        counts = None
        if times is None:
            times = [0.0] * len(history)
        elif len(times) != len(history):
            raise ValueError(f"times must be parallel to history: {len(times)} vs "
                             f"{len(history)}")
        order = {WARM_B: COLD, WARM_A: WARM_B, HOT: WARM_A}
        while render_tiers(history, ranges, tiers, times, memo, sums)[2] > th.view_budget_tokens:
            for source in (WARM_B, WARM_A, HOT):
                k = next((k for k in range(n - 1) if tiers[k] == source), None)
                if k is not None:
                    tiers[k] = order[source]
                    break
            else:
                break  # only the newest exchange is left: it stays Hot
    return tiers, counts


def lifecycle_view(history: list[Message], *, times: Sequence[float],
                   thresholds: LifecycleThresholds = LifecycleThresholds(),
                   tiers: list[str] | None = None) -> tuple[list[Message], dict[str, Any]]:
    """Build the four-tier view: ``(view, info)``.

    Args:
        history: the full history; never mutated.
        times: Unix seconds at which each message was appended, parallel to ``history``.
        thresholds: the ages, budget and promotion limit used when ``tiers`` is None.
        tiers: one tier per exchange to use as is, instead of :func:`assign_tiers`.

    Returns:
        ``view`` = ``[task message + cold index + timeline, *Hot and Warm-A exchanges in order]``
        (Warm-A with every tool result masked). ``info`` = ``{"tiers": [...], "tokens": {"hot",
        "warm_a", "warm_b", "cold"}, "timeline": [lines], "cold_index": [entries], "cold":
        [(segment_id, label, time_seconds, messages)], "fallback": bool}``. When the view would
        not be smaller than the history, the history itself is the view (``fallback: True``).
        Both are new lists.

    Raises:
        ValueError: ``times`` is not parallel to ``history``.
    """
    return _lifecycle_view(history, times, thresholds, tiers, ExchangeMemo())[:2]


def _lifecycle_view(history: list[Message], times: Sequence[float], thresholds:
                    LifecycleThresholds, tiers: list[str] | None, memo: ExchangeMemo
                    ) -> tuple[list[Message], dict[str, Any], int, int, dict[str, int] | None]:
    """:func:`lifecycle_view` with a kept memo; also returns the approx tokens of the view
    and of the history, and the count of each tier when known without counting (else
    None)."""
    if len(times) != len(history):
        raise ValueError(f"times must be parallel to history: {len(times)} vs {len(history)}")
    ranges = memo.update(history)
    sums = memo.scan_sums()  # scan_sums(history), the scan kept from the last request
    raw_tokens = (memo.tokens(0, len(history)) if sums is None else
                  math.ceil(sums[0][len(history)] / CHARS_PER_TOKEN) + sums[1][len(history)])
    counts = None
    if tiers is None:
        tiers, counts = _assign_tiers(history, ranges, thresholds, times, memo, sums)
    if not ranges:
        return list(history), {"tiers": [], "tokens": {HOT: raw_tokens, WARM_A: 0, WARM_B: 0,
                               COLD: 0}, "timeline": [], "cold_index": [], "cold": [],
                               "fallback": False}, raw_tokens, raw_tokens, counts
    view, parts, view_tokens = render_tiers(history, ranges, tiers, times, memo, sums)
    info = {"tiers": tiers, **parts, "fallback": False}
    if view_tokens >= raw_tokens:
        info["fallback"] = True
        return list(history), info, raw_tokens, raw_tokens, counts
    return view, info, view_tokens, raw_tokens, counts


class LifecyclePolicy:
    """The lifecycle as an Agent ``view_policy``: tiers each request, cold segments stored.

    ``policy(history, ctx) -> view`` builds :func:`lifecycle_view`, puts every Cold exchange
    in ``store`` (when given), and appends to ``policy.records``, one per request (``turn`` is
    the request number from the :class:`ViewContext`)::

        {"turn": int, "raw_tokens": int, "view_tokens": int,
         "tokens": {"hot", "warm_a", "warm_b", "cold"}, "counts": {tier: exchanges},
         "fallback": bool}

    Offer ``recall_segment_tool(store)`` to the model so it can reheat what it needs.

    Args:
        thresholds: the :class:`LifecycleThresholds` for every request.
        store: anything with ``put(segment, label, time_seconds, messages)`` (a
            ``harness.cold_store.ColdStore``), or None to keep Cold exchanges nowhere.
    """

    def __init__(self, thresholds: LifecycleThresholds = LifecycleThresholds(), *,
                 store: Any = None) -> None:
        self.thresholds = thresholds
        self.store = store
        self.records: list[dict[str, Any]] = []
        self.last_info: dict[str, Any] = {}
        self._memo = ExchangeMemo()  # this policy's history, exchange by exchange

    def __call__(self, history: list[Message], ctx: ViewContext) -> list[Message]:
        """Return the view for this request and record its tokens per tier."""
        times = ctx.times
        if len(times) != len(history):  # ctx.times_for(history), without the call
            times = ctx.times_for(history)
        view, info, view_tokens, raw_tokens, counts = _lifecycle_view(
            history, times, self.thresholds, None, self._memo)
        if self.store is not None:
            for segment, label, when, messages in info["cold"]:
                self.store.put(segment, label, when, messages)
        self.last_info = info
        if counts is None:  # the budget rule moved tiers: count them
            tiers = info["tiers"]
            counts = {HOT: tiers.count(HOT), WARM_A: tiers.count(WARM_A),  # per TIERS
                      WARM_B: tiers.count(WARM_B), COLD: tiers.count(COLD)}
        self.records.append({
            "turn": ctx.turn, "raw_tokens": raw_tokens,
            "view_tokens": view_tokens, "tokens": dict(info["tokens"]),
            "counts": counts, "fallback": info["fallback"]})
        return view
