"""Input cost of masking policies WITH prompt caching, on every shared real trajectory.

Each trajectory in ``../shared/data`` is replayed request by request (request k sends the
history before the k-th assistant message) under each policy, through the kit's breakpoint
placement and the offline prompt-cache simulator; requests are 20 s apart (no TTL expiry).
Printed: input cost in USD, cache hit rate and billed input tokens, each normalised to
"no masking, no caching" = 1.00; then the cache-aware policy against caching alone.
Prices: the trajectory's Claude model, or the kit's DEFAULT_MODEL for other vendors' runs.
System prompt: the transcript's own when recorded, else a one-line stand-in; tools: one
minimal definition per tool name the transcript uses (the real ones were not recorded).

Run: ``python benchmarks/cache_policies.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from mini_agent.cache import UnknownModelError, model_price, sum_usage, cache_hit_rate
from mini_agent.cache_policies import PaybackMasking, replay_with_cache
from mini_agent.config import DEFAULT_MODEL
from mini_agent.masking import ChunkedMasking, ThresholdMasking
from mini_agent.offline.cache_sim import min_cacheable_tokens
from mini_agent.offline.context_editing import clear_tool_uses_edit
from mini_agent.transcripts import load

DATA = Path(__file__).resolve().parents[1] / "../shared/data"

POLICIES = {
    # name: (view policy, caching, server-side edit)
    "no mask, no cache": (None, False, None),
    "naive mask, no cache": (ThresholdMasking(keep=4, threshold_tokens=0), False, None),
    "cache only": (None, True, None),
    "naive mask + cache": (ThresholdMasking(keep=4, threshold_tokens=0), True, None),
    "threshold 8K + cache": (ThresholdMasking(keep=4), True, None),
    "chunked 8 + cache": (ChunkedMasking(keep=4, chunk=8), True, None),
    "chunked 16 + cache": (ChunkedMasking(keep=4, chunk=16), True, None),
    "server clear + cache": (None, True, clear_tool_uses_edit(
        trigger_input_tokens=30_000, keep=4, clear_at_least_tokens=10_000)),
    "payback + cache": ("payback", True, None),
}
RESUME = {"payback + cache"}
"""Policies replayed with ResumeBreakpoints (the cache-aware breakpoint placement)."""


def trajectories() -> list[Path]:
    """Every transcript file under the shared data folder, sorted."""
    return sorted(p for p in DATA.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json", ".traj")
                  and p.name != "manifest.json")


def setup(transcript) -> tuple[str, str, list[dict]]:
    """Return ``(model, system, tools)`` for replaying ``transcript``."""
    model = transcript.model or DEFAULT_MODEL
    try:
        model_price(model)
    except UnknownModelError:
        model = DEFAULT_MODEL
    names = sorted({b["name"] for m in transcript.messages if isinstance(m["content"], list)
                    for b in m["content"] if b.get("type") == "tool_use"})
    tools = [{"name": n, "description": f"The {n} tool.",
              "input_schema": {"type": "object"}} for n in names]
    system = transcript.system or "You are a coding agent working in a repository."
    return model, system, tools


def run(path: Path) -> dict:
    """Replay one trajectory under every policy: ``{"name", "requests", "rows": {policy:
    {"cost_usd", "hit_rate", "tokens"}}}``."""
    transcript = load(path, text_actions="tools")
    model, system, tools = setup(transcript)
    rows = {}
    for name, (policy, caching, edit) in POLICIES.items():
        if policy == "payback":
            policy = PaybackMasking(keep=4, min_cacheable_tokens=min_cacheable_tokens(model))
        records = replay_with_cache(transcript.messages, model=model, policy=policy,
                                    caching=caching, server_edit=edit, system=system,
                                    tools=tools, resume=name in RESUME)
        total = sum_usage(r["usage"] for r in records)
        rows[name] = {"cost_usd": sum(r["cost_usd"] for r in records),
                      "hit_rate": cache_hit_rate(total),
                      "tokens": total["input_tokens"] + total["cache_creation_input_tokens"]
                      + total["cache_read_input_tokens"]}
    return {"name": path.name, "requests": len(records), "model": model, "rows": rows}


def main() -> int:
    """Print the table; exit 1 when the shared data folder is missing."""
    paths = trajectories()
    if not paths:
        print(f"no trajectories under {DATA}", file=sys.stderr)
        return 1
    started = time.perf_counter()
    results = [run(p) for p in paths]
    names = list(POLICIES)
    short = ["noM noC", "naive noC", "cache", "naive", "thr8K", "chunk8", "chunk16",
             "server", "payback"]
    print("Input cost normalised to 'no masking, no caching' = 1.00 "
          "(hit rate in the last block)\n")
    header = f"{'trajectory':44} {'req':>4} " + " ".join(f"{s:>9}" for s in short) + \
        f" {'pay/cache':>9}"
    print(header)
    for res in sorted(results, key=lambda r: r["requests"]):
        base = res["rows"][names[0]]["cost_usd"]
        cells = " ".join(f"{res['rows'][n]['cost_usd'] / base:9.3f}" for n in names)
        vs_cache = res["rows"]["payback + cache"]["cost_usd"] / res["rows"]["cache only"]["cost_usd"]
        print(f"{res['name'][:44]:44} {res['requests']:4d} {cells} {vs_cache:9.3f}")
    print("\nTokens billed (read + written + uncached) normalised to no masking, no caching")
    for res in sorted(results, key=lambda r: r["requests"]):
        base = res["rows"][names[0]]["tokens"]
        cells = " ".join(f"{res['rows'][n]['tokens'] / base:9.3f}" for n in names)
        print(f"{res['name'][:44]:44} {res['requests']:4d} {cells}")
    print("\nCache hit rate (read / all input)")
    for res in sorted(results, key=lambda r: r["requests"]):
        cells = " ".join(f"{res['rows'][n]['hit_rate']:9.3f}" for n in names)
        print(f"{res['name'][:44]:44} {res['requests']:4d} {cells}")
    worst = max(r["rows"]["payback + cache"]["cost_usd"] / r["rows"]["cache only"]["cost_usd"]
                for r in results)
    long_runs = [r for r in results if r["requests"] >= 80]
    print(f"\ntarget 1: payback vs cache only, worst trajectory: {worst:.3f}x (<= 1.00 wanted)")
    if long_runs:
        best = max(r["rows"]["payback + cache"]["cost_usd"] / r["rows"]["cache only"]["cost_usd"]
                   for r in long_runs)
        print(f"target 2: payback vs cache only on {len(long_runs)} runs of 80+ requests: "
              f"worst {best:.3f}x (<= 0.70 wanted)")
    else:
        print("target 2: no trajectory has 80+ requests (longest: "
              f"{max(r['requests'] for r in results)})")
    print(f"\n({len(results)} trajectories, {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
