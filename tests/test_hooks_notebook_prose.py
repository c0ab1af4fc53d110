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
                "runs past its timeout having printed nothing",
                "a guard that hangs is not an allow",
                '`"Block"`, `"DENY"`, `"decision": "deny"`',
                "answers an `updatedInput` that is not an object",
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


def test_the_notebook_names_the_python_handler_time_limit_and_subagent_stop():
    text = markdown()
    for row in ("mini-agent fires six events", "| `SubagentStop` |",
                "the matcher is the `agent_type`",
                "so does a handler that does not answer within its time limit",
                "60 s by default", "a plain function that never returns",
                "is left running and its late answer is dropped",
                "a coroutine that blocks without awaiting",
                "until it returns the handler is not called again",
                "A command hook that runs past its timeout follows the same rule"):
        assert row in text, row


def test_a_python_handler_past_its_limit_blocks_the_two_guard_events_only():
    import threading
    gate = threading.Event()
    try:
        for event, blocks in (("PreToolUse", True), ("UserPromptSubmit", True),
                              ("PostToolUse", False), ("Stop", False)):
            hooks = HookManager()
            hooks.on(event, lambda p: gate.wait(), timeout_seconds=0.1)
            result = asyncio.run(hooks.fire(event, dict(PAYLOAD)))
            assert result.blocked is blocks, event
            assert "did not return within 0.1 s" in result.errors[0]
    finally:
        gate.set()


@pytest.mark.parametrize("event, blocks", [("PreToolUse", True), ("UserPromptSubmit", True),
                                           ("PostToolUse", False), ("Stop", False)])
def test_a_command_hook_past_its_timeout_blocks_the_two_guard_events_only(event, blocks):
    result = fire(event, "sleep 5", timeout_seconds=0.3)
    assert result.blocked is blocks
    if blocks:
        assert result.reason == (f"the {event} hook `sleep 5` timed out after 0.3 s and was "
                                 "killed; blocked to be safe (fail closed)")
        assert result.errors == ["`sleep 5` timed out after 0.3 s and was killed; blocked"]
    else:
        assert result.errors == ["`sleep 5` timed out after 0.3 s and was killed"]


def test_an_updated_input_that_is_not_an_object_blocks_pre_tool_use():
    result = fire("PreToolUse", """echo '{"updatedInput": "rm -rf /"}'""")
    assert result.blocked and result.reason.endswith("(fail closed)")
