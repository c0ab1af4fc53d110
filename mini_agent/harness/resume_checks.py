"""Resume checks: what a worker verifies before it continues a task from its progress file.

:func:`resume_checks` asks the system of record by key about every intent without a result,
lists the approvals and handles that expired, and reports the lease. The version of the file is
checked when it is loaded (:class:`mini_agent.harness.checkpoint.ProgressStore`), not here.
Also importable from :mod:`mini_agent.harness.checkpoint`. Taught in
``notebooks/10_checkpoints_and_handoff.ipynb``.

Source: 004_b74ef821c58ee4ec.txt (resume checks: external state, expiry, lease ownership).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_agent.core.progress import expired, open_intents

if TYPE_CHECKING:  # pragma: no cover - the protocol is only a type here
    from mini_agent.harness.checkpoint import SystemOfRecord

__all__ = ["resume_checks"]


def resume_checks(progress: dict, system: SystemOfRecord | None, *, now: float) -> dict:
    """Return what a resume must know before it continues (chapter 3's resume checks).

    The version is checked when the file is loaded, not here.

    Args:
        progress: the progress document; never mutated.
        system: the system of record, asked by key about each open intent; None when it
            cannot be reached (every open intent is then "unknown").
        now: the current time in Unix seconds; approvals and handles whose ``expires_at`` is at
            or before it count as expired.

    Returns:
        ``{"open_intents": {item_id: "applied" | "not_applied" | "unknown"}, "expired":
        {"approvals": [...], "handles": [...]}, "lease": dict | None}``: the external state of
        every intent without a result, the ids of approvals and handles no longer valid at
        ``now``, and the current lease.

    Source:
        004_b74ef821c58ee4ec.txt (resume checks: external state, expiry, lease ownership).
    """
    state = {}
    for item in open_intents(progress):
        if system is None:
            state[item["id"]] = "unknown"
        else:
            found = system.lookup(item["intent"]["key"])
            state[item["id"]] = "applied" if found is not None else "not_applied"
    return {"open_intents": state, "expired": expired(progress, now=now),
            "lease": progress.get("lease")}
