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
the timeline line of one exchange in ``core/timeline.py``. Taught in
``notebooks/08_context_lifecycle.ipynb``.

Source:
    003_85ccd58041fa7231.txt (four tiers, timeline line shape, reheat by id); Warm-A is
    ``masking.mask_old_observations`` (seed 000).
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, Sequence

from mini_agent.core.masking import mask_old_observations
from mini_agent.core.messages import Message, content_blocks, text_block
from mini_agent.core.timeline import cold_label, fold_exchange, timeline_line  # noqa: F401
from mini_agent.core.tokens import approx_tokens
from mini_agent.core.view import ViewContext

HOT, WARM_A, WARM_B, COLD = "hot", "warm_a", "warm_b", "cold"
TIERS = (HOT, WARM_A, WARM_B, COLD)
TIMELINE_HEADER = "[Timeline of earlier exchanges, oldest first]"
COLD_INDEX_HEADER = ("[Cold segments: out of this view, stored verbatim; call "
                     "recall_segment with an id to reheat one]")

_IDENT_RE = re.compile(r"(?:[\w.-]+/)+[\w.-]+|[\w-]+\.[A-Za-z]{1,5}\b|\b[A-Za-z_]\w*(?=\()")


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


def segment_id(number: int) -> str:
    """Name the segment of a 1-based exchange number.

    Args:
        number: the exchange's position, 1 for the oldest.

    Returns:
        ``seg-NNN``, zero-padded to three digits: ``segment_id(47) == "seg-047"``.
    """
    return f"seg-{number:03d}"


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


def split_exchanges(history: Sequence[Message]) -> list[tuple[int, int]]:
    """Split a history into exchanges, each starting at an assistant message.

    Args:
        history: the messages; the first (the task) belongs to no exchange.

    Returns:
        ``(start, end)`` index ranges, oldest first; ``end`` is exclusive.

    >>> split_exchanges([{"role": "user", "content": "a"}, {"role": "assistant",
    ...     "content": "b"}, {"role": "user", "content": "c"}])
    [(1, 3)]
    """
    starts = [i for i in range(1, len(history)) if history[i].get("role") == "assistant"]
    return [(s, starts[k + 1] if k + 1 < len(starts) else len(history))
            for k, s in enumerate(starts)]


def identifiers(text: str) -> set[str]:
    """Find the identifiers a text names, the keys of relevance promotion.

    Args:
        text: any text; None or "" gives an empty set.

    Returns:
        Paths, ``file.ext`` names and called names (``parse`` from ``parse()``) in ``text``.
    """
    return set(_IDENT_RE.findall(text or ""))


def _exchange_identifiers(messages: Sequence[Message]) -> set[str]:
    found: set[str] = set()
    for m in messages:
        for b in content_blocks(m):
            if b.get("type") == "text":
                found |= identifiers(b["text"])
            elif b.get("type") == "tool_use":
                found |= identifiers(json.dumps(b.get("input", {}), ensure_ascii=False))
    return found


def current_request_text(history: Sequence[Message]) -> str:
    """Return the request being worked on: the newest user text that is not a tool result.

    Args:
        history: the messages, oldest first.

    Returns:
        The text blocks of the newest user message that has any, joined by newlines; "" if none.
    """
    for m in reversed(history):
        if m.get("role") == "user":
            texts = [b["text"] for b in content_blocks(m) if b.get("type") == "text"]
            if texts:
                return "\n".join(texts)
    return ""


# --------------------------------------------------------------------------- tiers

def _render(history: Sequence[Message], ranges: list[tuple[int, int]], tiers: list[str],
            times: Sequence[float]) -> tuple[list[Message], dict[str, Any]]:
    """Build the view for given tiers; returns ``(view, parts)`` (tokens per tier, lines)."""
    lines, index, body = [], [], []
    tokens = {HOT: 0, WARM_A: 0, WARM_B: 0, COLD: 0}
    for k, ((s, e), tier) in enumerate(zip(ranges, tiers), 1):
        part = list(history[s:e])
        if tier == HOT:
            body += part
            tokens[HOT] += approx_tokens(part)
        elif tier == WARM_A:
            masked = mask_old_observations(part, keep=0)
            body += masked
            tokens[WARM_A] += approx_tokens(masked)
        elif tier == WARM_B:
            line = fold_exchange(part, segment=segment_id(k), time_seconds=times[s])
            lines.append(line)
            tokens[WARM_B] += approx_tokens(line)
        else:
            entry = f"{segment_id(k)}: {cold_label(part)}"
            index.append(entry)
            tokens[COLD] += approx_tokens(entry)
    extra = []
    if index:
        extra.append(text_block(COLD_INDEX_HEADER + "\n" + "\n".join(index)))
    if lines:
        extra.append(text_block(TIMELINE_HEADER + "\n" + "\n".join(lines)))
    head = history[0]
    if extra:
        head = {"role": head["role"], "content": [*content_blocks(head), *extra]}
    tokens[HOT] += approx_tokens([history[0]])
    return [head, *body], {"tokens": tokens, "timeline": lines, "cold_index": index}


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
    ranges = split_exchanges(history)
    n = len(ranges)
    th = thresholds
    tiers = []
    for k in range(n):
        tiers.append(tier_for_age(n - 1 - k, hot_exchanges=th.hot_exchanges,
                                  warm_a_exchanges=th.warm_a_exchanges,
                                  warm_b_exchanges=th.warm_b_exchanges))
    wanted = identifiers(current_request_text(history))
    promoted = 0
    for k in range(n - 1, -1, -1):
        if promoted >= th.max_relevant or not wanted:
            break
        if tiers[k] in (WARM_A, WARM_B) and wanted & _exchange_identifiers(
                history[ranges[k][0]:ranges[k][1]]):
            tiers[k] = HOT
            promoted += 1
    if th.view_budget_tokens is not None and n:
        if times is None:
            times = [0.0] * len(history)
        elif len(times) != len(history):
            raise ValueError(f"times must be parallel to history: {len(times)} vs "
                             f"{len(history)}")
        order = {WARM_B: COLD, WARM_A: WARM_B, HOT: WARM_A}
        while approx_tokens(_render(history, ranges, tiers, times)[0]) > th.view_budget_tokens:
            for source in (WARM_B, WARM_A, HOT):
                k = next((k for k in range(n - 1) if tiers[k] == source), None)
                if k is not None:
                    tiers[k] = order[source]
                    break
            else:
                break  # only the newest exchange is left: it stays Hot
    return tiers


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
    if len(times) != len(history):
        raise ValueError(f"times must be parallel to history: {len(times)} vs {len(history)}")
    ranges = split_exchanges(history)
    tiers = tiers if tiers is not None else assign_tiers(history, thresholds=thresholds,
                                                         times=times)
    if not ranges:
        return list(history), {"tiers": [], "tokens": {HOT: approx_tokens(history), WARM_A: 0,
                               WARM_B: 0, COLD: 0}, "timeline": [], "cold_index": [],
                               "cold": [], "fallback": False}
    view, parts = _render(history, ranges, tiers, times)
    cold = [(segment_id(k), cold_label(history[s:e]), times[s], list(history[s:e]))
            for k, ((s, e), t) in enumerate(zip(ranges, tiers), 1) if t == COLD]
    info = {"tiers": tiers, **parts, "cold": cold, "fallback": False}
    if approx_tokens(view) >= approx_tokens(history):
        info["fallback"] = True
        return list(history), info
    return view, info


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

    def __call__(self, history: list[Message], ctx: ViewContext) -> list[Message]:
        """Return the view for this request and record its tokens per tier."""
        times = ctx.times_for(history)
        view, info = lifecycle_view(history, times=times, thresholds=self.thresholds)
        if self.store is not None:
            for segment, label, when, messages in info["cold"]:
                self.store.put(segment, label, when, messages)
        self.last_info = info
        self.records.append({
            "turn": ctx.turn, "raw_tokens": approx_tokens(history),
            "view_tokens": approx_tokens(view), "tokens": dict(info["tokens"]),
            "counts": {t: info["tiers"].count(t) for t in TIERS},
            "fallback": info["fallback"]})
        return view
