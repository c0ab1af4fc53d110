"""A PreToolUse ``updatedInput`` that is not an object is a hook error that fails closed.

The hook meant to change the tool's input; running the model's input instead would ignore
that change (a sanitiser's bug would let the unsanitised command through). So a list, a
string or a number blocks the call, as an unreadable decision does; ``null`` is no change (the
seed's ``output.get("updatedInput") is not None``); outside PreToolUse the field is ignored.
"""

from __future__ import annotations

import asyncio
import sys

import pytest

from mini_agent.core.hook_output import HookResult, check_result, parse_hook_output
from mini_agent.core.messages import validate_messages
from mini_agent.harness.agent import Agent
from mini_agent.harness.hooks import HookManager
from mini_agent.harness.tools import Tool
from mini_agent.offline import ScriptedBrain, offline_async_client

PY = sys.executable


@pytest.mark.parametrize("value, kind", [(["ls"], "list"), ("rm -rf /", "str"), (3, "int"),
                                         (True, "bool")])
@pytest.mark.parametrize("nested", [True, False])
def test_a_non_object_updated_input_blocks_pre_tool_use(value, kind, nested):
    answer = ({"hookSpecificOutput": {"updatedInput": value}} if nested
              else {"updatedInput": value})
    result = parse_hook_output(answer, event="PreToolUse")
    assert result.blocked and result.updated_input is None
    assert result.reason == (
        f"the PreToolUse hook answered an updatedInput the kit cannot use (hook output "
        f"updatedInput must be an object, got {kind}); blocked to be safe (fail closed)")
    assert result.errors == [f"hook output updatedInput must be an object, got {kind}; "
                             "blocked to be safe (fail closed)"]


def test_an_allow_beside_an_unusable_input_still_blocks():
    for answer in ({"decision": "approve", "updatedInput": "ls"},
                   {"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": []}}):
        assert parse_hook_output(answer, event="PreToolUse").blocked, answer


def test_a_block_beside_an_unusable_input_keeps_its_own_reason():
    result = parse_hook_output({"decision": "block", "reason": "no", "updatedInput": "x"},
                               event="PreToolUse")
    assert (result.blocked, result.reason) == (True, "no")


def test_null_is_no_change_and_no_error():
    result = parse_hook_output({"hookSpecificOutput": {"updatedInput": None}},
                               event="PreToolUse")
    assert result == HookResult()


def test_outside_pre_tool_use_it_is_ignored_and_reported():
    result = parse_hook_output({"updatedInput": "x"}, event="PostToolUse")
    assert result == HookResult(errors=["hook output updatedInput must be an object, got str; "
                                        "ignored"])


def test_a_python_hook_result_with_a_non_dict_input_blocks_and_stays_blocked():
    result = check_result(HookResult(updated_input="rm -rf /"), "PreToolUse")
    assert result.blocked and result.updated_input is None
    assert result.reason.endswith("blocked to be safe (fail closed)")
    assert result.errors == ["hook result updated_input 'rm -rf /' is not an object; blocked"]
    assert check_result(result, "PreToolUse") == result            # idempotent
    assert not check_result(HookResult(updated_input=[1]), "PostToolUse").blocked


def test_a_command_hook_answering_a_list_blocks_and_later_handlers_do_not_run():
    hooks = HookManager()
    hooks.add_command("PreToolUse", f"""{PY} -c "print('{{\\"updatedInput\\": [1]}}')" """)
    later: list[dict] = []
    hooks.on("PreToolUse", lambda p: later.append(p) or {})
    result = asyncio.run(hooks.fire("PreToolUse", {"tool_name": "r", "tool_input": {"x": 1}}))
    assert result.blocked and "updatedInput" in result.reason and later == []


def test_the_tool_does_not_run_and_the_model_is_told():
    ran: list[dict] = []
    tools = {"r": Tool("r", "reads", {"type": "object", "properties": {}}, "read-only",
                       lambda i: ran.append(dict(i)) or "read")}
    hooks = HookManager()
    hooks.on("PreToolUse", lambda p: {"hookSpecificOutput": {"updatedInput": "x=2"}})
    reply = {"content": [{"type": "tool_use", "id": "toolu_01", "name": "r", "input": {"x": 1}}],
             "stop_reason": "tool_use"}
    agent = Agent(offline_async_client(ScriptedBrain([reply, "Done."])), tools=tools,
                  hooks=hooks)
    agent.run("go")
    assert ran == []
    result = agent.history[2]["content"][0]
    assert result["is_error"] is True and "updatedInput" in str(result["content"])
    validate_messages(agent.history)
