"""Legitimate Claude Code hook answers never block: the fail-closed reading blocks only what
may hold a block."""

import pytest

from mini_agent.core.hook_output import parse_hook_output

PERMISSION_REQUEST = {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                             "decision": {"behavior": "allow",
                                                          "updatedInput": {"command": "ls"}}}}


@pytest.mark.parametrize("event", ["PreToolUse", "UserPromptSubmit", "PostToolUse", "Stop"])
@pytest.mark.parametrize("answer", [
    {"continue": True}, {"suppressOutput": True}, {"continue": True, "extra": 1},
    {"decision": None}, {"decision": "approve", "reason": "fine"},
    PERMISSION_REQUEST,  # one script shared with a PermissionRequest hook
])
def test_a_legitimate_answer_does_not_block(event, answer):
    assert parse_hook_output(answer, event=event).blocked is False


def test_a_permission_request_decision_is_named_as_ignored_not_read_as_a_block():
    result = parse_hook_output(PERMISSION_REQUEST, event="PreToolUse")
    assert not result.blocked
    assert any("PermissionRequest shape" in e and e.endswith("ignored") for e in result.errors)


def test_a_string_decision_put_one_level_too_deep_still_blocks():
    result = parse_hook_output({"hookSpecificOutput": {"decision": "block", "reason": "no"}},
                               event="PreToolUse")
    assert result.blocked and result.reason == "no"
