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

Each stage builds a VIEW from the full history (the record); none is stateful. Running them
in order, measuring after each and stopping under the next threshold is
:class:`~mini_agent.core.compact_policy.CompactPolicy`, which also reuses a summary across
requests and compacts hard once when the API says "prompt is too long". Kit facts (when a tool
result arrived) come from ``ViewContext.times``, never from keys inside blocks: the API
rejects unknown keys.

Pure (the model-backed summariser is ``harness/summarizer.py``). Taught in
``notebooks/04_compaction.ipynb``.

Source:
    002_4516104fd432e704.txt section 3 (microCompact, contextCollapse, autoCompact);
    004_b74ef821c58ee4ec.txt (what a good compaction keeps: decisions, open bugs, exact
    details); API analogue: the server-side compaction edit ``compact_20260112`` (simulated in
    ``core/server_compaction.py``).
"""

from __future__ import annotations

import json
import math
from typing import Callable, Collection, Iterable, Sequence

from mini_agent.core.cache import CLEARED_TOOL_RESULT
from mini_agent.core.history_scan import HistoryScan, scan_for
from mini_agent.core.messages import (Message, answer_unanswered_tool_uses, content_blocks,
                                      text_block, tool_names_by_id, tool_result_text)
from mini_agent.core.tokens import approx_tokens
from mini_agent.core.view import check_times

CLEARED_PLACEHOLDER = CLEARED_TOOL_RESULT
"""What an old, re-fetchable tool result's content becomes: ``"[Old tool result content
cleared]"`` (seed 002, microCompact; the same text as server-side clearing)."""

_CLEARED_TOKENS = approx_tokens(CLEARED_PLACEHOLDER)
"""The placeholder's approx tokens: a result no longer than it is kept."""

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


class CompactionError(RuntimeError):
    """Compaction cannot proceed: a summary failed, or the fixed overhead leaves no room."""


class SummaryError(CompactionError):
    """The summariser raised or returned an empty summary."""


# --------------------------------------------------------------------------- helpers

def clean_cut_points(messages: Sequence[Message]) -> list[int]:
    """Return the clean cuts: indexes where ``messages[c:]`` can follow a user message.

    A cut is clean when ``messages[c]`` is an assistant message: every ``tool_use`` before
    ``c`` was answered in the user message just before ``c``, and every ``tool_result`` at
    or after ``c`` answers a ``tool_use`` at or after ``c``, so no pair is split.

    Args:
        messages: a history; never mutated.

    Returns:
        The indexes ``c >= 1`` of the clean cuts, ascending; ``messages[c:]`` stays valid.

    >>> clean_cut_points([{"role": "user", "content": "a"}, {"role": "assistant",
    ...     "content": "b"}, {"role": "user", "content": "c"}])
    [1]
    """
    return [i for i in range(1, len(messages)) if messages[i].get("role") == "assistant"]


def _with_text(message: Message, text: str) -> Message:
    """A copy of a user message with a text block appended (content normalised to blocks)."""
    return {"role": message["role"], "content": [*content_blocks(message), text_block(text)]}


def _ends_with_text(message: Message, text: str) -> bool:
    blocks = content_blocks(message)
    return bool(blocks) and blocks[-1].get("type") == "text" and blocks[-1].get("text") == text


# --------------------------------------------------------------------------- stage 1

def micro_compact(messages: list[Message], *, times: Sequence[float], now: float,
                  max_age_seconds: float = MICRO_COMPACT_MAX_AGE_SECONDS,
                  clearable_tools: Collection[str] = CLEARABLE_TOOLS) -> list[Message]:
    """Clear the content of old tool results from re-fetchable read-only tools.

    A ``tool_result`` in ``messages[i]`` is cleared when ``now - times[i] > max_age_seconds``
    and the tool that produced it (found through the matching ``tool_use``) is in
    ``clearable_tools``; it becomes ``{**block, "content": "[Old tool result content
    cleared]"}`` (``tool_use_id`` and ``is_error`` kept). A result exactly ``max_age_seconds``
    old is kept; results of other tools (run_bash, edit_file...) and of unknown tools are kept.
    Clearing twice gives the same view as once; a result shorter than the placeholder is kept.

    Args:
        messages: the history; never mutated.
        times: Unix seconds each message was appended (``ViewContext.times``, parallel to
            ``messages``).
        now: the current time in seconds.
        max_age_seconds: the cut-off age in seconds (default 3,600: 60 minutes).
        clearable_tools: names of tools whose results may be cleared (default
            :data:`CLEARABLE_TOOLS`); a collection, not a str.

    Returns:
        A new list of the same length (changed messages are new dicts, the others are the
        input's own objects).

    Raises:
        ValueError: ``len(times) != len(messages)``.
        TypeError: ``clearable_tools`` is a str.

    Source:
        002_4516104fd432e704.txt section 3 (microCompact, CLEARABLE_TOOLS, 60 minutes).

    >>> h = [{"role": "user", "content": "go"},
    ...      {"role": "assistant", "content": [{"type": "tool_use", "id": "t1",
    ...                                         "name": "read_file", "input": {}}]},
    ...      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
    ...                                    "content": "x" * 100}]}]
    >>> micro_compact(h, times=[0, 0, 0], now=3601)[2]["content"][0]["content"]
    '[Old tool result content cleared]'
    """
    check_times(messages, times)
    if isinstance(clearable_tools, str):
        raise TypeError("clearable_tools must be a collection of tool names, not a str")
    clearable = frozenset(clearable_tools)
    scan = scan_for(messages)
    if scan is not None and not scan.irregular:
        # inside a token memo: the cleared copies are made once per session; the loop below
        # picks the ones old enough now
        view = list(messages)
        if now - min(times) <= max_age_seconds and not math.isnan(sum(times)):
            return view   # every time is young enough (none is NaN: NaN is not young)
        for i, copy in _clearable_copies(scan, clearable):
            if i >= len(messages):
                break
            if not now - times[i] <= max_age_seconds:   # as the plain loop's test
                view[i] = copy
        return view
    names = tool_names_by_id(messages)
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
            if approx_tokens(block) <= _CLEARED_TOKENS:
                continue
            if new_content is None:
                new_content = list(content)
            new_content[j] = {**block, "content": CLEARED_PLACEHOLDER}
        if new_content is not None:
            view[i] = {**message, "content": new_content}
    return view


def _clearable_copies(scan: HistoryScan, clearable: frozenset) -> list[tuple[int, Message]]:
    """``(i, copy)`` for each scanned message that :func:`micro_compact` changes once it is old.

    The copy is the plain loop's ``{**message, "content": new_content}``: every result of a
    tool in ``clearable`` cleared, unless already cleared or not longer than the placeholder.
    A result's tool name is its id's only tool_use (the scan is not ``irregular``), so the
    copy does not depend on the prefix. Kept per scan and tool set, extended as the scan grows
    (a message's results are scanned together, so a copy is complete before it is returned).
    """
    key = ("micro_compact", clearable)
    held = scan.derived.get(key) or scan.derived.setdefault(key, [[], 0])
    copies, done = held
    if done == len(scan.messages):
        return copies
    limit = _CLEARED_TOKENS
    for r in range(scan.results_upto[done], len(scan.positions)):
        i, j = scan.positions[r]
        block = scan.blocks[r]
        use = scan.first_use.get(block.get("tool_use_id"))
        if block.get("content") == CLEARED_PLACEHOLDER or use is None \
                or use[1] not in clearable or approx_tokens(block) <= limit:
            continue
        if copies and copies[-1][0] == i:  # another result of the copy being built
            copies[-1][1]["content"][j] = {**block, "content": CLEARED_PLACEHOLDER}
        else:
            content = list(scan.messages[i]["content"])
            content[j] = {**block, "content": CLEARED_PLACEHOLDER}
            copies.append((i, {**scan.messages[i], "content": content}))
    held[1] = len(scan.messages)
    return copies


# --------------------------------------------------------------------------- stage 2

def context_collapse(messages: list[Message], *, keep_last: int = 4,
                     keep_recent_tokens: int | None = None) -> list[Message]:
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
    one, so collapsing a collapsed view with the same cut changes nothing. Tool pairing is
    kept: a ``tool_use`` whose result never arrived (a request that failed before its tools
    ran) is first answered with an ``is_error`` "not executed" result
    (:func:`~mini_agent.core.messages.answer_unanswered_tool_uses`).

    Args:
        messages: the history; never mutated (nor the task's content list).
        keep_last: how many of the newest messages stay at least (>= 0; default 4).
        keep_recent_tokens: instead of ``keep_last``, a token budget for the tail (>= 0).

    Returns:
        A new list.

    Raises:
        ValueError: ``keep_last < 0`` or ``keep_recent_tokens < 0``.

    Source:
        002_4516104fd432e704.txt section 3 (contextCollapse: the first half of the messages
        becomes a fixed string); exercise 04.2 (the same checks grade both).
    """
    if keep_last < 0:
        raise ValueError(f"keep_last must be >= 0, got {keep_last}")
    if keep_recent_tokens is not None and keep_recent_tokens < 0:
        raise ValueError(f"keep_recent_tokens must be >= 0, got {keep_recent_tokens}")
    messages = answer_unanswered_tool_uses(messages)
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

Summarize = Callable[[list[Message]], str]


def summary_message(summary: str) -> Message:
    """Wrap a summary as the user message that carries it.

    Args:
        summary: the summary text.

    Returns:
        ``{"role": "user", "content": [text]}``, the text starting with :data:`SUMMARY_PREFIX`.
    """
    return {"role": "user", "content": [text_block(SUMMARY_PREFIX + summary.strip())]}


def auto_compact(messages: list[Message], *, summarize: Summarize) -> list[Message]:
    """Replace the history by a model-written structured summary plus the newest exchange.

    The view is ``[summary_message(summarize(messages[:c])), *messages[c:]]`` with ``c`` the
    newest clean cut (the last assistant message), so a pending tool result keeps its
    ``tool_use``. Nothing to summarise (no clean cut after the first message) returns a copy
    unchanged without calling ``summarize``; a summary that is not smaller than what it
    replaces is not used (a copy is returned). Tool pairing is kept: a ``tool_use`` whose
    result never arrived is answered with an ``is_error`` "not executed" result before the cut
    is chosen, so the kept tail is always valid.

    Args:
        messages: the history; never mutated.
        summarize: ``summarize(messages) -> str``, called on the part it replaces; online
            :func:`~mini_agent.harness.summarizer.model_summarizer` (the model with
            :data:`SUMMARY_PROMPT`), offline the deterministic
            ``core.structured_summary.structured_summary``.

    Returns:
        A new list.

    Raises:
        SummaryError: ``summarize`` raises or returns an empty/blank string (the caller counts
            failures; ``CompactPolicy`` stops after 3 in a row).

    Source:
        002_4516104fd432e704.txt section 3 (autoCompact); 004_b74ef821c58ee4ec.txt.
    """
    messages = answer_unanswered_tool_uses(messages)
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


def render_transcript(messages: Iterable[Message]) -> str:
    """Render a history as plain text for a summariser.

    Args:
        messages: the messages to render.

    Returns:
        One ``role: text`` line per text, tool calls and results as JSON.
    """
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
