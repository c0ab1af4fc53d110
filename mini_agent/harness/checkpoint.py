"""Checkpoints on disk: an atomic JSON progress file, a lease, intent -> execute -> result.

* :func:`write_json_atomic`: temp file in the same folder, fsync, rename over the target,
  fsync the folder. A reader (or a resume after SIGKILL) sees the old file or the new one,
  never half of one.
* :class:`ProgressStore`: one task's progress file (shape in :mod:`mini_agent.core.progress`).
  Loading refuses another format or job definition (:class:`ProgressVersionError`); every
  write checks that this worker still holds the lease (:class:`LeaseLostError` otherwise) and
  renews it. Result files go to ``results/<item>.json`` beside the progress file.
* :func:`run_step` and :func:`reconcile`: an external write is an *intent* saved before the
  call, the call with a deterministic idempotency key, and the *result* saved after it. An
  intent without a result is reconciled by asking the system of record by key first.
* :func:`resume_checks` (in :mod:`mini_agent.harness.resume_checks`, named here too): what to
  verify before resuming (external state of open intents, expired approvals and handles, the
  lease).

The system of record is anything with ``apply(key, payload) -> receipt`` and
``lookup(key) -> receipt | None`` (:class:`mini_agent.harness.record_client.RecordClient`
over HTTP). Taught in ``notebooks/10_checkpoints_and_handoff.ipynb``.
Source: 004_b74ef821c58ee4ec.txt (checkpoints and idempotency, resume checks, lab 1).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol

from mini_agent.core.progress import (LeaseHeldError, ProgressVersionError, check_version,
                                      find_item, idempotency_key, take_lease, with_failure,
                                      with_intent, with_result)
from mini_agent.harness.resume_checks import resume_checks

__all__ = ["LeaseHeldError", "LeaseLostError", "ProgressStore", "ProgressVersionError",
           "SystemOfRecord", "reconcile", "resume_checks", "run_step", "write_json_atomic"]


class SystemOfRecord(Protocol):
    """What :func:`run_step` and :func:`reconcile` need from the external system."""

    def apply(self, key: str, payload: dict) -> dict:  # pragma: no cover - protocol
        """Perform the write once per key; a repeated key returns the first receipt.

        Args:
            key: the idempotency key (``task:target:step``).
            payload: what to write.

        Returns:
            The receipt (a dict) of the write done under ``key``.
        """

    def lookup(self, key: str) -> dict | None:  # pragma: no cover - protocol
        """Ask whether a write was done under ``key``.

        Args:
            key: the idempotency key recorded in the intent.

        Returns:
            The receipt of the write done under ``key``, or None if none was.
        """


class LeaseLostError(RuntimeError):
    """This worker's lease was taken over (it expired and another worker took it)."""


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
        004_b74ef821c58ee4ec.txt (lab 1: a JSON progress file that survives a forced kill).
    """
    path = Path(path)
    text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def run_step(store: Any, item_id: str, system: SystemOfRecord, payload: dict) -> dict:
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
        004_b74ef821c58ee4ec.txt (意図の記録 → 実行 → 結果の記録).
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


def reconcile(store: Any, item_id: str, system: SystemOfRecord,
              payload: dict) -> tuple[str, dict]:
    """Settle an item whose intent has no result: ask the system of record before redoing it.

    ``system.lookup(key)`` with the key recorded in the intent. A receipt means the write
    happened: record it, apply nothing (``"found"``). None means it did not: apply with the
    SAME key and record the receipt (``"redone"``).

    Args:
        store: the task's progress, as in :func:`run_step`.
        item_id: the item whose intent has no result.
        system: the system of record (``lookup``, then ``apply`` when nothing was found).
        payload: what to write if the write did not happen; passed to ``system.apply``.
    Returns:
        ``("found", receipt)`` or ``("redone", receipt)``.
    Raises:
        ValueError: the item has no intent, or is already done (nothing to reconcile).
    Source:
        004_b74ef821c58ee4ec.txt (再開時に意図だけあって結果のない項目は、再実行する前に冪等キーで
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


class ProgressStore:
    """One task's progress file, written atomically, guarded by a lease.

    Args:
        path: the progress file (JSON); its folder is created.
        owner: this worker's name; a restarted worker under the same name renews its lease.
        lease_seconds: how long a lease lasts without a write (seconds).
        clock: ``() -> float`` Unix seconds (default ``time.time``); tests pass a manual one.
        expected_job_version: refuse a file written for another job definition (None: any).

    Attributes:
        path: the progress file.
        progress: the last document written or read (None before :meth:`open` or :meth:`read`).
        results_dir: ``results/`` beside the progress file.
    """

    def __init__(self, path: str | os.PathLike[str], *, owner: str = "worker-1",
                 lease_seconds: float = 30.0, clock: Callable[[], float] | None = None,
                 expected_job_version: str | None = None) -> None:
        self.path = Path(path)
        self.owner, self.lease_seconds = owner, float(lease_seconds)
        self.clock = clock or time.time
        self.expected_job_version = expected_job_version
        self.results_dir = self.path.parent / "results"
        self.progress: dict | None = None
        self._generation: int | None = None

    # ---------------------------------------------------------------- reading and creating
    def read(self) -> dict:
        """Read and version-check the file; no lease is needed or taken.

        Returns:
            The progress document (also kept as ``self.progress``).

        Raises:
            FileNotFoundError: there is no file at ``path``.
            ValueError: the file is not JSON (invalid, not UTF-8, too deep; names the path).
            ProgressVersionError: not a JSON object, or another format or job version.
        """
        progress = self._json_on_disk()
        if not isinstance(progress, dict):
            raise ProgressVersionError("format", type(progress).__name__, "an object")
        check_version(progress, expected_job_version=self.expected_job_version)
        self.progress = progress
        return progress

    def open(self, initial: dict | None = None) -> dict:
        """Take the lease and return the progress, creating the file from ``initial`` if needed.

        Creates the progress file's folder and ``results/``.

        Args:
            initial: the document to write when there is no file yet (None: the file must
                exist).

        Returns:
            The leased progress document as written (also kept as ``self.progress``).

        Raises:
            FileNotFoundError: there is no file and ``initial`` is None.
            LeaseHeldError: another owner's lease has not expired.
            ProgressVersionError: the file or ``initial`` has another format or job version.
            ValueError: the file is not JSON.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.results_dir.mkdir(exist_ok=True)
        with self._locked():
            if self.path.exists():
                progress = self.read()
            elif initial is None:
                raise FileNotFoundError(f"no progress file at {self.path}")
            else:
                check_version(initial, expected_job_version=self.expected_job_version)
                progress = initial
            leased = take_lease(progress, self.owner, now=self.clock(),
                                ttl_seconds=self.lease_seconds)
            write_json_atomic(self.path, leased)
        self.progress, self._generation = leased, leased["lease"]["generation"]
        return leased

    # ---------------------------------------------------------------- the store interface
    @property
    def task(self) -> str:
        """The task id (first part of every idempotency key)."""
        return self._require()["task"]

    def item(self, item_id: str) -> dict:
        """Return a copy of one item.

        Args:
            item_id: the item's id.

        Returns:
            A deep copy of the item dict (changing it does not change the store).

        Raises:
            KeyError: no item has that id.
            RuntimeError: :meth:`open` was not called.
        """
        return json.loads(json.dumps(find_item(self._require(), item_id)))

    def record_intent(self, item_id: str, key: str) -> None:
        """Durably record "about to apply ``key``" (state in_progress) before the call.

        Args:
            item_id: the item about to be applied.
            key: its idempotency key.

        Raises:
            ValueError: the item is done, its id is not a plain file name, or the file is
                no longer JSON (nothing written).
            LeaseLostError: another worker took the lease.
        """
        self._result_path(item_id)  # refused before the call, not after it
        self._commit(with_intent(self._require(), item_id, key, now=self.clock()))

    def record_result(self, item_id: str, receipt: dict) -> None:
        """Write ``results/<item>.json`` atomically, then mark the item done with its receipt.

        Under the progress file's lock: the lease is checked first, so a worker that lost it
        writes nothing; then the result file, then the progress document.

        Args:
            item_id: the item that was applied; it must have an intent.
            receipt: the system of record's receipt.

        Raises:
            ValueError: no intent, an id that is not a plain file name, or a file no longer
                JSON (no result file written).
            LeaseLostError: another worker took the lease.
        """
        result_path = self._result_path(item_id)
        relative = str(result_path.relative_to(self.path.parent))
        self._commit(with_result(self._require(), item_id, receipt, now=self.clock(),
                                 result_path=relative),
                     first=lambda: write_json_atomic(result_path,
                                                     {"item": item_id, "receipt": receipt}))

    def record_failure(self, item_id: str, error: str) -> None:
        """Mark the item failed with a one-line reason (its intent, if any, is kept).

        Args:
            item_id: the item that failed.
            error: the reason, one line.

        Raises:
            ValueError: the file on disk is no longer JSON (nothing written).
            LeaseLostError: another worker took the lease.
        """
        self._commit(with_failure(self._require(), item_id, error))

    # ---------------------------------------------------------------- internals
    def _result_path(self, item_id: str) -> Path:
        """``results/<id>.json``; ValueError for an id that would put it elsewhere."""
        if not str(item_id) or {"/", "\0"} & set(name := f"{item_id}.json") \
                or len(name.encode(errors="surrogatepass")) > 255:
            raise ValueError(f"item id {item_id!r} is not a plain file name (no '/', no NUL, "
                             "at most 250 bytes) for results/<id>.json; rename it in the job")
        return self.results_dir / name

    def _json_on_disk(self) -> Any:
        """The file's JSON; ValueError naming the path (invalid, not UTF-8, too deep)."""
        try:
            return json.loads(self.path.read_bytes().decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"{self.path}: not a JSON progress file (" + (
                "nested too deeply" if isinstance(exc, RecursionError) else f"{exc}") + ")") from None

    def _require(self) -> dict:
        if self.progress is None:
            raise RuntimeError("ProgressStore: call open() first")
        return self.progress

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _commit(self, progress: dict, *, first: Callable[[], None] | None = None) -> None:
        with self._locked():
            on_disk = self._json_on_disk()  # damaged since it was read: nothing is written
            on_disk = (on_disk.get("lease") if isinstance(on_disk, dict) else None) or {}
            if (on_disk.get("owner"), on_disk.get("generation")) != (self.owner,
                                                                    self._generation):
                raise LeaseLostError(
                    f"{self.owner} lost the lease on {self.path.name} (now held by "
                    f"{on_disk.get('owner')!r}); stop: another worker continues the task")
            if first is not None:
                first()
            progress = dict(progress, lease={"owner": self.owner,
                                             "expires_at": self.clock() + self.lease_seconds,
                                             "generation": self._generation})
            write_json_atomic(self.path, progress)
        self.progress = progress
