"""``MemoryStore``: long-term memory items with their lifecycle, persisted in one JSON file.

The lifecycle rules are pure (:mod:`mini_agent.core.memory_lifecycle`); this class reads the
state from disk, applies one rule with the clock's time, and writes the state back atomically
(temp file, fsync, rename), so a crash leaves either the old or the new file, never half of
one. ``deleted_everywhere(value)`` is the test the chapter asks for: after a deletion, the
value is in no file of the store.

Taught in ``notebooks/09_memory_and_subagents.ipynb``.

Source:
    004_b74ef821c58ee4ec.txt (memory lifecycle; "実際に削除されたかを確認する試験").
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

from mini_agent.harness.clock import Clock, SystemClock
from mini_agent.core import memory_lifecycle as lifecycle
from mini_agent.core.memory_lifecycle import MemoryState, Observation


class MemoryStore:
    """Long-term memory in ``path`` (JSON), one lifecycle step per call.

    Args:
        path: the JSON file (created on first write; its folder must exist).
        clock: time source in seconds; ManualClock in tests and notebooks.
        promote_after: distinct sightings that promote a fact (default 2).
        ttl_seconds: lifetime of an item before re-check, in seconds (default
            ``memory_lifecycle.DEFAULT_TTL_SECONDS``).
    Raises:
        ValueError: the file exists but is not a memory state (nothing is overwritten).
    """

    def __init__(self, path: str | os.PathLike[str], *, clock: Clock | None = None,
                 promote_after: int = 2,
                 ttl_seconds: float = lifecycle.DEFAULT_TTL_SECONDS) -> None:
        self.path = Path(path)
        self.clock = clock or SystemClock()
        self.promote_after = promote_after
        self.ttl_seconds = ttl_seconds
        self.state = self._load()

    def _load(self) -> MemoryState:
        if not self.path.exists():
            return MemoryState()
        try:
            return MemoryState.from_dict(json.loads(self.path.read_text(encoding="utf-8")))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{self.path} is not a memory state file ({exc}); move it "
                             "away or pass another path") from None

    def _save(self, state: MemoryState) -> MemoryState:
        # serialised before any file is opened: a value JSON cannot hold leaves no half file
        text = json.dumps(state.to_dict(), ensure_ascii=False, indent=1, sort_keys=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
        self.state = state
        return state

    def observe(self, key: str, value: str, *, source: str, evidence: str,
                confirmed: bool = False) -> MemoryState:
        """Record one sighting at the clock's time (promotion or conflict resolution).

        Args:
            key: what the fact is about, e.g. ``"user.timezone"``.
            value: the value seen.
            source: who or what said it (authority counts in a conflict).
            evidence: where it was seen; a sighting with the same evidence as before does not
                count again towards promotion.
            confirmed: the sighting is an explicit confirmation.

        Returns:
            The new state, also saved to disk.
        """
        obs = Observation(key, value, source, self.clock.now(), evidence, confirmed)
        return self._save(lifecycle.observe(self.state, obs, promote_after=self.promote_after,
                                            ttl_seconds=self.ttl_seconds))

    def recheck_due(self, check: Callable[[str], str | None] | None = None) -> list[str]:
        """Re-check every due item (expired at the clock's time, or flagged ``needs_recheck``).

        An item whose current value is None is discarded (deleted with propagation), the
        chapter's "re-check or discard"; an unchanged one is renewed, a changed one replaced.

        Args:
            check: ``check(key) -> current value | None``; without it every due item is
                discarded.

        Returns:
            The keys handled, sorted; the new state is saved to disk.
        """
        due = lifecycle.due_for_recheck(self.state, now=self.clock.now())
        state = self.state
        for key in due:
            current = check(key) if check is not None else None
            state = lifecycle.recheck(state, key, current, now=self.clock.now(),
                                      ttl_seconds=self.ttl_seconds,
                                      evidence="re-check" if check else "expired, no checker")
        self._save(state)
        return due

    def summarise(self, summary_id: str, keys: list[str]) -> str:
        """Derive and store a summary of ``keys``: one ``key: value`` line per item.

        Args:
            summary_id: the summary's id; an existing one is replaced.
            keys: promoted item keys, in the order of the lines.

        Returns:
            The summary's text.

        Raises:
            KeyError: a key that is not a promoted item.
        """
        self._save(lifecycle.add_summary(self.state, summary_id, keys))
        return self.state.summaries[summary_id].text

    def delete(self, key: str, *, reason: str = "deletion requested") -> MemoryState:
        """Delete ``key`` and what was derived from it, on disk too.

        Candidates, index entries, summaries derived from it and its values in the change
        log go; an unknown key only removes candidates.

        Args:
            key: the item to delete.
            reason: logged with the deletion (default ``"deletion requested"``).

        Returns:
            The new state, also saved to disk.
        """
        return self._save(lifecycle.delete(self.state, key, now=self.clock.now(), reason=reason))

    def deleted_everywhere(self, value: str) -> bool:
        """Check that a deleted value is gone from disk (the chapter's deletion test).

        Args:
            value: the text to look for.

        Returns:
            True if ``value`` occurs in no file of the store (the state file and its temp
            file).
        """
        files = [self.path, self.path.with_name(self.path.name + ".tmp")]
        return not any(value in p.read_text(encoding="utf-8") for p in files if p.exists())
