"""The Stop hook: fired when the loop would end; a block sends the model on with the reason.

Claude Code fires ``Stop`` when the agent has finished its reply. A Stop hook that answers
``{"decision": "block", "reason": "..."}`` (or exits 2 with the reason on stderr) keeps the
agent from stopping: the reason goes to the model and the turn goes on. The next Stop of the
same turn carries ``"stop_hook_active": true``, so a hook can let it end the second time.
Claude Code itself ends the turn after 8 blocks in a row (``CLAUDE_CODE_STOP_HOOK_BLOCK_CAP``)
whatever the hook says; the kit keeps the same guard, :data:`DEFAULT_MAX_STOP_HOOK_BLOCKS`.

How the reason reaches the model: as Claude Code sends it, a user message whose text is
``"Stop hook feedback:\\n<reason>"`` (:data:`STOP_FEEDBACK_PREFIX`), after the assistant's last
reply. A real Claude Code transcript (version 2.1.14) records exactly that: a ``user`` entry
``"Stop hook feedback:\\n[<command>]: <reason>"`` right after the assistant's text. A user
message (not a tool_result, not the system prompt) is the only place that keeps every request
valid: the history ends with the assistant's reply, so a user message comes next.

This module builds the payload and the feedback message; the loop
(:func:`~mini_agent.harness.loop.run_loop`) decides what a block does. IO: the hooks it fires
(commands run as processes). Taught in ``notebooks/06_hooks.ipynb``.

Source:
    Claude Code hooks reference (docs.anthropic.com/en/docs/claude-code/hooks: Stop,
    ``stop_hook_active``, ``decision: "block"``, exit code 2); a Claude Code 2.1.14 transcript
    in the course data (``claude-code/reliability-coverage-test-fix.jsonl``: the feedback
    entries); the 8-block cap as read from the Claude Code binary (public notes on Stop
    prompt hooks).
"""

from __future__ import annotations

from typing import Any

from mini_agent.core.hook_output import HookResult
from mini_agent.core.messages import Message
from mini_agent.harness.result_text import encodable_text

DEFAULT_MAX_STOP_HOOK_BLOCKS = 8
"""Stop-hook blocks one run of the loop turns into more work; the next block ends the loop
with ``"stop_hook_limit"`` (Claude Code's own cap is 8 blocks in a row)."""

STOP_HOOK_LIMIT = "stop_hook_limit"
"""The loop's ``exit_status`` when a Stop hook blocked once more than the guard allows."""

STOP_FEEDBACK_PREFIX = "Stop hook feedback:\n"
"""What the user message that carries a Stop hook's reason starts with (Claude Code's text)."""


def last_assistant_text(history: list[Message]) -> str:
    """Return the text of the newest assistant message, as Claude Code's Stop payload gives it.

    Args:
        history: the conversation; not mutated.

    Returns:
        The text blocks of the last assistant message joined with newlines, or ``""`` when
        there is none (or it holds no text).
    """
    for message in reversed(history):
        if message["role"] == "assistant":
            content = message["content"]
            if isinstance(content, str):
                return content
            return "\n".join(b["text"] for b in content if b.get("type") == "text")
    return ""


def stop_payload(history: list[Message], exit_status: str, blocks: int) -> dict[str, Any]:
    """Build the Stop event's payload.

    Args:
        history: the conversation as the loop leaves it; not mutated.
        exit_status: how the loop would end (``"completed"``, ``"max_turns_reached"``,
            ``"hook_stopped"``): the kit's field, Claude Code has none.
        blocks: Stop-hook blocks this run has already turned into more work.

    Returns:
        ``{"exit_status", "stop_hook_active", "last_assistant_message"}``;
        ``stop_hook_active`` is True once a Stop hook has sent the model on in this run.
    """
    return {"exit_status": exit_status, "stop_hook_active": blocks > 0,
            "last_assistant_message": last_assistant_text(history)}


def stop_feedback(result: HookResult) -> Message:
    """Build the user message that hands a Stop hook's reason to the model.

    Args:
        result: the Stop event's blocking :class:`~mini_agent.core.hook_output.HookResult`
            (its ``reason`` is already capped to ``MAX_HOOK_OUTPUT_CHARS``).

    Returns:
        ``{"role": "user", "content": [{"type": "text", "text": "Stop hook feedback:\\n"
        + reason}]}``; a lone surrogate in the reason becomes U+FFFD (the API refuses it).
    """
    text = STOP_FEEDBACK_PREFIX + encodable_text(result.reason or "blocked by a Stop hook")
    return {"role": "user", "content": [{"type": "text", "text": text}]}


__all__ = ["DEFAULT_MAX_STOP_HOOK_BLOCKS", "STOP_FEEDBACK_PREFIX", "STOP_HOOK_LIMIT",
           "last_assistant_text", "stop_feedback", "stop_payload"]
