"""What every stateless offline brain needs: read the request's tool calls, build a reply, stable ids.

A brain is ``respond(request) -> {"content": [blocks], "stop_reason": str}`` over a
``/v1/messages`` body, with no memory between calls: it decides from the request alone. This
module holds the machinery that does not depend on the task: the tool calls of a history
paired with their results (:class:`Call`), the lines of a ``read_file`` observation, the
reply builders (:func:`act` asks for tools, :func:`say` ends the turn), the tools a request
offers, answering the ``auto_continue`` prompt with only the rest of a cut reply, and tool
ids derived from a hash of the history, so every run gives the same ids. What it does not
do: decide anything; the brains in ``demo_brain.py`` and ``explorer_brain.py`` do.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from mini_agent.core.messages import content_blocks, tool_result_text

CONTINUE_PREFIX = "Continue where you left off"
"""Start of ``continuation.CONTINUE_PROMPT`` (seed 000, autoContinue)."""

Reply = dict[str, Any]
"""``{"content": [blocks], "stop_reason": "tool_use" | "end_turn"}``."""


@dataclass(frozen=True)
class Call:
    """One tool call seen in the request: the ``tool_use`` and its ``tool_result`` (if any)."""

    id: str
    name: str
    input: dict[str, Any]
    result: str | None = None
    is_error: bool = False


# --------------------------------------------------------------------------- reading the request

def texts(message: dict[str, Any]) -> str:
    """The text blocks of one message, joined with newlines."""
    return "\n".join(b.get("text", "") for b in content_blocks(message) if b.get("type") == "text")


def is_prompt(message: dict[str, Any]) -> bool:
    """True for a user message that asks something: no tool results, not the continue prompt."""
    blocks = content_blocks(message)
    return (message.get("role") == "user" and not any(b.get("type") == "tool_result"
                                                      for b in blocks)
            and not texts(message).startswith(CONTINUE_PREFIX))


def call_turns(messages: list[dict[str, Any]]) -> list[list[Call]]:
    """Per assistant turn with tool calls, its tool_uses paired with their tool_results."""
    found = []
    for i, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        results = {}
        if i + 1 < len(messages):
            for b in content_blocks(messages[i + 1]):
                if b.get("type") == "tool_result":
                    results[b.get("tool_use_id")] = b
        turn = []
        for b in content_blocks(message):
            if b.get("type") == "tool_use":
                r = results.get(b.get("id"))
                turn.append(Call(b.get("id", ""), b.get("name", ""), dict(b.get("input") or {}),
                                 None if r is None else tool_result_text(r),
                                 bool(r and r.get("is_error"))))
        if turn:
            found.append(turn)
    return found


def tool_calls(messages: list[dict[str, Any]]) -> list[Call]:
    """All tool calls of ``messages`` with their results, oldest first."""
    return [call for turn in call_turns(messages) for call in turn]


def numbered_lines(result: str | None) -> dict[int, str]:
    """Lines of a read_file observation as {line_number: text} (empty if masked or failed).

    >>> numbered_lines("     1\\timport os\\n     2\\t")
    {1: 'import os', 2: ''}
    """
    lines = {}
    for row in (result or "").splitlines():
        m = re.match(r"^\s*(\d+)\t(.*)$", row)
        if m:
            lines[int(m.group(1))] = m.group(2)
    return lines


def plural(n: int, word: str) -> str:
    """``plural(1, "file") == "1 file"``, ``plural(2, "directory") == "2 directories"``."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") else f"{n} {word}s"


# --------------------------------------------------------------------------- building a reply

def use(tool_name: str, /, **input: Any) -> dict[str, Any]:
    """A ``tool_use`` block of ``tool_name``; its id is filled in by :func:`assign_tool_ids`.

    ``tool_name`` is positional-only, so the input may have a ``name`` key of its own.
    """
    return {"type": "tool_use", "id": "", "name": tool_name, "input": input}


def act(text: str, *uses: dict[str, Any]) -> Reply:
    """A reply that says ``text`` and calls tools (``stop_reason`` "tool_use")."""
    return {"content": [{"type": "text", "text": text}, *uses], "stop_reason": "tool_use"}


def say(text: str) -> Reply:
    """A reply that says ``text`` and ends the turn (``stop_reason`` "end_turn")."""
    return {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}


def require_offered_tools(reply: Reply, request: dict[str, Any]) -> Reply:
    """``reply`` when every tool it calls is offered by ``request``, else a reply saying so."""
    available = {t.get("name") for t in request.get("tools") or []}
    missing = sorted({b["name"] for b in reply["content"] if b["type"] == "tool_use"}
                     - available)
    if not missing:
        return reply
    return say(f"I need the {', '.join(missing)} tool(s) for the next step, but this "
               "request offers none by that name, so I cannot continue.")


def assign_tool_ids(reply: Reply, seed: str) -> Reply:
    """Give each ``tool_use`` of ``reply`` the id ``toolu_01`` + 24 hex of sha256(seed|k).

    Args:
        reply: the reply to fill in (changed in place).
        seed: text that identifies the history, so ids are unique per request and identical
            on every run.
    Returns:
        ``reply``.
    """
    for k, block in enumerate(reply["content"]):
        if block["type"] == "tool_use":
            digest = hashlib.sha256(f"{seed}|{k}".encode()).hexdigest()[:24]
            block["id"] = f"toolu_01{digest}"
    return reply


def history_seed(messages: list[dict[str, Any]]) -> str:
    """What tool ids hash: the parts of a history that views (masking) never change."""
    kept = []
    for message in messages:
        for b in content_blocks(message):
            if b.get("type") in ("text", "tool_use"):
                kept.append([message.get("role"), b.get("text"), b.get("name"), b.get("input")])
            elif b.get("type") == "tool_result":
                kept.append([message.get("role"), "tool_result"])
    return json.dumps(kept, sort_keys=True, ensure_ascii=False)


# --------------------------------------------------------------------------- continuation

def split_continuation(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """Undo ``auto_continue``: ``(history before the cut reply, text already sent)``.

    Each trailing (assistant piece, continue prompt) pair is dropped and the pieces' text
    kept, so a brain can recompute the reply it was cut off in and send only the rest
    (:func:`rest_after`).
    """
    messages = list(messages)
    done = ""
    while (len(messages) >= 3 and messages[-1].get("role") == "user"
           and texts(messages[-1]).startswith(CONTINUE_PREFIX)
           and messages[-2].get("role") == "assistant"):
        done = texts(messages[-2]) + done
        messages = messages[:-2]
    return messages, done


def rest_after(reply: Reply, done: str) -> Reply:
    """Drop from ``reply`` the text already sent before a ``max_tokens`` cut (``done``)."""
    content, left = [], done
    for block in reply["content"]:
        if block["type"] == "text" and left:
            text = block["text"]
            if text.startswith(left):
                rest, left = text[len(left):], ""
                if rest.strip():
                    content.append({"type": "text", "text": rest})
                continue
            if left.startswith(text):
                left = left[len(text):]
                continue
            left = ""
        content.append(block)
    if not content:
        content = [{"type": "text", "text": "(That was the complete answer.)"}]
    return {"content": content, "stop_reason": reply["stop_reason"]}
