"""The kill lab over many seeds: how often is anything applied twice or lost?

Runs :func:`mini_agent.harness.checkpoint_lab.run_lab` for seeds 0..N-1 (each: an uninterrupted
reference run and a run whose worker is SIGKILLed ``--kills`` times at seeded points, one right
after an external write) and prints one row per seed, then the totals: runs passed, items
applied twice, items lost, runs equal to the uninterrupted run, kills right after a write that
were settled by asking the ledger, and the mean and max seconds per run. ``--naive`` runs the
naive resume instead (no reconciliation, random retry keys) as the baseline that fails.

Not a timed test: run it by hand, ``python benchmarks/checkpoint_lab.py [--runs 20]
[--items 60] [--kills 3] [--naive]``. Seconds depend on the disk (each item fsyncs several
times) and on the machine's load.
"""

from __future__ import annotations

import argparse
import statistics

from mini_agent.harness.checkpoint_lab import run_lab


def main() -> None:
    """Run the seeds and print the table and totals."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--items", type=int, default=60)
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--naive", action="store_true")
    args = parser.parse_args()
    reports = []
    print(f"{'seed':>4} {'twice':>5} {'lost':>4} {'equal':>5} {'found':>5} {'redone':>6} "
          f"{'seconds':>7}  kill points")
    for seed in range(args.runs):
        r = run_lab(items=args.items, kills=args.kills, seed=seed, naive=args.naive)
        reports.append(r)
        points = ", ".join(f"{p['item']}:{p['phase']}" for p in r["kill_points"])
        print(f"{seed:>4} {r['applied_twice']:>5} {r['lost']:>4} "
              f"{str(r['equal_to_uninterrupted']):>5} {r['reconciled']['found']:>5} "
              f"{r['reconciled']['redone']:>6} {r['seconds']:>7.2f}  {points}", flush=True)
    seconds = [r["seconds"] for r in reports]
    after_write = sum(p["phase"] == "after_execute" for r in reports for p in r["kill_points"])
    print(f"\nruns: {len(reports)}   passed: {sum(r['passed'] for r in reports)}   "
          f"items applied twice: {sum(r['applied_twice'] for r in reports)}   "
          f"items lost: {sum(r['lost'] for r in reports)}   "
          f"equal to uninterrupted: {sum(r['equal_to_uninterrupted'] for r in reports)}")
    print(f"kills: {sum(r['kills'] for r in reports)} ({after_write} right after a write)   "
          f"reconciled by key: {sum(r['reconciled']['found'] for r in reports)} found, "
          f"{sum(r['reconciled']['redone'] for r in reports)} redone   "
          f"server survived every kill: {all(r['server_survived_kills'] for r in reports)}")
    print(f"seconds per run: mean {statistics.mean(seconds):.2f}, max {max(seconds):.2f}")


if __name__ == "__main__":
    main()
