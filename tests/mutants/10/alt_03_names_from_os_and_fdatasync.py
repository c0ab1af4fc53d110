"""ALTERNATIVE (correct, written differently): os functions imported by name (from os import fdatasync, fsync, replace) and the temp file made durable with fdatasync.
"""


from __future__ import annotations

import contextlib
import json
import os
from os import fdatasync, fsync, replace
import tempfile
from pathlib import Path
from typing import Any


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
        the checkpoints of the course chapter on context, memory and state (seed 004; see
        docs/sources.md in the kit): an idempotency key is task id:target id:step (冪等キー:
        タスクID:対象ID:段階).
    Example: ``idempotency_key("ledger-2026", "inv-007", "post")`` is
    ``"ledger-2026:inv-007:post"``.
    """
    parts = (task, target, step)
    for name, part in zip(("task", "target", "step"), parts):
        if not isinstance(part, str) or not part:
            raise ValueError(f"idempotency key part {name} must be a non-empty str, got {part!r}")
        if ":" in part:
            raise ValueError(f"idempotency key part {name}={part!r} contains ':' (ambiguous key)")
    return ":".join(parts)


def write_json_atomic(path: str | os.PathLike[str], data: Any) -> None:
    """Write ``data`` as JSON to ``path`` so that a crash leaves the old file or the new one.

    Steps: serialise, write a temporary file in the same folder, flush and fsync it, rename it
    over ``path`` (atomic on POSIX within one file system), fsync the folder so the rename
    itself survives a power loss. On any error the temporary file is removed and ``path`` is
    left as it was.

    Args:
        path: the target file; its folder must exist.
        data: anything ``json.dumps`` accepts; never mutated.
    Returns:
        None.
    Raises:
        TypeError: ``data`` is not JSON-serialisable (``path`` untouched).
        OSError: the folder is missing or not writable (``path`` untouched).
    Source:
        lab 1 of the course chapter on context, memory and state (seed 004; see
        docs/sources.md in the kit): a JSON progress file that survives a forced kill.
    """
    path = Path(path)
    text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            fdatasync(handle.fileno())
        replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        fsync(folder)
    finally:
        os.close(folder)


def run_step(store: Any, item_id: str, system: Any, payload: dict) -> dict:
    """Apply one item's external write as intent -> execute -> result; return the receipt.

    1. the key is ``idempotency_key(store.task, item["target"], item["step"])``;
    2. ``store.record_intent(item_id, key)`` (durable before the call);
    3. ``receipt = system.apply(key, payload)``;
    4. ``store.record_result(item_id, receipt)``.
    An item already ``done`` is not applied again: its recorded ``result`` is returned. An item
    with an intent but no result is handed to :func:`reconcile` (the write may have happened).

    Args:
        store: the task's progress (``store.task``, ``store.item(id) -> dict``,
            ``store.record_intent``, ``store.record_result``).
        item_id: the item to run.
        system: the system of record (``apply``, ``lookup``).
        payload: what to write; passed to ``system.apply`` unchanged.
    Returns:
        The system of record's receipt (a dict).
    Raises:
        KeyError: unknown item. Whatever ``system.apply`` raises propagates, with the intent
        already on disk (so the next resume reconciles it).
    Source:
        the checkpoints of the course chapter on context, memory and state (seed 004; see
        docs/sources.md in the kit): record the intent, execute, record the result (意図の記録
        → 実行 → 結果の記録).
    """
    item = store.item(item_id)
    if item["state"] == "done":
        return item["result"]
    if item["intent"]:
        return reconcile(store, item_id, system, payload)[1]
    key = idempotency_key(store.task, item["target"], item["step"])
    store.record_intent(item_id, key)
    receipt = system.apply(key, payload)
    store.record_result(item_id, receipt)
    return receipt


def reconcile(store: Any, item_id: str, system: Any,
              payload: dict) -> tuple[str, dict]:
    """Settle an item whose intent has no result: ask the system of record before redoing it.

    ``system.lookup(key)`` with the key recorded in the intent. A receipt means the write
    happened: record it, apply nothing (``"found"``). None means it did not: apply with the
    SAME key and record the receipt (``"redone"``).

    Args:
        store, item_id, system, payload: as in :func:`run_step`.
    Returns:
        ``("found", receipt)`` or ``("redone", receipt)``.
    Raises:
        ValueError: the item has no intent, or is already done (nothing to reconcile).
    Source:
        the checkpoints of the course chapter on context, memory and state (seed 004; see
        docs/sources.md in the kit): on resume, an item with an intent and no result is
        looked up in the external system by its idempotency key before it runs again
        (再開時に意図だけあって結果のない項目は、再実行する前に冪等キーで
        外部システムへ処理済みか照会する).
    """
    item = store.item(item_id)
    if not item["intent"] or item["state"] == "done":
        raise ValueError(f"item {item_id!r} has no open intent to reconcile")
    key = item["intent"]["key"]
    receipt = system.lookup(key)
    if receipt is not None:
        store.record_result(item_id, receipt)
        return "found", receipt
    receipt = system.apply(key, payload)
    store.record_result(item_id, receipt)
    return "redone", receipt
