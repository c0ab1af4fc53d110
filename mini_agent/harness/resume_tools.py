"""On resume, settle the tool calls a crash interrupted: check first, redo only what did not happen.

:func:`mini_agent.core.session_entries.rebuild_history` answers every unanswered ``tool_use``
with an ``is_error`` "interrupted" result, because it cannot see the workspace. The agent
can, so on :meth:`Agent.resume <mini_agent.harness.agent.Agent.resume>`
:func:`reconcile_interrupted_calls` replaces each of those answers, one named behaviour per
kind of tool (the ``outcome`` word):

* ``"reread"``: a read-only tool (read_file, grep, list_files...) changes nothing, so it is
  simply run again and its fresh result is the answer;
* ``"applied"`` / ``"rerun"`` / ``"unknown"``: a write tool with ``check_applied``
  (edit_file) is checked against the file: an edit that landed is answered as done and not
  run again; one that did not land is run now; one that cannot be told runs nothing;
* ``"not_rerun"``: any other write tool (run_bash) is never run again, since repeating a
  command may not be safe; its answer says so, names the command and what is known (it may
  have run in full, in part or not at all; its output was not recorded);
* ``"unknown"``: a tool name this agent does not have.

The model is never left to guess ("run it again if you still need it" is the mistake seed
004 names): each answer says what the kit checked and what it did. Calls re-run here do not
fire PreToolUse/PostToolUse hooks again (run_bash, the tool hooks usually guard, is never
re-run). The decision for edits is the pure :func:`mini_agent.core.edit_reconcile.edit_outcome`.
Taught in ``notebooks/07_sessions.ipynb``.
Source: 004_b74ef821c58ee4ec.txt chapter 3 (resume: compare with the external state before
redoing; never ask the model what was done).
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


def _call_text(name: str, input: dict) -> str:
    """How a not-re-run call is named in its answer: the command itself when it has one."""
    command = input.get("command") if isinstance(input, dict) else None
    if isinstance(command, str) and command.strip():
        return f"the command `{command.strip()[:200]}`"
    return f"this {name} call"


def settle_call(tool: Tool | None, name: str, input: dict) -> tuple[str, str, bool]:
    """Settle one interrupted call by its tool's named behaviour; may run the tool.

    Args:
        tool: the agent's tool of that name, or None when it has none.
        name: the tool name of the ``tool_use``.
        input: the call's input (as logged).

    Returns:
        ``(outcome, content, is_error)``: ``outcome`` is ``"reread"`` (a read-only call run
        again; content is its result), ``"applied"`` (an edit found done, not run again),
        ``"rerun"`` (an edit found not done, run now), ``"not_rerun"`` (a command, never run
        again; content says what is known) or ``"unknown"`` (nothing run: the state cannot
        be told).
    """
    if tool is None:
        return "unknown", RESUME_TEXTS["unknown"].format(
            why=f"{name!r} is not one of this agent's tools"), True
    if tool.safety == "read-only":
        content, is_error = run_tool({name: tool}, name, input)
        return "reread", RESUME_TEXTS["reread"] + content, is_error
    if tool.check_applied is None:
        return "not_rerun", RESUME_TEXTS["not_rerun"].format(call=_call_text(name, input)), True
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
                              if i["outcome"] in ("unknown", "not_rerun")]
    return list(history), list(times), report, writer


__all__ = ["load_session", "reconcile_interrupted_calls", "settle_call"]
