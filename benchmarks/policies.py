"""The policy explorer over every shared session, its estimator, and its speed at scale.

Four tables:

1. The calibrated estimate: characters per token fitted on half of the Claude Code sessions
   in ``../shared/data``, median error per request on the other half and on the DeepSeek
   sessions (another tokenizer), beside the table alone (no per-session scale) and chars/4
   alone. ``benchmarks/estimate_scale.py`` takes the error apart and cross-validates the
   scale's prior weight.
2. Every session in ``../shared/data`` under every policy (``mini-agent evaluate``): input cost
   with caching normalised to "raw, no caching" = 1.00, ratio to the hindsight bound, cache hit
   rate and facts kept, then the means and how many sessions each policy keeps within 10% of
   the bound (the kit's goal for its best online policy, ``breakeven``, whose rule is chosen
   on kit-generated sessions by ``benchmarks/breakeven_tuning.py``, so these sessions are its
   test). Sessions from other vendors are priced as the kit's default model.
3. How each policy's cost grows with session length: kit-generated sessions of 10 to 160
   exchanges, USD per policy.
4. Scale: wall time of ``evaluate_paths(workers=2)`` over 1, 10, 100 and 1,000 generated
   session files (12 exchanges each, every default policy; the two worker processes start
   only when the files make them pay, :mod:`mini_agent.harness.evaluate_pool`), against a
   bare ``json.loads`` of every line of the same files (the median of 5 passes; the explorer's
   the median of 3 up to 100 sessions, one pass at 1,000), measured in the same run: before
   (``reference=True``, the copying replay) and after (the fast replay,
   :mod:`mini_agent.core.fast_replay`), whose reports must be equal. One session is
   evaluated before the table, untimed, so that neither column pays the first call's
   one-off costs (lazy imports, compiled expressions). Pass ``--quick`` to stop at 100,
   ``--after-only`` to skip before.
5. The same ratio on the real Claude Code sessions in ``../shared/data/claude-code``, file by
   file in this process (median of 3 against the median of 5 bare passes), then the folder with
   2 workers. Real sessions carry far more bytes per request than the generated ones (file
   reads, long tool outputs), which ``json.loads`` pays for and the explorer mostly does not.

Run: ``python benchmarks/policies.py [--quick] [--after-only] [--data DIR] [--only 12345]``
(before at 1,000 sessions takes about 10 minutes on 2 cores; ``--only 4 --after-only`` about
half a minute; ``--only 12`` prints tables 1 and 2 only). Not a test: it prints ratios; it
asserts only that before and after give the same reports.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mini_agent.core.pricing import model_price
from mini_agent.core.replay import DEFAULT_POLICIES, evaluate_session
from mini_agent.harness.evaluate_runner import (calibration_report, evaluate_file,
                                                evaluate_paths, transcript_files)
from mini_agent.core.sample_sessions import sample_session_jsonl, sample_transcript
from mini_agent.harness.real_sessions import shared_data_dir

DATA = shared_data_dir()
"""``$MINI_AGENT_SHARED_DATA``, else ``../shared/data`` beside the repository; ``--data DIR``
points elsewhere."""
SHORT = {"raw": "raw", "mask-10": "mask10", "chunked-8": "chunk8", "payback": "payback",
         "breakeven": "breakeven", "micro_compact": "micro", "compact": "compact",
         "lifecycle": "lifecyc", "server_clear": "s-clear", "server_compact": "s-compact",
         "summary": "summary"}


def uncached_usd(report: dict) -> float:
    """Raw, no caching: every request's whole input at the base input price."""
    raw = next(p for p in report["policies"] if p["name"] == "raw")
    return raw["tokens_sent"] * model_price(report["model"]).input_usd_per_mtok / 1e6


def session_table(reports: list[dict]) -> str:
    """Cost (raw uncached = 1.00) / vs bound / hit rate / facts kept, one block per session."""
    names = [p["name"] for p in reports[0]["policies"]]
    head = f"{'session':<44}{'est err':>8}  " + "".join(f"{SHORT[n]:>10}" for n in names)
    lines = [head, "-" * len(head)]
    for r in reports:
        if "error" in r:
            lines.append(f"{Path(r['path']).name:<44} error: {r['error']}")
            continue
        base = uncached_usd(r)
        err = r["estimator_median_abs_error"]
        name = Path(r["path"]).name[:43]
        lines.append(f"{name:<44}{'-' if err is None else f'{err:.1%}':>8}  cost "
                     + "".join(f"{p['usd'] / base:>10.2f}" for p in r["policies"])[5:])
        lines.append(f"{'':<54}" + "".join(f"{p['vs_best']:>9.2f}x" for p in r["policies"])
                     + "  vs bound")
        lines.append(f"{'':<54}" + "".join(f"{p['hit_rate']:>10.0%}" for p in r["policies"])
                     + "  hit rate")
        lines.append(f"{'':<54}" + "".join(f"{p['retained_facts']:>7}/{p['total_facts']:<2}"
                                           for p in r["policies"]) + "  facts kept")
    ok = [r for r in reports if "error" not in r]
    lines.append("-" * len(head))
    for label, key in (("mean cost (raw uncached = 1)", None), ("mean vs bound", "vs_best")):
        cells = []
        for n in names:
            vals = [(p["usd"] / uncached_usd(r)) if key is None else p[key]
                    for r in ok for p in r["policies"] if p["name"] == n]
            cells.append(f"{sum(vals) / len(vals):>10.2f}")
        lines.append(f"{label:<54}" + "".join(cells))
    within = [sum(1 for r in ok for p in r["policies"] if p["name"] == n
                  and p["vs_best"] is not None and p["vs_best"] <= 1.10) for n in names]
    lines.append(f"{'sessions within 10% of the bound':<54}"
                 + "".join(f"{w:>7}/{len(ok):<2}" for w in within))
    return "\n".join(lines)


def growth_table(lengths=(10, 20, 40, 80, 160)) -> str:
    """USD per policy for generated sessions of each length (same task, same overhead)."""
    head = f"{'exchanges':>10}{'bound':>9}" + "".join(f"{SHORT[n]:>10}" for n in DEFAULT_POLICIES)
    lines = [head, "-" * len(head)]
    for n in lengths:
        r = evaluate_session(sample_transcript(n))
        lines.append(f"{n:>10}{r['bound']['usd']:>9.3f}"
                     + "".join(f"{p['usd']:>10.3f}" for p in r["policies"]))
    return "\n".join(lines)


BARE_PASSES = 5
"""The bare ``json.loads`` pass is timed this many times and its median taken: one pass over
1,000 files swings from 0.44 s to 0.60 s between runs on a shared machine."""


def _bare_pass(files: list[Path]) -> float:
    """Seconds to read every file and ``json.loads`` each of its lines, nothing else."""
    start = time.perf_counter()
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            json.loads(line)
    return time.perf_counter() - start


def scale_table(counts=(1, 10, 100, 1000), workers: int = 2, before: bool = True) -> str:
    """Wall seconds of the explorer vs a bare json.loads pass over the same generated files.

    ``before``: also time the reference replay (``reference=True``: every request deep-copied,
    serialised and hashed) in the same run, so the two columns share the machine's load.
    """
    head = (f"{'sessions':>9}{'json.loads s':>14}"
            + (f"{'before s':>11}{'ratio':>8}" if before else "")
            + f"{'after s':>10}{'ratio':>8}{'per session':>13}"
            + (f"{'speed-up':>10}" if before else ""))
    lines = [head, "-" * len(head)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        warm = root / "warm-up.jsonl"
        warm.write_text(sample_session_jsonl(12, variant=99))
        for reference in ((True, False) if before else (False,)):  # untimed: first-call costs
            evaluate_paths([warm], progress=False, reference=reference)
        for n in counts:
            folder = root / f"n{n}"
            folder.mkdir()
            for k in range(n):
                (folder / f"s{k:05d}.jsonl").write_text(sample_session_jsonl(12, variant=k))
            files = transcript_files([folder])
            bare = statistics.median(_bare_pass(files) for _ in range(BARE_PASSES))
            old = None
            if before:
                start = time.perf_counter()
                slow = evaluate_paths([folder], workers=workers, progress=False, reference=True)
                old = time.perf_counter() - start
            walls = []
            for _ in range(3 if n <= 100 else 1):  # 1,000 sessions: one pass (5-6 s)
                start = time.perf_counter()
                reports = evaluate_paths([folder], workers=workers, progress=False)
                walls.append(time.perf_counter() - start)
            wall = statistics.median(walls)
            assert len(reports) == n and not any("error" in r for r in reports)
            if before:
                assert reports == slow, "the fast replay changed a figure"
            lines.append(f"{n:>9}{bare:>14.4f}"
                         + (f"{old:>11.2f}{old / bare:>7.0f}x" if before else "")
                         + f"{wall:>10.2f}{wall / bare:>7.0f}x{wall / n:>12.4f}s"
                         + (f"{old / wall:>9.1f}x" if before else ""))
            print(lines[-1], flush=True)
    return "\n".join(lines)


def real_scale_table(folder: Path, workers: int = 2) -> str:
    """Explorer seconds against a bare json.loads pass, per real session file and in all."""
    files = transcript_files([folder])
    head = f"{'session':<44}{'kB':>6}{'requests':>9}{'json.loads ms':>15}{'explorer ms':>13}{'ratio':>8}"
    lines = [head, "-" * len(head)]
    evaluate_file(files[0])  # untimed: first-call costs
    bare_total = own_total = 0.0
    for f in files:
        bare = statistics.median(_bare_pass([f]) for _ in range(BARE_PASSES))
        walls, report = [], None
        for _ in range(3):
            start = time.perf_counter()
            report = evaluate_file(f)
            walls.append(time.perf_counter() - start)
        own = statistics.median(walls)
        bare_total, own_total = bare_total + bare, own_total + own
        lines.append(f"{f.name[:43]:<44}{f.stat().st_size / 1e3:>6.0f}"
                     f"{len(report.get('requests', [])):>9}{bare * 1e3:>15.2f}{own * 1e3:>13.1f}"
                     f"{own / bare:>7.1f}x")
    lines.append(f"{'all, one process':<59}{bare_total * 1e3:>15.2f}{own_total * 1e3:>13.1f}"
                 f"{own_total / bare_total:>7.1f}x")
    start = time.perf_counter()
    evaluate_paths([folder], workers=workers, progress=False)
    wall = time.perf_counter() - start
    lines.append(f"{f'all, {workers} workers (wall)':<59}{bare_total * 1e3:>15.2f}"
                 f"{wall * 1e3:>13.1f}{wall / bare_total:>7.1f}x")
    return "\n".join(lines)


def main() -> None:
    quick = "--quick" in sys.argv
    data = Path(sys.argv[sys.argv.index("--data") + 1]) if "--data" in sys.argv else DATA
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else "12345"
    if "1" in only:
        print("1. Calibrated estimate (fit on half of the Claude Code sessions, error on the "
              "rest and on the DeepSeek sessions)")
        print(calibration_report(data / "claude-code", data / "mini-swe-agent"))
        print()
    files = transcript_files([data]) if data.is_dir() and "2" in only else []
    if files:
        print(f"2. Every shared session under every policy ({len(files)} files)")
        start = time.perf_counter()
        reports = [evaluate_file(f) for f in files]
        print(session_table(reports))
        print(f"({time.perf_counter() - start:.0f} s)")
        print()
    elif "2" in only:
        print(f"2. skipped: {data} is absent\n")
    if "3" in only:
        print("3. Cost (USD) against session length, kit-generated sessions")
        print(growth_table())
        print()
    if "4" in only:
        print("4. Scale: process pool (2 workers) vs json.loads over the same files; before ="
              " the reference replay, after = the fast replay (same reports, checked)")
        print(scale_table((1, 10, 100) if quick else (1, 10, 100, 1000),
                          before="--after-only" not in sys.argv))
        print()
    if "5" in only:
        real = data / "claude-code"
        if real.is_dir() and transcript_files([real]):
            print("5. The same ratio on the real Claude Code sessions (one process per file; "
                  "then the folder with 2 workers)")
            print(real_scale_table(real))
        else:
            print(f"5. skipped: {real} is absent")


if __name__ == "__main__":
    main()
