"""Every public history transformation and view policy, as fuzz targets checked by ``api_rules``.

A target takes a generated history (see ``strategies.build_hostile_history``) and returns the
request bodies the kit would send from it; :func:`check` runs every target on one history and
returns ``(pairs_checked, failures)``: a failure is ``(target, problem, history)`` where
problem is a sentence of ``api_rules.request_problems`` (or an exception the target raised,
or a broken promise such as a resume that is not the identity). Views are checked as the next
request would carry them (``api_rules.continued``), with and without the kit's cache
breakpoints. Shared by ``tests/test_fuzz.py`` (small budget) and ``benchmarks/fuzz.py``.
"""

from __future__ import annotations

import copy
import json
import random
import tempfile
from pathlib import Path
from typing import Any, Callable

from api_rules import continued, request_problems
from strategies import RandomSource, Source, build_reply_pieces

from mini_agent.core.cache import place_breakpoints
from mini_agent.core.cache_policies import PaybackMasking, ResumeBreakpoints
from mini_agent.core.compact_policy import CompactPolicy, CompactThresholds, reactive_compact
from mini_agent.core.compaction import auto_compact, context_collapse, micro_compact
from mini_agent.core.continuation import auto_continue, merge_pieces
from mini_agent.core.hook_output import check_result, parse_hook_output, tool_output_problem
from mini_agent.core.lifecycle import LifecyclePolicy, LifecycleThresholds, lifecycle_view
from mini_agent.harness.cold_store import ColdStore
from mini_agent.core.masking import ChunkedMasking, ThresholdMasking, mask_old_observations
from mini_agent.core.server_compaction import apply_compaction_blocks
from mini_agent.core.context_edits import apply_clear_tool_uses, clear_tool_uses_edit
from mini_agent.core.session_entries import history_to_entries, rebuild_history
from mini_agent.harness.session import SessionWriter, resume_session
from mini_agent.core.view import ViewContext, chain, full_view

MODEL = "claude-sonnet-4-6"
TOOLS = [{"name": n, "description": f"{n} tool", "input_schema": {"type": "object"}}
         for n in ("read_file", "grep", "glob", "list_dir", "run_bash", "edit_file")]
SYSTEMS: list[Any] = [
    None, "You are a careful coding agent.",
    [{"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}},
     {"type": "text", "text": "today: 2026-12-01"}],
    [{"type": "text", "text": "long-lived rules", "cache_control": {"type": "ephemeral",
                                                                    "ttl": "1h"}}]]


def summarize(messages: list[dict]) -> str:
    """A summariser stand-in: deterministic, non-empty, mentions the span."""
    return f"Summary of {len(messages)} messages."


def _times(history: list[dict]) -> list[float]:
    return [1_767_225_600.0 + 60.0 * i for i in range(len(history))]


def _ctx(history: list[dict]) -> ViewContext:
    times = _times(history)
    return ViewContext(times=tuple(times), now=(times[-1] if times else 0.0) + 7200.0,
                       turn=len(history))


def _policies() -> dict[str, Callable]:
    small = CompactThresholds(micro_compact_tokens=300, context_collapse_tokens=600,
                              auto_compact_tokens=900)
    tiers = LifecycleThresholds(hot_exchanges=1, warm_a_exchanges=2, warm_b_exchanges=3,
                                view_budget_tokens=400)
    return {
        "full_view": full_view,
        "ThresholdMasking": ThresholdMasking(keep=1, threshold_tokens=100),
        "ChunkedMasking": ChunkedMasking(keep=1, chunk=2, threshold_tokens=100),
        "PaybackMasking": PaybackMasking(keep=1, min_free_tokens=20, min_cacheable_tokens=0,
                                         min_free_ratio=0.1),
        "CompactPolicy": CompactPolicy(small, summarize=summarize, max_age_seconds=60),
        "CompactPolicy(no summary)": CompactPolicy(small, max_age_seconds=60),
        "LifecyclePolicy": LifecyclePolicy(tiers, store=ColdStore()),
        "chain(masking, compaction)": chain(ThresholdMasking(keep=2, threshold_tokens=200),
                                            CompactPolicy(small, summarize=summarize)),
    }


def _functions(history: list[dict]) -> dict[str, Callable[[], list[dict]]]:
    times = _times(history)
    return {
        "mask_old_observations(keep=0)": lambda: mask_old_observations(history, keep=0),
        "mask_old_observations(keep=2)": lambda: mask_old_observations(
            history, keep=2, exclude_tools=("grep",)),
        "micro_compact": lambda: micro_compact(history, times=times, now=times[-1] + 7200.0,
                                               max_age_seconds=60),
        "context_collapse": lambda: context_collapse(history, keep_recent_tokens=200),
        "auto_compact": lambda: auto_compact(history, summarize=summarize),
        "reactive_compact": lambda: reactive_compact(history, _ctx(history),
                                                     summarize=summarize,
                                                     keep_recent_tokens=200),
        "lifecycle_view": lambda: lifecycle_view(history, times=times, thresholds=(
            LifecycleThresholds(hot_exchanges=1, warm_a_exchanges=2, warm_b_exchanges=3)))[0],
        "apply_compaction_blocks": lambda: apply_compaction_blocks(history),
    }


class Fuzz:
    """Runs every target on histories; counts pairs and keeps failures."""

    def __init__(self, src: Source, *, max_failures_kept: int = 20) -> None:
        self.src = src
        self.pairs = 0
        self.failures: list[tuple[str, str, Any]] = []
        self.failure_count = 0
        self.max_failures_kept = max_failures_kept
        self.per_target: dict[str, int] = {}

    # ------------------------------------------------------------------ bookkeeping
    def _fail(self, target: str, problem: str, history: Any) -> None:
        self.failure_count += 1
        if len(self.failures) < self.max_failures_kept:
            self.failures.append((target, problem, history))

    def _request(self, target: str, messages: list[dict], history: Any, *,
                 system: Any = None, tools: Any = None, completed: bool = True) -> None:
        body: dict[str, Any] = {"model": MODEL, "max_tokens": 1024,
                                "messages": continued(messages) if completed else messages}
        if system is not None:
            body["system"] = system
        if tools:
            body["tools"] = tools
        problems = request_problems(body)
        if problems:
            self._fail(target, problems[0], history)

    def _run(self, target: str, history: Any, fn: Callable[[], None]) -> None:
        self.pairs += 1
        self.per_target[target] = self.per_target.get(target, 0) + 1
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - a crash is a finding
            self._fail(target, f"raised {type(exc).__name__}: {exc}", history)

    # ------------------------------------------------------------------ targets
    def history(self, history: list[dict]) -> None:
        """Every transformation, policy and breakpoint planner on one history."""
        frozen = json.dumps(history, sort_keys=True)
        src = self.src
        for name, fn in _functions(history).items():
            self._run(name, history, lambda fn=fn, name=name: self._request(name, fn(), history))
        ctx = _ctx(history)
        for name, policy in _policies().items():
            def view(policy=policy, name=name) -> None:
                out = policy(list(history), ctx)
                self._request(name, out, history)
                system, tools = src.choice(SYSTEMS), TOOLS if src.boolean() else None
                request = {"model": MODEL, "max_tokens": 64, "messages": continued(out)}
                if system is not None:
                    request["system"] = copy.deepcopy(system)
                if tools:
                    request["tools"] = tools
                ttl, static = src.choice((("5m", None), ("1h", None), ("5m", "1h"),
                                          ("1h", "1h")))
                cached = place_breakpoints(request, ttl=ttl, static_ttl=static, canonical=True,
                                           anchors=True)
                self._request(f"{name} + place_breakpoints", cached["messages"], history,
                              system=cached.get("system"), tools=cached.get("tools"),
                              completed=False)
            self._run(name, history, view)
        self._run("ResumeBreakpoints", history, lambda: self._resume_breakpoints(history))
        self._run("apply_clear_tool_uses", history, lambda: self._clear(history))
        self._run("session round trip", history, lambda: self._round_trip(history))
        if json.dumps(history, sort_keys=True) != frozen:
            self._fail("inputs", "a transformation mutated its input history", history)

    def _resume_breakpoints(self, history: list[dict]) -> None:
        planner = ResumeBreakpoints(ttl=self.src.choice(("5m", "1h")))
        system = copy.deepcopy(self.src.choice(SYSTEMS))
        ends = [i + 1 for i, m in enumerate(history) if m["role"] == "user"] or [len(history)]
        for end in ends[-3:]:
            view = mask_old_observations(history[:end], keep=2)
            request = {"model": MODEL, "max_tokens": 64, "messages": continued(view)}
            if system is not None:
                request["system"] = copy.deepcopy(system)
            out = planner(request)
            self._request("ResumeBreakpoints", out["messages"], history,
                          system=out.get("system"), completed=False)

    def _clear(self, history: list[dict]) -> None:
        edit = clear_tool_uses_edit(trigger_input_tokens=1, keep=self.src.integer(0, 3))
        request = {"model": MODEL, "max_tokens": 64, "messages": continued(history)}
        out, _ = apply_clear_tool_uses(request, edit)
        self._request("apply_clear_tool_uses", out["messages"], history, completed=False)

    def _round_trip(self, history: list[dict]) -> None:
        entries = history_to_entries(history, _times(history))
        rebuilt, times, _ = rebuild_history(entries)
        if json.dumps(rebuilt) != json.dumps(history) and history[-1]["role"] == "user":
            self._fail("session round trip", "rebuild_history(history_to_entries(h)) != h",
                       history)
        self._request("session round trip", rebuilt, history)
        cut = self.src.integer(0, len(entries))
        prefix, _, _ = rebuild_history(entries[:cut])
        if prefix:
            self._request("session crash cut", prefix, history)

    def pieces(self, history: list[dict]) -> None:
        """merge_pieces and auto_continue on reply pieces with whitespace."""
        pieces = build_reply_pieces(self.src)
        base = continued(history)

        def merged() -> None:
            content = merge_pieces(pieces)
            if content:
                self._request("merge_pieces", [*base, {"role": "assistant",
                                                       "content": content}], history)

        def continued_reply() -> None:
            client = _PiecesClient(pieces)
            result = auto_continue(client, model=MODEL, max_tokens=64, messages=base)
            for sent in client.requests:
                self._request("auto_continue (sent)", sent["messages"], history,
                              completed=False)
            if result["content"]:
                self._request("auto_continue", [*base, {"role": "assistant",
                                                        "content": result["content"]}], history)
        self._run("merge_pieces", pieces, merged)
        self._run("auto_continue", pieces, continued_reply)

    def hook_output(self, rng: random.Random) -> None:
        """Hostile hook output: parse never raises but TypeError for a non-object, and what
        it keeps is valid tool output."""
        data = _hostile_json(rng, depth=0)
        if rng.random() < 0.7:
            data = {"hookSpecificOutput": {"hookEventName": rng.choice(
                ("PreToolUse", "PostToolUse", "Stop")), "updatedToolOutput": data,
                "permissionDecision": _hostile_json(rng, 1)}, "decision": _hostile_json(rng, 1)}

        def parse() -> None:
            try:
                result = parse_hook_output(data, event=rng.choice(("PreToolUse", "PostToolUse")))
            except TypeError:
                if isinstance(data, dict):
                    raise
                return
            result = check_result(result)
            if result.updated_output is not None and tool_output_problem(result.updated_output):
                raise AssertionError("kept an invalid updatedToolOutput")
            if result.updated_output is not None:
                self._request("hook output", [
                    {"role": "user", "content": "go"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1",
                                                       "name": "grep", "input": {}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                                  "content": result.updated_output}]}], data)
            if result.permission_decision not in (None, "allow", "deny", "ask"):
                raise AssertionError(f"kept permissionDecision {result.permission_decision!r}")
        self._run("hook output", data, parse)

    def session_file(self, history: list[dict], folder: Path) -> None:
        """Write the history as a session, damage one byte, resume: the damage is reported
        and the resumed history is valid."""
        rng = random.Random(self.src.integer(0, 2**31))

        def damaged() -> None:
            with SessionWriter(folder, "fuzz") as writer:
                for entry in history_to_entries(history, _times(history)):
                    writer.append(entry)
            raw = writer.path.read_bytes()
            at = rng.randrange(len(raw))
            if raw[at] == 10:
                at = max(0, at - 1)
            if rng.random() < 0.5:
                raw = raw[:at] + raw[at + 1:]
            else:
                raw = raw[:at] + bytes([raw[at] ^ rng.choice((1, 2, 4, 8, 16, 32, 64, 128))]) \
                    + raw[at + 1:]
            writer.path.write_bytes(raw)
            entries, problems = resume_session(writer.path)
            if not problems and len(entries) == len(history_to_entries(history)):
                # the change went unseen: only acceptable if no entry changed at all
                if entries != [{**e} for e in history_to_entries(history, _times(history))]:
                    raise AssertionError("a damaged line was resumed as if it were whole")
            rebuilt, _, _ = rebuild_history(entries)
            if rebuilt:
                self._request("session file", rebuilt, history)
            writer.path.unlink()
        self._run("session file", history, damaged)


class _PiecesClient:
    """A sync ``messages.create`` stand-in answering the given pieces, cut by max_tokens
    except the last."""

    def __init__(self, pieces: list[list[dict]]) -> None:
        self.pieces = list(pieces)
        self.requests: list[dict] = []
        self.messages = self

    def create(self, **request: Any) -> dict:
        self.requests.append(request)
        content = self.pieces.pop(0) if self.pieces else []
        return {"content": content, "stop_reason": "max_tokens" if self.pieces else "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1}}


def _hostile_json(rng: random.Random, depth: int) -> Any:
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return rng.choice((None, True, False, 0, 5, -1.5, 10**30))
    if kind == 1:
        return rng.choice(("", " ", "\n", "deny", "allow", "ask", "block", "DENY", "テスト"))
    if kind == 2:
        return [{"type": "text", "text": rng.choice(("ok", "", " \n", "テスト"))}]
    if kind == 3:
        return [{"type": rng.choice(("bogus", "image", "tool_use", "text")),
                 "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"}}]
    if kind == 4:
        return [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}]
    if kind == 5:
        return "replaced output " * rng.randrange(1, 5)
    if kind == 6:
        return [_hostile_json(rng, depth + 1) for _ in range(rng.randrange(0, 3))]
    if kind == 7:
        return {rng.choice(("type", "text", "a", "decision")): _hostile_json(rng, depth + 1)}
    return {"type": "text", "text": _hostile_json(rng, depth + 1)}


def run(seed: int, histories: int, *, max_turns: int = 100, files_every: int = 10,
        progress: Callable[[int, Fuzz], None] | None = None) -> Fuzz:
    """Fuzz ``histories`` generated histories from ``seed``; returns the :class:`Fuzz`."""
    from strategies import build_hostile_history
    rng = random.Random(seed)
    fuzz = Fuzz(RandomSource(rng))
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(histories):
            history = build_hostile_history(fuzz.src, max_turns=max_turns)
            fuzz.history(history)
            fuzz.pieces(history)
            fuzz.hook_output(rng)
            if n % files_every == 0:
                fuzz.session_file(history, Path(tmp))
            if progress:
                progress(n, fuzz)
    return fuzz
