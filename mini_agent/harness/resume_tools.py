"""On resume, settle the tool calls a crash interrupted: check first, redo only what did not happen.

:func:`mini_agent.core.session_entries.rebuild_history` answers every unanswered ``tool_use`` with an
``is_error`` "interrupted" result, because it cannot see the workspace. The agent can, so on
:meth:`Agent.resume <mini_agent.harness.agent.Agent.resume>` :func:`reconcile_interrupted_calls`
replaces each of those answers:

* a read-only tool (read_file, grep, ...) has no effect: it is simply run again;
* a write tool with ``check_applied`` (edit_file) is checked against the file: an edit that
  landed is answered as done and not run again; one that did not land is run now;
* anything else (run_bash, an unknown tool, an edit that cannot be told) keeps an ``is_error``
  answer that says what could not be confirmed and asks to look before redoing it.

Calls re-run here do not fire PreToolUse/PostToolUse hooks again (run_bash, the tool hooks
usually guard, is never re-run). The decision for edits is the pure :func:`mini_agent.core.edit_reconcile.edit_outcome`.
Taught in ``notebooks/07_sessions.ipynb``. Source: 004_b74ef821c58ee4ec.txt (resume: compare
with the external state before redoing; never ask the model what was done).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from mini_agent.core.clock import Clock
from mini_agent.core.edit_reconcile import RESUME_TEXTS
from mini_agent.core.session_entries import ResumeReport, rebuild_history
from mini_agent.harness.executor import run_tool
from mini_agent.harness.session import SessionWriter, resume_session, session_path
from mini_agent.harness.tools import Tool


def _tool_inputs(history: list[dict]) -> dict[str, dict]:
    inputs = {}
    for message in history:
        if message["role"] == "assistant" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_use":
                    inputs[block["id"]] = block.get("input") or {}
    return inputs


def settle_call(tool: Tool | None, name: str, input: dict) -> tuple[str, str, bool]:
    """Return ``(outcome, content, is_error)`` for one interrupted call; may run the tool.

    ``outcome`` is ``"applied"`` (not run again), ``"rerun"`` (run now; content is its
    result) or ``"unknown"`` (nothing run).
    """
    if tool is None:
        return "unknown", RESUME_TEXTS["unknown"].format(
            why=f"{name!r} is not one of this agent's tools"), True
    if tool.safety == "read-only":
        state = "not_applied"                     # reading has no effect: redo it
    elif tool.check_applied is None:
        return "unknown", RESUME_TEXTS["unknown"].format(
            why=f"{name} has effects the kit cannot inspect"), True
    else:
        state = tool.check_applied(input)
    if state == "applied":
        return "applied", RESUME_TEXTS["applied"], False
    if state == "not_applied":
        content, is_error = run_tool({name: tool}, name, input)
        return "rerun", RESUME_TEXTS["rerun"] + content, is_error
    why = "the file matches neither the text before the edit nor the text after it"
    return "unknown", RESUME_TEXTS["unknown"].format(why=why), True


def reconcile_interrupted_calls(history: list[dict], interrupted: list[tuple[str, str]],
                                tools: dict[str, Tool]) -> tuple[list[dict], list[dict]]:
    """Replace the "interrupted" answers of ``interrupted`` calls after checking each one.

    Args:
        history: the rebuilt history (never mutated).
        interrupted: ``[(tool_use_id, tool_name)]`` from the resume report.
        tools: the agent's tools (``{name: Tool}``).
    Returns:
        ``(new_history, outcomes)``; each outcome is ``{"tool_use_id", "name", "outcome",
        "block"}`` where ``block`` is the new tool_result block.
    """
    new = copy.deepcopy(history)
    inputs = _tool_inputs(new)
    outcomes = []
    for tool_use_id, name in interrupted:
        outcome, content, is_error = settle_call(tools.get(name), name,
                                                 inputs.get(tool_use_id, {}))
        block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
        if is_error:
            block["is_error"] = True
        for message in new:
            if message["role"] == "user" and isinstance(message["content"], list):
                for n, old in enumerate(message["content"]):
                    if old.get("type") == "tool_result" and old.get("tool_use_id") == tool_use_id:
                        message["content"][n] = block
        outcomes.append({"tool_use_id": tool_use_id, "name": name, "outcome": outcome,
                         "block": block})
    return new, outcomes


def load_session(directory: str | Path, session_id: str, *, tools: dict[str, Tool],
                 clock: Clock, writer: Any = None) -> tuple[list[dict], list[float],
                                                             ResumeReport, SessionWriter]:
    """Read a logged session back for :meth:`Agent.resume <mini_agent.harness.agent.Agent.resume>`.

    The log is read (damaged lines reported), folded into a history, and each interrupted
    call is settled against the workspace (:func:`reconcile_interrupted_calls`); the answers
    to the calls of the last assistant message are logged, so the file and the history agree.
    Args:
        directory: where the session file lives.
        session_id: its file stem.
        tools: the agent's tools (``{name: Tool}``).
        clock: the time source for a new writer.
        writer: the agent's current SessionWriter, reused when it is this session's.
    Returns:
        ``(history, times, report, writer)``: the writer appends to this session.
    Raises:
        FileNotFoundError: no such session.
    """
    path = session_path(directory, session_id)
    if not path.exists():
        raise FileNotFoundError(f"no session {session_id!r} in {directory}")
    entries, problems = resume_session(path)
    history, times, report = rebuild_history(entries)
    report.notes.extend(str(p) for p in problems)
    if writer is None or getattr(writer, "session_id", None) != session_id:
        writer = SessionWriter(directory, session_id, clock=clock)
    if report.interrupted:
        history, outcomes = reconcile_interrupted_calls(history, report.interrupted, tools)
        last = entries[-1] if entries else {}
        open_turn = (last.get("type") == "message"
                     and last.get("message", {}).get("role") == "assistant")
        last_ids = {b.get("tool_use_id") for b in history[-1]["content"]
                    if isinstance(b, dict)} if open_turn else set()
        for item in outcomes:
            if item["tool_use_id"] in last_ids:
                writer.append({"type": "tool_result", "block": item["block"]})
            report.notes.append(f"interrupted tool call {item['tool_use_id']} ({item['name']}): "
                                f"{item['outcome']}")
        report.interrupted = [(i["tool_use_id"], i["name"]) for i in outcomes
                              if i["outcome"] == "unknown"]
    return list(history), list(times), report, writer


__all__ = ["load_session", "reconcile_interrupted_calls", "settle_call"]
