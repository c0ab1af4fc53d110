"""Why the calibrated estimate missed on sessions from another tokenizer, and what fixed it.

Over every session in ``../shared/data`` that records usage (8 Claude Code, 4 DeepSeek via
mini-swe-agent), four tables:

1. Per session, the error of each request's estimate split into its parts: the hindsight
   scale (real content growth over the table's, first to last request with usage), the
   overhead the first request with usage shows and how much of the error its clamp at 0
   explains, then the median |error| of the table alone (the estimate before the
   per-session scale), of the table re-anchored at the newest usage (scale kept at 1), and of
   the per-session scale (:mod:`mini_agent.core.session_scale`, the estimate now). Each
   estimate of request k uses the usage of requests before k only.
2. A harder test of the scale: the line learned on the first half of a session's requests
   with usage, frozen, and its error on the second half (a policy's view has no usage at all:
   this is how far the session's line carries), beside the table alone and the re-anchored
   table frozen at the same point.
3. Leave-one-out choice of the prior weight ``w`` (:data:`PRIOR_WEIGHT_TOKENS`): for each
   session, the ``w`` of the grid that minimises the mean median error of the other eleven,
   and the held-out session's error with it; and for the Claude Code sessions the same with
   the calibration table refitted without the held-out session (the shipped table was fitted
   on all eight).
4. The DeepSeek sessions' own characters per token by kind (:func:`fit_calibration` on the
   four, a diagnosis, not shipped) beside the table, and the last request's error of each
   DeepSeek session split by kind as that fit attributes it (the kinds grow together, so the
   split is loose: what the fit leaves unexplained is printed too).

Run: ``python benchmarks/estimate_scale.py [--data DIR]`` (a few seconds). Not a test.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from mini_agent.core.cache_policies import request_points
from mini_agent.core.calibration import (FEATURES, KINDS, Calibration, estimate_requests,
                                         fit_calibration, median_abs_error, request_features)
from mini_agent.core.session_scale import PRIOR_WEIGHT_TOKENS, SessionScale, real_input_tokens
from mini_agent.harness.evaluate_runner import transcript_files
from mini_agent.harness.real_sessions import shared_data_dir
from mini_agent.harness.transcript_files import load

GRID = (0, 50, 100, 200, 500, 1000, 2000, 4000)
"""Prior weights (tokens) the leave-one-out choice picks from."""


def sessions(data: Path) -> list[tuple[str, list[dict], list]]:
    """``(name, request features, usage)`` of every shared session that records usage."""
    out = []
    for path in transcript_files([data]):
        t = load(path, text_actions="tools")
        if any(t.usage):
            out.append((path.name, request_features(t.messages, request_points(t.messages)),
                        list(t.usage)))
    return out


def _series(features, usage, cal):
    content = [cal.tokens(f) for f in features]
    reals = [real_input_tokens(usage[n]) if n < len(usage) else None
             for n in range(len(features))]
    return content, reals, [n for n, r in enumerate(reals) if r]


def _median(errors):
    return statistics.median(abs(e) for e in errors) if errors else float("nan")


def online_error(features, usage, cal, weight=PRIOR_WEIGHT_TOKENS) -> float:
    """Median |error| of the per-session scale with prior weight ``weight``."""
    content, reals, known = _series(features, usage, cal)
    line, errors = SessionScale(prior_weight_tokens=weight), []
    for n in known:
        if line.anchor is not None:
            errors.append((round(line.tokens(content[n])) - reals[n]) / reals[n])
        line.observe(content[n], reals[n])
    return _median(errors)


def reanchored_error(features, usage, cal, frozen_at=None) -> list[float]:
    """Errors of ``newest real + table growth since it`` (scale 1), optionally frozen."""
    content, reals, known = _series(features, usage, cal)
    errors, last = [], known[0]
    for n in known[1:]:
        errors.append((reals[last] + content[n] - content[last] - reals[n]) / reals[n])
        if frozen_at is None or n <= frozen_at:
            last = n
    return errors


def frozen_errors(features, usage, cal) -> tuple[float, float, float, int]:
    """Second-half median |error|: frozen scale, table alone, re-anchored table; the split."""
    content, reals, known = _series(features, usage, cal)
    half = known[max(1, len(known) // 2) - 1]
    line = SessionScale()
    for n in known:
        if n <= half:
            line.observe(content[n], reals[n])
    later = [n for n in known if n > half]
    scaled = [(line.tokens(content[n]) - reals[n]) / reals[n] for n in later]
    rows, _ = estimate_requests(features, usage, calibration=cal, adapt=False)
    table = [rows[n].error for n in later]
    anchored = reanchored_error(features, usage, cal, frozen_at=half)[-len(later):]
    return _median(scaled), _median(table), _median(anchored), len(later)


def main() -> None:
    data = Path(sys.argv[sys.argv.index("--data") + 1]) if "--data" in sys.argv \
        else shared_data_dir()
    every = sessions(data)
    if not every:
        print(f"no sessions with usage under {data}")
        return
    cal = Calibration()
    print("1. Parts of the error, per session (median |error| over the requests after the "
          "first with usage)")
    print(f"{'session':<44}{'scale':>7}{'overhead':>10}{'clamp':>7}{'table':>8}"
          f"{'re-anchor':>10}{'scaled':>8}")
    for name, features, usage in every:
        content, reals, known = _series(features, usage, cal)
        a, z = known[0], known[-1]
        scale = (reals[z] - reals[a]) / (content[z] - content[a])
        overhead = reals[a] - content[a]
        clamp = max(0.0, overhead) - overhead  # tokens the clamp adds to every estimate
        rows, _ = estimate_requests(features, usage, calibration=cal, adapt=False)
        print(f"{name[:43]:<44}{scale:7.3f}{overhead:10.0f}{clamp / reals[z]:7.1%}"
              f"{median_abs_error(rows):8.1%}{_median(reanchored_error(features, usage, cal)):10.1%}"
              f"{online_error(features, usage, cal):8.1%}")
    print("\n2. The line frozen after the first half of the requests with usage, error on the "
          "second half")
    print(f"{'session':<44}{'requests':>9}{'scaled':>8}{'table':>8}{'re-anchor':>10}")
    for name, features, usage in every:
        scaled, table, anchored, n = frozen_errors(features, usage, cal)
        print(f"{name[:43]:<44}{n:>9}{scaled:8.1%}{table:8.1%}{anchored:10.1%}")
    print(f"\n3. Leave-one-out choice of the prior weight (grid {GRID})")
    claude = [s for s in every if s[0].endswith(".jsonl")]
    print(f"{'held-out session':<44}{'w chosen':>9}{'error':>8}{'table refit w/o it':>20}")
    for i, (name, features, usage) in enumerate(every):
        others = [s for j, s in enumerate(every) if j != i]
        score = {w: statistics.mean(online_error(f, u, cal, w) for _, f, u in others)
                 for w in GRID}
        w = min(GRID, key=score.get)
        refit = "-"
        if (name, features, usage) in claude and len(claude) > 2:
            own = fit_calibration([s for s in claude if s[0] != name])
            refit = f"{online_error(features, usage, own, w):.1%}"
        print(f"{name[:43]:<44}{w:>9}{online_error(features, usage, cal, w):8.1%}{refit:>20}")
    other = [s for s in every if not s[0].endswith(".jsonl")]
    if len(other) < 2:
        return
    theirs = fit_calibration(other)
    print("\n4. Characters per token by kind: the table (Claude Code) and the DeepSeek sessions' "
          "own fit (diagnosis only)")
    for k in KINDS:
        print(f"{k:<12}{cal.chars_per_token[k]:8.2f}{theirs.chars_per_token[k]:8.2f}")
    print(f"{'per block':<12}{cal.tokens_per_block:8.2f}{theirs.tokens_per_block:8.2f}  tokens")
    print(f"{'session':<44}{'last error':>11}  " + "".join(f"{k:>12}" for k in FEATURES)
          + f"{'unexplained':>12}")
    for name, features, usage in other:
        content, reals, known = _series(features, usage, cal)
        a, z = known[0], known[-1]
        grown = {k: features[z].get(k, 0) - features[a].get(k, 0) for k in FEATURES}
        parts = [grown[k] / cal.chars_per_token[k] - grown[k] / theirs.chars_per_token[k]
                 for k in KINDS] + [grown["blocks"] * (cal.tokens_per_block
                                                       - theirs.tokens_per_block)]
        error = content[z] - content[a] - (reals[z] - reals[a])
        print(f"{name[:43]:<44}{error / reals[z]:11.1%}  "
              + "".join(f"{p / reals[z]:12.1%}" for p in parts)
              + f"{(error - sum(parts)) / reals[z]:12.1%}")


if __name__ == "__main__":
    main()
