"""Small deterministic brains for the offline Claude (the demo-solving one is ``demo_brain``).

A brain decides the assistant's reply from the request body alone: it is stateless, so
retries, resumed sessions and replays all get the same answer for the same history.

Source:
    Anthropic Messages API reference (the ``/v1/messages`` body and reply shape); section 1
    of 002_4516104fd432e704.txt (``--dry-run``: an agent run with no API).
"""

from __future__ import annotations

from typing import Any, Sequence

from mini_agent.core.messages import content_blocks


def count_assistant_turns(request: dict[str, Any]) -> int:
    """Count the assistant messages the request's history already holds.

    Args:
        request: the ``/v1/messages`` body.

    Returns:
        The number of messages with role ``"assistant"``.
    """
    return sum(1 for m in request.get("messages", []) if m.get("role") == "assistant")


class ScriptedBrain:
    """Replies with the scripted turn that follows the conversation's newest scripted turn.

    Where the conversation stands is read from its state, not from a count: the newest
    assistant message that equals a scripted reply (its text, tool names, ids and inputs) is
    reply ``j``, so the answer is ``responses[j + 1]``; a view that dropped or summarised older
    turns, or a history with other turns before the script started, gets the same answer as
    the full one. With no scripted reply in the request yet, the answer is ``responses[k]``
    with k the number of assistant turns (so a script also works after its own earlier
    turns were rewritten). Equal replies at several places of the script are told apart by
    that count.

    For example, ``ScriptedBrain(["hi"])`` answers "hi".

    Args:
        responses: reply dicts ``{"content": [blocks], "stop_reason": str}``, or a plain
            string, shorthand for one text block with ``end_turn``.
        final_text: what it answers, with ``end_turn``, after the script runs out (default
            ``"Done."``).
    """

    def __init__(self, responses: Sequence[dict[str, Any] | str], *,
                 final_text: str = "Done.") -> None:
        self.responses = [self._normalise(r) for r in responses]
        self.final_text = final_text

    @staticmethod
    def _normalise(response: dict[str, Any] | str) -> dict[str, Any]:
        if isinstance(response, str):
            return {"content": [{"type": "text", "text": response}], "stop_reason": "end_turn"}
        return response

    def respond(self, request: dict[str, Any]) -> dict[str, Any]:
        """Give the scripted reply for this point of the conversation.

        Args:
            request: the ``/v1/messages`` body.

        Returns:
            The next scripted reply (the script's own dict, not a copy), or ``final_text``
            with ``end_turn`` once the script has run out.
        """
        k = self._position(request)
        if k < len(self.responses):
            return self.responses[k]
        return {"content": [{"type": "text", "text": self.final_text}],
                "stop_reason": "end_turn"}

    def _position(self, request: dict[str, Any]) -> int:
        """Index of the reply to give now (see the class docstring)."""
        count = count_assistant_turns(request)
        assistants = [m for m in request.get("messages", []) if m.get("role") == "assistant"]
        for message in reversed(assistants):
            shape = _shape(content_blocks(message))
            matches = [j for j, r in enumerate(self.responses) if _shape(r["content"]) == shape]
            if matches:
                later = [j for j in matches if j >= count - 1]
                return (min(later) if later else max(matches)) + 1
        return count


def _shape(blocks: Sequence[dict[str, Any]]) -> list[tuple]:
    """What identifies a reply: its text, and each tool call's id, name and input."""
    return [(b.get("type"), b.get("text"), b.get("id"), b.get("name"),
             repr(b.get("input"))) for b in blocks if b.get("type") in ("text", "tool_use")]


class EchoBrain:
    """Answers ``You said: <last user text>`` (a smoke-test brain that never uses tools)."""

    def respond(self, request: dict[str, Any]) -> dict[str, Any]:
        """Echo the text of the request's last message (the user's, in a normal request).

        Args:
            request: the ``/v1/messages`` body.

        Returns:
            An ``end_turn`` reply ``You said: <text>`` (``(no text)`` when it has none).
        """
        messages = request.get("messages", [])
        last = messages[-1] if messages else {"content": ""}
        text = " ".join(b.get("text", "") for b in content_blocks(last)
                        if b.get("type") == "text").strip()
        return {"content": [{"type": "text", "text": f"You said: {text or '(no text)'}"}],
                "stop_reason": "end_turn"}
