"""A handoff package: what the next worker needs to continue without reading the whole run.

:func:`build_handoff` turns a progress document (:mod:`mini_agent.core.progress`), what was
checked against the system of record, and a summary of the session into one dict::

    {"task", "job_version", "generated_at", "goal", "done_criteria", "counts",
     "completed": [{"id", "key", "result_path", "verification", "verified"}],
     "remaining": [{"id", "state", "priority", "key", "open_intent"}],   # in the order to do
     "facts": [{"text", "evidence"}], "assumptions": [{"text", "why"}],
     "artefacts": [{"kind", "id"}],
     "next_action": {"item", "action", "prerequisites": [str]} | None}

A completed item counts as a *fact* only when its receipt was confirmed by key against the
system of record when the package was built; otherwise it is an *assumption* ("the progress
file says so"). :func:`render_handoff_markdown` prints the same package as Markdown, with the
goal quoted and every other value on one line, so text from the run (a goal pasted into the
session, a fact's text) cannot add a section or a "verified" line of its own.

Pure: time comes in as ``now`` (Unix seconds); inputs are never mutated. Taught in
``notebooks/10_checkpoints_and_handoff.ipynb``.
Source: 004_b74ef821c58ee4ec.txt (引き継ぎパッケージ: 目標と完了基準、完了項目と検証結果、残作業と
優先順位、確認済みの事実と未確認の仮定、成果物と外部操作の識別子、次の行動の前提と追加承認).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Iterable, Mapping

from mini_agent.core.progress import counts, expired, remaining


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _stamp(seconds: float) -> str:
    """Unix seconds as ``YYYY-mm-ddTHH:MM:SSZ`` (UTC), by arithmetic: no clock is read."""
    return (_EPOCH + timedelta(seconds=int(seconds))).strftime("%Y-%m-%dT%H:%M:%SZ")


def next_action(progress: dict, *, now: float, owner: str | None = None) -> dict | None:
    """Return the first remaining item, what to do with it and its prerequisites.

    Args:
        progress: the task's progress document; never mutated.
        now: the current time in Unix seconds (lease and expiry checks).
        owner: the worker that will continue; a lease it holds does not block it.

    Returns:
        ``{"item", "action", "prerequisites"}``, or None when nothing remains. ``action`` is
        ``"reconcile"`` for an intent without a result (ask the system of record by key first),
        else ``"run"``. Prerequisites name the lease, expired approvals and handles, the version
        stamp, and the key to ask about.
    """
    todo = remaining(progress)
    if not todo:
        return None
    first = todo[0]
    needs: list[str] = [f"load the progress file with format {progress['format']} and job "
                        f"version {progress['job_version']} (any other is refused)"]
    lease = progress.get("lease")
    if lease and now < lease["expires_at"] and lease["owner"] != owner:
        needs.append(f"lease held by {lease['owner']} until {_stamp(lease['expires_at'])}: "
                     f"wait for it to expire or for that worker to hand over")
    else:
        needs.append("take the lease on the task (no other worker may hold an unexpired one)")
    gone = expired(progress, now=now)
    needs += [f"approval {a} expired: ask for it again before any write" for a in gone["approvals"]]
    needs += [f"handle {h} expired: create a new one" for h in gone["handles"]]
    if first["intent"]:
        needs.append(f"ask the system of record about key {first['intent']['key']} before "
                     f"redoing anything: record its receipt if it exists, else apply with the "
                     f"same key")
        action = "reconcile"
    else:
        needs.append(f"apply with idempotency key {first['key']} (intent first, then result)")
        action = "run"
    return {"item": first["id"], "action": action, "prerequisites": needs}


def build_handoff(progress: dict, *, now: float,
                  confirmed: Mapping[str, bool] | None = None,
                  session: Mapping[str, Any] | None = None,
                  facts: Iterable[Mapping[str, str]] = (),
                  assumptions: Iterable[Mapping[str, str]] = (),
                  owner: str | None = None) -> dict:
    """Return the handoff package (shape in the module docstring).

    Args:
        progress: the task's progress document; never mutated.
        now: when the package is built (Unix seconds).
        confirmed: ``{item_id: True/False}`` for done items whose receipt was (or was not)
            found unchanged by key in the system of record; items missing are unchecked.
        session: ``{"session_id"?, "goal"?, "files_written"?: [path]}`` from the session log.
        facts: extra ``{"text", "evidence"}`` facts from the run.
        assumptions: extra ``{"text", "why"}`` assumptions from the run.
        owner: the worker that will continue (to judge whether the lease blocks it).

    Returns:
        A new dict; lists in a stable order (completed in job order, remaining in the order
        to work on them).
    """
    confirmed = dict(confirmed or {})
    session = dict(session or {})
    completed, fact_rows, assumption_rows, artefacts = [], [], [], []
    for item in progress["items"]:
        if item["state"] != "done":
            continue
        ok = confirmed.get(item["id"])
        completed.append({"id": item["id"], "key": item["intent"]["key"],
                          "result_path": item["result_path"],
                          "verification": dict(item["verification"] or {}),
                          "verified": ok is True})
        artefacts.append({"kind": "idempotency_key", "id": item["intent"]["key"]})
        if item["result_path"]:
            artefacts.append({"kind": "result_file", "id": item["result_path"]})
        seq = (item["result"] or {}).get("seq")
        if ok is True:
            fact_rows.append({"text": f"{item['id']} applied once (ledger operation {seq})",
                              "evidence": f"receipt found by key {item['intent']['key']} at "
                                          f"{_stamp(now)}"})
        elif ok is False:
            assumption_rows.append({"text": f"{item['id']} applied",
                                    "why": "the system of record does not confirm the receipt: "
                                           "check it before relying on it"})
        else:
            assumption_rows.append({"text": f"{item['id']} applied",
                                    "why": "the progress file says so; not re-checked against "
                                           "the system of record"})
    todo = remaining(progress)
    for item in todo:
        if item["intent"]:
            assumption_rows.append({"text": f"{item['id']} may or may not have been applied",
                                    "why": f"intent {item['intent']['key']} has no result"})
    fact_rows += [dict(f) for f in facts]
    assumption_rows += [dict(a) for a in assumptions]
    artefacts += [{"kind": "file_written", "id": p} for p in session.get("files_written", [])]
    if session.get("session_id"):
        artefacts.append({"kind": "session", "id": session["session_id"]})
    return {"task": progress["task"], "job_version": progress["job_version"],
            "generated_at": _stamp(now),
            "goal": progress.get("goal") or session.get("goal") or "",
            "done_criteria": list(progress.get("done_criteria", [])),
            "counts": counts(progress), "completed": completed,
            "remaining": [{"id": i["id"], "state": i["state"], "priority": i["priority"],
                           "key": i["key"], "open_intent": bool(i["intent"])} for i in todo],
            "facts": fact_rows, "assumptions": assumption_rows, "artefacts": artefacts,
            "next_action": next_action(progress, now=now, owner=owner)}


def _one_line(value: Any) -> str:
    """Put a value on one Markdown line: its line breaks become `` ↵ ``.

    Args:
        value: any value; ``str()`` of it is used.

    Returns:
        The text with every line boundary ``str.splitlines`` knows (``\\n``, ``\\r``,
        U+2028...) replaced, so it cannot start a heading or a list item of its own.

    >>> _one_line("a\\n## Next action")
    'a ↵ ## Next action'
    """
    return " ↵ ".join(str(value).splitlines())


def _quoted(text: str) -> str:
    """Quote a multi-line text as a Markdown block quote, every line prefixed with ``> ``.

    Args:
        text: the text (a goal taken from the session may hold any Markdown).

    Returns:
        The quoted lines; a heading or list inside stays inside the quote.

    >>> print(_quoted("Fix it.\\n\\n## Next action"))
    > Fix it.
    >
    > ## Next action
    """
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.splitlines())


def render_handoff_markdown(handoff: Mapping[str, Any], *, max_rows: int = 20) -> str:
    """Render the handoff package as Markdown.

    Args:
        handoff: the package :func:`build_handoff` returned.
        max_rows: rows shown per list; longer lists are cut with a count (default 20).

    Returns:
        The Markdown text, starting with ``# Handoff: <task>``. The goal is a block quote
        (:func:`_quoted`); every other value is put on one line (:func:`_one_line`).

    >>> print(render_handoff_markdown({"task": "t", "goal": "g"}).splitlines()[0])
    # Handoff: t
    """
    def rows(values: list, line) -> list[str]:
        out = [line(_flat(v)) for v in values[:max_rows]]
        if len(values) > max_rows:
            out.append(f"- ... and {len(values) - max_rows} more (see the JSON package)")
        return out or ["- none"]

    c = handoff.get("counts", {})
    goal = str(handoff.get("goal") or "")
    lines = [f"# Handoff: {_one_line(handoff['task'])}", "",
             f"Generated {_one_line(handoff.get('generated_at', ''))}; job version "
             f"{_one_line(handoff.get('job_version', ''))}.", "",
             "## Goal", _quoted(goal) if goal.strip() else "(not recorded)", "", "## Done when"]
    lines += rows(handoff.get("done_criteria", []), lambda d: f"- {d}")
    lines += ["", "## State",
              _one_line(", ".join(f"{k}: {v}" for k, v in c.items())) or "(empty)", "",
              "## Completed (with verification)"]
    lines += rows(handoff.get("completed", []), lambda i: (
        f"- {i['id']}: {'verified by key' if i['verified'] else 'not re-checked'} "
        f"`{i['key']}` -> {i['result_path']}"))
    lines += ["", "## Remaining (in this order)"]
    lines += rows(handoff.get("remaining", []), lambda i: (
        f"- {i['id']} ({i['state']}, priority {i['priority']})"
        + (": open intent, reconcile first" if i["open_intent"] else "")))
    lines += ["", "## Verified facts"]
    lines += rows(handoff.get("facts", []), lambda f: f"- {f['text']} ({f['evidence']})")
    lines += ["", "## Assumptions (not verified)"]
    lines += rows(handoff.get("assumptions", []), lambda a: f"- {a['text']}: {a['why']}")
    lines += ["", "## Artefacts"]
    lines += rows(handoff.get("artefacts", []), lambda a: f"- {a['kind']}: `{a['id']}`")
    nxt = _flat(handoff.get("next_action"))
    lines += ["", "## Next action"]
    if nxt:
        lines.append(f"{nxt['action']} {nxt['item']}, once:")
        lines += [f"- {p}" for p in nxt["prerequisites"]]
    else:
        lines.append("none: every item is done; check the done criteria")
    return "\n".join(lines) + "\n"


def _flat(value: Any) -> Any:
    """``value`` with every string in it (in dicts and lists too) put on one line."""
    if isinstance(value, str):
        return _one_line(value)
    if isinstance(value, Mapping):
        return {k: _flat(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_flat(v) for v in value]
    return value
