"""The life of a long-term memory item: promotion, provenance, conflicts, expiry, deletion.

A wrong memory keeps hurting every later task, so memory needs a lifecycle (chapter 3):

1. **Promotion**: a fact seen once is only a *candidate*; it becomes a memory item when the
   user confirmed it, when it was seen ``promote_after`` times (distinct evidence), or when it
   comes from the system of record.
2. **Provenance and time**: every item keeps who said it (``source``), when (``observed_at``,
   seconds), and the evidence (``"session 3, turn 12"``, a URL...).
3. **Conflicts**: a different value for a known key wins by source authority
   (:data:`AUTHORITY`), then by recency; the loser is kept in the change log, and an item that
   kept its value against a lower-authority claim is flagged for re-check.
4. **Expiry and re-check**: an item past ``expires_at`` is re-checked (same value: renewed;
   different: replaced; gone: deleted).
5. **Deletion propagates**: deleting an item also removes its index entries, every summary
   derived from it, its pending candidates, and its values from the change log.

Everything here is pure: functions take a :class:`MemoryState` and return a new one (inputs
never mutated), time is passed in as ``now`` (Unix seconds, a finite number: a ``datetime``,
naive or aware, or a NaN is refused with a ValueError, since a NaN expiry never comes due and
a datetime broke the first sum or the JSON file later). Persistence is
``mini_agent.harness.memory_store``. Taught in ``notebooks/09_memory_and_subagents.ipynb``.
Source: 004_b74ef821c58ee4ec.txt ("記憶のライフサイクル", rules 4 and 5 of context pollution).
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any, Mapping

AUTHORITY: Mapping[str, int] = {"model": 1, "tool": 2, "user": 3, "system_of_record": 4}
"""Source authority, higher wins a conflict: the model's own inference < a tool observation <
the user's word < the system of record."""

DEFAULT_TTL_SECONDS = 30 * 24 * 3600.0
"""How long a promoted item lives before it must be re-checked: 30 days."""

DELETED = "[deleted]"
"""What a deleted item's values become in the change log."""


@dataclasses.dataclass(frozen=True)
class Observation:
    """One sighting of a fact: ``key`` (e.g. "user.editor"), ``value``, ``source`` (a key of
    AUTHORITY), ``observed_at`` (Unix seconds, finite: ``datetime.timestamp()`` of an aware
    datetime), ``evidence`` (where it was seen), ``confirmed`` (the user confirmed it
    explicitly).

    Raises:
        ValueError: an unknown source, an empty key or evidence, or an ``observed_at`` that is
            not a finite number of seconds (a ``datetime``, a NaN).
    """

    key: str
    value: str
    source: str
    observed_at: float
    evidence: str
    confirmed: bool = False

    def __post_init__(self) -> None:
        if self.source not in AUTHORITY:
            raise ValueError(f"unknown source {self.source!r}; use one of {sorted(AUTHORITY)}")
        if not self.key or not self.evidence:
            raise ValueError("an observation needs a key and its evidence (provenance)")
        check_seconds(self.observed_at, "observed_at")


def check_seconds(value: Any, name: str = "now") -> float:
    """Check that a time is Unix seconds: a finite int or float, not a ``datetime``.

    Args:
        value: the time given.
        name: the parameter's name, for the message (default "now").

    Returns:
        ``value`` as a float.

    Raises:
        ValueError: ``value`` is a bool, a ``datetime`` (naive or aware) or another
            non-number, or NaN or infinite; the message says to pass ``.timestamp()`` of an
            aware datetime.

    >>> check_seconds(1_767_225_600)
    1767225600.0
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value):
        raise ValueError(f"{name} must be Unix seconds (a finite number), got {value!r}; "
                         "for a datetime pass its .timestamp(), made aware first (a naive "
                         "one is read in the machine's local time zone)")
    return float(value)


@dataclasses.dataclass(frozen=True)
class MemoryItem:
    """A promoted memory: the winning observation plus ``sightings`` (distinct evidence),
    ``promoted_because``, ``expires_at`` (seconds) and ``needs_recheck``."""

    key: str
    value: str
    source: str
    observed_at: float
    evidence: str
    confirmed: bool
    sightings: int
    promoted_because: str
    expires_at: float
    needs_recheck: bool = False


@dataclasses.dataclass(frozen=True)
class Summary:
    """Text derived from items (``derived_from``: their keys); deleted with any of them."""

    text: str
    derived_from: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class MemoryState:
    """Everything long-term memory holds. ``items`` and ``candidates`` by key; ``index``:
    term -> keys; ``summaries`` by id; ``log``: change records ``{"at", "event", "key",
    "value", "previous", "source", "evidence", "reason"}``, oldest first, where ``value`` is
    the value the event proposed and ``previous`` the stored value before it."""

    items: Mapping[str, MemoryItem] = dataclasses.field(default_factory=dict)
    candidates: Mapping[str, tuple[Observation, ...]] = dataclasses.field(default_factory=dict)
    index: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    summaries: Mapping[str, Summary] = dataclasses.field(default_factory=dict)
    log: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Serialise the state for the harness to store.

        Returns:
            A JSON-ready dict; :meth:`from_dict` reads it back.
        """
        return {"items": {k: dataclasses.asdict(v) for k, v in self.items.items()},
                "candidates": {k: [dataclasses.asdict(o) for o in v]
                               for k, v in self.candidates.items()},
                "index": {k: list(v) for k, v in self.index.items()},
                "summaries": {k: dataclasses.asdict(v) for k, v in self.summaries.items()},
                "log": [dict(e) for e in self.log]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "MemoryState":
        """Rebuild a state from :meth:`to_dict`'s output (the inverse).

        Args:
            data: a mapping as :meth:`to_dict` wrote it; a malformed one raises KeyError or
                TypeError while it is read.

        Returns:
            A new :class:`MemoryState`.
        """
        return cls(items={k: MemoryItem(**v) for k, v in data["items"].items()},
                   candidates={k: tuple(Observation(**o) for o in v)
                               for k, v in data["candidates"].items()},
                   index={k: tuple(v) for k, v in data["index"].items()},
                   summaries={k: Summary(v["text"], tuple(v["derived_from"]))
                              for k, v in data["summaries"].items()},
                   log=tuple(dict(e) for e in data["log"]))


def _terms(item: MemoryItem) -> set[str]:
    return {t for t in re.findall(r"[\w\-]+", f"{item.key} {item.value}".lower()) if len(t) > 2}


def _with_item(state: MemoryState, item: MemoryItem) -> MemoryState:
    """Store ``item`` and rebuild its index entries (old terms of the key dropped)."""
    index = {t: tuple(k for k in keys if k != item.key) for t, keys in state.index.items()}
    for term in _terms(item):
        index[term] = tuple(sorted({*index.get(term, ()), item.key}))
    index = {t: keys for t, keys in index.items() if keys}
    candidates = {k: v for k, v in state.candidates.items() if k != item.key}
    return dataclasses.replace(state, items={**state.items, item.key: item}, index=index,
                               candidates=candidates)


def _logged(state: MemoryState, **entry: Any) -> MemoryState:
    return dataclasses.replace(state, log=(*state.log, entry))


def observe(state: MemoryState, obs: Observation, *, promote_after: int = 2,
            ttl_seconds: float = DEFAULT_TTL_SECONDS) -> MemoryState:
    """Take one observation through promotion or conflict resolution.

    Args:
        state: the memory; never mutated.
        obs: the sighting (its ``observed_at`` is the time used).
        promote_after: distinct pieces of evidence for the same value that promote it.
        ttl_seconds: lifetime of a promoted or renewed item in seconds.
    Returns:
        A new state. Log events: "held" (a candidate, not promoted), "promoted", "confirmed"
        (same value seen again), "replaced" (the new value won), "kept" (the old value won;
        the item is flagged ``needs_recheck``).
    Source:
        004_b74ef821c58ee4ec.txt (promotion criteria; conflicts by recency and authority).
    """
    base = dict(at=obs.observed_at, key=obs.key, source=obs.source, evidence=obs.evidence)
    old = state.items.get(obs.key)
    if old is not None:
        if obs.value == old.value:
            item = dataclasses.replace(
                old, sightings=old.sightings + (obs.evidence != old.evidence),
                observed_at=max(old.observed_at, obs.observed_at),
                confirmed=old.confirmed or obs.confirmed, needs_recheck=False,
                expires_at=max(old.expires_at, obs.observed_at + ttl_seconds))
            return _logged(_with_item(state, item), event="confirmed", value=obs.value,
                           previous=old.value, reason="same value seen again", **base)
        new_rank, old_rank = AUTHORITY[obs.source], AUTHORITY[old.source]
        if new_rank > old_rank or (new_rank == old_rank and obs.observed_at > old.observed_at):
            why = (f"authority {obs.source} > {old.source}" if new_rank > old_rank
                   else f"same authority ({obs.source}), newer")
            item = MemoryItem(obs.key, obs.value, obs.source, obs.observed_at, obs.evidence,
                              obs.confirmed, 1, why, obs.observed_at + ttl_seconds)
            return _logged(_with_item(state, item), event="replaced", value=obs.value,
                           previous=old.value, reason=why, **base)
        why = (f"authority {old.source} > {obs.source}" if old_rank > new_rank
               else "same authority, older than the stored value")
        item = dataclasses.replace(old, needs_recheck=True)
        return _logged(_with_item(state, item), event="kept", value=obs.value,
                       previous=old.value, reason=why + "; flagged for re-check", **base)
    seen = tuple(o for o in state.candidates.get(obs.key, ()) if o.value == obs.value)
    evidence = {o.evidence for o in seen} | {obs.evidence}
    if obs.confirmed or obs.source == "system_of_record" or len(evidence) >= promote_after:
        why = ("confirmed by the user" if obs.confirmed else "from the system of record"
               if obs.source == "system_of_record" else f"seen {len(evidence)} times")
        item = MemoryItem(obs.key, obs.value, obs.source, obs.observed_at, obs.evidence,
                          obs.confirmed, len(evidence), why, obs.observed_at + ttl_seconds)
        return _logged(_with_item(state, item), event="promoted", value=obs.value,
                       previous=None, reason=why, **base)
    candidates = {**state.candidates, obs.key: (*state.candidates.get(obs.key, ()), obs)}
    return _logged(dataclasses.replace(state, candidates=candidates), event="held",
                   value=obs.value, previous=None,
                   reason=f"seen {len(evidence)} of {promote_after} times, not confirmed", **base)


def due_for_recheck(state: MemoryState, *, now: float) -> list[str]:
    """List the items that must be re-checked before they are trusted again.

    Args:
        state: the memory; never mutated.
        now: the current time in seconds, compared with each item's ``expires_at``.

    Returns:
        Keys of items past ``expires_at`` at ``now`` or flagged ``needs_recheck``, sorted.

    Raises:
        ValueError: ``now`` is not a finite number of seconds.
    """
    now = check_seconds(now)
    return sorted(k for k, item in state.items.items()
                  if item.expires_at <= now or item.needs_recheck)


def recheck(state: MemoryState, key: str, current: str | None, *, now: float,
            source: str = "system_of_record", evidence: str = "re-check",
            ttl_seconds: float = DEFAULT_TTL_SECONDS) -> MemoryState:
    """Apply the result of re-checking item ``key`` against a trusted source.

    Args:
        state: the memory; never mutated.
        key: an item key.
        current: the value the source holds now; None when the fact no longer exists.
        now: the time of the check in seconds.
        source: provenance of the check, logged with it (default "system_of_record").
        evidence: what the check saw, logged with it (default "re-check").
        ttl_seconds: the new lifetime when the item is renewed.

    Returns:
        A new state: renewed ("renewed"), replaced, or deleted with propagation.

    Raises:
        KeyError: no item ``key``.
        ValueError: ``now`` is not a finite number of seconds.
    """
    now = check_seconds(now)
    old = state.items[key]
    if current is None:
        return delete(state, key, now=now, reason=f"gone at re-check ({evidence})")
    if current == old.value:
        item = dataclasses.replace(old, expires_at=now + ttl_seconds, needs_recheck=False,
                                   observed_at=now)
        return _logged(_with_item(state, item), at=now, event="renewed", key=key,
                       value=current, previous=old.value, source=source, evidence=evidence,
                       reason="re-checked, unchanged")
    item = MemoryItem(key, current, source, now, evidence, False, 1, "re-check", now + ttl_seconds)
    return _logged(_with_item(state, item), at=now, event="replaced", key=key, value=current,
                   previous=old.value, source=source, evidence=evidence,
                   reason="re-checked, changed")


def add_summary(state: MemoryState, summary_id: str, keys: list[str]) -> MemoryState:
    """Derive a summary (one ``key: value`` line per item) from ``keys``; never mutates state.

    Args:
        state: the memory; never mutated.
        summary_id: the id under which the summary is stored.
        keys: the promoted items it is derived from; deleting one of them deletes the summary.

    Returns:
        A new state holding the summary.

    Raises:
        KeyError: a key that is not a promoted item.
    """
    text = "\n".join(f"{k}: {state.items[k].value}" for k in keys)
    return dataclasses.replace(state, summaries={**state.summaries,
                                                 summary_id: Summary(text, tuple(keys))})


def delete(state: MemoryState, key: str, *, now: float, reason: str = "deletion requested"
           ) -> MemoryState:
    """Delete item ``key`` and everything derived from it.

    Removes the item, its pending candidates, its index entries, every summary derived from
    it, and replaces its values (``value``, ``previous``) in the change log with DELETED; a
    "deleted" entry (no value) is logged. Deleting an unknown key only removes candidates.

    Args:
        state: the memory; never mutated.
        key: the item to delete.
        now: the time of the deletion in seconds, for the log.
        reason: logged with the deletion (default "deletion requested").

    Returns:
        The new state.

    Raises:
        ValueError: ``now`` is not a finite number of seconds.

    Source:
        004_b74ef821c58ee4ec.txt ("訂正と削除の伝播").
    """
    now = check_seconds(now)
    values = {o.value for o in state.candidates.get(key, ())}
    if key in state.items:
        values.add(state.items[key].value)
    for entry in state.log:
        if entry.get("key") == key:
            values |= {entry.get("value"), entry.get("previous")} - {None}
    log = tuple({**e, "value": DELETED if e.get("value") in values else e.get("value"),
                 "previous": DELETED if e.get("previous") in values else e.get("previous")}
                if e.get("key") == key else e for e in state.log)
    dropped = [sid for sid, s in state.summaries.items() if key in s.derived_from]
    new = MemoryState(
        items={k: v for k, v in state.items.items() if k != key},
        candidates={k: v for k, v in state.candidates.items() if k != key},
        index={t: tuple(k for k in keys if k != key) for t, keys in state.index.items()
               if set(keys) - {key}},
        summaries={sid: s for sid, s in state.summaries.items() if sid not in dropped},
        log=log)
    return _logged(new, at=now, event="deleted", key=key, value=None, previous=None,
                   source="user", evidence=reason,
                   reason=f"also removed {len(dropped)} summaries and the index entries")


def search(state: MemoryState, text: str) -> list[str]:
    """Find the items whose index terms match a word of ``text``.

    Args:
        state: the memory; never mutated.
        text: a query; each word is looked up in the index.

    Returns:
        The matching item keys, sorted.
    """
    words = {w for w in re.findall(r"[\w\-]+", text.lower()) if len(w) > 2}
    return sorted({k for w in words for k in state.index.get(w, ())})
