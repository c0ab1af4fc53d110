"""A task's progress as plain data: items, states, idempotency keys, a lease and a version stamp.

Shape of a progress document (what :mod:`mini_agent.harness.checkpoint` writes as JSON)::

    {"format": 1, "task": "ledger-2026", "job_version": "sha256:...",
     "goal": str, "done_criteria": [str],
     "lease": {"owner": "worker-1", "expires_at": 1767225900.0, "generation": 3} | None,
     "approvals": [{"id": "post-ledger", "expires_at": float}],
     "handles": [{"id": "preview-17", "kind": "preview", "expires_at": float}],
     "items": [{"id": "inv-007", "target": "inv-007", "step": "post", "priority": 1,
                "key": "ledger-2026:inv-007:post", "state": "pending",
                "intent": {"key": str, "at": float} | None,
                "result": dict | None, "result_path": str | None,
                "verification": dict | None, "error": str | None, "attempts": int}]}

Each item moves ``pending -> in_progress -> done`` (or ``failed``). ``in_progress`` with an
``intent`` and no ``result`` is the dangerous state: the external write may or may not have
happened, so a resume asks the system of record by key before doing anything (chapter 3,
"the gap between a checkpoint and an external side effect").

Every function here is pure: it takes time as an argument, never mutates its input and returns
a new document. What this module does not do: read or write files, talk to the system of record.
Taught in ``notebooks/10_checkpoints_and_handoff.ipynb``.
Source: 004_b74ef821c58ee4ec.txt (checkpoints and idempotency; resume checks; lab 1).
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any, Iterable

PROGRESS_FORMAT = 1
"""The progress-file format this code reads and writes; any other value is refused."""

ITEM_STATES = ("pending", "in_progress", "done", "failed")


class ProgressVersionError(ValueError):
    """A progress document this code must not resume: another format or another job definition.

    Attributes: ``found`` and ``expected`` (the two stamps), ``field`` ("format" or
    "job_version").
    """

    def __init__(self, field: str, found: Any, expected: Any) -> None:
        self.field, self.found, self.expected = field, found, expected
        what = ("another progress-file format" if field == "format" else
                "the job definition changed since it was written: its items, steps or code")
        super().__init__(f"incompatible progress file: {field} is {found!r}, this code expects "
                         f"{expected!r} ({what}); finish it with the version that wrote it or "
                         f"start a new progress file")


class LeaseHeldError(RuntimeError):
    """Another worker holds an unexpired lease on the task.

    Attributes: ``owner``, ``expires_at`` (Unix seconds), ``seconds_left``.
    """

    def __init__(self, owner: str, expires_at: float, now: float) -> None:
        self.owner, self.expires_at = owner, expires_at
        self.seconds_left = max(0.0, expires_at - now)
        super().__init__(f"task is leased by {owner!r} for {self.seconds_left:.1f} more seconds; "
                         f"do not run it in parallel: wait for the lease to expire")


def idempotency_key(task: str, target: str, step: str) -> str:
    """Return the deterministic key ``"task:target:step"`` of one external operation.

    The same three parts always give the same key (no time, counter or random part), so a
    retry after a crash presents the system of record with the key it already saw.

    Args:
        task: the task id, e.g. "ledger-2026".
        target: what the step acts on, e.g. "inv-007".
        step: the stage of the work on that target, e.g. "post".
    Returns:
        ``f"{task}:{target}:{step}"``.
    Raises:
        ValueError: a part is empty, not a str, or contains ":" (the key would be ambiguous).
    Source:
        004_b74ef821c58ee4ec.txt (冪等キー: タスクID:対象ID:段階).

    >>> idempotency_key("ledger-2026", "inv-007", "post")
    'ledger-2026:inv-007:post'
    """
    parts = (task, target, step)
    for name, part in zip(("task", "target", "step"), parts):
        if not isinstance(part, str) or not part:
            raise ValueError(f"idempotency key part {name} must be a non-empty str, got {part!r}")
        if ":" in part:
            raise ValueError(f"idempotency key part {name}={part!r} contains ':' (ambiguous key)")
    return ":".join(parts)


def job_version(task: str, items: Iterable[dict], *, code: str = str(PROGRESS_FORMAT)) -> str:
    """Return a stamp of the job definition: sha256 over the task, code version and items.

    Two runs of the same job (same ids, targets, steps and payloads) get the same stamp; any
    change to them gives another, and a progress file written for the old one is refused.

    Args:
        task: the task id.
        items: the job's item dicts, as given to :func:`new_progress`; never mutated.
        code: the code version folded into the stamp (default :data:`PROGRESS_FORMAT`).

    Returns:
        ``"sha256:"`` and the first 16 hex digits of the digest.
    """
    body = json.dumps({"task": task, "code": code, "items": list(items)}, sort_keys=True,
                      ensure_ascii=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(body.encode()).hexdigest()[:16]


def new_progress(task: str, items: Iterable[dict], *, goal: str = "",
                 done_criteria: Iterable[str] = (), version: str | None = None,
                 approvals: Iterable[dict] = (), handles: Iterable[dict] = ()) -> dict:
    """Return a fresh progress document: every item ``pending``, with its idempotency key.

    Args:
        task: the task id (the first part of every key).
        items: ``{"id", "target"?, "step"?, "priority"?}`` dicts; ``target`` defaults to the
            id, ``step`` to "apply", ``priority`` to 0 (lower runs first). Never mutated.
        goal: what the job is for.
        done_criteria: how "finished" is checked, one criterion per string.
        version: the job stamp; default :func:`job_version` of ``task`` and ``items``.
        approvals: ``{"id", "expires_at", ...}`` dicts checked on resume.
        handles: ``{"id", "kind", "expires_at", ...}`` dicts checked on resume.

    Returns:
        The document in the shape the module docstring shows (``format``, ``lease`` None).

    Raises:
        ValueError: duplicate item ids or a bad key part.
    """
    items = [dict(item) for item in items]
    ids = [item["id"] for item in items]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate item ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    rows = []
    for item in items:
        target, step = item.get("target", item["id"]), item.get("step", "apply")
        rows.append({"id": item["id"], "target": target, "step": step,
                     "priority": int(item.get("priority", 0)),
                     "key": idempotency_key(task, target, step),
                     "state": "pending", "intent": None, "result": None, "result_path": None,
                     "verification": None, "error": None, "attempts": 0})
    return {"format": PROGRESS_FORMAT, "task": task,
            "job_version": version or job_version(task, items),
            "goal": goal, "done_criteria": list(done_criteria), "lease": None,
            "approvals": [dict(a) for a in approvals], "handles": [dict(h) for h in handles],
            "items": rows}


def check_version(progress: dict, *, expected_job_version: str | None = None) -> None:
    """Refuse a progress document this code must not resume.

    Args:
        progress: the document as read; never mutated.
        expected_job_version: the stamp of the job about to run; None skips that check.

    Raises:
        ProgressVersionError: ``format`` is not :data:`PROGRESS_FORMAT`, or
            ``expected_job_version`` is given and differs from the document's ``job_version``.
    """
    if progress.get("format") != PROGRESS_FORMAT:
        raise ProgressVersionError("format", progress.get("format"), PROGRESS_FORMAT)
    if expected_job_version is not None and progress.get("job_version") != expected_job_version:
        raise ProgressVersionError("job_version", progress.get("job_version"),
                                   expected_job_version)


def find_item(progress: dict, item_id: str) -> dict:
    """Return the item ``item_id`` (the document's own dict, not a copy).

    Args:
        progress: the document.
        item_id: the item's ``id``.

    Returns:
        The item dict inside ``progress``.

    Raises:
        KeyError: no item ``item_id``; the message names the id and the task.
    """
    for item in progress["items"]:
        if item["id"] == item_id:
            return item
    raise KeyError(f"no item {item_id!r} in task {progress.get('task')!r}")


def _updated(progress: dict, item_id: str, **changes: Any) -> dict:
    new = copy.deepcopy(progress)
    find_item(new, item_id).update(changes)
    return new


def with_intent(progress: dict, item_id: str, key: str, *, now: float) -> dict:
    """Return a copy where ``item_id`` is ``in_progress`` with intent ``{"key", "at": now}``.

    Args:
        progress: the document; never mutated.
        item_id: the item about to be executed.
        key: the idempotency key sent with the external write.
        now: the time of the intent in seconds.

    Returns:
        The new document.

    Raises:
        ValueError: the item is already done (a done item is never executed again).
    """
    item = find_item(progress, item_id)
    if item["state"] == "done":
        raise ValueError(f"item {item_id!r} is done; it is not executed again")
    return _updated(progress, item_id, state="in_progress", intent={"key": key, "at": now},
                     attempts=item["attempts"] + 1, error=None)


def with_result(progress: dict, item_id: str, result: dict, *, now: float,
                result_path: str | None = None, verified_by: str = "system_of_record") -> dict:
    """Return a copy where ``item_id`` is ``done`` with its result and how it was verified.

    Args:
        progress: the document; never mutated.
        item_id: the item whose write completed.
        result: what the system of record returned; deep-copied into the item.
        now: the time of the verification in seconds.
        result_path: where a large result was written, if not kept inline.
        verified_by: who confirmed the write, stored in ``verification`` (default
            "system_of_record").

    Returns:
        The new document; ``verification`` holds ``{"by", "key", "at"}``.

    Raises:
        ValueError: the item has no intent (a result must follow an intent).
    """
    item = find_item(progress, item_id)
    if not item["intent"]:
        raise ValueError(f"item {item_id!r} has no intent: record the intent before the result")
    return _updated(progress, item_id, state="done", result=copy.deepcopy(result),
                    result_path=result_path,
                    verification={"by": verified_by, "key": item["intent"]["key"], "at": now})


def with_failure(progress: dict, item_id: str, error: str) -> dict:
    """Return a copy where ``item_id`` is ``failed`` with ``error``.

    Args:
        progress: the document; never mutated.
        item_id: the item that failed.
        error: a one-line reason.

    Returns:
        The new document.
    """
    return _updated(progress, item_id, state="failed", error=str(error))


def take_lease(progress: dict, owner: str, *, now: float, ttl_seconds: float) -> dict:
    """Return a copy leased to ``owner`` until ``now + ttl_seconds``.

    The owner of the current lease may renew it (also after a restart under the same name);
    anyone may take an expired lease, which bumps ``generation``.

    Args:
        progress: the document; never mutated.
        owner: the worker's name; not empty.
        now: the current time in seconds.
        ttl_seconds: the lease's lifetime in seconds (> 0).

    Returns:
        The new document with ``lease`` = ``{"owner", "expires_at", "generation"}``.

    Raises:
        LeaseHeldError: another owner's lease has not expired at ``now``.
        ValueError: ttl_seconds <= 0 or an empty owner.
    """
    if ttl_seconds <= 0 or not owner:
        raise ValueError(f"a lease needs an owner and ttl_seconds > 0, got {owner!r}, "
                         f"{ttl_seconds}")
    lease = progress.get("lease")
    if lease and lease["owner"] != owner and now < lease["expires_at"]:
        raise LeaseHeldError(lease["owner"], lease["expires_at"], now)
    same = bool(lease) and lease["owner"] == owner and now < lease["expires_at"]
    generation = (lease or {}).get("generation", 0) + (0 if same else 1)
    new = copy.deepcopy(progress)
    new["lease"] = {"owner": owner, "expires_at": now + ttl_seconds, "generation": generation}
    return new


def expired(progress: dict, *, now: float) -> dict[str, list[str]]:
    """Return the approvals and handles that have expired by ``now``.

    Args:
        progress: the document; never mutated.
        now: the current time in seconds.

    Returns:
        ``{"approvals": [...], "handles": [...]}``: ids whose ``expires_at`` is at or before
        ``now``.
    """
    return {kind: [x["id"] for x in progress.get(kind, []) if x["expires_at"] <= now]
            for kind in ("approvals", "handles")}


class ApprovalExpiredError(RuntimeError):
    """A human approval recorded in the progress file expired before the work resumed.

    Attributes: ids (the expired approvals), now (seconds). Nothing may be applied on the
    strength of an expired approval: ask for it again, then resume.
    """

    def __init__(self, ids: list[str], now: float) -> None:
        self.ids, self.now = list(ids), now
        super().__init__(f"approval {', '.join(ids)} expired before resume (now={now:.0f} s); "
                         "nothing was applied: ask for the approval again, record it in the "
                         "progress file, then resume")


def require_fresh_approvals(progress: dict, *, now: float) -> None:
    """Refuse to resume on an expired approval.

    Args:
        progress: the progress file's dict (its ``approvals``: ``{"id", "expires_at"}``).
        now: the current time in seconds.
    Returns:
        None when every approval is still valid at ``now`` (or there are none).
    Raises:
        ApprovalExpiredError: one or more approvals have ``expires_at <= now``.
    Source:
        004_b74ef821c58ee4ec.txt (再開時の確認: 承認やハンドルの期限切れ).
    """
    ids = expired(progress, now=now)["approvals"]
    if ids:
        raise ApprovalExpiredError(ids, now)


def open_intents(progress: dict) -> list[dict]:
    """Return the items with an intent and no result.

    Ask the system of record about these before anything is redone.

    Args:
        progress: the document; never mutated.

    Returns:
        Copies of those items, in item order.
    """
    return [dict(i) for i in progress["items"] if i["intent"] and i["state"] != "done"]


def remaining(progress: dict) -> list[dict]:
    """Return the items not done, in the order to work on them.

    Open intents first (they must be reconciled before anything else), then by
    ``priority`` (lower first), then by position in the job.

    Args:
        progress: the document; never mutated.

    Returns:
        Copies of the items.
    """
    rows = [(0 if i["intent"] else 1, i["priority"], n, i)
            for n, i in enumerate(progress["items"]) if i["state"] != "done"]
    return [dict(i) for *_, i in sorted(rows, key=lambda r: r[:3])]


def counts(progress: dict) -> dict[str, int]:
    """Count the items in each state.

    Args:
        progress: the document.

    Returns:
        ``{state: number of items}`` for every state in :data:`ITEM_STATES` (zeros kept).

    >>> counts(new_progress("t", [{"id": "a"}, {"id": "b"}]))
    {'pending': 2, 'in_progress': 0, 'done': 0, 'failed': 0}
    """
    out = dict.fromkeys(ITEM_STATES, 0)
    for item in progress["items"]:
        out[item["state"]] += 1
    return out
