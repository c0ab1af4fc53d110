"""Write-ahead JSONL sessions: every message is on disk before the API call that depends on it.

One file per session, ``<directory>/<session_id>.jsonl`` (created 0600), one entry per line,
each ending with its checksum (:data:`CHECKSUM_KEY`)::

    {"timestamp": float, "type": "meta", "event": "session_start", "model": str, "cwd": str,
     "crc": "<8 hex>"}
    {"timestamp": float, "type": "message", "message": MessageParam, "crc": "<8 hex>"}
    {"timestamp": float, "type": "tool_result", "block": {"type": "tool_result", ...},
     "crc": "<8 hex>"}

The Agent appends the user message (write + flush + fsync) BEFORE the API call, each assistant
message when it completes, and each tool result as it arrives (the loop awaits the callback);
the user message that carries the results is not logged again. The full history is logged,
never the masked view. :func:`resume_session` (from :mod:`mini_agent.harness.session_reader`) reads a
possibly damaged file and reports every line it could not use; :func:`rebuild_history` folds
the entries back into a history the API accepts, answering tool calls a crash interrupted.

What this module does not do: call the model or run tools. Taught in
``notebooks/07_sessions.ipynb``. Source: section 6 of 002_4516104fd432e704.txt (SessionWriter,
resumeSession, the write-ahead order and its pitfalls).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
import uuid
import zlib
from pathlib import Path
from typing import Any, Iterable

from mini_agent.harness.clock import Clock, SystemClock
from mini_agent.harness.config import API_KEY_ENV_VAR
from mini_agent.core.messages import (MessageParam, MessageValidationError, content_blocks, tool_result_block,
                                      validate_messages)
from mini_agent.harness.session_reader import (CHECKSUM_KEY, MAX_SALVAGE_LINE_BYTES,  # noqa: F401
                                               SessionProblem, resume_session)

SESSION_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
"""Allowed session ids: a file name, never a path."""

ENTRY_TYPES = ("meta", "message", "tool_result")

INTERRUPTED_TEXT = ("Interrupted: the session stopped (crash or kill) before this tool call "
                    "returned, so its result is unknown. Run it again if you still need it.")
"""The ``is_error`` tool_result content :func:`rebuild_history` gives an unanswered tool call."""

_SECRET_PATTERN = re.compile(r"sk-ant-[A-Za-z0-9_\-]{16,}")


def new_session_id(clock: Clock | None = None) -> str:
    """Return a sortable, unique id: ``YYYYmmdd-HHMMSS-<8 hex>`` (UTC of ``clock.now()``)."""
    now = (clock or SystemClock()).now()
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime(now)) + "-" + uuid.uuid4().hex[:8]


def session_path(directory: str | Path, session_id: str) -> Path:
    """Return ``<directory>/<session_id>.jsonl``. Raises ValueError for an id that is a path."""
    if not SESSION_ID_PATTERN.fullmatch(session_id or ""):
        raise ValueError(f"invalid session id {session_id!r}: use letters, digits, '.', '_', '-'")
    return Path(directory) / f"{session_id}.jsonl"


def scrub_secrets(line: str) -> str:
    """Replace the current ``$ANTHROPIC_API_KEY`` and anything shaped like ``sk-ant-...``.

    >>> scrub_secrets('{"k": "sk-ant-0123456789abcdefXYZ"}')
    '{"k": "[REDACTED]"}'
    """
    key = os.environ.get(API_KEY_ENV_VAR, "").strip()
    if len(key) >= 8:  # as written, and as it appears inside a JSON string
        for spelling in {key, json.dumps(key, ensure_ascii=False)[1:-1]}:
            line = line.replace(spelling, "[REDACTED]")
    if "sk-ant-" in line:
        line = _SECRET_PATTERN.sub("[REDACTED]", line)
    return line


def encode_entry(entry: dict[str, Any], timestamp: float = 0.0) -> bytes:
    """Return the session line for ``entry``: compact JSON with ``timestamp`` first (the
    entry's own wins over ``timestamp``), secrets scrubbed, ``"crc"`` last, then a newline.

    A ``"crc"`` key in ``entry`` is replaced. Raises: TypeError if not JSON-serialisable.

    >>> encode_entry({"type": "meta"}, 1.0)
    b'{"timestamp":1.0,"type":"meta","crc":"fd384266"}\\n'
    """
    record = {"timestamp": timestamp, **entry}
    record.pop(CHECKSUM_KEY, None)
    line = scrub_secrets(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    data = line.encode("utf-8")
    return data[:-1] + b',"crc":"%08x"}\n' % zlib.crc32(data)


class SessionWriter:
    """Append-only, fsynced JSONL log of one session.

    Args: directory: where session files live (created 0700 if missing); session_id: reuse
    an existing session (appends to its file) or None for :func:`new_session_id`; clock:
    the default ``timestamp`` source (seconds).
    Attributes: ``session_id``, ``path``, ``entries_written``.
    Reopening a file whose last line was cut by a crash first ends that line, so the next
    entry does not fuse with it (the damaged line is then reported by :func:`resume_session`).
    """

    def __init__(self, directory: str | Path, session_id: str | None = None, *,
                 clock: Clock | None = None) -> None:
        self.clock = clock or SystemClock()
        self.session_id = session_id or new_session_id(self.clock)
        self.path = session_path(directory, self.session_id)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        os.fchmod(self._fd, 0o600)
        self.entries_written = 0
        size = os.fstat(self._fd).st_size
        if size and os.pread(self._fd, 1, size - 1) != b"\n":
            self._write(b"\n")

    def append(self, entry: dict[str, Any]) -> None:
        """Write ``entry`` as one JSON line, flush and fsync it; returns once it is on disk.

        ``timestamp`` defaults to ``clock.now()``; a ``timestamp`` in ``entry`` wins (seed 002,
        section 6, pitfall 2: tests pin times). The API key (and ``sk-ant-...`` strings) are replaced by
        ``[REDACTED]``. Raises: TypeError if entry is not a dict or not JSON-serialisable;
        ValueError after :meth:`close`.
        """
        if not isinstance(entry, dict):
            raise TypeError(f"a session entry is a dict, got {type(entry).__name__}")
        if self._fd is None:
            raise ValueError(f"session {self.session_id} is closed")
        self._write(encode_entry(entry, self.clock.now()))
        self.entries_written += 1

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]
        os.fsync(self._fd)

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "SessionWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclasses.dataclass
class ResumeReport:
    """What :func:`rebuild_history` did to make the entries a valid history.

    ``interrupted``: ``[(tool_use_id, tool_name)]`` answered with an ``is_error`` result
    (the chosen strategy: never re-run a tool on resume, the model decides); ``notes``:
    other repairs (merged messages, dropped orphan results, unknown entry types);
    ``meta``: the first ``meta`` entry, if any; ``pending_user_turn``: the history ends with
    a user message, so the next API call continues the run.
    """

    interrupted: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    meta: dict | None = None
    pending_user_turn: bool = False

    def __str__(self) -> str:
        lines = [f"interrupted tool call {i} ({name}): answered with an is_error result"
                 for i, name in self.interrupted] + self.notes
        if self.pending_user_turn:
            lines.append("the history ends with a user turn: the run can continue")
        return "\n".join(lines) or "clean: nothing to repair"


def rebuild_history(entries: Iterable[dict]) -> tuple[list[MessageParam], list[float],
                                                       ResumeReport]:
    """Fold session entries into ``(history, times, report)``; the history passes validation.

    ``tool_result`` entries are gathered into the user message that follows the assistant
    message holding their ``tool_use`` blocks (results first, in the order they were logged,
    so ``rebuild_history(history_to_entries(h))[0] == h``; then any text of a logged user
    message). A tool_use with no logged result (crash mid-turn) gets
    ``{"type": "tool_result", "tool_use_id": id, "content": INTERRUPTED_TEXT,
    "is_error": True}``. A trailing user message with no reply is kept. ``times[i]`` is the
    timestamp (seconds) of the entry that completed message i. An entry that is JSON but of
    the wrong shape (a message entry without a user/assistant message, a tool_result without
    its block), one that breaks an API rule on its own (a damaged block type or key, a bad
    ``cache_control``, tool_result content of the wrong type), or an assistant message that
    reuses a tool_use id is skipped and named in ``report.notes``; the tool calls it left
    open are answered as interrupted. Entries are not mutated.
    Raises: MessageValidationError if the entries cannot make a valid history (e.g. a
    message with an empty text block): a writer bug, not crash damage.
    """
    history: list[MessageParam] = []
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
                blocks.append(tool_result_block(tool_use_id, INTERRUPTED_TEXT, is_error=True))
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
                    history.append({"role": "user", "content": "(session resumed: the first "
                                    "user message was lost)"})
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
    report.pending_user_turn = bool(history) and history[-1]["role"] == "user"
    if history:
        validate_messages(history, request=False)
    return history, times, report


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
    its own blocks are judged."""
    blocks = content_blocks(message)
    if message["role"] == "assistant":
        uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        around = [{"role": "user", "content": "."}, message]
        if uses:
            around.append({"role": "user", "content": [tool_result_block(i, ".") for i in uses]})
        return _validation_problem(around)
    ids = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
    if not ids:
        return _validation_problem([message])
    asked = {"role": "assistant", "content": [{"type": "tool_use", "id": i, "name": ".",
                                               "input": {}} for i in ids]}
    return _validation_problem([{"role": "user", "content": "."}, asked, message])


def _validation_problem(messages: list[MessageParam]) -> str | None:
    try:
        validate_messages(messages, request=False)
    except MessageValidationError as exc:
        return f"a record the API would refuse ({exc})"
    except (TypeError, AttributeError, KeyError) as exc:
        return f"a record of the wrong shape ({type(exc).__name__})"
    return None


def history_to_entries(history: list[MessageParam], times: list[float] | None = None
                       ) -> list[dict]:
    """Return the session entries the Agent writes for ``history`` (inverse of rebuild).

    Each message becomes ``{"type": "message", ...}``, except that a user message's
    ``tool_result`` blocks become one ``{"type": "tool_result", "block": ...}`` entry each
    (written as they arrive) and only its other blocks, if any, a message entry.
    ``times`` (seconds, parallel to history) become the timestamps (default 0.0).
    ``rebuild_history(history_to_entries(h))[0] == h`` for a valid ``h``. Pure.
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


def list_sessions(directory: str | Path) -> list[dict]:
    """Summarise each ``*.jsonl`` session in ``directory``, oldest first.

    Returns ``[{"session_id", "path", "entries", "prompts", "turns", "first_time",
    "last_time", "model", "problems"}]``: prompts = user text messages, turns = assistant
    messages (one per API response), times in Unix seconds (None for an empty file),
    problems = count of damaged lines. A missing directory gives ``[]``.
    """
    folder = Path(directory)
    if not folder.is_dir():
        return []
    rows = []
    for path in folder.glob("*.jsonl"):
        if not path.is_file():
            continue
        entries, problems = resume_session(path)
        stamps = [e["timestamp"] for e in entries if isinstance(e.get("timestamp"), (int, float))]
        messages = [e.get("message") or {} for e in entries if e.get("type") == "message"]
        meta = next((e for e in entries if e.get("type") == "meta"), {})
        rows.append({
            "session_id": path.stem, "path": str(path), "entries": len(entries),
            "prompts": sum(1 for m in messages if m.get("role") == "user"),
            "turns": sum(1 for m in messages if m.get("role") == "assistant"),
            "first_time": min(stamps, default=None), "last_time": max(stamps, default=None),
            "model": meta.get("model"), "problems": len(problems)})
    return sorted(rows, key=lambda r: (r["first_time"] or 0.0, r["session_id"]))


def main_sessions(directory: str | Path = "sessions") -> int:
    """CLI body of ``mini-agent sessions``: print one line per session; exit code 0."""
    rows = list_sessions(directory)
    if not rows:
        print(f"no sessions in {directory}")
        return 0

    def stamp(t: float | None) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) if t else "-"
    print(f"{'session_id':<28} {'prompts':>7} {'turns':>5}  {'first':<19}  {'last':<19}  problems")
    for r in rows:
        print(f"{r['session_id']:<28} {r['prompts']:>7} {r['turns']:>5}  "
              f"{stamp(r['first_time']):<19}  {stamp(r['last_time']):<19}  {r['problems']}")
    print("resume one with: mini-agent --resume SESSION_ID")
    return 0
