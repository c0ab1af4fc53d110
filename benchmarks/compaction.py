"""Tokens sent per request on real trajectories under raw, masking, micro_compact, the full
CompactPolicy and the four-tier lifecycle, normalised to raw = 1.00.

For every file in ``../shared/data`` (or ``$MINI_AGENT_SHARED_DATA``; read with
``mini_agent.harness.transcript_files.load``), each request is replayed: the history up to each user message that an assistant message answers (and the
final one) is what the agent would have sent raw; each policy builds its view of it, and the
approx tokens (chars / 4, messages only: system prompt and tools are the same under every
policy) are summed over the run.

Clock (the ``clock`` column says which one each row used): the recorded times
(``Transcript.times``: Claude Code entry timestamps, mini-swe-agent ``extra.timestamp``) when
the file has them, so micro_compact's 60-minute cut-off clears read-only results that really
were older than an hour at that request; otherwise (SWE-agent, the older mini-swe-agent
format), or with ``--clock assumed``, requests are assumed one minute apart (message ``i``
arrives at ``60 s * number of assistant messages up to it``). ``min`` is the span of the clock
used, first message to last, in minutes. Thresholds are the kit defaults (masking keep=4;
CompactPolicy 50K/70K/90K with the offline ``structured_summary``; lifecycle hot 3 / warm-A 8 /
warm-B 20 exchanges), and a scaled run (``--scale 0.25``: token thresholds and lifecycle exchange
ages times 0.25) shows the same policies on shorter contexts. Without the shared data folder
the table covers kit-generated long sessions (``sample_transcript`` of
``mini_agent.core.sample_sessions``: Claude Code's format, with times) and says so.
Not a timed test; run by hand:
``python benchmarks/compaction.py [--scale F] [--clock recorded|assumed] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mini_agent.core.compact_policy import CompactPolicy, CompactThresholds
from mini_agent.core.compaction import micro_compact
from mini_agent.core.lifecycle import LifecyclePolicy, LifecycleThresholds
from mini_agent.core.masking import mask_old_observations
from mini_agent.core.server_compaction import structured_summary
from mini_agent.core.tokens import approx_tokens
from mini_agent.core.sample_sessions import sample_transcript
from mini_agent.harness.real_sessions import SHARED_DATA_ENV_VAR, shared_data_dir
from mini_agent.harness.transcript_files import load
from mini_agent.core.view import ViewContext

DATA = shared_data_dir(Path(__file__).resolve().parent)
GENERATED_STEPS = (30, 60, 120)
"""Tool exchanges of the kit-generated sessions used when the shared data folder is absent."""
SECONDS_PER_REQUEST = 60.0
POLICIES = ("raw", "masking", "micro_compact", "compact_policy", "lifecycle")


def request_points(messages: list[dict]) -> list[int]:
    """Lengths of the prefixes sent as requests: each user message followed by an assistant."""
    points = [i + 1 for i in range(len(messages) - 1)
              if messages[i]["role"] == "user" and messages[i + 1]["role"] == "assistant"]
    if messages and messages[-1]["role"] == "user":
        points.append(len(messages))
    return points


def arrival_times(messages: list[dict]) -> list[float]:
    """One minute per request: time = 60 s x assistant messages before (and at) index i."""
    times, seen = [], 0
    for m in messages:
        seen += m["role"] == "assistant"
        times.append(SECONDS_PER_REQUEST * seen)
    return times


def replay(messages: list[dict], *, times: list[float] | None = None,
           scale: float = 1.0) -> dict[str, list[int]]:
    """Per-request approx tokens under each policy: ``{policy: [tokens per request]}``.

    ``times``: Unix seconds per message (``Transcript.times``); None: :func:`arrival_times`.
    """
    times = list(times) if times is not None else arrival_times(messages)
    compact = CompactPolicy(CompactThresholds().scaled(scale), summarize=structured_summary)
    base = LifecycleThresholds()
    lifecycle = LifecyclePolicy(LifecycleThresholds(
        *(max(1, round(x * scale)) for x in (base.hot_exchanges, base.warm_a_exchanges,
                                             base.warm_b_exchanges))))
    out: dict[str, list[int]] = {p: [] for p in POLICIES}
    for turn, n in enumerate(request_points(messages), 1):
        prefix, t = messages[:n], times[:n]
        ctx = ViewContext(times=tuple(t), now=t[-1], turn=turn)
        out["raw"].append(approx_tokens(prefix))
        out["masking"].append(approx_tokens(mask_old_observations(prefix, keep=4)))
        out["micro_compact"].append(approx_tokens(micro_compact(prefix, times=t, now=t[-1])))
        out["compact_policy"].append(approx_tokens(compact(prefix, ctx)))
        out["lifecycle"].append(approx_tokens(lifecycle(prefix, ctx)))
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the table (or JSON with per-request figures). Returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--clock", choices=("recorded", "assumed"), default="recorded",
                        help="recorded: the file's times where it has them; "
                             "assumed: one minute per request everywhere")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    files = sorted(p for p in DATA.rglob("*") if p.suffix in (".jsonl", ".json", ".traj")
                   and p.name != "manifest.json") if DATA.is_dir() else []
    sessions = ((str(p.relative_to(DATA)), load(p)) for p in files)
    if not files:
        print(f"No real trajectories under {DATA} (the shared data folder is optional; set "
              f"{SHARED_DATA_ENV_VAR} to point at one): KIT-GENERATED sessions instead, not "
              f"recordings.\n", file=sys.stderr if args.json else sys.stdout)
        sessions = ((f"generated, {n} exchanges", sample_transcript(n, variant=k))
                    for k, n in enumerate(GENERATED_STEPS))
    results = {}
    for name, transcript in sessions:
        if len(transcript.messages) < 2:
            continue
        recorded = transcript.times if args.clock == "recorded" else None
        times = recorded if recorded is not None else arrival_times(transcript.messages)
        results[name] = {
            "clock": "recorded" if recorded is not None else "1 min/req",
            "span_seconds": times[-1] - times[0],
            "tokens": replay(transcript.messages, times=times, scale=args.scale)}
    if args.json:
        print(json.dumps(results))
        return 0
    print(f"{'trajectory':46} {'clock':>9} {'min':>5} {'req':>4} {'raw tokens':>11} "
          + " ".join(f"{p:>14}" for p in POLICIES[1:]))
    grand = {p: 0 for p in POLICIES}
    for name, row in results.items():
        per = row["tokens"]
        totals = {p: sum(v) for p, v in per.items()}
        for p in POLICIES:
            grand[p] += totals[p]
        print(f"{name[:46]:46} {row['clock']:>9} {row['span_seconds'] / 60:>5.0f} "
              f"{len(per['raw']):>4} {totals['raw']:>11,} " + " ".join(
                  f"{totals[p] / totals['raw']:>14.2f}" for p in POLICIES[1:]))
    print(f"{'ALL (token-weighted)':46} {'':>9} {'':>5} {'':>4} {grand['raw']:>11,} " + " ".join(
        f"{grand[p] / grand['raw']:>14.2f}" for p in POLICIES[1:]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
