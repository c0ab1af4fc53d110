"""The policy explorer's core: replay one recorded session under many context policies.

For one :class:`~mini_agent.core.transcripts.Transcript` :func:`evaluate_session` returns a
JSON-ready report: the calibrated estimate of every request beside its real usage, the
hindsight bound (:mod:`.hindsight`), and per policy the input tokens sent, the USD with
caching at the model's price, the cache hit rate, the cache breaks, the essential facts still
recoverable in the last request's view (:mod:`.retention`) and the cost over the bound.

Each policy is replayed request by request through the kit's breakpoint placement and the
prompt-cache simulator (:func:`~mini_agent.core.cache_policies.replay_with_cache`), at the
recorded message times when the file has them (a pause longer than the TTL expires the
cache), otherwise 20 s apart. The transcript does not hold the system prompt and tool
definitions the agent sent; they are replaced by a labelled stand-in of the size the
calibrated estimate learned from the first request's real usage, so caching them counts.
Token counts are the simulator's (chars/4 per block), not the calibrated estimate's, so USD
figures are comparable between policies and with the bound, not a bill.

Policy names (:data:`DEFAULT_POLICIES`; ``mask-N`` and ``chunked-N`` take a number):
``raw`` (everything, cached), ``mask-N`` (mask all but the newest N results every turn),
``chunked-N`` (mask in whole chunks of N), ``payback`` (cache-aware masking with resume
breakpoints), ``breakeven`` (masking moved once the reads it would have saved pay for its
re-write, :mod:`.breakeven_masking`), ``micro_compact``, ``compact`` (``CompactPolicy``),
``lifecycle``,
``server_clear`` (``clear_tool_uses_20250919``), ``server_compact`` (``compact_20260112``),
``summary`` (an LLM summary every 21 exchanges keeping 10; offline the deterministic
summariser writes it).

Pure (no IO; the summariser is offline unless one is passed). Faces: ``mini-agent evaluate``
(:mod:`mini_agent.harness.evaluate_runner`) and ``notebooks/11_evaluating_policies.ipynb``.
Source: the kit's evaluation chapter; JetBrains "The Complexity Trap" (2025); seed 004 (lab 2).
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from typing import Any, Callable, Sequence

from mini_agent.core.breakeven_masking import BreakEvenMasking
from mini_agent.core.cache_policies import PaybackMasking, replay_with_cache, request_points
from mini_agent.core.compact_policy import CompactPolicy
from mini_agent.core.compaction import micro_compact
from mini_agent.core.models import DEFAULT_MODEL
from mini_agent.core.pricing import UnknownModelError, cache_hit_rate, model_price, sum_usage
from mini_agent.core.lifecycle import LifecyclePolicy
from mini_agent.core.masking import ChunkedMasking, ThresholdMasking
from mini_agent.core.context_edits import clear_tool_uses_edit
from mini_agent.core.view import ViewContext
from mini_agent.core.calibration import (Calibration, request_features, request_rows,
                                         system_features)
from mini_agent.core.tokens import token_memo
from mini_agent.core.fast_replay import BlockMemo, ReplayRun, Unsupported, replay_runs
from mini_agent.core.block_identity import same_objects
from mini_agent.core.hindsight import masking_bound
from mini_agent.core.recorded_usage import cache_breaks, clean_usage, recorded_row
from mini_agent.core.sample_sessions import is_generated
from mini_agent.core.policy_views import ServerCompactionView, SummaryPolicy
from mini_agent.core.retention import Fact, extract_facts, facts_in_text, view_text

DEFAULT_POLICIES = ("raw", "mask-10", "chunked-8", "payback", "breakeven", "micro_compact",
                    "compact", "lifecycle", "server_clear", "server_compact", "summary")
"""Every policy the explorer knows, in report order."""

GAP_SECONDS = 20.0
"""Seconds between requests when the file records no times (no cache expiry)."""

SERVER_CLEAR_TRIGGER_TOKENS = 30_000
"""Input tokens above which ``server_clear`` clears (the API default is 100,000; 30,000 lets
sessions of a few dozen requests show it)."""

STAND_IN = ("[Stand-in for the system prompt and tool definitions this session sent, which "
            "its transcript does not record: ~{tokens} tokens]\n")


class UnknownPolicyError(ValueError):
    """A policy name the explorer does not know (the message lists the known ones)."""


@dataclasses.dataclass(frozen=True)
class PolicySpec:
    """How to replay one policy: ``make(context) -> view policy or None``, caching on,
    an optional server-side edit dict, and whether resume breakpoints are used."""

    name: str
    make: Callable[[dict], Any]
    server_edit: dict | None = None
    resume: bool = False


def _micro(ctx_info: dict) -> Callable:
    def view(history, ctx: ViewContext):
        return micro_compact(history, times=ctx.times_for(history), now=ctx.now)
    return view


def policy_spec(name: str, *, summarize=None) -> PolicySpec:
    """Return the :class:`PolicySpec` for a policy name (see the module doc).

    Args:
        name: a name of :data:`DEFAULT_POLICIES`, or ``mask-N`` / ``chunked-N``.
        summarize: unused here (the summariser reaches the policies through the replay's
            context); kept for callers that pass it.

    Returns:
        The :class:`PolicySpec` that builds the policy from the replay's context
        (``summarize``, ``system``, ``model``).

    Raises:
        UnknownPolicyError: an unknown name or a chunk below 1 in ``chunked-N``.
    """
    build = _NAMED_SPECS.get(name)
    if build is not None:
        return build()  # a new spec (and edit dict) per call, as callers may keep it
    m = _SIZED.fullmatch(name)
    if m:
        n = int(m.group(2))
        if m.group(1) == "mask":
            return PolicySpec(name, lambda c: ThresholdMasking(keep=n, threshold_tokens=0))
        if n < 1:
            raise UnknownPolicyError(f"{name}: the chunk must be >= 1")
        return PolicySpec(name, lambda c: ChunkedMasking(keep=4, chunk=n, threshold_tokens=0))
    raise UnknownPolicyError(f"unknown policy {name!r}; known: "
                             f"{', '.join(DEFAULT_POLICIES)} (mask-N, chunked-N)")


_SIZED = re.compile(r"(mask|chunked)-(\d+)")
"""``mask-N`` and ``chunked-N``: the policies that take a number."""

_NAMED_SPECS: dict[str, Callable[[], PolicySpec]] = {
    "raw": lambda: PolicySpec("raw", lambda c: None),
    "payback": lambda: PolicySpec("payback", lambda c: PaybackMasking(), resume=True),
    "breakeven": lambda: PolicySpec("breakeven", lambda c: BreakEvenMasking.for_model(
        c["model"], system=c["system"]), resume=True),
    "micro_compact": lambda: PolicySpec("micro_compact", _micro),
    "compact": lambda: PolicySpec("compact", lambda c: CompactPolicy(summarize=c["summarize"])),
    "lifecycle": lambda: PolicySpec("lifecycle", lambda c: LifecyclePolicy()),
    "server_clear": lambda: PolicySpec("server_clear", lambda c: None,
                                       server_edit=clear_tool_uses_edit(
        trigger_input_tokens=SERVER_CLEAR_TRIGGER_TOKENS, keep=4,
        clear_at_least_tokens=10_000)),
    "server_compact": lambda: PolicySpec("server_compact", lambda c: ServerCompactionView(
        system=c["system"], summarize=c["summarize"])),
    "summary": lambda: PolicySpec("summary", lambda c: SummaryPolicy(summarize=c["summarize"])),
}
"""Each fixed policy name -> a function building its :class:`PolicySpec` (only the one asked
for is built: :func:`policy_spec` runs once per policy per session)."""


def _model(transcript_model: str | None, model: str | None) -> str:
    for candidate in (model, transcript_model):
        if candidate:
            try:
                model_price(candidate)
                return candidate
            except UnknownModelError:
                if candidate is model:
                    raise
    return DEFAULT_MODEL


def evaluate_session(transcript, *, policies: Sequence[str] = DEFAULT_POLICIES,
                     model: str | None = None, calibration: Calibration | None = None,
                     facts: Sequence[Fact] | None = None, summarize=None,
                     keep_views: bool = False, reference: bool = False) -> dict[str, Any]:
    """Replay one session under each policy; return the explorer's report as a dict.

    Shape: ``{"path", "format", "model" (the one priced), "recorded_model" (the file's, or None),
    "overhead_tokens", "estimator_median_abs_error",
    "requests": [{"request", "estimated_input_tokens", "real_input_tokens" (when recorded),
    "error"}], "bound": {"usd", "moves", "schedule"}, "facts": [{"text", "kind", "proof",
    "message"}], "policies": [{"name", "tokens_sent", "usd", "hit_rate", "cache_breaks",
    "retained_facts", "total_facts", "vs_best"}], "recorded": {"tokens_sent", "usd", "hit_rate",
    "cache_breaks"} (what the session cost as it ran, from its usage; None when a request
    has none: :mod:`.recorded_usage`), "generated" (a kit-generated sample, not a recording),
    "compactions" (compactions in the file: the history loaded starts after the last one),
    "repairs" (the loader's notes, one per line of the file it skipped or mended)}``;
    with ``keep_views`` each policy row also
    has ``"records"`` (the replay records, views included) for notebooks.

    Args:
        transcript: a loaded Transcript (messages, usage, times, system, model, path).
        policies: policy names (see the module doc).
        model: price with this model (default: the transcript's, else the kit's default).
        calibration: the token estimate's table (default: the fitted one); each request's
            estimate also scales it by the usage of the requests before it
            (:mod:`.session_scale`), never by its own.
        facts: essential facts to check (default: :func:`extract_facts` of the history).
        summarize: summariser for the summary policies (default: offline); a function
            of its input alone: the fast replay asks the policies request by request
            side by side, the reference one policy after another, so a summariser
            with state (a call counter) gives the two different figures.
        keep_views: add each policy's replay records (views included), replayed by the
            reference :func:`~mini_agent.core.cache_policies.replay_with_cache`.
        reference: replay with the reference instead of
            :func:`~mini_agent.core.fast_replay.replay_usage` (the same figures, slower;
            benchmarks compare the two).

    Returns:
        The report dict above.

    Raises:
        UnknownPolicyError: a policy name the explorer does not know.
        UnknownModelError: an explicit ``model`` with no price.
    """
    # a usage of the wrong shape counts as missing, not as a crash
    usage = [clean_usage(u) for u in transcript.usage] if transcript.usage else transcript.usage
    # the policies are pure: the fast path counts each message's tokens once
    with contextlib.nullcontext() if keep_views or reference else token_memo():
        return _report(transcript, usage, policies, model, calibration, facts, summarize,
                       keep_views, reference)


def _report(transcript, usage, policies, model, calibration, facts, summarize, keep_views,
            reference) -> dict[str, Any]:
    """:func:`evaluate_session`'s report; ``usage`` is the transcript's, cleaned."""
    specs = [policy_spec(p, summarize=summarize) for p in policies]
    model = _model(transcript.model, model)
    messages = transcript.messages
    points = request_points(messages)
    features = request_features(messages, points)
    fixed = system_features(transcript.system)
    rows, median_error, overhead = request_rows(features, usage, calibration=calibration,
                                                overhead_features=fixed)
    tokens = max(0, round(overhead))
    system = (STAND_IN.format(tokens=tokens) + "." * (4 * tokens)) if usage and \
        any(usage) else transcript.system or "You are a coding agent."
    times = transcript.times if transcript.times and len(transcript.times) == len(messages) \
        else None
    # extracted facts are pieces of the history's own text (each a substring of a text or
    # tool_result piece of the message that states it): a last view that is the history's
    # own messages holds every due one (``tests/test_retention.py`` checks the property)
    own_facts = facts is None
    facts = list(extract_facts(messages) if facts is None else facts)
    request_times = ([times[i] - times[points[0]] for i in points] if times else None)
    memo = None if keep_views or reference else _memo(messages)
    bound = masking_bound(messages, points, model=model, system=system, times=request_times,
                          memo=memo)
    context = {"summarize": summarize, "system": system, "model": model}
    due = [f for f in facts if f.message < (points[-1] if points else 0)]
    # policies often end on the same last view (raw, server_clear below its trigger, ...):
    # count the facts in each last-view text once (by object, held: the fast replay shares one
    # text between equal views, and hashing a whole view's text costs a pass over it)
    kept_in: dict[int, tuple[str, int]] = {}
    history = messages[:points[-1]] if points and own_facts else None
    report_rows = []
    runs = None if keep_views or reference else _fast_runs(messages, specs, context, model,
                                                          system, times, memo)
    for k, spec in enumerate(specs):
        if runs is None:
            records = replay_with_cache(messages, model=model, policy=spec.make(context),
                                        server_edit=spec.server_edit, system=system,
                                        resume=spec.resume, times=times, keep_views=True,
                                        gap_seconds=GAP_SECONDS)
            usages, costs = [r["usage"] for r in records], [r["cost_usd"] for r in records]
            total = sum_usage(usages)
            text = view_text(records[-1]["view"]) if records else ""
        else:
            run = runs[k]
            usages, costs, total, text = run.usage, run.cost_usd, run.total, run.last_text
            if history is not None and id(text) not in kept_in and \
                    same_objects(run.last_view, history):
                kept_in[id(text)] = (text, len(due))  # = sum(facts_in_text(text, due))
        usd = sum(costs)
        if id(text) not in kept_in:
            kept_in[id(text)] = (text, sum(facts_in_text(text, due)))
        row = {"name": spec.name,
               "tokens_sent": total["input_tokens"] + total["cache_creation_input_tokens"]
               + total["cache_read_input_tokens"],
               "usd": usd, "hit_rate": cache_hit_rate(total),
               "cache_breaks": cache_breaks(usages),
               "retained_facts": kept_in[id(text)][1], "total_facts": len(due),
               "vs_best": usd / bound.usd if bound.usd else None}
        if keep_views:
            row["records"] = records
        report_rows.append(row)
    return {
        "path": str(transcript.path) if transcript.path else None,
        "format": transcript.source_format, "model": model,
        "recorded_model": transcript.model,   # as the file names it; None when it does not
        "overhead_tokens": tokens,
        "estimator_median_abs_error": median_error,
        "requests": rows,
        "bound": {"usd": bound.usd, "moves": list(bound.moves), "schedule": list(bound.schedule),
                  "request_usd": list(bound.request_usd)},
        "facts": [{"text": f.text, "kind": f.kind, "proof": f.proof, "message": f.message}
                  for f in facts],  # dataclasses.asdict(f), without its deep copy
        "policies": report_rows,
        "recorded": recorded_row(usage or (), len(points), model),
        "generated": is_generated(messages),
        "compactions": int((transcript.info or {}).get("compactions") or 0),
        "repairs": list(getattr(transcript, "repairs", None) or ()),
    }


def _fast_runs(messages, specs, context, model, system, times, memo) -> list:
    """Every policy's :class:`~mini_agent.core.fast_replay.FastReplay`, replayed side by side
    (:func:`~mini_agent.core.fast_replay.replay_runs`: policies share the work while their
    requests agree; a policy the fast path does not model gets the reference's figures)."""
    runs = [ReplayRun(spec.make(context), spec.server_edit, spec.resume,
                      lambda spec=spec: spec.make(context)) for spec in specs]
    return replay_runs(messages, runs, model=model, system=system, times=times,
                       gap_seconds=GAP_SECONDS, memo=memo)


def _memo(messages):
    try:
        return BlockMemo(messages)
    except Unsupported:
        return None

