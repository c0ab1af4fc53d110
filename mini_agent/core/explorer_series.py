"""Chart series of the policy explorer's report: one measure, the chosen policies, as traces.

The same figures the printed tables of :mod:`mini_agent.core.explorer_tables` show, as plain
plotly trace dicts (``{"type": "scatter", "name", "x", "y", ...}``): the messages each
policy's view sends per request, the cumulative input USD beside the hindsight bound (dashed),
the cache hit rate per request, and the essential facts each view still holds. Beside the
replays, when the file kept a usage for every request, the session as it really ran
(:data:`RECORDED`, the report's ``recorded`` row request by request, from
:func:`recorded_requests`): its tokens are the whole input the API counted (system prompt
and tools included, where a policy's line counts its view's messages), its cost and hit
rate are priced like a policy's. Pure (no plotly import): the ui layer's
``policy_explorer_widget`` draws them; tests check them without widgets.

Source: the kit's evaluation chapter (the explorer's report, the hindsight bound of masking,
retention over time); Anthropic's compaction cookbook (input tokens per approach).
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any, Mapping, Sequence

from mini_agent.core.explorer_tables import policy_records
from mini_agent.core.recorded_usage import recorded_requests  # noqa: F401 (re-exported)
from mini_agent.core.retention import Fact, retention_curve

MEASURES = {
    "tokens sent per request": "tokens",
    "cumulative input USD (bound dashed)": "usd",
    "cache hit rate": "hit_rate",
    "facts kept": "facts",
}
"""Dropdown label -> measure key of :func:`explorer_series`."""

BOUND = "bound"
"""The pseudo-policy naming the hindsight bound; drawn for the ``"usd"`` measure only."""

RECORDED = "recorded"
"""The pseudo-policy naming the session as it ran, from the file's own usage; offered only
when :func:`recorded_requests` has a row for every request, never drawn for ``"facts"`` (a
usage holds no view to look for facts in)."""

RECORDED_NAMES = {"tokens": "recorded: whole input (system + tools too)",
                  "usd": "recorded (the file's usage)",
                  "hit_rate": "recorded (the file's usage)"}
"""The legend name of the recorded trace per measure: its tokens are not the view's
messages alone, so the tokens chart says so. A kit-generated sample's usage is the kit's own
count, not a recording: its name then ends with :data:`SAMPLE_NOTE`."""

SAMPLE_NOTE = ", kit's own count"
"""Added to the recorded trace's name on a kit-generated sample (``report["generated"]``)."""

RECORDED_LINE = {"color": "#000000", "dash": "dot", "width": 3}
"""The recorded trace's line: black like the bound, dotted where the bound is dashed."""

DEFAULT_POLICIES = ("raw", "mask-10", "payback", "breakeven", BOUND, RECORDED)
"""Shown at first, when the report has them."""

AXIS_TITLES = {"tokens": "message tokens sent", "usd": "input USD, cumulative",
               "hit_rate": "cache read / input", "facts": "facts kept in the view"}
"""The y axis title of each measure."""

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
"""Colours by the policy's place in the report, so a policy keeps its colour when others are
hidden (plotly's default qualitative palette)."""


def policy_choices(report: dict[str, Any], *, recorded: bool = False) -> list[str]:
    """List the names a policy selector offers: the report's policies, the bound, the recording.

    Args:
        report: an :func:`~mini_agent.core.replay.evaluate_session` report.
        recorded: also offer :data:`RECORDED` (the caller has :func:`recorded_requests`
            rows for the session); default False.

    Returns:
        The policy names in report order, then :data:`BOUND`, then :data:`RECORDED` when
        ``recorded``.
    """
    return [p["name"] for p in report["policies"]] + [BOUND] + ([RECORDED] if recorded else [])


def default_policies(report: dict[str, Any], *, recorded: bool = False) -> list[str]:
    """Pick the policies shown at first: those of :data:`DEFAULT_POLICIES` the report has.

    Args:
        report: an :func:`~mini_agent.core.replay.evaluate_session` report.
        recorded: the recording is offered (see :func:`policy_choices`); default False.

    Returns:
        The names, in :func:`policy_choices` order (the bound and the recording with the
        defaults); every choice when none of the default policies is in the report.
    """
    choices = policy_choices(report, recorded=recorded)
    extra = (BOUND, RECORDED)
    picked = [n for n in choices if n in DEFAULT_POLICIES and n not in extra]
    return [n for n in choices if n in picked or n in extra] if picked else choices


def request_points_of(report: dict[str, Any]) -> list[int]:
    """Recover each request's history length from the report's views.

    Masking and raw views keep every message (masking shortens contents, not the list), so
    the longest view of a request has the request's whole history; a report made without
    ``raw`` or any masking policy may undercount.

    Args:
        report: a report made with ``keep_views=True``.

    Returns:
        The longest view's message count per request.

    Raises:
        ValueError: a report without ``keep_views`` records.
    """
    records = dict(policy_records(report))
    n = len(report["requests"])
    return [max((len(recs[r]["view"]) for recs in records.values()), default=0)
            for r in range(n)]


def explorer_series(report: dict[str, Any], measure: str, policies: Sequence[str], *,
                    points: Sequence[int] | None = None,
                    facts: Sequence[Fact] | None = None,
                    recorded: Sequence[Mapping[str, Any]] | None = None
                    ) -> list[dict[str, Any]]:
    """Build the chart traces of one measure for the chosen policies.

    Args:
        report: an :func:`~mini_agent.core.replay.evaluate_session` report made with
            ``keep_views=True``.
        measure: ``"tokens"`` (message tokens each view sends, per request), ``"usd"``
            (input USD summed request by request; the bound dashed), ``"hit_rate"`` (cache
            read / input of each request, 0 to 1) or ``"facts"`` (facts the view holds, with
            a dotted "stated so far" line).
        policies: names from :func:`policy_choices`; :data:`BOUND` counts for ``"usd"`` only,
            :data:`RECORDED` with ``recorded`` only, unknown names are skipped.
        points: each request's history length (``request_points(messages)``); default
            :func:`request_points_of` the report. Used by ``"facts"`` only.
        facts: the facts to check; default the report's own. Used by ``"facts"`` only.
        recorded: the session's :func:`recorded_requests` rows; drawn (dotted black, named
            by :data:`RECORDED_NAMES`) when :data:`RECORDED` is chosen and the measure is
            not ``"facts"``; default None (nothing recorded to draw).

    Returns:
        One scatter trace dict per shown policy in report order (x: request numbers from 1),
        then the bound (``"usd"``) or the stated count (``"facts"``) when they apply, then
        the recording.

    Raises:
        ValueError: an unknown measure, or a report without ``keep_views`` records.
    """
    if measure not in AXIS_TITLES:
        raise ValueError(f"unknown measure {measure!r}; choose from {sorted(AXIS_TITLES)}")
    records = dict(policy_records(report))
    x = list(range(1, len(report["requests"]) + 1))
    chosen = set(policies)
    traces: list[dict[str, Any]] = []
    curves: dict[str, list[tuple[int, int]]] = {}
    if measure == "facts":
        points = list(points) if points is not None else request_points_of(report)
        facts = list(facts) if facts is not None else [Fact(**f) for f in report["facts"]]
    for i, (name, recs) in enumerate(records.items()):
        if name not in chosen:
            continue
        if measure == "tokens":
            y: list[float] = [r["view_tokens"] for r in recs]
        elif measure == "usd":
            y = list(accumulate(r["cost_usd"] for r in recs))
        elif measure == "hit_rate":
            y = [r["hit_rate"] for r in recs]
        else:
            curves[name] = retention_curve([r["view"] for r in recs], points, facts)
            y = [kept for kept, _ in curves[name]]
        traces.append({"type": "scatter", "mode": "lines", "name": name, "x": x, "y": y,
                       "line": {"color": PALETTE[i % len(PALETTE)]}})
    if measure == "usd" and BOUND in chosen:
        traces.append({"type": "scatter", "mode": "lines", "name": "bound (hindsight)",
                       "x": x, "y": list(accumulate(report["bound"]["request_usd"])),
                       "line": {"color": "#000000", "dash": "dash"}})
    if measure == "facts" and curves:
        stated = [s for _, s in next(iter(curves.values()))]
        traces.append({"type": "scatter", "mode": "lines", "name": "stated so far", "x": x,
                       "y": stated, "line": {"color": "#999999", "dash": "dot"}})
    if recorded and RECORDED in chosen and measure in RECORDED_NAMES:
        if measure == "tokens":
            y = [r["tokens"] for r in recorded]
        elif measure == "usd":
            y = list(accumulate(r["cost_usd"] for r in recorded))
        else:
            y = [r["hit_rate"] for r in recorded]
        name = RECORDED_NAMES[measure]
        if report.get("generated"):
            name = name.removesuffix(")") + SAMPLE_NOTE + (")" if name.endswith(")") else "")
        traces.append({"type": "scatter", "mode": "lines", "name": name,
                       "x": x[:len(y)], "y": y, "line": dict(RECORDED_LINE)})
    return traces
