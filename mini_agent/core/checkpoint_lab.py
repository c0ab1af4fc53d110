"""The kill lab's plan and verdict as pure data: the job, where to kill, what counts as a pass.

* :func:`build_ledger_job`: a job of ``items`` invoice lines to post to a ledger (the
  system of record), each a deterministic payload from the seed.
* :func:`kill_plan`: the seeded points where the harness kills the worker, one of them right
  after an external write and before its result is recorded (``"after_execute"``).
* :func:`lab_verdict`: compares the killed run with an uninterrupted run of the same job:
  items applied twice, items lost, equality of the final state.

Nothing here runs a process or reads a file (that is :mod:`mini_agent.harness.checkpoint_lab`).
Taught in ``notebooks/10_checkpoints_and_handoff.ipynb``.
Source: 004_b74ef821c58ee4ec.txt (lab 1: 50+ items, three forced kills, one right after an
external write; done when nothing is processed twice and the result equals an uninterrupted run).
"""

from __future__ import annotations

import random
from typing import Any, Mapping

PHASES = ("after_intent", "after_execute", "after_result")
"""Where a pause point can stop the worker inside one item: after the intent is on disk,
after the system of record applied the write (its result not yet recorded), after the result."""

ACCOUNTS = 8


def build_ledger_job(items: int = 60, *, seed: int = 0, task: str = "ledger") -> dict:
    """Return the lab's job: ``{"task", "goal", "done_criteria", "items", "payloads"}``.

    Args:
        items: how many invoice lines (>= 1).
        seed: picks accounts, amounts and priorities.
        task: the task id (first part of every idempotency key).
    Returns:
        ``items`` is a list of ``{"id": "inv-000", "target": "inv-000", "step": "post",
        "priority": 0..2}``; ``payloads`` maps each id to ``{"item", "account",
        "amount_cents"}``. The same arguments always give the same job.
    Raises:
        ValueError: items < 1.
    """
    if items < 1:
        raise ValueError(f"a job needs at least one item, got {items}")
    rng = random.Random(f"ledger-job:{seed}")
    rows, payloads = [], {}
    for n in range(items):
        item_id = f"inv-{n:03d}"
        rows.append({"id": item_id, "target": item_id, "step": "post",
                     "priority": rng.choice((0, 1, 1, 2))})
        payloads[item_id] = {"item": item_id, "account": f"acct-{rng.randrange(ACCOUNTS)}",
                             "amount_cents": rng.randint(100, 99_999)}
    total = sum(p["amount_cents"] for p in payloads.values())
    return {"task": task, "items": rows, "payloads": payloads,
            "goal": f"post {items} invoice lines to the ledger, each exactly once",
            "done_criteria": [f"all {items} items done with a receipt from the ledger",
                              f"ledger balances sum to {total} cents",
                              "no item applied twice (one operation per item in the ledger)"]}


def processing_order(progress_items: list[dict]) -> list[str]:
    """Return item ids in the order a fresh worker runs them: priority, then position.

    Args:
        progress_items: the progress document's ``items``; never mutated.

    Returns:
        The ids, lower ``priority`` first, ties in job order.
    """
    ranked = sorted(enumerate(progress_items), key=lambda p: (p[1].get("priority", 0), p[0]))
    return [item["id"] for _, item in ranked]


def kill_plan(order: list[str], kills: int = 3, *, seed: int = 0) -> list[dict]:
    """Return ``kills`` seeded kill points ``{"item", "phase"}``, in processing order.

    Points fall on distinct items after the first and before the last of ``order``; one of
    them (a seeded one) is ``"after_execute"``: the write happened, its result is not recorded.

    Args:
        order: item ids in processing order (see :func:`processing_order`).
        kills: how many times the worker is killed (>= 1; default 3).
        seed: seeds the choice of items and of the ``"after_execute"`` point.

    Returns:
        The kill points; the same seed gives the same plan.

    Raises:
        ValueError: kills < 1, or not enough items (needs kills + 2).
    """
    if kills < 1:
        raise ValueError(f"kills must be >= 1, got {kills}")
    if len(order) < kills + 2:
        raise ValueError(f"{kills} kills need at least {kills + 2} items, got {len(order)}")
    rng = random.Random(f"kill-plan:{seed}")
    positions = sorted(rng.sample(range(1, len(order) - 1), kills))
    phases = [rng.choice(PHASES) for _ in positions]
    if "after_execute" not in phases:
        phases[rng.randrange(kills)] = "after_execute"
    return [{"item": order[p], "phase": phase} for p, phase in zip(positions, phases)]


def _without_key(receipt: Mapping[str, Any]) -> dict:
    return {k: v for k, v in receipt.items() if k != "key"}


def lab_verdict(job: dict, reference: dict, run: dict) -> dict:
    """Judge a killed run against an uninterrupted one; inputs are never mutated.

    Args:
        job: :func:`build_ledger_job`'s dict.
        reference: the uninterrupted run: ``{"state": ledger /state, "results": {item: result
            file}, "progress_states": {item: state}}``.
        run: the killed and resumed run, in the same shape.

    Returns:
        ``{"applied_twice": int, "lost": int, "equal_to_uninterrupted": bool,
        "differences": [str]}``: items with more than one ledger operation; items with none
        or not done in the progress file; equality of balances, receipts (idempotency keys
        aside, they carry the task id) and result files.
    """
    ids = [item["id"] for item in job["items"]]
    per_item = run["state"].get("per_item", {})
    applied_twice = sum(1 for i in ids if per_item.get(i, 0) > 1)
    lost = sum(1 for i in ids if per_item.get(i, 0) == 0
               or run["progress_states"].get(i) != "done")
    differences = []
    if run["state"]["balances"] != reference["state"]["balances"]:
        differences.append("balances differ")
    if ([_without_key(r) for r in run["state"]["ops"]]
            != [_without_key(r) for r in reference["state"]["ops"]]):
        differences.append("ledger operations differ")
    for item_id in ids:
        mine, theirs = run["results"].get(item_id), reference["results"].get(item_id)
        if mine is None or theirs is None or (_without_key(mine.get("receipt", {}))
                                              != _without_key(theirs.get("receipt", {}))):
            differences.append(f"result file of {item_id} differs")
    return {"applied_twice": applied_twice, "lost": lost,
            "equal_to_uninterrupted": not differences, "differences": differences[:10]}
