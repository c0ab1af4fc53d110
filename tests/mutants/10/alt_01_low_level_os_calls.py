"""ALTERNATIVE (correct, written differently): os.open/os.write with an exclusive temp name and os.rename; low-level file calls, a pid-named temp file, run_step delegating to one helper.

Exercise 10, written differently again (graded as a correct answer)."""

from __future__ import annotations

import json
import os
from typing import Any


def idempotency_key(task: str, target: str, step: str) -> str:
    """``"task:target:step"``; ValueError for an empty, non-str or ':'-holding part."""
    parts = [task, target, step]
    for part in parts:
        if not isinstance(part, str):
            raise ValueError("key parts must be str")
        if not part or part.find(":") >= 0:
            raise ValueError(f"ambiguous key part {part!r}")
    return f"{parts[0]}:{parts[1]}:{parts[2]}"


def write_json_atomic(path: str | os.PathLike[str], data: Any) -> None:
    """os.open a unique temp name in the same folder, write all, fsync, rename, fsync folder."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    body = json.dumps(data, sort_keys=True).encode("utf-8")
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(body)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    os.rename(tmp, path)
    dir_fd = os.open(folder, os.O_RDONLY)
    os.fsync(dir_fd)
    os.close(dir_fd)


def _settle(store: Any, item_id: str, key: str, system: Any, payload: dict, *,
            ask_first: bool) -> tuple[str, dict]:
    if ask_first:
        found = system.lookup(key)
        if found is not None:
            store.record_result(item_id, found)
            return "found", found
    receipt = system.apply(key, payload)
    store.record_result(item_id, receipt)
    return "redone", receipt


def run_step(store: Any, item_id: str, system: Any, payload: dict) -> dict:
    """Intent -> execute -> result; done items skipped; open intents reconciled."""
    item = store.item(item_id)
    if item["state"] == "done":
        return item["result"]
    if item["intent"] is not None:
        return _settle(store, item_id, item["intent"]["key"], system, payload,
                       ask_first=True)[1]
    key = idempotency_key(store.task, item["target"], item["step"])
    store.record_intent(item_id, key)
    return _settle(store, item_id, key, system, payload, ask_first=False)[1]


def reconcile(store: Any, item_id: str, system: Any, payload: dict) -> tuple[str, dict]:
    """Ask by key first; record what is found, else apply with the same key."""
    item = store.item(item_id)
    if item["intent"] is None or item["state"] == "done":
        raise ValueError(f"{item_id}: no open intent")
    return _settle(store, item_id, item["intent"]["key"], system, payload, ask_first=True)
