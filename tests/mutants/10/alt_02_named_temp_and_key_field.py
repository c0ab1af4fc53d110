"""ALTERNATIVE (correct, written differently): NamedTemporaryFile + Path.replace, the item's stored key, early returns; another temp-file API, rename through pathlib, run_step reads item["key"].

Exercise 10, written differently (graded as a correct answer)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def idempotency_key(task: str, target: str, step: str) -> str:
    """``"task:target:step"``; ValueError for an empty, non-str or ':'-holding part."""
    if any(not isinstance(p, str) or p == "" or ":" in p for p in (task, target, step)):
        raise ValueError(f"bad key parts {(task, target, step)!r}")
    return "%s:%s:%s" % (task, target, step)


def write_json_atomic(path: str | os.PathLike[str], data: Any) -> None:
    """Temp file beside ``path``, fsync, replace, fsync the folder."""
    target = Path(path)
    payload = json.dumps(data, ensure_ascii=False)       # fails before any file exists
    handle = tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=target.parent,
                                         delete=False, suffix=".part")
    try:
        with handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        Path(handle.name).replace(target)
    except Exception:
        Path(handle.name).unlink(missing_ok=True)
        raise
    fd = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def run_step(store: Any, item_id: str, system: Any, payload: dict) -> dict:
    """Intent -> execute -> result; done items skipped; open intents reconciled."""
    item = store.item(item_id)
    if item["state"] == "done":
        return item["result"]
    if item.get("intent"):
        _, receipt = reconcile(store, item_id, system, payload)
        return receipt
    key = item["key"]
    store.record_intent(item_id, key)
    result = system.apply(key, payload)
    store.record_result(item_id, result)
    return result


def reconcile(store: Any, item_id: str, system: Any, payload: dict) -> tuple[str, dict]:
    """Ask by key first; record what is found, else apply with the same key."""
    item = store.item(item_id)
    intent = item.get("intent")
    if item["state"] == "done" or not intent:
        raise ValueError(f"nothing to reconcile for {item_id}")
    found = system.lookup(intent["key"])
    outcome = "found" if found is not None else "redone"
    receipt = found if found is not None else system.apply(intent["key"], payload)
    store.record_result(item_id, receipt)
    return outcome, receipt
