"""How fast are write-ahead sessions? Append throughput with fsync, and resume speed.

* append: ``SessionWriter.append`` of realistic entries (user/assistant messages and
  ~2 KB tool results), each written + flushed + fsynced: entries per second and the
  mean milliseconds per entry (the cost the agent pays before each API call);
* resume: ``resume_session`` over a 100,000-entry file vs a bare loop of ``json.loads`` over
  the same lines (file read included in both); prints the ratio (target: <= 1.5x).

Not a timed test: run it by hand, ``python benchmarks/session_io.py [--entries N]
[--appends N] [--repeats R]``. Figures depend on the disk (fsync on tmpfs is nearly free).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from mini_agent.clock import ManualClock
from mini_agent.session import SessionWriter, resume_session


def entry(i: int) -> dict:
    """A deterministic entry: a tool result (2 KB) most of the time, else a message."""
    if i % 4 == 3:
        return {"type": "message", "message": {"role": "assistant", "content": [
            {"type": "text", "text": f"step {i}"},
            {"type": "tool_use", "id": f"toolu_{i}", "name": "read_file",
             "input": {"path": f"src/m{i}.py"}}]}}
    return {"type": "tool_result", "block": {"type": "tool_result", "tool_use_id": f"toolu_{i}",
                                             "content": f"line {i}\n" * 256}}


def bench_append(folder: Path, n: int) -> float:
    """Return seconds for ``n`` fsynced appends."""
    with SessionWriter(folder, "append", clock=ManualClock()) as writer:
        start = time.perf_counter()
        for i in range(n):
            writer.append(entry(i))
        return time.perf_counter() - start


def bench_resume(path: Path, repeats: int) -> tuple[float, float, int]:
    """Return (best seconds of resume_session, best seconds of a bare json.loads loop, entries)."""
    best_resume = best_bare = float("inf")
    count = 0
    for _ in range(repeats):
        start = time.perf_counter()
        entries, problems = resume_session(path)
        best_resume = min(best_resume, time.perf_counter() - start)
        assert not problems
        count = len(entries)
        start = time.perf_counter()
        with open(path, encoding="utf-8") as f:
            bare = [json.loads(line) for line in f.read().splitlines()]
        best_bare = min(best_bare, time.perf_counter() - start)
        assert len(bare) == count
    return best_resume, best_bare, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--appends", type=int, default=2_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        seconds = bench_append(folder, args.appends)
        print(f"append+fsync: {args.appends} entries in {seconds:.3f} s = "
              f"{args.appends / seconds:,.0f} entries/s, {1000 * seconds / args.appends:.3f} ms "
              f"per entry (folder {tmp})")
        with SessionWriter(folder, "big", clock=ManualClock()) as writer:
            lines = [json.dumps({"timestamp": 0.0, **entry(i)}, separators=(",", ":"))
                     for i in range(args.entries)]
        writer.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        size_mb = writer.path.stat().st_size / 1e6
        resume_s, bare_s, count = bench_resume(writer.path, args.repeats)
        print(f"resume: {count:,} entries ({size_mb:.0f} MB): resume_session {resume_s:.3f} s, "
              f"bare json.loads loop {bare_s:.3f} s, ratio {resume_s / bare_s:.2f}x "
              "(target <= 1.5x)")


if __name__ == "__main__":
    main()
