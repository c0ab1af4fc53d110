"""The compaction policy: cheapest stage first, measure after each, stop under the next threshold.

What this module does: :class:`CompactPolicy` runs the stages of
:mod:`mini_agent.core.compaction` in order (``micro_compact``, then ``context_collapse``, then
``auto_compact``), measuring the estimate after each and stopping as soon as it is under the
next threshold (50K / 70K / 90K tokens by default, :class:`CompactThresholds`). It is an
Agent ``view_policy``: every stage builds a VIEW, the full history stays the record. It keeps
an auto_compact summary and reuses it on later requests, stops trying auto_compact after three
failed summaries in a row, and offers ``on_context_overflow`` (:func:`reactive_compact`: the
API said "prompt is too long"; compact harder once, the Agent retries once).
What it does not do: call a model (the summariser is passed in; the model-backed one is
``harness/summarizer.py``) or read a clock (``ViewContext.now`` is passed in). Taught in
``notebooks/04_compaction.ipynb``.

Source:
    002_4516104fd432e704.txt section 3 (CompactPolicy, reactive compaction).
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, Callable, Collection, Sequence

from mini_agent.core.compaction import (CLEARABLE_TOOLS, MICRO_COMPACT_MAX_AGE_SECONDS,
                                        CompactionError, Summarize, SummaryError, auto_compact,
                                        context_collapse, micro_compact)
from mini_agent.core.exchange_counts import ExchangeCounts
from mini_agent.core.exchange_memo import chars_of
from mini_agent.core.messages import Message, answer_unanswered_tool_uses
from mini_agent.core.tokens import CHARS_PER_TOKEN, approx_request_tokens, approx_tokens
from mini_agent.core.view import ViewContext, check_times

MAX_CONSECUTIVE_SUMMARY_FAILURES = 3
"""auto_compact stops being tried after this many failures in a row (seed 002 / Claude Code)."""


class OverheadTooLargeError(CompactionError, ValueError):
    """System prompt + tool definitions alone exceed a threshold: no compaction can help."""


# --------------------------------------------------------------------------- thresholds

@dataclasses.dataclass(frozen=True)
class CompactThresholds:
    """Token thresholds (approx tokens of system + tools + messages) that start each stage.

    micro_compact runs when the estimate is >= ``micro_compact_tokens``; context_collapse
    when it is still >= ``context_collapse_tokens`` afterwards; auto_compact when still >=
    ``auto_compact_tokens``. Defaults 50K / 70K / 90K (seed 002).

    Raises:
        ValueError: unless 0 < micro <= collapse <= auto.
    """

    micro_compact_tokens: int = 50_000
    context_collapse_tokens: int = 70_000
    auto_compact_tokens: int = 90_000

    def __post_init__(self) -> None:
        if not (0 < self.micro_compact_tokens <= self.context_collapse_tokens
                <= self.auto_compact_tokens):
            raise ValueError("thresholds must satisfy 0 < micro_compact_tokens <= "
                             f"context_collapse_tokens <= auto_compact_tokens, got {self}")

    def scaled(self, factor: float) -> "CompactThresholds":
        """Scale every threshold, for small runs (notebooks use e.g. 0.05).

        Args:
            factor: the multiplier applied to each threshold.

        Returns:
            New :class:`CompactThresholds`, each value ``factor`` times this one's.
        """
        return CompactThresholds(*(max(1, round(x * factor)) for x in dataclasses.astuple(self)))


def overhead_tokens_of(*, system: Any = None, tools: list[dict] | None = None) -> int:
    """Estimate the fixed part of every request: the system prompt + tool definitions.

    Args:
        system: the request's ``system`` (a string, blocks, or None).
        tools: the tool definitions, or None.

    Returns:
        Their approx tokens.
    """
    return approx_request_tokens(messages=[], system=system, tools=tools)


# --------------------------------------------------------------------------- reactive compaction

def reactive_compact(history: list[Message], ctx: ViewContext, *,
                     summarize: Summarize | None = None, keep_recent_tokens: int = 10_000,
                     clearable_tools: Collection[str] = CLEARABLE_TOOLS) -> list[Message]:
    """Compact hard, once, after the API answered "prompt is too long" (an ``on_context_overflow``).

    Runs every stage regardless of thresholds: micro_compact with a zero age cut-off (every
    re-fetchable result is cleared), context_collapse down to ``keep_recent_tokens``, then
    auto_compact when ``summarize`` is given (a failed summary keeps the collapsed view).
    The Agent sends the result once; a second overflow is its ``ContextOverflowError``, never
    a loop.

    Args:
        history: the full history; never mutated.
        ctx: the request's :class:`ViewContext` (``times`` and ``now`` for micro_compact).
        summarize: ``messages -> str`` for auto_compact; None skips that stage.
        keep_recent_tokens: the tail context_collapse keeps, in approx tokens (default 10,000).
        clearable_tools: tools whose results micro_compact clears.

    Returns:
        A new list, the view to retry with.

    Source:
        002_4516104fd432e704.txt ("reactive compaction: catch the 413 in runLoop and run
        CompactPolicy.apply() before the retry").
    """
    times = ctx.times_for(history)
    view = micro_compact(history, times=times, now=ctx.now, max_age_seconds=-1,
                         clearable_tools=clearable_tools)
    view = context_collapse(view, keep_recent_tokens=keep_recent_tokens)
    if summarize is not None:
        try:
            view = auto_compact(view, summarize=summarize)
        except SummaryError:
            pass
    return view


# --------------------------------------------------------------------------- the policy

class CompactPolicy:
    """Cheapest stage first, measure after each, stop under the next threshold; records each run.

    Use as an Agent ``view_policy`` (``policy(history, ctx) -> view``) and, for reactive
    compaction, ``on_context_overflow=policy.on_context_overflow``. Each call appends to
    ``policy.records`` one dict (``turn`` is the request number)::

        {"turn": int, "raw_tokens": int, "tokens_before": int, "tokens_after": int,
         "stage": "none" | "micro_compact" | "context_collapse" | "auto_compact" | "reactive",
         "stages": [{"stage": str, "tokens_before": int, "tokens_after": int,
                     "failed": str (only on a failed summary)}]}

    (tokens are approx tokens including ``overhead_tokens``). An auto_compact summary is kept
    and reused on later requests (a new one is written only when the view again crosses
    ``auto_compact``), as Claude Code does, so a summary costs one generation, not one per
    request; it is dropped if the history no longer starts with the messages it summarised.
    After ``max_consecutive_failures`` failed summaries auto_compact is no longer tried. When
    a summary leaves the view still at or above the auto_compact threshold (a system prompt
    and tools just under it), the next one waits until the view has grown by the larger of
    that summary's size and the context_collapse-to-auto_compact gap (a stage entry with
    ``"skipped"`` says so), instead of summarising again on every request.

    Args:
        thresholds: the three :class:`CompactThresholds`.
        summarize: ``messages -> str``, or None for no auto_compact stage.
        overhead_tokens: approx tokens of the system prompt + tools (see
            :func:`overhead_tokens_of`).
        max_age_seconds: micro_compact's cut-off age in seconds.
        clearable_tools: tools whose results micro_compact may clear.
        collapse_keep_recent_tokens: tail budget of context_collapse (default: half the
            micro_compact threshold).
        max_consecutive_failures: failed summaries in a row after which auto_compact stops (3).

    Raises:
        OverheadTooLargeError: (at construction) ``overhead_tokens`` alone is at or above the
            micro_compact threshold: every request would compact and never get under it.

    Source:
        002_4516104fd432e704.txt section 3 (CompactPolicy.apply).
    """

    def __init__(self, thresholds: CompactThresholds = CompactThresholds(), *,
                 summarize: Summarize | None = None, overhead_tokens: int = 0,
                 max_age_seconds: float = MICRO_COMPACT_MAX_AGE_SECONDS,
                 clearable_tools: Collection[str] = CLEARABLE_TOOLS,
                 collapse_keep_recent_tokens: int | None = None,
                 max_consecutive_failures: int = MAX_CONSECUTIVE_SUMMARY_FAILURES) -> None:
        if overhead_tokens >= thresholds.micro_compact_tokens:
            raise OverheadTooLargeError(
                f"system prompt + tools alone are ~{overhead_tokens} tokens, at or above the "
                f"micro_compact threshold ({thresholds.micro_compact_tokens}): compacting "
                "messages cannot bring requests under it. Shorten the system prompt or offer fewer "
                "tools, or raise the thresholds.")
        self.thresholds = thresholds
        self.summarize = summarize
        self.overhead_tokens = overhead_tokens
        self.max_age_seconds = max_age_seconds
        self.clearable_tools = frozenset(clearable_tools)
        self.collapse_keep_recent_tokens = (thresholds.micro_compact_tokens // 2
                                            if collapse_keep_recent_tokens is None
                                            else collapse_keep_recent_tokens)
        self.max_consecutive_failures = max_consecutive_failures
        self.consecutive_failures = 0
        self.records: list[dict[str, Any]] = []
        self._summary: dict[str, Any] | None = None  # {"cut", "message", "fingerprint"}
        self._counts = ExchangeCounts()  # running character counts of the history

    # -- state of a kept summary --------------------------------------------------------
    @staticmethod
    def _fingerprint(message: Message) -> str:
        return json.dumps(message, sort_keys=True, ensure_ascii=False)

    def _base(self, history: list[Message], times: Sequence[float]
              ) -> tuple[list[Message], Sequence[float], int]:
        """``(base, base_times, offset)``: the history with a kept summary in front, if valid."""
        s = self._summary
        if s and len(history) > s["cut"] and self._fingerprint(history[s["cut"] - 1]) == \
                s["fingerprint"]:
            cut = s["cut"]
            return [s["message"], *history[cut:]], [times[cut], *times[cut:]], cut
        self._summary = None
        return list(history), times, 0

    def _tokens(self, messages: list[Message]) -> int:
        return approx_tokens(messages) + self.overhead_tokens

    def _base_tokens(self, base: list[Message], offset: int, n: int) -> int:
        """``self._tokens(base)`` of :meth:`_base`'s view of ``history[:n]``, from the running
        counts (``self._counts`` updated with that history): no message is counted again."""
        chars, images = self._counts.chars(offset, n)
        if len(base) > n - offset:  # the kept summary in front
            c, im = chars_of(base[:len(base) - (n - offset)])
            chars, images = chars + c, images + im
        return math.ceil(chars / CHARS_PER_TOKEN) + images + self.overhead_tokens

    # -- the pipeline -------------------------------------------------------------------
    def apply(self, history: list[Message], *, times: Sequence[float], now: float,
              turn: int = 1) -> tuple[list[Message], dict[str, Any]]:
        """Build the view for one request (the record is not appended here).

        Args:
            history: the full history; never mutated.
            times: Unix seconds at which each message was appended, parallel to ``history``.
            now: the current time in seconds.
            turn: the 1-based request number, copied into the record.

        Returns:
            ``(view, record)``, the record in the shape the class docstring shows.

        Raises:
            ValueError: ``times`` is not parallel to ``history``.
        """
        if len(times) != len(history):
            check_times(history, times)   # raises
        th = self.thresholds
        # self._base_tokens(history, 0, len(history)), with the counts taken in one call
        chars, images = self._counts.tail_chars(history, 0)
        raw = math.ceil(chars / CHARS_PER_TOKEN) + images + self.overhead_tokens
        if self._summary is None and raw < th.micro_compact_tokens:
            # no kept summary (``_base`` gives a copy of history) and no stage runs
            return list(history), {"turn": turn, "raw_tokens": raw, "tokens_before": raw,
                                   "tokens_after": raw, "stages": [], "stage": "none"}
        base, base_times, offset = self._base(history, times)
        if not offset and raw < th.micro_compact_tokens:  # no stage runs: the record below
            return base, {"turn": turn, "raw_tokens": raw, "tokens_before": raw,
                          "tokens_after": raw, "stages": [], "stage": "none"}
        stages: list[dict[str, Any]] = []
        view = base
        tokens = self._base_tokens(base, offset, len(history)) if offset else raw
        if offset:
            stages.append({"stage": "reuse_summary", "tokens_before": raw, "tokens_after": tokens})

        def step(name: str, new_view: list[Message]) -> None:
            nonlocal view, tokens
            after = self._tokens(new_view)
            stages.append({"stage": name, "tokens_before": tokens, "tokens_after": after})
            view, tokens = new_view, after

        if tokens >= th.micro_compact_tokens:
            step("micro_compact", micro_compact(view, times=base_times, now=now,
                                                max_age_seconds=self.max_age_seconds,
                                                clearable_tools=self.clearable_tools))
            micro_view = view
            if tokens >= th.context_collapse_tokens:
                step("context_collapse", context_collapse(
                    view, keep_recent_tokens=self.collapse_keep_recent_tokens))
                if tokens >= th.auto_compact_tokens:
                    self._auto(micro_view, offset, history, stages, step)
        record = {"turn": turn, "raw_tokens": raw, "tokens_before": raw,
                  "tokens_after": tokens, "stages": stages,
                  "stage": next((s["stage"] for s in reversed(stages)
                                 if "failed" not in s and "skipped" not in s
                                 and s["stage"] != "reuse_summary"),
                                "none")}
        return view, record

    def _auto(self, micro_view: list[Message], offset: int, history: list[Message],
              stages: list[dict[str, Any]], step: Callable) -> None:
        """Run auto_compact on the micro-compacted view (it sees what the collapse dropped)."""
        if self.summarize is None:
            return
        wait = self._resummary_wait(stages[-1]["tokens_after"])
        if wait:
            stages.append({"stage": "auto_compact", "tokens_before": stages[-1]["tokens_after"],
                           "tokens_after": stages[-1]["tokens_after"],
                           "skipped": f"the kept summary already left the view above the "
                                      f"threshold; {wait} more tokens before a new one"})
            return
        if self.consecutive_failures >= self.max_consecutive_failures:
            stages.append({"stage": "auto_compact", "tokens_before": stages[-1]["tokens_after"],
                           "tokens_after": stages[-1]["tokens_after"],
                           "failed": f"disabled after {self.consecutive_failures} "
                                     "consecutive failures"})
            return
        try:
            compacted = auto_compact(micro_view, summarize=self.summarize)
        except SummaryError as exc:
            self.consecutive_failures += 1
            stages.append({"stage": "auto_compact", "tokens_before": stages[-1]["tokens_after"],
                           "tokens_after": stages[-1]["tokens_after"], "failed": str(exc)})
            return
        self.consecutive_failures = 0
        if compacted is micro_view or len(compacted) == len(micro_view):
            return  # nothing to summarise
        added = len(answer_unanswered_tool_uses(micro_view)) - len(micro_view)
        kept_tail = len(compacted) - 1 - added  # messages answering a lost call are new
        cut = len(history) - kept_tail  # history index of the first kept message
        self._summary = {"cut": cut, "message": compacted[0],
                         "fingerprint": self._fingerprint(history[cut - 1]),
                         "view_tokens": self._tokens(compacted),
                         "summary_tokens": approx_tokens([compacted[0]])}
        step("auto_compact", compacted)

    def _resummary_wait(self, tokens: int) -> int:
        """Tokens the view must still grow before a kept summary may be replaced (0: now).

        A summary that left the view at or above the auto_compact threshold (system prompt
        and tools close to it) would be rewritten on every request, each time from almost
        the same messages. It is rewritten only once the view has grown by the larger of the
        summary's own size and the gap between the context_collapse and auto_compact
        thresholds."""
        s = self._summary
        if not s or s.get("view_tokens", 0) < self.thresholds.auto_compact_tokens:
            return 0
        gap = self.thresholds.auto_compact_tokens - self.thresholds.context_collapse_tokens
        return max(0, s["view_tokens"] + max(s["summary_tokens"], gap) - tokens)

    def __call__(self, history: list[Message], ctx: ViewContext) -> list[Message]:
        """View policy entry point: apply, append the record, return the view."""
        times = ctx.times   # ctx.times_for(history), inlined
        if len(times) != len(history):
            times = (ctx.now,) * len(history)
        view, record = self.apply(history, times=times, now=ctx.now, turn=ctx.turn)
        self.records.append(record)
        return view

    def on_context_overflow(self, history: list[Message],
                            ctx: ViewContext) -> list[Message]:
        """Compact hard once for the Agent after "prompt is too long".

        Runs :func:`reactive_compact` with this policy's summariser (unless disabled by failures)
        and appends a record with stage "reactive".

        Args:
            history: the full history; never mutated.
            ctx: the failed request's :class:`ViewContext`.

        Returns:
            The view to retry with.
        """
        summarize = (self.summarize if self.consecutive_failures < self.max_consecutive_failures
                     else None)
        before = self._tokens(history)
        keep_tokens = max(1, self.thresholds.micro_compact_tokens // 4)
        view = reactive_compact(history, ctx, summarize=summarize, keep_recent_tokens=keep_tokens,
                                clearable_tools=self.clearable_tools)
        after = self._tokens(view)
        self.records.append({"turn": ctx.turn, "raw_tokens": before, "tokens_before": before,
                             "tokens_after": after, "stage": "reactive",
                             "stages": [{"stage": "reactive", "tokens_before": before,
                                         "tokens_after": after}]})
        return view
