"""A command hook's answer behind a UTF-8 byte order mark is read as the answer it is, and a
cancelled hook takes its processes with it."""

import asyncio

import pytest

from mini_agent.harness.command_hooks import CommandHook

BLOCK_WITH_BOM = r"""printf '\357\273\277{"decision": "block", "reason": "no"}'"""


@pytest.mark.parametrize("event", ["PreToolUse", "UserPromptSubmit", "PostToolUse", "Stop"])
def test_a_block_printed_after_a_byte_order_mark_blocks(event):
    result = asyncio.run(CommandHook(BLOCK_WITH_BOM)({"hook_event_name": event,
                                                       "tool_name": "x", "tool_input": {}}))
    assert (result.blocked, result.reason, result.additional_context) == (True, "no", None)


def test_a_block_printed_after_a_byte_order_mark_before_a_crash_stands():
    hook = CommandHook(BLOCK_WITH_BOM + "; exit 1")
    result = asyncio.run(hook({"hook_event_name": "PreToolUse", "tool_name": "x",
                               "tool_input": {}}))
    assert (result.blocked, result.reason) == (True, "no")


def test_plain_context_after_a_byte_order_mark_loses_only_the_mark():
    hook = CommandHook(r"printf '\357\273\277remember the tests'")
    result = asyncio.run(hook({"hook_event_name": "UserPromptSubmit", "prompt": "hi"}))
    assert (result.blocked, result.additional_context) == (False, "remember the tests")


def test_a_cancelled_hook_leaves_no_process_running(tmp_path):
    marker = tmp_path / "still-running"
    hook = CommandHook(f"sleep 2; touch {marker}")  # touch runs only if the group survives

    async def cancel_soon():
        task = asyncio.create_task(hook({"hook_event_name": "Stop"}))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_soon())
    import time
    time.sleep(2.5)
    assert not marker.exists()
