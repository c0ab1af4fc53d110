"""Input cost of masking policies WITH prompt caching, on shared real and kit-generated sessions.

Each trajectory in ``../shared/data`` (or ``$MINI_AGENT_SHARED_DATA``) is replayed request by request (request k sends the
history before the k-th assistant message) under each policy, through the kit's breakpoint
placement and the offline prompt-cache simulator; requests are 20 s apart (no TTL expiry).
The shared trajectories stop at 66 requests, so the kit also generates long sessions of 40,
80 and 150 requests (:func:`generated_session`, from
:func:`~mini_agent.core.long_session.long_session`) at two tool-result shares.
Printed: input cost in USD, cache hit rate and billed input tokens, each normalised to
"no masking, no caching" = 1.00; then the cache-aware policy against caching alone, the
no-rewrite floor, where the payback policy's money goes, and payback on shorter generated
sessions (a move shortly before the end does not pay back).
Prices: the trajectory's Claude model, or the kit's DEFAULT_MODEL for other vendors' runs
and generated sessions. Without the shared data folder only the generated sessions run, and
the output says so. System prompt: the transcript's own when recorded, else a one-line
stand-in; tools: one minimal definition per tool name the transcript uses (the real ones were
not recorded).

Run: ``python benchmarks/cache_policies.py`` (about 45 s on 2 cores).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from mini_agent.core.pricing import (CACHE_READ_MULTIPLIER, CACHE_WRITE_5M_MULTIPLIER,
                                     UnknownModelError, cache_hit_rate, cost_usd, model_price, sum_usage)
from mini_agent.core.cache_policies import PaybackMasking, replay_with_cache
from mini_agent.harness.config import DEFAULT_MODEL
from mini_agent.core.masking import ChunkedMasking, ThresholdMasking
from mini_agent.core.messages import Message
from mini_agent.core.prompt_cache import min_cacheable_tokens
from mini_agent.core.long_session import long_session
from mini_agent.core.context_edits import clear_tool_uses_edit
from mini_agent.core.tokens import approx_tokens
from mini_agent.harness.real_sessions import SHARED_DATA_ENV_VAR, shared_data_dir
from mini_agent.harness.transcript_files import load

DATA = shared_data_dir(Path(__file__).resolve().parent)

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

GENERATED = [(40, 0.65), (80, 0.65), (150, 0.65), (40, 0.80), (80, 0.80), (150, 0.80)]
"""``(requests, tool_result_share)`` of the kit-generated sessions. 0.65 is a typical share
(the shared real trajectories hold 44-82% of their history tokens in tool results, median
about 60%); 0.80 a read-heavy session."""

SENSITIVITY = [(n, share) for share in (0.6, 0.7, 0.75, 0.85) for n in (25, 35, 45, 55)]
"""Shorter generated sessions replayed with cache only and payback alone: how often a
boundary move made shortly before the session ends fails to pay back (target 1)."""

GENERATED_SYSTEM = "You are a coding agent working in a repository."
GENERATED_TOOLS = ("edit_file", "grep", "read_file", "run_bash")

_REASONING = ("Reading the output above: {path} calls it from several places and each caller "
              "iterates over the result, so an early return of None breaks them. Before I "
              "change anything I check which tests cover this path and whether the config "
              "loader relies on the same behaviour; then I decide the smallest safe edit. ")


def generated_session(requests: int, *, tool_share: float) -> list[Message]:
    """A deterministic coding session of ``requests`` requests, tool results ``tool_share`` of it.

    Built from ``long_session(requests - 1)`` (one request per exchange plus the closing
    one): read_file results of 60-219 numbered lines (about 800-2,800 tokens), grep (about
    130), the test run (about 250), edits (about 15). Its assistant turns are one sentence,
    so tool results would be 95% of the history; each assistant turn's reasoning text is
    lengthened (the same amount per turn, deterministic prose) until tool results are
    ``tool_share`` of the history's approx tokens. Returns a new history; nothing random.
    Raises ValueError for requests < 2 or tool_share outside (0, 1].
    """
    if requests < 2 or not 0 < tool_share <= 1:
        raise ValueError(f"need requests >= 2 and 0 < tool_share <= 1, got {requests}, "
                         f"{tool_share}")
    history, _ = long_session(requests - 1)
    results = sum(approx_tokens(b) for m in history if isinstance(m["content"], list)
                  for b in m["content"] if b.get("type") == "tool_result")
    missing_tokens = results / tool_share - approx_tokens(history)
    turns = [i for i, m in enumerate(history) if m["role"] == "assistant"]
    pad_chars = max(0, int(missing_tokens * 4 / len(turns)))
    out = list(history)
    for i in turns:
        if pad_chars == 0:
            break
        first, *rest = out[i]["content"]
        path = next((b["input"].get("path", "src") for b in rest if b.get("type") == "tool_use"),
                    "src/parser.py")
        text = _REASONING.format(path=path)
        pad = (text * (pad_chars // len(text) + 1))[:pad_chars]
        out[i] = {**out[i], "content": [{**first, "text": first["text"] + " " + pad}, *rest]}
    return out


def trajectories() -> list[Path]:
    """Every transcript file under the shared data folder, sorted."""
    return sorted(p for p in DATA.rglob("*") if p.is_file()
                  and p.suffix in (".jsonl", ".json", ".traj") and p.name != "manifest.json")


def setup(transcript) -> tuple[str, str, list[dict]]:
    """Return ``(model, system, tools)`` for replaying ``transcript``."""
    model = transcript.model or DEFAULT_MODEL
    try:
        model_price(model)
    except UnknownModelError:
        model = DEFAULT_MODEL
    names = sorted({b["name"] for m in transcript.messages if isinstance(m["content"], list)
                    for b in m["content"] if b.get("type") == "tool_use"})
    system = transcript.system or "You are a coding agent working in a repository."
    return model, system, tool_definitions(names)


def tool_definitions(names) -> list[dict]:
    """One minimal tool definition per name, in the given order."""
    return [{"name": n, "description": f"The {n} tool.", "input_schema": {"type": "object"}}
            for n in names]


def _totals(records: list[dict]) -> dict:
    total = sum_usage(r["usage"] for r in records)
    return {"cost_usd": sum(r["cost_usd"] for r in records), "hit_rate": cache_hit_rate(total),
            "tokens": total["input_tokens"] + total["cache_creation_input_tokens"]
            + total["cache_read_input_tokens"], "usage": total}


def no_rewrite_floor_usd(cache_only: list[dict], naive: list[dict], model: str) -> float:
    """What masking every turn would cost if a masked prefix could still be read from the cache.

    Per request: caching alone's usage with ``cache_read_input_tokens`` lowered by the tokens
    naive masking removes from the view (writes and uncached tokens unchanged). No real
    policy can do better: every re-write of the prefix after a mask change is left out.
    """
    total = 0.0
    for plain, masked in zip(cache_only, naive):
        usage = dict(plain["usage"])
        usage["cache_read_input_tokens"] = max(
            0, usage["cache_read_input_tokens"] - (plain["view_tokens"] - masked["view_tokens"]))
        total += cost_usd(usage, model, include_output=False)
    return total


def run_history(name: str, messages: list[Message], *, model: str, system: str,
                tools: list[dict]) -> dict:
    """Replay one history under every policy: ``{"name", "requests", "model", "rows":
    {policy: {"cost_usd", "hit_rate", "tokens", "usage"}}, "floor_usd"}``."""
    rows, kept = {}, {}
    for policy_name, (policy, caching, edit) in POLICIES.items():
        if policy == "payback":
            policy = PaybackMasking(keep=4, min_cacheable_tokens=min_cacheable_tokens(model))
        records = replay_with_cache(messages, model=model, policy=policy, caching=caching,
                                    server_edit=edit, system=system, tools=tools,
                                    resume=policy_name in RESUME)
        rows[policy_name] = _totals(records)
        kept[policy_name] = records
    floor = no_rewrite_floor_usd(kept["cache only"], kept["naive mask, no cache"], model)
    return {"name": name, "requests": len(records), "model": model, "rows": rows,
            "floor_usd": floor}


def run(path: Path) -> dict:
    """Replay one shared trajectory (see :func:`run_history`)."""
    transcript = load(path, text_actions="tools")
    model, system, tools = setup(transcript)
    return run_history(path.name, transcript.messages, model=model, system=system, tools=tools)


def run_generated(requests: int, tool_share: float) -> dict:
    """Replay one kit-generated session (see :func:`generated_session`)."""
    messages = generated_session(requests, tool_share=tool_share)
    return run_history(f"generated {requests} req, tools {tool_share:.0%}", messages,
                       model=DEFAULT_MODEL, system=GENERATED_SYSTEM,
                       tools=tool_definitions(GENERATED_TOOLS))


def _vs_cache(res: dict, key: str = "payback + cache") -> float:
    return res["rows"][key]["cost_usd"] / res["rows"]["cache only"]["cost_usd"]


def main() -> int:
    """Print the tables (the generated sessions only when the shared data folder is missing)."""
    paths = trajectories()
    if not paths:
        print(f"No real trajectories under {DATA} (the shared data folder is optional; set "
              f"{SHARED_DATA_ENV_VAR} to point at one): only the KIT-GENERATED sessions below, "
              f"which are not recordings.\n")
    started = time.perf_counter()
    real = sorted((run(p) for p in paths), key=lambda r: r["requests"])
    generated = [run_generated(n, share) for n, share in GENERATED]
    results = real + generated
    names = list(POLICIES)
    short = ["noM noC", "naive noC", "cache", "naive", "thr8K", "chunk8", "chunk16",
             "server", "payback"]
    def block(title, cell, extra=None):
        print(title)
        print(f"{'trajectory':44} {'req':>4} " + " ".join(f"{s:>9}" for s in short)
              + (f" {'pay/cache':>9} {'floor/c':>9}" if extra else ""))
        for i, res in enumerate(results):
            if i == len(real):
                print("-- kit-generated sessions (long_session, reasoning lengthened) --")
            cells = " ".join(cell(res, n) for n in names) + (extra(res) if extra else "")
            print(f"{res['name'][:44]:44} {res['requests']:4d} {cells}")
        print()

    block("Input cost normalised to 'no masking, no caching' = 1.00; pay/cache: payback vs "
          "cache only; floor/c: no-rewrite floor vs cache only",
          lambda res, n: f"{res['rows'][n]['cost_usd'] / res['rows'][names[0]]['cost_usd']:9.3f}",
          lambda res: f" {_vs_cache(res):9.3f} "
          f"{res['floor_usd'] / res['rows']['cache only']['cost_usd']:9.3f}")
    block("Tokens billed (read + written + uncached) normalised to no masking, no caching",
          lambda res, n: f"{res['rows'][n]['tokens'] / res['rows'][names[0]]['tokens']:9.3f}")
    block("Cache hit rate (read / all input)",
          lambda res, n: f"{res['rows'][n]['hit_rate']:9.3f}")

    print("Payback vs cache only, as shares of cache only's cost: extra writes (re-written "
          "prefixes), reads saved (masked tokens not read), net")
    for res in results:
        price = model_price(res["model"])
        pay, plain = res["rows"]["payback + cache"]["usage"], res["rows"]["cache only"]["usage"]
        base = res["rows"]["cache only"]["cost_usd"]
        per_token = price.input_usd_per_mtok / 1e6
        writes = ((pay["cache_creation_input_tokens"] - plain["cache_creation_input_tokens"])
                  * CACHE_WRITE_5M_MULTIPLIER + pay["input_tokens"] - plain["input_tokens"]) \
            * per_token
        reads = (plain["cache_read_input_tokens"] - pay["cache_read_input_tokens"]) \
            * CACHE_READ_MULTIPLIER * per_token
        print(f"{res['name'][:44]:44} {res['requests']:4d} {writes / base:+9.3f} "
              f"{-reads / base:+9.3f} {(writes - reads) / base:+9.3f}")

    print("\nPayback vs cache only on shorter generated sessions (rows: tool share; "
          "columns: requests)")
    print(f"{'share':>6} " + " ".join(f"{n:>7d}" for n in sorted({n for n, _ in SENSITIVITY})))
    sensitivity_worst = 0.0
    for share in sorted({s for _, s in SENSITIVITY}):
        cells = []
        for n in sorted({n for n, s in SENSITIVITY if s == share}):
            history = generated_session(n, tool_share=share)
            kwargs = {"model": DEFAULT_MODEL, "system": GENERATED_SYSTEM,
                      "tools": tool_definitions(GENERATED_TOOLS)}
            plain = sum(r["cost_usd"] for r in replay_with_cache(history, **kwargs))
            pay = sum(r["cost_usd"] for r in replay_with_cache(
                history, policy=PaybackMasking(
                    keep=4, min_cacheable_tokens=min_cacheable_tokens(DEFAULT_MODEL)),
                resume=True, **kwargs))
            cells.append(f"{pay / plain:7.3f}")
            sensitivity_worst = max(sensitivity_worst, pay / plain)
        print(f"{share:6.2f} " + " ".join(cells))

    worst = max(results, key=_vs_cache)
    print(f"\ntarget 1: payback vs cache only, worst of {len(results)} sessions: "
          f"{_vs_cache(worst):.3f}x ({worst['name']}; <= 1.00 wanted); shorter generated "
          f"sessions: worst {sensitivity_worst:.3f}x")
    long_runs = [r for r in results if r["requests"] >= 80]
    for res in long_runs:
        print(f"target 2: {res['name']:44} payback {_vs_cache(res):.3f}x, chunk16 "
              f"{_vs_cache(res, 'chunked 16 + cache'):.3f}x, floor "
              f"{res['floor_usd'] / res['rows']['cache only']['cost_usd']:.3f}x (<= 0.70 wanted)")
    print(f"\n({len(real)} shared + {len(generated)} generated sessions, "
          f"{time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
