"""Cold storage for the context lifecycle: segments in SQLite and the ``recall_segment`` tool.

The tiers themselves (Hot, Warm-A, Warm-B, Cold) are pure and live in ``core/lifecycle.py``;
an exchange that goes Cold is stored here verbatim and the model can reheat it by id.
IO: sqlite3. Taught in ``notebooks/08_context_lifecycle.ipynb``.
Source: 003_85ccd58041fa7231.txt (cold tier, reheat by id).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import Any, Sequence

from mini_agent.core.lifecycle import eviction_order
from mini_agent.core.messages import Message, content_blocks
from mini_agent.harness.tools import Tool, ToolError

__all__ = ["ColdStore", "recall_segment_tool"]


class ColdStore:
    """Cold segments in SQLite: id, label, time and the exact original messages.

    Rows are ordered by ``seq``, an explicit ``INTEGER PRIMARY KEY AUTOINCREMENT`` assigned at
    insertion (monotonic, never reused after a delete), never by ``time``: two segments with
    the same timestamp keep their insertion order, and :meth:`evict_oldest` removes the
    first-inserted. Messages are stored as the JSON text of the list (key order kept), so a
    reheat is byte-identical: ``json.dumps(store.reheat(id))`` equals the stored text. Each
    write commits, so a new ``ColdStore(path)`` after a restart sees every stored segment.
    IO: sqlite3 only. Thread-safe (the Agent runs tools in worker threads).

    Args:
        path: a file path, or ``":memory:"`` (default) for a store that lives with the object.
    """

    def __init__(self, path: Any = ":memory:") -> None:
        self.path = str(path)
        # tools run in executor threads: one connection shared under a lock
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._lock = threading.Lock()
        self._db.execute("CREATE TABLE IF NOT EXISTS segments (seq INTEGER PRIMARY KEY "
                         "AUTOINCREMENT, id TEXT NOT NULL UNIQUE, label TEXT NOT NULL, "
                         "time REAL NOT NULL, messages TEXT NOT NULL)")
        self._db.commit()

    def put(self, segment: str, label: str, time_seconds: float,
            messages: Sequence[Message]) -> int:
        """Store a segment once, committed at once.

        Storing the same id again with the same messages is a no-op; with messages that only
        EXTEND the stored ones (same messages, the last one's content grew at its end: an open
        user message that a later prompt extended, seen cold by a continuation request) it
        replaces the messages and label under the same ``seq`` (the time stays the first one).

        Args:
            segment: the segment id, e.g. ``"seg-007"``.
            label: a short label shown in the cold index.
            time_seconds: when the exchange happened (Unix seconds); kept for display, never
                used for ordering.
            messages: the exchange's exact messages; stored as JSON text, not mutated.

        Returns:
            The segment's ``seq`` (its insertion number).

        Raises:
            ValueError: the id is already stored with other messages (nothing is lost).
        """
        text = json.dumps(list(messages), ensure_ascii=False)
        with self._lock:
            return self._put(segment, label, time_seconds, text)

    def _put(self, segment: str, label: str, time_seconds: float, text: str) -> int:
        row = self._db.execute("SELECT seq, messages FROM segments WHERE id = ?",
                               (segment,)).fetchone()
        if row is not None:
            if row[1] == text:
                return row[0]
            if not _extends(json.loads(text), json.loads(row[1])):
                raise ValueError(f"cold segment {segment!r} is already stored with other "
                                 "messages; segment ids must not be reused")
            self._db.execute("UPDATE segments SET label = ?, messages = ? WHERE seq = ?",
                             (label, text, row[0]))
            self._db.commit()
            return row[0]
        cur = self._db.execute("INSERT INTO segments (id, label, time, messages) VALUES "
                               "(?, ?, ?, ?)", (segment, label, float(time_seconds), text))
        self._db.commit()
        return int(cur.lastrowid)

    def reheat_json(self, segment: str) -> str:
        """Return the stored JSON text of a segment's messages.

        Args:
            segment: the segment id.

        Returns:
            The JSON text exactly as stored.

        Raises:
            KeyError: unknown id (the message lists up to 20 known ids).
        """
        with self._lock:
            row = self._db.execute("SELECT messages FROM segments WHERE id = ?",
                                   (segment,)).fetchone()
        if row is None:
            known = ", ".join(s["id"] for s in self.segments()[:20]) or "none"
            raise KeyError(f"unknown cold segment {segment!r} (known: {known})")
        return row[0]

    def reheat(self, segment: str) -> list[Message]:
        """Return the exact original messages of a segment.

        Args:
            segment: the segment id.

        Returns:
            A new list of the stored messages.

        Raises:
            KeyError: unknown id.
        """
        return json.loads(self.reheat_json(segment))

    def segments(self) -> list[dict[str, Any]]:
        """List the stored segments without their messages.

        Returns:
            ``[{"seq": int, "id": str, "label": str, "time": float}]`` in insertion order
            (by ``seq``).
        """
        with self._lock:
            rows = self._db.execute("SELECT seq, id, label, time FROM segments ORDER BY seq"
                                    ).fetchall()
        return [{"seq": r[0], "id": r[1], "label": r[2], "time": r[3]} for r in rows]

    def evict_oldest(self, count: int) -> list[str]:
        """Delete the ``count`` first-inserted segments (by ``seq``, never by time).

        Args:
            count: how many segments to delete; a negative count deletes none.

        Returns:
            The deleted ids, oldest first.
        """
        ids = eviction_order(self.segments())[:max(0, count)]
        with self._lock:
            self._db.executemany("DELETE FROM segments WHERE id = ?", [(i,) for i in ids])
            self._db.commit()
        return ids

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM segments").fetchone()[0]

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()


def _extends(new: list[Message], old: list[Message]) -> bool:
    """True when ``new`` is ``old`` with blocks appended to its last message only."""
    if len(new) != len(old) or not old or new[:-1] != old[:-1]:
        return False
    last_new, last_old = new[-1], old[-1]
    blocks = content_blocks(last_old)
    return (last_new.get("role") == last_old.get("role")
            and content_blocks(last_new)[:len(blocks)] == blocks)


def recall_segment_tool(store: ColdStore) -> Any:
    """Build the ``recall_segment`` tool: ``{"id": "seg-NNN"}`` -> the segment's messages.

    When the tool runs, an input without a string ``id``, or an unknown id, raises
    ``ToolError`` (listing known ids); the model sees it as an ``is_error`` tool result.

    Args:
        store: the cold store the tool reads.

    Returns:
        A read-only :class:`mini_agent.harness.tools.Tool` whose result is the stored JSON
        text of the original messages (byte-identical to what was stored).

    Source:
        003_85ccd58041fa7231.txt (the reheat flow as a retrieval tool).
    """
    def run(tool_input: dict[str, Any]) -> str:
        segment = tool_input.get("id")
        if not isinstance(segment, str):
            raise ToolError('recall_segment needs {"id": "seg-NNN"} (see the cold index)')
        try:
            return store.reheat_json(segment)
        except KeyError as exc:
            raise ToolError(str(exc.args[0])) from None

    return Tool(name="recall_segment",
                description=("Reheat a cold segment: returns the exact original messages of "
                             "a past exchange listed in the cold index, as JSON."),
                input_schema={"type": "object", "properties": {"id": {
                    "type": "string", "description": "segment id, e.g. seg-007"}},
                    "required": ["id"]},
                safety="read-only", run=run)
