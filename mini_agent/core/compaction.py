"""Multi-stage compaction: try the cheapest way to shrink the context first, measure, stop early.

Three stages, cheapest first (seed 002, section 3):

==================  ===========================================  ==================================
stage               what it does                                 what is lost
==================  ===========================================  ==================================
``micro_compact``   tool results older than 60 minutes from      old outputs of re-fetchable
                    re-fetchable read-only tools become          read-only tools (read the file
                    ``[Old tool result content cleared]``        again to get them back)
``context_collapse`` the early conversation becomes one fixed    most of the old conversation
                    notice; the task (first user message) stays
``auto_compact``    a structured summary written by the model    everything but the summary and
                    replaces the history                         the newest exchange
==================  ===========================================  ==================================

:class:`CompactPolicy` runs them in that order, measuring after each, and stops as soon as the
estimate is under the next threshold (50K / 70K / 90K tokens by default). It is an Agent
``view_policy``: every stage builds a VIEW, the full history stays the record. It also offers
``on_context_overflow`` (reactive compaction: the API said "prompt is too long"; compact harder
once, the Agent retries once). Kit facts (when a tool result arrived) come from
``ViewContext.times``, never from keys inside blocks: the API rejects unknown keys.

Pure (the model-backed summariser is ``harness/summarizer.py``). Taught in
``notebooks/04_compaction.ipynb``. Sources: 002_4516104fd432e704.txt section 3 (microCompact,
contextCollapse, autoCompact, CompactPolicy, reactive compaction); 004_b74ef821c58ee4ec.txt
(what a good compaction keeps: decisions, open bugs, exact details); API analogue: the
server-side compaction edit ``compact_20260112`` (simulated in ``offline/compaction_edit.py``).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable, Collection, Iterable, Sequence

from mini_agent.core.cache import CLEARED_TOOL_RESULT
from mini_agent.core.messages import (MessageParam, content_blocks, text_block, tool_names_by_id,
                                      tool_result_text)
from mini_agent.core.tokens import approx_request_tokens, approx_tokens
from mini_agent.core.view import ViewContext

CLEARED_PLACEHOLDER = CLEARED_TOOL_RESULT
"""What an old, re-fetchable tool result's content becomes: ``"[Old tool result content
cleared]"`` (seed 002, microCompact; the same text as server-side clearing)."""

CLEARABLE_TOOLS = frozenset({
    "read_file", "list_dir", "grep", "glob", "web_fetch",   # the kit's names
    "Read", "LS", "Grep", "Glob", "WebFetch",               # Claude Code's names (transcripts)
})
"""Read-only tools whose output can be fetched again, so clearing it loses nothing for good.
run_bash and write tools are absent on purpose: their output records side effects."""

MICRO_COMPACT_MAX_AGE_SECONDS = 60 * 60
"""Tool results older than this (strictly) are cleared: 60 minutes (seed 002)."""

COLLAPSE_NOTICE = ("[Earlier conversation collapsed to save context. The task above is the "
                   "original request; re-read files or re-run commands if you need details "
                   "from before this point.]")
"""The one fixed notice that replaces the early conversation (seed 002, contextCollapse)."""

SUMMARY_PREFIX = "[Summary of the conversation so far, written at compaction]\n"
"""First line of the user message that carries an auto_compact summary."""

SUMMARY_PROMPT = """\
Write a summary of the conversation above so that work can continue from it alone. The \
conversation will be replaced by your summary, so anything you leave out is lost. Use exactly \
these sections:

## Task
The user's original request, restated completely (goal, constraints, acceptance criteria).
## Decisions
Every decision made and the reason for it, including rules agreed with the user.
## Current state
What is done, what is in progress, what has been verified (tests run, results).
## Identifiers
Exact file paths, function and class names, commands, error messages, numbers and ids, copied \
character for character.
## Open problems
Bugs, failures and questions not yet resolved.
## Next steps
The concrete next actions, in order.

Prefer completeness over brevity; never invent facts that are not in the conversation."""
"""The structured summary prompt for auto_compact (seed 004: keep decisions, open bugs and
implementation details; tune for recall first, then precision)."""

MAX_CONSECUTIVE_SUMMARY_FAILURES = 3
"""auto_compact stops being tried after this many failures in a row (seed 002 / Claude Code)."""


class CompactionError(RuntimeError):
    """Compaction cannot proceed: a summary failed, or the fixed overhead leaves no room."""


class SummaryError(CompactionError):
    """The summariser raised or returned an empty summary."""


class OverheadTooLargeError(CompactionError, ValueError):
    """System prompt + tool definitions alone exceed a threshold: no compaction can help."""


# --------------------------------------------------------------------------- helpers

def _check_times(messages: Sequence[MessageParam], times: Sequence[float]) -> None:
    if len(times) != len(messages):
        raise ValueError(f"times must be parallel to messages: {len(times)} times for "
                         f"{len(messages)} messages")


def clean_cut_points(messages: Sequence[MessageParam]) -> list[int]:
    """Indexes ``c >= 1`` where ``messages[c:]`` can follow a user message and stay valid.

    A cut is clean when ``messages[c]`` is an assistant message: every ``tool_use`` before
    ``c`` was answered in the user message just before ``c``, and every ``tool_result`` at
    or after ``c`` answers a ``tool_use`` at or after ``c``, so no pair is split.

    >>> clean_cut_points([{"role": "user", "content": "a"}, {"role": "assistant",
    ...     "content": "b"}, {"role": "user", "content": "c"}])
    [1]
    """
    return [i for i in range(1, len(messages)) if messages[i].get("role") == "assistant"]


def _with_text(message: MessageParam, text: str) -> MessageParam:
    """A copy of a user message with a text block appended (content normalised to blocks)."""
    return {"role": message["role"], "content": [*content_blocks(message), text_block(text)]}


def _ends_with_text(message: MessageParam, text: str) -> bool:
    blocks = content_blocks(message)
    return bool(blocks) and blocks[-1].get("type") == "text" and blocks[-1].get("text") == text


# --------------------------------------------------------------------------- stage 1

def micro_compact(messages: list[MessageParam], *, times: Sequence[float], now: float,
                  max_age_seconds: float = MICRO_COMPACT_MAX_AGE_SECONDS,
                  clearable_tools: Collection[str] = CLEARABLE_TOOLS) -> list[MessageParam]:
    """Clear the content of old tool results from re-fetchable read-only tools.

    A ``tool_result`` in ``messages[i]`` is cleared when ``now - times[i] > max_age_seconds``
    and the tool that produced it (found through the matching ``tool_use``) is in
    ``clearable_tools``; it becomes ``{**block, "content": "[Old tool result content
    cleared]"}`` (``tool_use_id`` and ``is_error`` kept). A result exactly ``max_age_seconds``
    old is kept; results of other tools (run_bash, edit_file...) and of unknown tools are kept.
    Clearing twice gives the same view as once; a result shorter than the placeholder is kept.

    Returns a new list of the same length (changed messages are new dicts, the others are the
    input's own objects); the input is not mutated.
    Args: times: Unix seconds each message was appended (``ViewContext.times``, parallel to
    ``messages``); now: current time in seconds; max_age_seconds: the cut-off;
    clearable_tools: names of tools whose results may be cleared.
    Raises: ValueError if ``len(times) != len(messages)``; TypeError if clearable_tools is a str.
    Source: 002_4516104fd432e704.txt section 3 (microCompact, CLEARABLE_TOOLS, 60 minutes).

    >>> h = [{"role": "user", "content": "go"},
    ...      {"role": "assistant", "content": [{"type": "tool_use", "id": "t1",
    ...                                         "name": "read_file", "input": {}}]},
    ...      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
    ...                                    "content": "x" * 100}]}]
    >>> micro_compact(h, times=[0, 0, 0], now=3601)[2]["content"][0]["content"]
    '[Old tool result content cleared]'
    """
    _check_times(messages, times)
    if isinstance(clearable_tools, str):
        raise TypeError("clearable_tools must be a collection of tool names, not a str")
    names = tool_names_by_id(messages)
    clearable = frozenset(clearable_tools)
    view = list(messages)
    for i, message in enumerate(messages):
        content = message.get("content")
        if message.get("role") != "user" or isinstance(content, str):
            continue
        if now - times[i] <= max_age_seconds:
            continue
        new_content = None
        for j, block in enumerate(content):
            if block.get("type") != "tool_result" or block.get("content") == CLEARED_PLACEHOLDER:
                continue
            if names.get(block.get("tool_use_id")) not in clearable:
                continue
            if approx_tokens(block) <= approx_tokens(CLEARED_PLACEHOLDER):
                continue
            if new_content is None:
                new_content = list(content)
            new_content[j] = {**block, "content": CLEARED_PLACEHOLDER}
        if new_content is not None:
            view[i] = {**message, "content": new_content}
    return view


# --------------------------------------------------------------------------- stage 2

def context_collapse(messages: list[MessageParam], *, keep_last: int = 4,
                     keep_recent_tokens: int | None = None) -> list[MessageParam]:
    """Replace the early conversation by one fixed notice, keeping the task and a recent tail.

    The view is ``[first user message + COLLAPSE_NOTICE, *messages[c:]]``: the task (its
    content as blocks, then one text block :data:`COLLAPSE_NOTICE`) and the tail from a clean
    cut ``c > 1`` (see :func:`clean_cut_points`: ``messages[c]`` is an assistant message, so
    no ``tool_use`` is separated from its ``tool_result``). Which cut:

    * by default the LATEST clean cut ``<= len(messages) - keep_last`` (at least the last
      ``keep_last`` messages stay); none: a copy of ``messages`` unchanged;
    * with ``keep_recent_tokens`` (what :class:`CompactPolicy` uses) the earliest clean cut
      whose tail fits in that many approx tokens, else the newest one (the last exchange is
      always kept); nothing changes when the notice would cost more tokens than the
      messages it replaces.

    A task that already ends with the notice (a view collapsed before) does not get a second
    one, so collapsing a collapsed view with the same cut changes nothing.

    Args:
        keep_last: how many of the newest messages stay at least (>= 0).
        keep_recent_tokens: instead of ``keep_last``, a token budget for the tail (>= 0).
    Returns:
        A new list; the input (and the task's content list) is not mutated.
    Raises:
        ValueError: ``keep_last < 0`` or ``keep_recent_tokens < 0``.
    Source: 002_4516104fd432e704.txt section 3 (contextCollapse: the first half of the
    messages becomes a fixed string); exercise 04.2 (the same checks grade both).
    """
    if keep_last < 0:
        raise ValueError(f"keep_last must be >= 0, got {keep_last}")
    if keep_recent_tokens is not None and keep_recent_tokens < 0:
        raise ValueError(f"keep_recent_tokens must be >= 0, got {keep_recent_tokens}")
    cuts = clean_cut_points(messages)
    if keep_recent_tokens is None:
        cuts = [c for c in cuts if c <= len(messages) - keep_last]
    if not cuts:
        return list(messages)
    cut = cuts[-1]
    if keep_recent_tokens is not None:
        for c in cuts:  # earliest cut whose tail fits
            if approx_tokens(messages[c:]) <= keep_recent_tokens:
                cut = c
                break
    if cut <= 1:
        return list(messages)
    head = messages[0]
    if not _ends_with_text(head, COLLAPSE_NOTICE):
        head = _with_text(head, COLLAPSE_NOTICE)
    view = [head, *messages[cut:]]
    if keep_recent_tokens is not None and approx_tokens(view) >= approx_tokens(messages):
        return list(messages)  # the notice would cost more than what it replaces
    return view


# --------------------------------------------------------------------------- stage 3

Summarize = Callable[[list[MessageParam]], str]


def summary_message(summary: str) -> MessageParam:
    """The user message that carries a summary: ``{"role": "user", "content": [text]}``."""
    return {"role": "user", "content": [text_block(SUMMARY_PREFIX + summary.strip())]}


def auto_compact(messages: list[MessageParam], *, summarize: Summarize) -> list[MessageParam]:
    """Replace the history by a model-written structured summary plus the newest exchange.

    The view is ``[summary_message(summarize(messages[:c])), *messages[c:]]`` with ``c`` the
    newest clean cut (the last assistant message), so a pending tool result keeps its
    ``tool_use``. The summariser sees the part it replaces; online it is
    :func:`~mini_agent.harness.summarizer.model_summarizer` (the model with :data:`SUMMARY_PROMPT`), offline the
    deterministic ``offline.compaction_edit.structured_summary``.

    Returns a new list; the input is not mutated. Nothing to summarise (no clean cut after
    the first message) returns a copy unchanged without calling ``summarize``; a summary
    that is not smaller than what it replaces is not used (a copy is returned).
    Raises: SummaryError if ``summarize`` raises or returns an empty/blank string (the
    caller counts failures; :class:`CompactPolicy` stops after 3 in a row).
    Source: 002_4516104fd432e704.txt section 3 (autoCompact); 004_b74ef821c58ee4ec.txt.
    """
    cuts = clean_cut_points(messages)
    if not cuts or cuts[-1] <= 1:
        return list(messages)
    cut = cuts[-1]
    try:
        summary = summarize(list(messages[:cut]))
    except Exception as exc:  # noqa: BLE001 - any failure of the summariser is a failed stage
        raise SummaryError(f"summarize failed: {type(exc).__name__}: {exc}") from exc
    if not isinstance(summary, str) or not summary.strip():
        raise SummaryError("summarize returned an empty summary")
    view = [summary_message(summary), *messages[cut:]]
    if approx_tokens(view) >= approx_tokens(messages):
        return list(messages)  # a summary longer than what it replaces is not used
    return view


def render_transcript(messages: Iterable[MessageParam]) -> str:
    """Render a history as plain text lines (``role: text``, tool calls as JSON), for summaries."""
    lines = []
    for m in messages:
        for b in content_blocks(m):
            kind = b.get("type")
            if kind == "text":
                lines.append(f"{m['role']}: {b['text']}")
            elif kind == "tool_use":
                lines.append(f"{m['role']} called {b.get('name')} "
                             f"{json.dumps(b.get('input', {}), ensure_ascii=False)}")
            elif kind == "tool_result":
                flag = " (error)" if b.get("is_error") else ""
                lines.append(f"tool result{flag}: {tool_result_text(b)}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- the policy

@dataclasses.dataclass(frozen=True)
class CompactThresholds:
    """Token thresholds (approx tokens of system + tools + messages) that start each stage.

    micro_compact runs when the estimate is >= ``micro_compact``; context_collapse when it
    is still >= ``context_collapse`` afterwards; auto_compact when still >= ``auto_compact``.
    Defaults 50K / 70K / 90K (seed 002). Raises ValueError unless 0 < a <= b <= c.
    """

    micro_compact: int = 50_000
    context_collapse: int = 70_000
    auto_compact: int = 90_000

    def __post_init__(self) -> None:
        if not 0 < self.micro_compact <= self.context_collapse <= self.auto_compact:
            raise ValueError("thresholds must satisfy 0 < micro_compact <= context_collapse "
                             f"<= auto_compact, got {self}")

    def scaled(self, factor: float) -> "CompactThresholds":
        """Return the thresholds times ``factor`` (notebooks use small runs: e.g. 0.05)."""
        return CompactThresholds(*(max(1, round(x * factor)) for x in dataclasses.astuple(self)))


def overhead_tokens_of(*, system: Any = None, tools: list[dict] | None = None) -> int:
    """Approx tokens of the fixed part of every request: the system prompt + tool definitions."""
    return approx_request_tokens(messages=[], system=system, tools=tools)


def reactive_compact(history: list[MessageParam], ctx: ViewContext, *,
                     summarize: Summarize | None = None, keep_recent_tokens: int = 10_000,
                     clearable_tools: Collection[str] = CLEARABLE_TOOLS) -> list[MessageParam]:
    """Compact hard, once, after the API answered "prompt is too long" (an ``on_context_overflow``).

    Runs every stage regardless of thresholds: micro_compact with a zero age cut-off (every
    re-fetchable result is cleared), context_collapse down to ``keep_recent_tokens``, then
    auto_compact when ``summarize`` is given (a failed summary keeps the collapsed view).
    The Agent sends the result once; a second overflow is its ``ContextOverflowError``, never
    a loop. Returns a new list; ``history`` is not mutated.
    Source: 002_4516104fd432e704.txt ("reactive compaction: catch the 413 in runLoop and run
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


class CompactPolicy:
    """Cheapest stage first, measure after each, stop under the next threshold; records each run.

    Use as an Agent ``view_policy`` (``policy(history, ctx) -> view``) and, for reactive
    compaction, ``on_context_overflow=policy.on_context_overflow``. Each call appends to
    ``policy.records`` one dict::

        {"turn": int, "raw_tokens": int, "tokens_before": int, "tokens_after": int,
         "stage": "none" | "micro_compact" | "context_collapse" | "auto_compact" | "reactive",
         "stages": [{"stage": str, "tokens_before": int, "tokens_after": int,
                     "failed": str (only on a failed summary)}]}

    (tokens are approx tokens including ``overhead_tokens``). An auto_compact summary is kept
    and reused on later requests (a new one is written only when the view again crosses
    ``auto_compact``), as Claude Code does, so a summary costs one generation, not one per
    request; it is dropped if the history no longer starts with the messages it summarised.
    After ``max_consecutive_failures`` failed summaries auto_compact is no longer tried.

    Args: thresholds: :class:`CompactThresholds`; summarize: ``messages -> str`` or None
    (no auto_compact stage); overhead_tokens: system prompt + tools (see
    :func:`overhead_tokens_of`); max_age_seconds, clearable_tools: for micro_compact;
    collapse_keep_recent_tokens: tail budget of context_collapse (default: half the
    micro_compact threshold).
    Raises: OverheadTooLargeError (at construction) when ``overhead_tokens`` alone is at or
    above the micro_compact threshold: every request would compact and never get under it.
    Source: 002_4516104fd432e704.txt section 3 (CompactPolicy.apply).
    """

    def __init__(self, thresholds: CompactThresholds = CompactThresholds(), *,
                 summarize: Summarize | None = None, overhead_tokens: int = 0,
                 max_age_seconds: float = MICRO_COMPACT_MAX_AGE_SECONDS,
                 clearable_tools: Collection[str] = CLEARABLE_TOOLS,
                 collapse_keep_recent_tokens: int | None = None,
                 max_consecutive_failures: int = MAX_CONSECUTIVE_SUMMARY_FAILURES) -> None:
        if overhead_tokens >= thresholds.micro_compact:
            raise OverheadTooLargeError(
                f"system prompt + tools alone are ~{overhead_tokens} tokens, at or above the "
                f"micro_compact threshold ({thresholds.micro_compact}): compacting messages "
                "cannot bring requests under it. Shorten the system prompt or offer fewer "
                "tools, or raise the thresholds.")
        self.thresholds = thresholds
        self.summarize = summarize
        self.overhead_tokens = overhead_tokens
        self.max_age_seconds = max_age_seconds
        self.clearable_tools = frozenset(clearable_tools)
        self.collapse_keep_recent_tokens = (thresholds.micro_compact // 2
                                            if collapse_keep_recent_tokens is None
                                            else collapse_keep_recent_tokens)
        self.max_consecutive_failures = max_consecutive_failures
        self.consecutive_failures = 0
        self.records: list[dict[str, Any]] = []
        self._summary: dict[str, Any] | None = None  # {"cut", "message", "fingerprint"}

    # -- state of a kept summary --------------------------------------------------------
    @staticmethod
    def _fingerprint(message: MessageParam) -> str:
        return json.dumps(message, sort_keys=True, ensure_ascii=False)

    def _base(self, history: list[MessageParam], times: Sequence[float]
              ) -> tuple[list[MessageParam], list[float], int]:
        """``(base, base_times, offset)``: the history with a kept summary in front, if valid."""
        s = self._summary
        if s and len(history) > s["cut"] and self._fingerprint(history[s["cut"] - 1]) == \
                s["fingerprint"]:
            cut = s["cut"]
            return [s["message"], *history[cut:]], [times[cut], *times[cut:]], cut
        self._summary = None
        return list(history), list(times), 0

    def _tokens(self, messages: list[MessageParam]) -> int:
        return approx_tokens(messages) + self.overhead_tokens

    # -- the pipeline -------------------------------------------------------------------
    def apply(self, history: list[MessageParam], *, times: Sequence[float], now: float,
              turn: int = 1) -> tuple[list[MessageParam], dict[str, Any]]:
        """Return ``(view, record)`` for one request (the record is not appended here).

        Raises: ValueError if ``times`` is not parallel to ``history``.
        """
        _check_times(history, times)
        th = self.thresholds
        raw = self._tokens(history)
        base, base_times, offset = self._base(history, times)
        stages: list[dict[str, Any]] = []
        view = base
        tokens = self._tokens(view)
        if offset:
            stages.append({"stage": "reuse_summary", "tokens_before": raw, "tokens_after": tokens})

        def step(name: str, new_view: list[MessageParam]) -> None:
            nonlocal view, tokens
            after = self._tokens(new_view)
            stages.append({"stage": name, "tokens_before": tokens, "tokens_after": after})
            view, tokens = new_view, after

        if tokens >= th.micro_compact:
            step("micro_compact", micro_compact(view, times=base_times, now=now,
                                                max_age_seconds=self.max_age_seconds,
                                                clearable_tools=self.clearable_tools))
            micro_view = view
            if tokens >= th.context_collapse:
                step("context_collapse", context_collapse(
                    view, keep_recent_tokens=self.collapse_keep_recent_tokens))
                if tokens >= th.auto_compact:
                    self._auto(micro_view, offset, history, stages, step)
        record = {"turn": turn, "raw_tokens": raw, "tokens_before": raw,
                  "tokens_after": tokens, "stages": stages,
                  "stage": next((s["stage"] for s in reversed(stages)
                                 if "failed" not in s and s["stage"] != "reuse_summary"),
                                "none")}
        return view, record

    def _auto(self, micro_view: list[MessageParam], offset: int, history: list[MessageParam],
              stages: list[dict[str, Any]], step: Callable) -> None:
        """Run auto_compact on the micro-compacted view (it sees what the collapse dropped)."""
        if self.summarize is None:
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
        kept_tail = len(compacted) - 1
        cut = len(history) - kept_tail  # history index of the first kept message
        self._summary = {"cut": cut, "message": compacted[0],
                         "fingerprint": self._fingerprint(history[cut - 1])}
        step("auto_compact", compacted)

    def __call__(self, history: list[MessageParam], ctx: ViewContext) -> list[MessageParam]:
        """View policy entry point: apply, append the record, return the view."""
        times = ctx.times_for(history)
        view, record = self.apply(history, times=times, now=ctx.now, turn=ctx.turn)
        self.records.append(record)
        return view

    def on_context_overflow(self, history: list[MessageParam],
                            ctx: ViewContext) -> list[MessageParam]:
        """Reactive compaction for the Agent: :func:`reactive_compact` with this policy's
        summariser (unless disabled by failures); appends a record with stage "reactive"."""
        summarize = (self.summarize if self.consecutive_failures < self.max_consecutive_failures
                     else None)
        before = self._tokens(history)
        view = reactive_compact(history, ctx, summarize=summarize,
                                keep_recent_tokens=max(1, self.thresholds.micro_compact // 4),
                                clearable_tools=self.clearable_tools)
        after = self._tokens(view)
        self.records.append({"turn": ctx.turn, "raw_tokens": before, "tokens_before": before,
                             "tokens_after": after, "stage": "reactive",
                             "stages": [{"stage": "reactive", "tokens_before": before,
                                         "tokens_after": after}]})
        return view
