"""Notebook 06 says where the kit's hooks are stricter than Claude Code, and the kit is.

Each row of the notebook's "stricter than Claude Code" table is checked twice: the prose is
there, and a command hook doing what the row describes gets the outcome the row promises.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mini_agent import HookManager

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "06_hooks.ipynb"
PAYLOAD = {"tool_name": "run_bash", "tool_input": {"command": "ls"}, "prompt": "hi",
           "tool_response": "out"}


def markdown() -> str:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return " ".join(text.split())  # line breaks of the prose do not matter


def fire(event: str, command: str, timeout_seconds: float = 60):
    hooks = HookManager()
    hooks.add_command(event, command, timeout_seconds=timeout_seconds)
    return asyncio.run(hooks.fire(event, dict(PAYLOAD)))


def test_the_notebook_names_each_departure_and_why():
    text = markdown()
    assert "Where the kit is stricter than Claude Code: it fails closed" in text
    for row in ("then exits 1 or runs past its timeout", "tries to be JSON but is not",
                '`"permissionDecision": "ask"`', "refuses the call",
                '`"Block"`, `"DENY"`, `"decision": "deny"`',
                "its reason is appended to the tool result",
                "`SessionStart` context reaches the model with the first prompt"):
        assert row in text, row
    # the plain Claude Code description stays, marked as Claude Code's
    assert "Exit codes as in Claude Code" in text


@pytest.mark.parametrize("command,timeout_seconds", [
    ("""echo '{"decision": "block", "reason": "no"}'; exit 1""", 60),
    ("""echo '{"decision": "block", "reason": "no"}'; sleep 5""", 0.5)])
def test_a_block_printed_before_a_crash_or_timeout_stands(command, timeout_seconds):
    result = fire("PreToolUse", command, timeout_seconds)
    assert result.blocked and result.reason == "no"


def test_stdout_that_tries_to_be_json_fails_closed():
    command = """echo "{'decision': 'block'}" """
    assert fire("PreToolUse", command).blocked
    assert fire("UserPromptSubmit", command).blocked
    post = fire("PostToolUse", command)
    assert not post.blocked and post.updated_output.startswith("[tool output withheld")
    assert not fire("PreToolUse", "echo 'not json'").blocked  # plain text: only reported


def test_ask_refuses_and_decisions_are_read_in_any_case():
    ask = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}
    assert fire("PreToolUse", f"echo '{json.dumps(ask)}'").blocked
    for answer in ({"decision": "Block"}, {"decision": "DENY"}, {"decision": "nope"}):
        assert fire("PreToolUse", f"echo '{json.dumps(answer)}'").blocked, answer
    assert not fire("PreToolUse", "exit 1").blocked
