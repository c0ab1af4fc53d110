"""The four layers of information of a long-running agent, and which one wins a disagreement.

| layer | example | authority | lifetime |
|---|---|---|---|
| conversation history | messages, tool results | low: summarised and cut | the session |
| task state | progress file, checkpoints | the basis for resuming | until the task is done |
| long-term memory | preferences, lessons | reference: verify before use | until its expiry |
| system of record | orders, payments, approvals | highest: the facts | legal retention |

Each layer is its own object with ``lookup(key) -> Claim | None``; :func:`resolve` asks all of
them and the highest authority that has a claim wins, with every disagreement reported. The
agent remembering "refund done" does not make it so: the payment ledger decides.

Pure: layers are snapshots passed in (the harness reads the real system of record). Taught in
``notebooks/09_memory_and_subagents.ipynb``.

Source:
    004_b74ef821c58ee4ec.txt ("情報の四つの層").
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping, Sequence

from mini_agent.core.memory_lifecycle import MemoryState


@dataclasses.dataclass(frozen=True)
class Claim:
    """What one layer says about a key: ``layer``, ``value``, ``authority`` (higher wins),
    ``where`` (message index, file, record id)."""

    layer: str
    value: str
    authority: int
    where: str


class ConversationHistory:
    """Messages; a claim is the newest text line ``<key>: <value>`` or ``<key> = <value>``.

    Authority 1 (summaries and truncation change it); lifetime: the session.
    """

    name, authority, lifetime = "conversation history", 1, "session"

    def __init__(self, messages: Sequence[Mapping[str, Any]]) -> None:
        self.messages = list(messages)

    def lookup(self, key: str) -> Claim | None:
        """Find the newest claim about ``key`` in the messages' text.

        Args:
            key: the fact's name.

        Returns:
            A :class:`Claim` from this layer, or None.
        """
        pattern = re.compile(rf"^\s*{re.escape(key)}\s*[:=]\s*(.+?)\s*$", re.MULTILINE)
        for i in range(len(self.messages) - 1, -1, -1):
            content = self.messages[i].get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for block in reversed(blocks or []):
                found = pattern.findall(block.get("text", "")) if block.get("type") == "text" \
                    else []
                if found:
                    return Claim(self.name, found[-1], self.authority, f"messages[{i}]")
        return None


class TaskState:
    """The task's progress record (e.g. a progress file's items): ``{key: value}``.

    Authority 3: what resuming is based on; lifetime: until the task completes.
    """

    name, authority, lifetime = "task state", 3, "until the task is done"

    def __init__(self, progress: Mapping[str, str], *, source: str = "progress.json") -> None:
        self.progress = dict(progress)
        self.source = source

    def lookup(self, key: str) -> Claim | None:
        """Read the progress record's value for ``key``.

        Args:
            key: the fact's name.

        Returns:
            A :class:`Claim` from this layer, or None.
        """
        if key not in self.progress:
            return None
        return Claim(self.name, self.progress[key], self.authority, self.source)


class LongTermMemory:
    """Promoted memory items (:class:`~mini_agent.core.memory_lifecycle.MemoryState`).

    Authority 2: reference material, verified before use; above the raw history (it was
    promoted with provenance), below the task state. Lifetime: until the item's expiry.
    """

    name, authority, lifetime = "long-term memory", 2, "until its expiry"

    def __init__(self, state: MemoryState) -> None:
        self.state = state

    def lookup(self, key: str) -> Claim | None:
        """Read the promoted item's value for ``key`` (candidates are not memories yet).

        Args:
            key: the item's key.

        Returns:
            A :class:`Claim` from this layer, or None.
        """
        item = self.state.items.get(key)
        if item is None:
            return None
        return Claim(self.name, item.value, self.authority,
                     f"memory item ({item.source}, {item.evidence})")


class SystemOfRecord:
    """A snapshot of the business system's records ``{key: value}``: authority 4, the facts.

    Lifetime: the legal or business retention period.
    """

    name, authority, lifetime = "system of record", 4, "retention period"

    def __init__(self, records: Mapping[str, str], *, system: str = "ledger") -> None:
        self.records = dict(records)
        self.system = system

    def lookup(self, key: str) -> Claim | None:
        """Read the record's value for ``key``.

        Args:
            key: the record's key.

        Returns:
            A :class:`Claim` from this layer, or None.
        """
        if key not in self.records:
            return None
        return Claim(self.name, self.records[key], self.authority, f"{self.system}:{key}")


@dataclasses.dataclass(frozen=True)
class Resolution:
    """The outcome of :func:`resolve`: ``winner`` (a Claim or None), every ``claims`` found,
    and ``overruled``: the claims whose value differs from the winner's."""

    key: str
    winner: Claim | None
    claims: tuple[Claim, ...]
    overruled: tuple[Claim, ...]

    @property
    def agree(self) -> bool:
        """True when every layer that has a claim says the same value."""
        return not self.overruled


def resolve(key: str, layers: Sequence[Any]) -> Resolution:
    """Ask every layer about ``key``; the claim of the highest authority wins.

    Args:
        key: the fact asked about, e.g. "refund A-1001".
        layers: objects with ``lookup(key)`` and ``authority`` (any order; not mutated).
    Returns:
        A :class:`Resolution`; ``winner`` is None when no layer knows the key.
    Source:
        004_b74ef821c58ee4ec.txt ("タスク状態と正本が食い違えば、正本を優先します").
    """
    claims = tuple(c for c in (layer.lookup(key) for layer in layers) if c is not None)
    if not claims:
        return Resolution(key, None, (), ())
    winner = max(claims, key=lambda c: c.authority)
    return Resolution(key, winner, claims, tuple(c for c in claims if c.value != winner.value))
