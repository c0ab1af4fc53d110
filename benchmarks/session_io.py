"""How fast are write-ahead sessions? Append throughput with fsync, and resume speed.

* append: ``SessionWriter.append`` of realistic entries (user/assistant messages and
  ~2 KB tool results), each written + flushed + fsynced: entries per second and the
  mean milliseconds per entry (the cost the agent pays before each API call);
* resume: ``resume_session`` over a 100,000-entry file vs a bare loop of ``json.loads`` over
  the same lines (file read included in both); prints the ratio (target: <= 1.5x);
* checksum: what the per-line CRC32 adds to an append: ``encode_entry`` vs the same JSON
  encoding without the checksum, in microseconds per entry, next to the fsynced append;
* damaged lines: ``resume_session`` over a file holding one damaged line of 0.25 / 1 / 5 /
  50 MB (one byte changed inside a tool result; written with checksums, and as an older
  unchecked file), against a clean file of the same size: seconds and seconds per MB
  (goal: linear, 50 MB under 5 s).

Not a timed test: run it by hand, ``python benchmarks/session_io.py [--entries N]
[--appends N] [--repeats R]``. Figures depend on the disk (fsync on tmpfs is nearly free).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from mini_agent.core.clock import ManualClock
from mini_agent.harness.session import SessionWriter, encode_entry, resume_session, scrub_secrets


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


def bench_checksum(n: int, repeats: int = 7) -> tuple[float, float]:
    """Return (best seconds for ``n`` encode_entry calls, best seconds for the same lines
    without the checksum); the two are measured alternately, ``repeats`` times each."""
    entries = [entry(i) for i in range(n)]
    checked = plain = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for e in entries:
            encode_entry(e, 0.0)
        checked = min(checked, time.perf_counter() - start)
        start = time.perf_counter()
        for e in entries:
            (scrub_secrets(json.dumps({"timestamp": 0.0, **e}, ensure_ascii=False,
                                      separators=(",", ":"))) + "\n").encode("utf-8")
        plain = min(plain, time.perf_counter() - start)
    return checked, plain


def damaged_file(path: Path, size_bytes: int, *, checked: bool, damaged: bool) -> None:
    """Write 3 small entries, one ``size_bytes`` tool result (one byte flipped if
    ``damaged``), one small entry; with checksums or as an older unchecked file."""
    def line(e: dict) -> bytes:
        if checked:
            return encode_entry(e, 1.0)
        return json.dumps({"timestamp": 1.0, **e}, separators=(",", ":")).encode() + b"\n"
    big = line({"type": "tool_result", "block": {"type": "tool_result", "tool_use_id": "t",
                                                 "content": "x" * size_bytes}})
    if damaged:
        middle = len(big) // 2
        # checked: a flip that keeps the JSON valid (only the checksum can tell);
        # unchecked: a stray quote, so the line does not parse and is searched
        big = big[:middle] + (b"y" if checked else b'"') + big[middle + 1:]
    path.write_bytes(b"".join(line(entry(i)) for i in range(3)) + big + line(entry(3)))


def bench_damaged(folder: Path, sizes_mb: list[float], repeats: int) -> None:
    """Print resume seconds for one damaged line of each size, against a clean file."""
    print("damaged line: size MB | kind      | damaged s | clean s | damaged s/MB")
    for checked in (True, False):
        for size_mb in sizes_mb:
            times = []
            for damaged in (True, False):
                path = folder / f"d{size_mb}{checked}{damaged}.jsonl"
                damaged_file(path, int(size_mb * 1_000_000), checked=checked, damaged=damaged)
                best = float("inf")
                for _ in range(repeats):
                    start = time.perf_counter()
                    _, problems = resume_session(path)
                    best = min(best, time.perf_counter() - start)
                assert any(p.line == 4 for p in problems) == damaged
                times.append(best)
                path.unlink()
            kind = "checked" if checked else "unchecked"
            print(f"  {size_mb:>17} | {kind:<9} | {times[0]:>9.3f} | {times[1]:>7.3f} | "
                  f"{times[0] / size_mb:.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--appends", type=int, default=2_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--damaged-mb", type=float, nargs="*", default=[0.25, 1, 5, 50])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        seconds = bench_append(folder, args.appends)
        print(f"append+fsync: {args.appends} entries in {seconds:.3f} s = "
              f"{args.appends / seconds:,.0f} entries/s, {1000 * seconds / args.appends:.3f} ms "
              f"per entry (folder {tmp})")
        checked_s, plain_s = bench_checksum(args.appends * 10)
        per_entry_us = 1e6 * (checked_s - plain_s) / (args.appends * 10)
        print(f"checksum: encode_entry {1e6 * checked_s / (args.appends * 10):.1f} us vs "
              f"{1e6 * plain_s / (args.appends * 10):.1f} us unchecked per entry: the CRC32 "
              f"adds {per_entry_us:.1f} us, {100 * per_entry_us / (1e6 * seconds / args.appends):.2f}"
              "% of an fsynced append")
        with SessionWriter(folder, "big", clock=ManualClock()) as writer:
            pass
        writer.path.write_bytes(b"".join(encode_entry(entry(i)) for i in range(args.entries)))
        size_mb = writer.path.stat().st_size / 1e6
        resume_s, bare_s, count = bench_resume(writer.path, args.repeats)
        print(f"resume: {count:,} entries ({size_mb:.0f} MB): resume_session {resume_s:.3f} s, "
              f"bare json.loads loop {bare_s:.3f} s, ratio {resume_s / bare_s:.2f}x "
              "(target <= 1.5x)")
        bench_damaged(folder, args.damaged_mb, max(1, args.repeats // 2))


if __name__ == "__main__":
    main()
