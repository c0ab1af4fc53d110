"""Fuzz, large budget: how many (history x transformation) pairs pass the API's rules?

Generates hostile histories (``tests/strategies.py``: 1-201 messages, up to 6 parallel tool
calls logged in any order, Japanese and other non-ASCII text, images in list-shaped
results, existing cache markers, crash cuts, trailing unanswered tool_use) from a seed and
pushes each through every public transformation and view policy (``tests/fuzz_targets.py``),
with and without cache breakpoints, plus reply pieces with whitespace (merge_pieces,
auto_continue), hostile hook output and damaged session files. Every result is checked
against ``tests/api_rules.py``, an independent statement of the API's rules.

Prints progress, then the pairs checked, the failures (the first ones in full) and the pairs
per target. Exit code 1 if anything failed. Not a timed test: run it by hand,
``python benchmarks/fuzz.py [--pairs 100000] [--seed 0] [--max-turns 100]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fuzz_targets import Fuzz, run  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000, help="stop after this many")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-turns", type=int, default=100)
    args = parser.parse_args()
    start = time.perf_counter()
    fuzz: Fuzz | None = None

    class Enough(Exception):
        pass

    def progress(n: int, current: Fuzz) -> None:
        nonlocal fuzz
        fuzz = current
        if n % 200 == 0:
            print(f"  {n:>6} histories, {current.pairs:>8,} pairs, "
                  f"{current.failure_count} failures, {time.perf_counter() - start:7.1f} s",
                  flush=True)
        if current.pairs >= args.pairs:
            raise Enough
    try:
        run(args.seed, histories=10**9, max_turns=args.max_turns, progress=progress)
    except Enough:
        pass
    assert fuzz is not None
    seconds = time.perf_counter() - start
    print(f"pairs checked: {fuzz.pairs:,}; failures: {fuzz.failure_count} "
          f"(seed {args.seed}, {seconds:.0f} s, {fuzz.pairs / seconds:,.0f} pairs/s)")
    for target, problem, history in fuzz.failures[:5]:
        print(f"FAIL {target}: {problem}\n  {json.dumps(history, ensure_ascii=False)[:400]}")
    for target, count in sorted(fuzz.per_target.items()):
        print(f"  {count:>8,}  {target}")
    return 1 if fuzz.failure_count else 0


if __name__ == "__main__":
    sys.exit(main())
