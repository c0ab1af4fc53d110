"""Benchmark: parallel read-only tools vs serial execution, and how early tools start.

Run: ``python benchmarks/parallel_tools.py [--latency-seconds 0.2]``. Prints, in one run:

1. for N = 1, 2, 4, 8 read-only tools each taking L seconds, the wall time of the naive
   serial loop (each tool after the previous one: ``executor.run_serially``) and of the
   :class:`~mini_agent.harness.executor.StreamingExecutor` (all scheduled at once), and the speedup;
   once for tools that block a worker thread (``time.sleep`` in ``run``, like file reads and
   subprocesses) and once for tools with ``latency_seconds`` (the offline kit's simulated
   latency, awaited on the event loop). Target: speedup >= 0.9 x N (seed 002 expects ~3x).
2. through the real loop (offline Claude, SSE paced at ``--event-delay-seconds``): the delay
   from each tool_use block's stop (``scheduled_at``) to its tool's start, and how long
   before the end of the model's stream each tool started.

Not a test: timings depend on the machine. Source: seed 002 section 2 (``npm run bench``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from mini_agent.harness.executor import StreamingExecutor, run_serially
from mini_agent.core.streaming import TextDelta, ToolUseReady
from mini_agent.harness.loop import TurnEnd, run_loop
from mini_agent.harness.model import sdk_model
from mini_agent.offline import FaultPlan, ScriptedBrain, offline_async_client
from mini_agent.harness.tools import Tool


def blocking_tool(seconds: float) -> Tool:
    return Tool("read_slow", "sleeps in its thread", {"type": "object"}, "read-only",
                lambda i: time.sleep(seconds) or "ok")


def latency_tool(seconds: float) -> Tool:
    return Tool("read_slow", "instant, with simulated latency", {"type": "object"},
                "read-only", lambda i: "ok", latency_seconds=seconds)


def blocks(n: int) -> list[dict]:
    return [{"type": "tool_use", "id": f"toolu_{i:02d}", "name": "read_slow",
             "input": {"n": i}} for i in range(n)]


async def parallel(tools: dict, uses: list[dict]) -> None:
    executor = StreamingExecutor(tools)
    for block in uses:
        executor.schedule(block)
    async for _ in executor.drain_all():
        pass


def timed(coro) -> float:
    start = time.perf_counter()
    asyncio.run(coro)
    return time.perf_counter() - start


def speedups(latency_seconds: float) -> None:
    print(f"1. N read-only tools of L = {latency_seconds:.2f} s: serial vs StreamingExecutor")
    print(f"   {'kind':<9} {'N':>2} {'serial s':>9} {'parallel s':>10} {'speedup':>8} "
          f"{'target':>7}")
    for kind, make in (("blocking", blocking_tool), ("latency", latency_tool)):
        tools = {"read_slow": make(latency_seconds)}
        for n in (1, 2, 4, 8):
            serial = timed(run_serially(tools, blocks(n)))
            par = timed(parallel(tools, blocks(n)))
            print(f"   {kind:<9} {n:>2} {serial:>9.3f} {par:>10.3f} {serial / par:>8.2f} "
                  f"{0.9 * n:>7.1f}")


async def start_delays(n: int, event_delay_seconds: float) -> tuple[list[float], list[float]]:
    tools = {"read_slow": latency_tool(0.01)}
    reply = {"content": [{"type": "text", "text": "Reading them all at once."}, *blocks(n),
                         {"type": "text", "text": "While those run, here is my plan: " * 3}],
             "stop_reason": "tool_use"}
    client = offline_async_client(ScriptedBrain([reply, "Done."]),
                                  faults=FaultPlan(stream_delay_seconds=event_delay_seconds))
    model = sdk_model(client, model="claude-sonnet-4-6", max_tokens=2000, tools=tools)
    stream_end = None
    outcomes = []
    history = [{"role": "user", "content": "read"}]
    events = run_loop(model, history, tools=tools, max_turns=1)
    last_stream_event = time.perf_counter()
    async for event in events:
        if isinstance(event, (TextDelta, ToolUseReady)):
            last_stream_event = time.perf_counter()
        if isinstance(event, TurnEnd) and stream_end is None:
            stream_end = last_stream_event
        if hasattr(event, "outcome"):
            outcomes.append(event.outcome)
    delays = [o.started_at - o.scheduled_at for o in outcomes]
    ahead = [stream_end - o.started_at for o in outcomes]
    return delays, ahead


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-seconds", type=float, default=0.2)
    parser.add_argument("--event-delay-seconds", type=float, default=0.005)
    args = parser.parse_args()
    speedups(args.latency_seconds)
    delays, ahead = asyncio.run(start_delays(8, args.event_delay_seconds))
    print(f"2. through the loop, 8 tool_use blocks, SSE events every "
          f"{args.event_delay_seconds * 1000:.0f} ms:")
    print(f"   tool_use block stop -> tool start: median {statistics.median(delays) * 1e3:.3f} ms,"
          f" max {max(delays) * 1e3:.3f} ms")
    print(f"   tools started before the stream ended by: first {ahead[0] * 1e3:.0f} ms, "
          f"last {ahead[-1] * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
