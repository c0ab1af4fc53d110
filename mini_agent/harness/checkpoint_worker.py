"""The kill lab's worker: post a ledger job item by item, resumable after SIGKILL at any point.

Run as a program (the lab starts it as a subprocess and kills it)::

    python -m mini_agent.harness.checkpoint_worker --dir D --url URL [--items 60] [--seed 0]
        [--task ledger] [--owner worker-1] [--pause-at ITEM:PHASE] [--naive]

It opens (or creates) ``D/progress.json`` under a lease, runs the resume checks, then runs
every remaining item through :func:`~mini_agent.harness.checkpoint.run_step` (open intents are
reconciled first). Each event is one JSON line on stdout::

    {"event": "start", "counts": {...}, "resume": {...}}
    {"event": "reconciled", "item": id, "outcome": "found" | "redone"}
    {"event": "paused", "item": id, "phase": "after_intent" | "after_execute" | "after_result"}
    {"event": "finished", "counts": {...}}

``--pause-at`` is the lab's deterministic kill point: when the worker reaches it, it prints
the ``paused`` line and waits (it does nothing more) until it is killed. ``--naive`` shows the
failure the chapter warns about: it ignores intents and retries with a fresh random key.
Taught in ``notebooks/10_checkpoints_and_handoff.ipynb``.

Source:
    004_b74ef821c58ee4ec.txt (lab 1: a 50+ item job killed three times, intent -> execute ->
    result, resume checks).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import uuid
from pathlib import Path
from typing import Any, Sequence

from mini_agent.core.checkpoint_lab import PHASES, build_ledger_job
from mini_agent.core.progress import (ApprovalExpiredError, counts, job_version, new_progress,
                                      remaining, require_fresh_approvals)
from mini_agent.harness.checkpoint import ProgressStore, reconcile, resume_checks, run_step
from mini_agent.harness.record_client import RecordClient

PROGRESS_FILE = "progress.json"


def emit(event: dict) -> None:
    """Print one event as a JSON line and flush (the lab reads stdout line by line).

    Args:
        event: a JSON-ready dict with an ``"event"`` key; keys are printed sorted.
    """
    print(json.dumps(event, sort_keys=True), flush=True)


def wait_to_be_killed(item: str, phase: str) -> None:
    """Announce the pause point and do nothing more until a signal ends the process.

    Args:
        item: the item id the worker stopped at.
        phase: one of ``"after_intent"``, ``"after_execute"``, ``"after_result"``.
    """
    emit({"event": "paused", "item": item, "phase": phase})
    while True:
        signal.pause()


class PausingStore:
    """A :class:`ProgressStore` that stops at ``after_intent`` / ``after_result`` of one item."""

    def __init__(self, store: ProgressStore, pause: tuple[str, str] | None) -> None:
        self.store, self.pause = store, pause

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def record_intent(self, item_id: str, key: str) -> None:
        """Record the intent, then wait to be killed if this is the ``after_intent`` pause.

        Args:
            item_id: the item about to be applied.
            key: its idempotency key.
        """
        self.store.record_intent(item_id, key)
        if self.pause == (item_id, "after_intent"):
            wait_to_be_killed(item_id, "after_intent")

    def record_result(self, item_id: str, receipt: dict) -> None:
        """Record the result, then wait to be killed if this is the ``after_result`` pause.

        Args:
            item_id: the item that was applied.
            receipt: the system of record's receipt.
        """
        self.store.record_result(item_id, receipt)
        if self.pause == (item_id, "after_result"):
            wait_to_be_killed(item_id, "after_result")


class PausingSystem:
    """A system of record client that stops right after ``apply`` of one item returned."""

    def __init__(self, client: RecordClient, pause: tuple[str, str] | None) -> None:
        self.client, self.pause = client, pause

    def lookup(self, key: str) -> dict | None:
        """Ask the system of record by key (never pauses).

        Args:
            key: the idempotency key.

        Returns:
            The receipt of the write done under ``key``, or None.
        """
        return self.client.lookup(key)

    def apply(self, key: str, payload: dict) -> dict:
        """Apply the write, then wait to be killed if this is the ``after_execute`` pause.

        Args:
            key: the idempotency key.
            payload: the write; its ``"item"`` is matched against the pause point.

        Returns:
            The receipt (only when the worker does not pause here).
        """
        receipt = self.client.apply(key, payload)
        if self.pause == (payload["item"], "after_execute"):
            wait_to_be_killed(payload["item"], "after_execute")
        return receipt


def naive_step(store: Any, item_id: str, system: Any, payload: dict) -> dict:
    """Run one item the wrong way, for contrast: a fresh random key, no reconciliation.

    Whatever is not done is retried with the item's key plus a random suffix, without asking
    the system of record, so a write that happened before a kill happens again.

    Args:
        store: the progress store (``item``, ``record_intent``, ``record_result``).
        item_id: the item to run.
        system: the system of record (only ``apply`` is used).
        payload: the write.

    Returns:
        The receipt: the recorded one for a done item, else the new write's.
    """
    item = store.item(item_id)
    if item["state"] == "done":
        return item["result"]
    key = f"{item['key']}#{uuid.uuid4().hex[:8]}"
    store.record_intent(item_id, key)
    receipt = system.apply(key, payload)
    store.record_result(item_id, receipt)
    return receipt


def run_worker(folder: Path, client: RecordClient, job: dict, *, owner: str = "worker-1",
               pause: tuple[str, str] | None = None, naive: bool = False) -> dict:
    """Run the job to the end (or to the pause point).

    Opens (or creates) the progress file under a lease, emits ``start`` with the resume
    checks, refuses to go on past an expired approval, reconciles open intents, runs the
    remaining items, emits ``finished``.

    Args:
        folder: the folder of ``progress.json`` and ``results/``.
        client: the system of record over HTTP.
        job: the ledger job (``task``, ``items``, ``payloads``, ``goal``, ``done_criteria``).
        owner: the lease owner's name (default ``"worker-1"``).
        pause: ``(item_id, phase)`` where the worker stops and waits to be killed; None runs
            to the end.
        naive: use :func:`naive_step` instead of run_step / reconcile.

    Returns:
        The final counts by item state (``{"pending": n, "done": n, ...}``).

    Raises:
        ApprovalExpiredError: an approval in the progress file expired (a ``refused`` event
            is emitted first; nothing is applied).
    """
    store = ProgressStore(folder / PROGRESS_FILE, owner=owner,
                          expected_job_version=job_version(job["task"], job["items"]))
    progress = store.open(new_progress(job["task"], job["items"], goal=job["goal"],
                                       done_criteria=job["done_criteria"]))
    checks = resume_checks(progress, client, now=store.clock())
    emit({"event": "start", "counts": counts(progress), "resume": checks})
    try:
        require_fresh_approvals(progress, now=store.clock())
    except ApprovalExpiredError as exc:
        emit({"event": "refused", "reason": str(exc), "approvals": exc.ids})
        raise
    paused_store, system = PausingStore(store, pause), PausingSystem(client, pause)
    for item in remaining(progress):
        payload = job["payloads"][item["id"]]
        if naive:
            naive_step(paused_store, item["id"], system, payload)
        elif item["intent"]:
            outcome, _ = reconcile(paused_store, item["id"], system, payload)
            emit({"event": "reconciled", "item": item["id"], "outcome": outcome})
        else:
            run_step(paused_store, item["id"], system, payload)
    final = counts(store.progress or progress)
    emit({"event": "finished", "counts": final})
    return final


def main(argv: Sequence[str] | None = None) -> int:
    """Run the worker program.

    Args:
        argv: the command-line arguments (None: ``sys.argv[1:]``).

    Returns:
        The exit code: 0 when every item is done, 3 when an approval expired (nothing
        applied), 1 otherwise.
    """
    parser = argparse.ArgumentParser(description="the checkpoint lab's worker")
    parser.add_argument("--dir", required=True, help="folder of progress.json and results/")
    parser.add_argument("--url", required=True, help="the system of record, http://127.0.0.1:P")
    parser.add_argument("--items", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--task", default="ledger")
    parser.add_argument("--owner", default="worker-1")
    parser.add_argument("--pause-at", default="", metavar="ITEM:PHASE")
    parser.add_argument("--naive", action="store_true")
    args = parser.parse_args(argv)
    pause = None
    if args.pause_at:
        item, _, phase = args.pause_at.partition(":")
        if phase not in PHASES:
            parser.error(f"--pause-at phase must be one of {PHASES}, got {phase!r}")
        pause = (item, phase)
    job = build_ledger_job(args.items, seed=args.seed, task=args.task)
    try:
        final = run_worker(Path(args.dir), RecordClient(args.url, args.task), job,
                           owner=args.owner, pause=pause, naive=args.naive)
    except ApprovalExpiredError:
        return 3
    return 0 if final["done"] == args.items else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
