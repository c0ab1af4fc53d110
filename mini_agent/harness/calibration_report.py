"""How well the calibrated token estimate does on sessions it was not fitted on.

:func:`calibration_report` fits the calibration table on half of a folder of Claude Code
sessions with usage and prints each held-out session's median error, beside the table alone
and the plain chars/4 estimate (``mini-agent``'s notebooks and ``benchmarks/estimate_scale.py``
print it).

IO: reads transcript files.

Source: the kit's evaluation chapter (seed 004): a calibrated estimate checked against real
usage.
"""

from __future__ import annotations

from pathlib import Path

from mini_agent.harness.real_sessions import shared_data_dir
from mini_agent.harness.transcript_files import load
from mini_agent.harness.transcript_scan import transcript_files


def calibration_report(folder: str | Path | None = None,
                       others: str | Path | None = None) -> str:
    """Fit the calibrated estimate on half of the sessions and report its error on the rest.

    Fits twice (even and odd files), and for each held-out session prints the median
    absolute error of the estimate (table plus the per-session scale learned from earlier
    requests' usage) beside the table alone (the scale kept at 1) and the plain chars/4
    estimate's. Sessions from ``others`` (another tokenizer) are held out under both fits.

    Args:
        folder: Claude Code sessions with usage (default ``../shared/data/claude-code``).
        others: more held-out sessions, any format the loader reads; those without usage
            are skipped (default: ``../shared/data/mini-swe-agent`` when ``folder`` is
            defaulted, else none).

    Returns:
        The report as text; a one-line note when there is no such folder or fewer than two
        sessions.
    """
    import statistics

    from mini_agent.core.cache_policies import request_points
    from mini_agent.core.calibration import (estimate_requests, fit_calibration, median_abs_error,
                                             naive_estimate, real_input_tokens, request_features)
    if folder is None and others is None:
        others = shared_data_dir() / "mini-swe-agent"
    folder = Path(folder) if folder else shared_data_dir() / "claude-code"
    paths = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    if len(paths) < 2:
        return f"no Claude Code sessions with usage in {folder}: nothing to fit"

    def features(path):
        t = load(path, text_actions="tools")
        return path.name, request_features(t.messages, request_points(t.messages)), t.usage
    sessions = [features(p) for p in paths]
    extra = [s for s in map(features, transcript_files([others]) if others and
                            Path(others).is_dir() else []) if any(s[2])]
    lines = []
    for fit, held in ((sessions[::2], sessions[1::2]), (sessions[1::2], sessions[::2])):
        cal = fit_calibration(fit)
        lines += [f"fitted on {', '.join(n for n, _, _ in fit)}:", cal.describe(),
                  f"{'held-out session':<46}{'median |error|':>15}{'table alone':>13}"
                  f"{'chars/4 alone':>15}"]
        for name, features, usage in held + extra:
            rows, _ = estimate_requests(features, usage, calibration=cal)
            fixed, _ = estimate_requests(features, usage, calibration=cal, adapt=False)
            naive = [abs(naive_estimate(f) - r) / r for f, u in zip(features, usage)
                     if (r := real_input_tokens(u))]
            lines.append(f"{name:<46}{median_abs_error(rows):>15.1%}"
                         f"{median_abs_error(fixed):>13.1%}{statistics.median(naive):>15.1%}")
        lines.append("")
    return "\n".join(lines).rstrip()
