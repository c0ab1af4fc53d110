"""Write a handoff package from a progress file and a session log, as JSON and Markdown.

:func:`write_handoff` reads the progress file (version-checked), asks the system of record by
key about every completed item (so a completed item becomes a verified fact, not a claim),
summarises the session log (goal, files written), and writes ``handoff.json`` and
``handoff.md`` atomically beside the progress file (or in ``out_dir``). The package itself is
built by the pure :func:`mini_agent.core.handoff.build_handoff`.
Taught in ``notebooks/10_checkpoints_and_handoff.ipynb``.
Source: 004_b74ef821c58ee4ec.txt (長時間タスクの引き継ぎ).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from mini_agent.core.handoff import build_handoff, render_handoff_markdown
from mini_agent.harness.session import resume_session
from mini_agent.harness.checkpoint import ProgressStore, SystemOfRecord, write_json_atomic

WRITE_TOOLS = ("write_file", "edit_file")


def confirm_completed(progress: dict, system: SystemOfRecord) -> dict[str, bool]:
    """Check every done item against the system of record by its idempotency key.

    Args:
        progress: the progress document; never mutated.
        system: the system of record (``lookup`` is called once per done item).

    Returns:
        ``{item_id: bool}`` for done items only: True when the receipt found by key equals the
        recorded result.
    """
    out = {}
    for item in progress["items"]:
        if item["state"] == "done":
            out[item["id"]] = system.lookup(item["intent"]["key"]) == item["result"]
    return out


def summarise_session(path: str | os.PathLike[str]) -> dict:
    """Summarise a session log (JSONL) for a handoff.

    Damaged lines are skipped, and so are values of the wrong type in a readable line (a
    hand-edited log: content that is a number, a text that is not a string, a tool input
    or path that is not an object or a string): they never stop the handoff.

    Args:
        path: the session log; its file name without suffix is the session id.

    Returns:
        ``{"session_id": str, "goal": str, "files_written": [path]}``: the goal is the first
        user message's text, stripped; files written are the ``path`` inputs of
        ``write_file`` / ``edit_file`` calls, in first-use order.
    """
    entries, _ = resume_session(path)
    goal, files = "", []
    for entry in entries:
        message = entry.get("message") if entry.get("type") == "message" else None
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if message.get("role") == "user" and not goal:
            goal = content if isinstance(content, str) else " ".join(
                b["text"] for b in (content if isinstance(content, list) else [])
                if isinstance(b, dict) and isinstance(b.get("text"), str))
        if message.get("role") == "assistant" and isinstance(content, list):
            for block in content:
                if (isinstance(block, dict) and block.get("type") == "tool_use"
                        and block.get("name") in WRITE_TOOLS
                        and isinstance(block.get("input"), dict)):
                    target = block["input"].get("path")
                    if isinstance(target, str) and target and target not in files:
                        files.append(target)
    return {"session_id": Path(path).stem, "goal": goal.strip(), "files_written": files}


def write_handoff(progress_path: str | os.PathLike[str], *,
                  system: SystemOfRecord | None = None,
                  session_path: str | os.PathLike[str] | None = None,
                  out_dir: str | os.PathLike[str] | None = None,
                  clock: Callable[[], float] | None = None,
                  facts: Iterable[Mapping[str, str]] = (),
                  assumptions: Iterable[Mapping[str, str]] = (),
                  owner: str | None = None) -> dict[str, Any]:
    """Build the handoff package and write ``handoff.json`` and ``handoff.md``.

    Args:
        progress_path: the task's progress file.
        system: the system of record (without it, completed items stay assumptions).
        session_path: a session log to take the goal and the files written from.
        out_dir: where to write (default: the progress file's folder).
        clock: ``() -> float`` Unix seconds (default ``time.time``).
        facts: extra ``{"text", "evidence"}`` facts from the run, passed to
            :func:`~mini_agent.core.handoff.build_handoff`.
        assumptions: extra ``{"text", "why"}`` assumptions, passed on likewise.
        owner: the worker that will continue (to judge whether the lease blocks it).
    Returns:
        ``{"handoff": dict, "json": Path, "markdown": Path}``.
    Raises:
        ProgressVersionError: the progress file has another format.
        FileNotFoundError: there is no progress file at ``progress_path``.
        ValueError: the progress file is not JSON.
    """
    now = (clock or time.time)()
    progress = ProgressStore(progress_path).read()
    confirmed = confirm_completed(progress, system) if system is not None else None
    session = summarise_session(session_path) if session_path else None
    handoff = build_handoff(progress, now=now, confirmed=confirmed, session=session,
                            facts=facts, assumptions=assumptions, owner=owner)
    folder = Path(out_dir) if out_dir else Path(progress_path).parent
    folder.mkdir(parents=True, exist_ok=True)
    json_path, md_path = folder / "handoff.json", folder / "handoff.md"
    write_json_atomic(json_path, handoff)
    tmp = md_path.with_name(".handoff.md.tmp")
    tmp.write_text(render_handoff_markdown(handoff), encoding="utf-8")
    os.replace(tmp, md_path)
    return {"handoff": handoff, "json": json_path, "markdown": md_path}
