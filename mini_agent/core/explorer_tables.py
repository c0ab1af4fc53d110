"""Printed tables of the policy explorer's report: the summary, tokens per request side by side,
cumulative cost against the bound, and retention over time.

Each function takes the dict :func:`mini_agent.core.replay.evaluate_session` returns (the
per-request tables need ``keep_views=True``) and returns text; nothing is printed here.
Tables, not plots, as in Anthropic's compaction cookbook: they diff cleanly and stay small in
a notebook. Pure. Used by ``mini-agent evaluate`` and ``notebooks/11_evaluating_policies.ipynb``.

Source: Anthropic's compaction cookbook (printed tables of input tokens per approach, no
plots); the kit's evaluation chapter.
"""

from __future__ import annotations

from typing import Any, Sequence

from mini_agent.core.retention import Fact, retention_curve


def priced_as(report: dict[str, Any]) -> str:
    """Say which model a session's report is priced as, and why when it is not the file's.

    Args:
        report: one :func:`~mini_agent.core.replay.evaluate_session` report.

    Returns:
        The model (``"claude-sonnet-4-5"``) when the file names it; else, e.g.,
        ``"deepseek/deepseek-chat, priced as claude-sonnet-5-5"`` (a model the price table
        lacks, or ``--model`` given) or ``"model not recorded, priced as claude-sonnet-5-5"``.
    """
    recorded, model = report.get("recorded_model"), report["model"]
    if recorded == model:
        return model
    return f"{recorded or 'model not recorded'}, priced as {model}"


MAX_REPAIR_LINES = 10
"""Repair notes the text report shows per session; ``--json`` keeps every one."""

MAX_REPAIR_CHARS = 200
"""Characters of one repair note the text report shows; a longer note (one quoting a
hostile file's megabyte-long role) is cut with ``...``; ``--json`` keeps it whole."""


def format_report(report: dict[str, Any]) -> str:
    """Format a session's summary table.

    Args:
        report: one :func:`~mini_agent.core.replay.evaluate_session` report, or a failed
            file's ``{"path", "error"}``.

    Returns:
        The header (path, format, model, requests), the estimator's median error and the
        hindsight bound, then one row per policy and, when every request has usage, a
        ``recorded`` row (what these requests cost as they ran); a failed file gives one
        error line. The header says when the history starts after a compaction (the file's
        earlier requests are in neither the replays nor ``recorded``) and when the session
        is a kit-generated sample; the loader's repair notes (lines it skipped or mended),
        at most :data:`MAX_REPAIR_LINES` of them, come before the table.
    """
    if "error" in report:
        return f"{report['path']}: error: {report['error']}"
    err = report["estimator_median_abs_error"]
    generated = report.get("generated")
    after = report.get("compactions")
    lines = [f"{report['path'] or '<sample>'}  ({report['format']}, {priced_as(report)}, "
             f"{len(report['requests'])} requests"
             f"{', after its last compaction' if after else ''})"
             + ("  [kit-generated sample, not a recording]" if generated else ""),
             f"calibrated estimate: overhead ~{report['overhead_tokens']:,} tokens, "
             + ("no usage in the file to check it against" if err is None else
                f"median |error| {err:.1%} vs "
                + ("the sample's usage (the kit's own count, not a check)" if generated
                   else "real usage")),
             f"hindsight bound (masking, keep 4): ${report['bound']['usd']:.4f}, "
             + (f"boundary moves at requests {report['bound']['moves']}"
                if report['bound']['moves'] else "the boundary never moves")]
    repairs = report.get("repairs") or ()
    if repairs:     # what the loader skipped or mended: the figures below are without it
        lines.append(f"repairs ({len(repairs)}):")
        lines += [f"  - {r[:MAX_REPAIR_CHARS - 3]}..." if len(r) > MAX_REPAIR_CHARS
                  else f"  - {r}" for r in map(str, repairs[:MAX_REPAIR_LINES])]
        if len(repairs) > MAX_REPAIR_LINES:
            lines.append(f"  ... and {len(repairs) - MAX_REPAIR_LINES} more (--json lists all)")
    head = f"{'policy':<15}{'tokens sent':>13}{'USD':>10}{'vs best':>9}{'hit rate':>10}" \
           f"{'breaks':>8}{'facts kept':>12}"
    lines += [head, "-" * len(head)]
    for p in report["policies"]:
        vs = "-" if p["vs_best"] is None else f"{p['vs_best']:.2f}x"
        lines.append(f"{p['name']:<15}{p['tokens_sent']:>13,}{p['usd']:>10.4f}{vs:>9}"
                     f"{p['hit_rate']:>10.1%}{p['cache_breaks']:>8}"
                     f"{p['retained_facts']:>8}/{p['total_facts']}")
    rec = report.get("recorded")
    if rec:
        lines += ["-" * len(head),
                  f"{'recorded':<15}{rec['tokens_sent']:>13,}{rec['usd']:>10.4f}{'-':>9}"
                  f"{rec['hit_rate']:>10.1%}{rec['cache_breaks']:>8}{'-':>12}",
                  "(recorded: these requests as they ran, summed from the file's usage"
                  + (", which the kit computed" if generated else "")
                  + "; the replays start with an empty cache, a real session may not)"]
    return "\n".join(lines)


def _column(name: str) -> int:
    """Width of a policy's column: its whole name and a space, at least 13 characters."""
    return max(13, len(name) + 1)


def _rows(n: int, every: int) -> list[int]:
    if every < 1:
        raise ValueError(f"every must be >= 1, got {every}")
    picked = list(range(0, n, every))
    return picked + ([n - 1] if n and picked[-1] != n - 1 else [])


def policy_records(report: dict[str, Any]) -> list[tuple[str, list[dict]]]:
    """Pair each policy's name with its per-request records, for the tables and the chart.

    Args:
        report: an :func:`~mini_agent.core.replay.evaluate_session` report.

    Returns:
        ``(name, records)`` per policy, in report order.

    Raises:
        ValueError: a report made without ``keep_views=True`` (it has no records).
    """
    try:
        return [(p["name"], p["records"]) for p in report["policies"]]
    except KeyError:
        raise ValueError("the tables and the chart need a report made with "
                         "keep_views=True") from None


def format_requests(report: dict[str, Any], *, every: int = 1) -> str:
    """Format tokens per request, side by side.

    Columns: the calibrated estimate, the real usage, then each policy's view (messages
    only, the simulator's count).

    Args:
        report: a report made with ``keep_views=True``.
        every: show every n-th request (and the last); default 1.

    Returns:
        The table as text.

    Raises:
        ValueError: a report without ``keep_views`` records, or every < 1.
    """
    policies = policy_records(report)
    head = f"{'req':>4}{'estimate':>10}{'real':>9}" + "".join(f"{n:>{_column(n)}}" for n, _ in policies)
    lines = [head, "-" * len(head)]
    for r in _rows(len(report["requests"]), every):
        row = report["requests"][r]
        real = row.get("real_input_tokens")
        lines.append(f"{r + 1:>4}{row['estimated_input_tokens']:>10,}"
                     f"{'-' if real is None else f'{real:,}':>9}"
                     + "".join(f"{recs[r]['view_tokens']:>{_column(n)},}" for n, recs in policies))
    return "\n".join(lines)


def format_cumulative_cost(report: dict[str, Any], *, every: int = 1) -> str:
    """Format the cumulative input USD per policy at each request, beside the bound's.

    Args:
        report: a report made with ``keep_views=True``.
        every: show every n-th request (and the last); default 1.

    Returns:
        The table as text (USD, 4 decimals).

    Raises:
        ValueError: a report without ``keep_views`` records, or every < 1.
    """
    policies = policy_records(report)
    bound = report["bound"]["request_usd"]
    head = f"{'req':>4}{'bound':>10}" + "".join(f"{n:>{_column(n)}}" for n, _ in policies)
    lines = [head, "-" * len(head)]
    for r in _rows(len(bound), every):
        lines.append(f"{r + 1:>4}{sum(bound[:r + 1]):>10.4f}" + "".join(
            f"{sum(x['cost_usd'] for x in recs[:r + 1]):>{_column(n)}.4f}"
            for n, recs in policies))
    return "\n".join(lines)


def format_hit_rates(report: dict[str, Any], *, every: int = 1) -> str:
    """Format the cache hit rate of each request per policy (read / total input), in %.

    Args:
        report: a report made with ``keep_views=True``.
        every: show every n-th request (and the last); default 1.

    Returns:
        The table as text.

    Raises:
        ValueError: a report without ``keep_views`` records, or every < 1.
    """
    policies = policy_records(report)
    head = f"{'req':>4}" + "".join(f"{n:>{_column(n)}}" for n, _ in policies)
    lines = [head, "-" * len(head)]
    for r in _rows(len(report["requests"]), every):
        lines.append(f"{r + 1:>4}" + "".join(f"{recs[r]['hit_rate']:>{_column(n)}.0%}"
                                             for n, recs in policies))
    return "\n".join(lines)


def format_retention(report: dict[str, Any], *, points: Sequence[int], every: int = 1,
                     facts: Sequence[Fact] | None = None) -> str:
    """Format the facts recoverable in each policy's view at each request.

    Args:
        report: a report made with ``keep_views=True``.
        points: the history length of each request (``request_points(messages)``).
        every: show every n-th request (and the last); default 1.
        facts: the facts to check; default the report's own facts.

    Returns:
        The table as text, one ``kept/stated so far`` cell per policy and request.

    Raises:
        ValueError: as the other tables.
    """
    policies = policy_records(report)
    facts = list(facts) if facts is not None else [Fact(**f) for f in report["facts"]]
    curves = [(n, retention_curve([x["view"] for x in recs], points, facts))
              for n, recs in policies]
    head = f"{'req':>4}" + "".join(f"{n:>{_column(n)}}" for n, _ in curves)
    lines = [head, "-" * len(head)]
    for r in _rows(len(points), every):
        lines.append(f"{r + 1:>4}" + "".join(f"{f'{c[r][0]}/{c[r][1]}':>{_column(n)}}" for n, c in curves))
    return "\n".join(lines)
