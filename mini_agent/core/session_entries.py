"""Session log entries <-> a history: fold a (possibly damaged) log back into a valid history.

A write-ahead session (:mod:`mini_agent.harness.session`) logs entries::

    {"type": "meta", ...}
    {"type": "message", "message": Message}
    {"type": "tool_result", "block": {"type": "tool_result", ...}}

each tool result as it arrives, the message that carries them is not logged again.
:func:`rebuild_history` folds the entries into ``(history, times, report)``: the results
gathered after the assistant message that asked for them, a tool call the log never answered
(a crash before its result was logged) answered with
:data:`~mini_agent.core.messages.NO_RESULT_TEXT`, damaged entries skipped and named, and
``cache_control`` markers that together break the API's marker rules removed (below); the
history passes ``validate_messages``.
:func:`history_to_entries` is the inverse, what the Agent writes for a history.

Markers. The API takes at most four ``cache_control`` markers in a request, tools and system
included, longer TTLs first. Each logged message may be valid alone while the history holds
more (a writer that marked each turn and whose requests went through
:func:`~mini_agent.core.cache.place_breakpoints`, which removes every marker it is given
before placing its own), and then the resume would fail. When the rebuilt history holds
more than four, or a ``ttl="1h"`` marker after a ``"5m"`` one, every marker is removed, with
a note: not the newest four, because the history is only part of a request (a system or
tool marker would push four back over the limit) and a marker is a request's choice of
where to read and write, not part of the cached content (the caching docs' multi-turn
example moves its one breakpoint to the newest message every turn and still reads the
prefix written before), so the next request's breakpoints, placed anew, read the same
prefix. A history within the rules keeps its markers.

Pure: entries in, a history out (no files: :mod:`mini_agent.harness.session_reader` reads
them). Taught in ``notebooks/07_sessions.ipynb``.

Source:
    section 6 of 002_4516104fd432e704.txt (resumeSession, the write-ahead order and its
    pitfalls).
"""

from __future__ import annotations

import dataclasses
from typing import Iterable

from mini_agent.core.cache import strip_cache_control
from mini_agent.core.messages import (MAX_CACHE_CONTROL_MARKERS, MISSING_START_TEXT,
                                      NO_RESULT_TEXT, Message, MessageValidationError,
                                      content_blocks, tool_result_block, validate_messages)
from mini_agent.core.wire_rules import cache_markers

MARKER_RULES = frozenset({"cache_control_limit", "cache_ttl_order"})
"""The ``validate_messages`` rules about the markers of a whole request (how many, their TTL
order): a history that breaks them loses its markers rather than an entry or the resume."""


@dataclasses.dataclass
class ResumeReport:
    """What :func:`rebuild_history` did to make the entries a valid history.

    Attributes:
        interrupted: ``[(tool_use_id, tool_name)]`` answered with an ``is_error`` result (the
            chosen strategy: never re-run a tool on resume, the model decides).
        notes: other repairs (merged messages, dropped orphan results, unknown entry types).
        meta: the first ``meta`` entry, if any.
        pending_user_message: the history ends with a user message, so the next API call
            continues the run.
    """

    interrupted: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    meta: dict | None = None
    pending_user_message: bool = False

    def __str__(self) -> str:
        lines = [f"interrupted tool call {i} ({name}): answered with an is_error result"
                 for i, name in self.interrupted] + self.notes
        if self.pending_user_message:
            lines.append("the history ends with a user message: the run can continue")
        return "\n".join(lines) or "clean: nothing to repair"


def rebuild_history(entries: Iterable[dict]) -> tuple[list[Message], list[float],
                                                       ResumeReport]:
    """Fold session entries into ``(history, times, report)``; the history passes validation.

    ``tool_result`` entries are gathered into the user message that follows the assistant
    message holding their ``tool_use`` blocks (results first, in the order they were logged,
    so ``rebuild_history(history_to_entries(h))[0] == h``; then any text of a logged user
    message). A tool_use with no logged result (a crash before it was logged) gets
    ``{"type": "tool_result", "tool_use_id": id, "content": NO_RESULT_TEXT,
    "is_error": True}``. A trailing user message with no reply is kept. An entry that is JSON
    but of the wrong shape (a message entry without a user/assistant message, a tool_result
    without its block), one that breaks an API rule on its own (a damaged block type or key, a
    bad ``cache_control``, tool_result content of the wrong type), or an assistant message that
    reuses a tool_use id is skipped and named in ``report.notes``; the tool calls it left open
    are answered as interrupted. A logged user message's tool_result blocks that answer no
    open tool_use are dropped with a note (the message too, when nothing else is left).
    ``cache_control`` markers that together break the API's rules (more than
    :data:`~mini_agent.core.messages.MAX_CACHE_CONTROL_MARKERS`, or a longer TTL after a
    shorter one) are all removed with a note (see the module doc); a message is never
    skipped for them.

    Args:
        entries: the log's entries in order; never mutated.

    Returns:
        ``(history, times, report)``: ``times[i]`` is the timestamp (seconds) of the entry that
        completed message i; ``report`` is a :class:`ResumeReport`.

    Raises:
        MessageValidationError: the entries cannot make a valid history (e.g. a message with an
            empty text block): a writer bug, not crash damage.
    """
    history: list[Message] = []
    times: list[float] = []
    report = ResumeReport()
    open_uses: list[tuple[str, str]] | None = None  # tool_use (id, name) awaiting results
    results: dict[str, dict] = {}
    results_time = 0.0
    seen_ids: set[str] = set()

    def answer_open(extra: list[dict], when: float) -> None:
        nonlocal open_uses
        asked = dict(open_uses or [])
        blocks = [block for tool_use_id, block in results.items() if tool_use_id in asked]
        for tool_use_id, name in open_uses or []:
            if tool_use_id not in results:
                report.interrupted.append((tool_use_id, name))
                blocks.append(tool_result_block(tool_use_id, NO_RESULT_TEXT, is_error=True))
        history.append({"role": "user", "content": blocks + extra})
        times.append(when)
        open_uses = None
        results.clear()

    for n, entry in enumerate(entries):
        kind = entry.get("type")
        stamp = entry.get("timestamp")
        when = float(stamp) if isinstance(stamp, (int, float)) else (times[-1] if times else 0.0)
        malformed = _malformed(entry)
        if not malformed and kind == "message" and entry["message"]["role"] == "assistant":
            ids = [b["id"] for b in content_blocks(entry["message"])
                   if b.get("type") == "tool_use"]
            reused = sorted(set(ids) & seen_ids)
            if reused:
                malformed = f"an assistant message reusing tool_use id {reused[0]!r}"
            seen_ids.update(ids if not reused else ())
        if malformed:
            report.notes.append(f"entry {n}: {malformed}; skipped")
        elif kind == "meta":
            report.meta = report.meta or entry
        elif kind == "tool_result":
            block = entry.get("block") or {}
            tool_use_id = block.get("tool_use_id")
            if open_uses is not None and tool_use_id in dict(open_uses):
                results[tool_use_id] = block
                results_time = when
            else:
                report.notes.append(f"entry {n}: dropped a tool_result for {tool_use_id!r}, "
                                    "which answers no open tool_use")
        elif kind == "message":
            message = entry["message"]
            if message.get("role") == "assistant":
                if open_uses is not None:
                    answer_open([], results_time or times[-1])
                if not history:
                    history.append({"role": "user", "content": MISSING_START_TEXT})
                    times.append(when)
                    report.notes.append(f"entry {n}: the log starts with an assistant message; "
                                        "a placeholder user message was put before it")
                if history[-1]["role"] == "assistant":
                    history[-1] = {"role": "assistant", "content":
                                   content_blocks(history[-1]) + content_blocks(message)}
                    times[-1] = when
                    report.notes.append(f"entry {n}: two assistant messages in a row merged")
                else:
                    history.append(message)
                    times.append(when)
                uses = [(b["id"], b.get("name", "")) for b in content_blocks(history[-1])
                        if b.get("type") == "tool_use"]
                open_uses = uses or None
            elif open_uses is not None:
                for block in content_blocks(message):
                    if block.get("type") == "tool_result":
                        results[block.get("tool_use_id")] = block
                answer_open([b for b in content_blocks(message)
                             if b.get("type") != "tool_result"], when)
            elif (message := _without_orphan_results(message, n, report)) is None:
                continue   # it held only results that answer nothing
            elif history and history[-1]["role"] == "user":
                history[-1] = {"role": "user", "content":
                               content_blocks(history[-1]) + content_blocks(message)}
                times[-1] = when
                report.notes.append(f"entry {n}: a user message with no reply before it was "
                                    "merged into the next one")
            else:
                history.append(message)
                times.append(when)
        else:
            report.notes.append(f"entry {n}: unknown entry type {kind!r} skipped")
    if open_uses is not None:
        answer_open([], results_time or times[-1])
    report.pending_user_message = bool(history) and history[-1]["role"] == "user"
    if history:
        try:
            validate_messages(history, request=False)
        except MessageValidationError as exc:
            if exc.rule not in MARKER_RULES:
                raise
            history = _without_markers(history, report)
            validate_messages(history, request=False)
    return history, times, report


def _without_markers(history: list[Message], report: ResumeReport) -> list[Message]:
    """The history with every ``cache_control`` removed (only the messages that hold one are
    copied), and a note naming how many there were and where."""
    held = [(i, len(cache_markers([m]))) for i, m in enumerate(history)]
    held = [(i, n) for i, n in held if n]
    total = sum(n for _, n in held)
    where = ", ".join(str(i) for i, _ in held[:8]) + (" ..." if len(held) > 8 else "")
    report.notes.append(
        f"removed all {total} cache_control markers of the history "
        f"(message{'s' if len(held) > 1 else ''} {where}): "
        + (f"the API takes at most {MAX_CACHE_CONTROL_MARKERS} in a request, tools and "
           "system included" if total > MAX_CACHE_CONTROL_MARKERS else
           "a ttl='1h' marker came after a ttl='5m' one")
        + "; where to cache is the next request's choice (the cached prefix is the content, "
        "not its markers)")
    marked = {i for i, _ in held}
    return [strip_cache_control(m) if i in marked else m for i, m in enumerate(history)]


def _without_orphan_results(message: Message, n: int, report: ResumeReport) -> Message | None:
    """A logged user message with no tool call open: its tool_result blocks answer nothing
    (valid alone, invalid in place), so they are dropped and named in the report; None when
    nothing else is left of it."""
    blocks = content_blocks(message)
    orphans = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
    if not orphans:
        return message
    report.notes.append(f"entry {n}: dropped {len(orphans)} tool_result block(s) of a user "
                        f"message ({', '.join(map(repr, orphans))}), which answer no open "
                        "tool_use")
    kept = [b for b in blocks if b.get("type") != "tool_result"]
    return {"role": "user", "content": kept} if kept else None


def _malformed(entry: dict) -> str | None:
    """Why a parsed entry cannot be folded into a history (valid JSON, wrong shape), or None."""
    kind = entry.get("type")
    if kind == "tool_result":
        block = entry.get("block")
        if not isinstance(block, dict) or not isinstance(block.get("tool_use_id"), str):
            return "a tool_result entry without a block holding a string tool_use_id"
        return _api_problem({"role": "user", "content": [block]})
    elif kind == "message":
        message = entry.get("message")
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return "a message entry without a user or assistant message"
        content = message.get("content")
        if not isinstance(content, (str, list)):
            return "a message entry whose content is not a string or a list of blocks"
        if any(not isinstance(b, dict) or (b.get("type") == "tool_use"
                                           and not isinstance(b.get("id"), str))
               for b in content if isinstance(content, list)):
            return "a message entry with a block that is not an object or a tool_use without id"
        return _api_problem(message)
    return None


def _api_problem(message: dict) -> str | None:
    """Why one logged message (a tool_result entry: as a user message) breaks an API rule on
    its own, or None. It is checked between stand-in turns that pair its tool calls, so only
    its own blocks are judged (an assistant message with empty content is refused: it is
    valid only as a request's final message, and in a log one follows it)."""
    blocks = content_blocks(message)
    if message["role"] == "assistant":
        uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        # a user message always follows it in place: an empty one is no final prefill here
        around = [{"role": "user", "content": "."}, message,
                  {"role": "user", "content": [tool_result_block(i, ".") for i in uses] or "."}]
        return _validation_problem(around)
    ids = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
    if not ids:
        return _validation_problem([message])
    asked = {"role": "assistant", "content": [{"type": "tool_use", "id": i, "name": ".",
                                               "input": {}} for i in ids]}
    return _validation_problem([{"role": "user", "content": "."}, asked, message])


def _validation_problem(messages: list[Message]) -> str | None:
    try:
        validate_messages(messages, request=False)
    except MessageValidationError as exc:
        if exc.rule in MARKER_RULES:   # the whole history's rule: repaired there, not skipped
            return None
        return f"a record the API would refuse ({exc})"
    except (TypeError, AttributeError, KeyError) as exc:
        return f"a record of the wrong shape ({type(exc).__name__})"
    return None


def history_to_entries(history: list[Message], times: list[float] | None = None
                       ) -> list[dict]:
    """Return the session entries the Agent writes for ``history`` (inverse of rebuild).

    Each message becomes ``{"type": "message", ...}``, except that a user message's
    ``tool_result`` blocks become one ``{"type": "tool_result", "block": ...}`` entry each
    (written as they arrive) and only its other blocks, if any, a message entry.
    ``rebuild_history(history_to_entries(h))[0] == h`` for a valid ``h``. Pure.

    Args:
        history: the messages.
        times: seconds, parallel to ``history``, written as the timestamps (None: 0.0 each).

    Returns:
        The entries, in log order.
    """
    entries: list[dict] = []
    for i, message in enumerate(history):
        when = times[i] if times else 0.0
        blocks = content_blocks(message)
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if message.get("role") != "user" or not results:
            entries.append({"type": "message", "message": message, "timestamp": when})
            continue
        entries.extend({"type": "tool_result", "block": b, "timestamp": when} for b in results)
        rest = [b for b in blocks if b.get("type") != "tool_result"]
        if rest:
            entries.append({"type": "message", "message": {"role": "user", "content": rest},
                            "timestamp": when})
    return entries
