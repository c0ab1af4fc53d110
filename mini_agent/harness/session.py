"""Write-ahead JSONL sessions: every message is on disk before the API call that depends on it.

One file per session, ``<directory>/<session_id>.jsonl`` (created 0600), one entry per line,
each ending with its checksum (:data:`CHECKSUM_KEY`)::

    {"timestamp": float, "type": "meta", "event": "session_start", "model": str, "cwd": str,
     "crc": "<8 hex>"}
    {"timestamp": float, "type": "message", "message": Message, "crc": "<8 hex>"}
    {"timestamp": float, "type": "tool_result", "block": {"type": "tool_result", ...},
     "crc": "<8 hex>"}

:class:`SessionRecorder` turns the loop's events into entries in that order: the user message
(write + flush + fsync) BEFORE the API call, each assistant message when it completes, and
each tool result as it arrives (the loop waits while its event is handled); the user message
that carries the results is not logged again. The full history is logged, never the masked
view. :func:`resume_session` (from :mod:`mini_agent.harness.session_reader`) reads a possibly
damaged file and reports every line it could not use;
:func:`~mini_agent.core.session_entries.rebuild_history` folds the entries back into a history
the API accepts, answering tool calls a crash interrupted.

What this module does not do: call the model or run tools. Taught in
``notebooks/07_sessions.ipynb``.
Source: section 6 of 002_4516104fd432e704.txt (SessionWriter,
resumeSession, the write-ahead order and its pitfalls).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import time
import uuid
import weakref
import zlib
from pathlib import Path
from typing import Any

from mini_agent.core.clock import Clock
from mini_agent.core.messages import content_blocks
from mini_agent.harness.clock import SystemClock
from mini_agent.harness.config import API_KEY_ENV_VAR
from mini_agent.harness.loop_events import MessageAppended, ToolResult
from mini_agent.harness.session_reader import (CHECKSUM_KEY, MAX_SALVAGE_LINE_BYTES,  # noqa: F401
                                               SessionProblem, resume_session)

SESSION_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
"""Allowed session ids: a file name, never a path."""

ENTRY_TYPES = ("meta", "message", "tool_result")

_SECRET_PATTERN = re.compile(r"sk-ant-[A-Za-z0-9_\-]{16,}")


def new_session_id(clock: Clock | None = None) -> str:
    """Return a sortable, unique session id: ``YYYYmmdd-HHMMSS-<8 hex>``.

    Args:
        clock: the time source (default: the system clock); the date is UTC.

    Returns:
        The id, e.g. ``20261201-124800-1a2b3c4d``.
    """
    now = (clock or SystemClock()).now()
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime(now)) + "-" + uuid.uuid4().hex[:8]


def session_path(directory: str | Path, session_id: str) -> Path:
    """Return the path of a session file, ``<directory>/<session_id>.jsonl``.

    Args:
        directory: where session files live.
        session_id: a file name (letters, digits, ``.``, ``_``, ``-``), never a path.

    Returns:
        The file's path (it may not exist yet).

    Raises:
        ValueError: an id that is empty or shaped like a path.
    """
    if not SESSION_ID_PATTERN.fullmatch(session_id or ""):
        raise ValueError(f"invalid session id {session_id!r}: use letters, digits, '.', '_', '-'")
    return Path(directory) / f"{session_id}.jsonl"


def scrub_secrets(line: str) -> str:
    """Replace the current ``$ANTHROPIC_API_KEY`` and anything shaped like ``sk-ant-...``.

    Args:
        line: one session line (JSON text).

    Returns:
        The line with each secret replaced by ``[REDACTED]``.

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
    """Return the session line of ``entry``: compact JSON, its checksum last, a newline.

    ``timestamp`` comes first (the entry's own wins over the argument), secrets are
    scrubbed, and a ``"crc"`` key in ``entry`` is replaced by the new checksum. A record
    holding a lone surrogate (which UTF-8 cannot carry) is written with ``\\u`` escapes, so
    it reads back as the same text.

    Args:
        entry: the session entry (a JSON-serialisable dict).
        timestamp: seconds used when ``entry`` has no ``timestamp`` of its own.

    Returns:
        The UTF-8 line, ending ``,"crc":"<8 hex>"}`` and a newline.

    Raises:
        TypeError: ``entry`` is not JSON-serialisable (raised by ``json.dumps``).

    >>> encode_entry({"type": "meta"}, 1.0)
    b'{"timestamp":1.0,"type":"meta","crc":"fd384266"}\\n'
    """
    record = {"timestamp": timestamp, **entry}
    record.pop(CHECKSUM_KEY, None)
    line = scrub_secrets(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    try:
        data = line.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (a model's "\ud83d" escape): keep it escaped
        data = scrub_secrets(json.dumps(record, ensure_ascii=True,
                                        separators=(",", ":"))).encode("ascii")
    return data[:-1] + b',"crc":"%08x"}\n' % zlib.crc32(data)


_OPEN_WRITERS: "weakref.WeakValueDictionary[str, SessionWriter]" = weakref.WeakValueDictionary()
"""This process's open writers by resolved file path (a newer writer takes a session over)."""


class SessionBusyError(ValueError):
    """Another :class:`SessionWriter` (in this process or another) holds the session open."""


class SessionWriter:
    """Append-only, fsynced JSONL log of one session.

    Args: directory: where session files live (created 0700 if missing); session_id: reuse
    an existing session (appends to its file) or None for :func:`new_session_id`; clock:
    the default ``timestamp`` source (seconds).
    Attributes: ``session_id``, ``path``, ``entries_written``.
    Reopening a file whose last line was cut by a crash first ends that line, so the next
    entry does not fuse with it (the damaged line is then reported by :func:`resume_session`).
    A writer holds an exclusive lock on its file until :meth:`close` (or its process ends):
    a writer of a session another process holds open raises :class:`SessionBusyError`, since
    two would interleave two conversations that no resume can tell apart. In one process the
    newer writer takes the session over (a finished agent's session resumed by a new one):
    the older writer is closed, and appending to it raises ValueError.
    Raises: SessionBusyError: another process holds the session open; ValueError: a bad id.
    """

    def __init__(self, directory: str | Path, session_id: str | None = None, *,
                 clock: Clock | None = None) -> None:
        self.clock = clock or SystemClock()
        self.session_id = session_id or new_session_id(self.clock)
        self.path = session_path(directory, self.session_id)
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._taken_over = False
        key = str(self.path.resolve())
        earlier = _OPEN_WRITERS.get(key)
        if earlier is not None:   # this process resumes its own session: the newer writer wins
            earlier.close()
            earlier._taken_over = True
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:   # one writer per session: two would interleave two conversations in one log
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            self._fd = None
            raise SessionBusyError(
                f"session {self.session_id} is open for writing in another process (another "
                "mini-agent logs to it); stop that one first, or resume another id") from None
        _OPEN_WRITERS[key] = self
        os.fchmod(self._fd, 0o600)
        self.entries_written = 0
        size = os.fstat(self._fd).st_size
        if size and os.pread(self._fd, 1, size - 1) != b"\n":
            self._write(b"\n")

    def append(self, entry: dict[str, Any]) -> None:
        """Write ``entry`` as one JSON line, flush and fsync it; returns once it is on disk.

        ``timestamp`` defaults to ``clock.now()``; a ``timestamp`` in ``entry`` wins (seed 002,
        section 6, pitfall 2: tests pin times). The API key (and ``sk-ant-...`` strings) are
        replaced by ``[REDACTED]``.

        Args:
            entry: a dict such as ``{"type": "message", "message": ...}``.

        Raises:
            TypeError: ``entry`` is not a dict or not JSON-serialisable.
            ValueError: the writer was closed (:meth:`close`).
        """
        if not isinstance(entry, dict):
            raise TypeError(f"a session entry is a dict, got {type(entry).__name__}")
        if self._fd is None:
            raise ValueError(f"session {self.session_id} is closed" + (
                ": a newer writer of the same session took it over" if self._taken_over
                else ""))
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

    def __del__(self) -> None:   # a writer dropped unclosed frees its file and its lock
        fd = getattr(self, "_fd", None)
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> "SessionWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SessionRecorder:
    """Log one run's loop events to a :class:`SessionWriter`, in write-ahead order.

    Call :meth:`record` with every event the loop yields, before asking it for the next one.
    A :class:`~mini_agent.harness.loop.MessageAppended` of the assistant is logged as a
    ``message`` entry, then every tool result that was drained while it streamed; later
    results are logged as they arrive (``tool_result`` entries); of a user message the
    blocks that are not tool results are logged (the prompt, a note about a cut tool call),
    and so are the results it holds that were not logged yet (the answers an interrupted loop
    appends without an event: the Agent passes that message in a ``MessageAppended``).

    Args:
        writer: the session's :class:`SessionWriter`.
        clock: the time source of the entries' ``timestamp`` (seconds).
    """

    def __init__(self, writer: Any, clock: Clock) -> None:
        self.writer = writer
        self.clock = clock
        self._waiting: list[dict] | None = []  # results before their assistant message is logged
        self._logged: set[str] = set()          # tool_use ids of the results logged since

    def log(self, entry: dict[str, Any]) -> None:
        """Append ``entry`` with the clock's timestamp (fsynced before this returns).

        Args:
            entry: a session entry without its ``timestamp``.
        """
        self.writer.append({**entry, "timestamp": self.clock.now()})

    def _log_result(self, block: dict) -> None:
        self.log({"type": "tool_result", "block": block})
        self._logged.add(block.get("tool_use_id"))

    def record(self, event: Any) -> None:
        """Log what ``event`` adds to the history (other events are ignored).

        Args:
            event: a loop event; only ``ToolResult`` and ``MessageAppended`` write entries.
        """
        if isinstance(event, ToolResult):
            if self._waiting is None:
                self._log_result(event.block)
            else:
                self._waiting.append(event.block)
        elif isinstance(event, MessageAppended) and event.message["role"] == "assistant":
            self.log({"type": "message", "message": event.message})
            self._logged = set()
            for block in self._waiting or []:
                self._log_result(block)
            self._waiting = None
        elif isinstance(event, MessageAppended):
            blocks = content_blocks(event.message)
            if self._waiting is None:   # results of the logged assistant message
                for block in blocks:
                    if (block.get("type") == "tool_result"
                            and block.get("tool_use_id") not in self._logged):
                        self._log_result(block)
            extra = [b for b in blocks if b.get("type") != "tool_result"]
            if extra:
                self.log({"type": "message", "message": {"role": "user", "content": extra}})
            self._waiting = []


_LAST_DATE_SECONDS = 253_402_300_799.0  # 9999-12-31 23:59:59 UTC, the last date strftime shows


def _is_date(value: Any) -> bool:
    """True for a number of Unix seconds a date can show (not a bool, NaN, inf or past 9999)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and 0.0 <= value <= _LAST_DATE_SECONDS)


def list_sessions(directory: str | Path) -> list[dict]:
    """Summarise each ``*.jsonl`` session in ``directory``, oldest first.

    Args:
        directory: the sessions folder; a missing one gives ``[]``.

    Returns:
        ``[{"session_id", "path", "entries", "prompts", "replies", "first_time",
        "last_time", "model", "problems"}]``: prompts = user text messages, replies =
        assistant messages (a reply continued through max_tokens counts once, so replies may
        be fewer than model requests), times in Unix seconds (None for an empty file),
        problems = count of damaged lines. Checked entries of the wrong shape (a message
        that is not an object, a timestamp that is not a date, a model that is not a string)
        are counted as entries and otherwise ignored.
    """
    folder = Path(directory)
    if not folder.is_dir():
        return []
    rows = []
    for path in folder.glob("*.jsonl"):
        if not path.is_file():
            continue
        entries, problems = resume_session(path)
        stamps = [e["timestamp"] for e in entries if _is_date(e.get("timestamp"))]
        messages = [e["message"] for e in entries
                    if e.get("type") == "message" and isinstance(e.get("message"), dict)]
        meta = next((e for e in entries if e.get("type") == "meta"), {})
        rows.append({
            "session_id": path.stem, "path": str(path), "entries": len(entries),
            "prompts": sum(1 for m in messages if m.get("role") == "user"),
            "replies": sum(1 for m in messages if m.get("role") == "assistant"),
            "first_time": min(stamps, default=None), "last_time": max(stamps, default=None),
            "model": meta.get("model") if isinstance(meta.get("model"), str) else None,
            "problems": len(problems)})
    return sorted(rows, key=lambda r: (r["first_time"] or 0.0, r["session_id"]))


def main_sessions(directory: str | Path = "sessions") -> int:
    """Print one line per session: the CLI body of ``mini-agent sessions``.

    Args:
        directory: the sessions folder (default ``sessions``).

    Returns:
        The exit code, 0.
    """
    rows = list_sessions(directory)
    if not rows:
        print(f"no sessions in {directory}")
        return 0

    def stamp(t: float | None) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) if t else "-"
    print(f"{'session_id':<28} {'prompts':>7} {'replies':>7}  {'first':<19}  {'last':<19}  problems")
    for r in rows:
        print(f"{r['session_id']:<28} {r['prompts']:>7} {r['replies']:>7}  "
              f"{stamp(r['first_time']):<19}  {stamp(r['last_time']):<19}  {r['problems']}")
    print("resume one with: mini-agent --resume SESSION_ID")
    return 0


def recorded_workspace(sessions_dir: str | Path, session_id: str) -> Path | None:
    """Find the workspace a logged session worked in.

    Args:
        sessions_dir: the folder of the session logs.
        session_id: the session's id.

    Returns:
        The ``"workspace"`` its session_start meta entry recorded, or None (no such session, an
        unreadable one, or a session logged before workspaces were recorded).
    """
    try:
        entries, _ = resume_session(session_path(sessions_dir, session_id))
    except (OSError, ValueError):
        return None
    meta = next((e for e in entries if e.get("type") == "meta"), {})
    return Path(meta["workspace"]) if isinstance(meta.get("workspace"), str) else None
