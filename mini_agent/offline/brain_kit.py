"""What every stateless offline brain needs: read the request's tool calls, build a reply, stable ids.

A brain is ``respond(request) -> {"content": [blocks], "stop_reason": str}`` over a
``/v1/messages`` body, with no memory between calls: it decides from the request alone. This
module holds the machinery that does not depend on the task: the tool calls of a history
paired with their results (:class:`Call`), the lines of a ``read_file`` observation, the
reply builders (:func:`act` asks for tools, :func:`say` ends the turn), the tools a request
offers, answering the ``auto_continue`` prompt with only the rest of a cut reply, and tool
ids derived from a hash of the history, so every run gives the same ids. What it does not
do: decide anything; the brains in ``demo_brain.py`` and ``explorer_brain.py`` do.

Source:
    Anthropic Messages API reference (``tool_use`` / ``tool_result`` blocks, ``stop_reason``);
    000_86e3ff2076a5ae37.txt (autoContinue: "Continue where you left off").
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from mini_agent.core.cache import CLEARED_TOOL_RESULT
from mini_agent.core.compaction import COLLAPSE_NOTICE, SUMMARY_PREFIX
from mini_agent.core.masking import is_masked
from mini_agent.core.messages import content_blocks, tool_result_text

CONTINUE_PREFIX = "Continue where you left off"
"""Start of ``continuation.CONTINUE_PROMPT`` (seed 000, autoContinue)."""

Reply = dict[str, Any]
"""``{"content": [blocks], "stop_reason": "tool_use" | "end_turn"}``."""


@dataclass(frozen=True)
class Call:
    """One tool call seen in the request: the ``tool_use`` and its ``tool_result`` (if any).

    Attributes:
        id: the ``tool_use`` id.
        name: the tool's name.
        input: the tool input (a copy).
        result: the result's text, or None when no result follows yet.
        is_error: the result had ``is_error: true``.
        hidden: the view replaced the result's content by a placeholder (observation
            masking's ``[observation masked — N lines omitted]`` or micro-compaction's
            ``[Old tool result content cleared]``), so ``result`` says nothing about the tool.
    """

    id: str
    name: str
    input: dict[str, Any]
    result: str | None = None
    is_error: bool = False
    hidden: bool = False


# --------------------------------------------------------------------------- reading the request

def texts(message: dict[str, Any]) -> str:
    """Join the text blocks of one message.

    Args:
        message: a message dict; string content counts as one text block.

    Returns:
        The blocks' text joined with newlines (``""`` when there is none).
    """
    return "\n".join(b.get("text", "") for b in content_blocks(message) if b.get("type") == "text")


def is_prompt(message: dict[str, Any]) -> bool:
    """Tell whether a message is a user prompt.

    Args:
        message: a message dict.

    Returns:
        True for a user message that asks something: no tool results, and not the
        ``auto_continue`` prompt.
    """
    blocks = content_blocks(message)
    return (message.get("role") == "user" and not any(b.get("type") == "tool_result"
                                                      for b in blocks)
            and not texts(message).startswith(CONTINUE_PREFIX))


def call_turns(messages: list[dict[str, Any]]) -> list[list[Call]]:
    """Pair each assistant turn's tool_uses with their tool_results.

    A result is looked for only in the message right after the assistant turn.

    Args:
        messages: the request's history; never mutated.

    Returns:
        One list of :class:`Call` per assistant turn that has tool calls, oldest first;
        ``result`` is None for a call with no result yet.
    """
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
                                 bool(r and r.get("is_error")), bool(r and is_hidden(r))))
        if turn:
            found.append(turn)
    return found


def is_hidden(block: dict[str, Any]) -> bool:
    """Tell whether a view replaced a ``tool_result``'s content by a placeholder.

    Args:
        block: a ``tool_result`` block.

    Returns:
        True for a masked observation (``core/masking.py``) or a cleared one
        (``[Old tool result content cleared]``: micro-compaction, server-side clearing).
    """
    return is_masked(block) or block.get("content") == CLEARED_TOOL_RESULT


def view_was_cut(messages: list[dict[str, Any]]) -> bool:
    """Tell whether a view dropped the early conversation (collapsed or summarised it).

    Args:
        messages: the request's history.

    Returns:
        True when a message carries ``context_collapse``'s notice or an ``auto_compact``
        summary, so earlier tool calls exist that the request no longer shows.
    """
    return any(COLLAPSE_NOTICE in texts(m) or texts(m).startswith(SUMMARY_PREFIX)
               for m in messages if m.get("role") == "user")


def tool_calls(messages: list[dict[str, Any]]) -> list[Call]:
    """List all tool calls of a history with their results.

    Args:
        messages: the request's history; never mutated.

    Returns:
        Every :class:`Call`, oldest first.
    """
    return [call for turn in call_turns(messages) for call in turn]


def numbered_lines(result: str | None) -> dict[int, str]:
    """Parse the numbered lines of a read_file observation.

    Args:
        result: the observation text (``"{n:>6}\\t{line}"`` rows), or None.

    Returns:
        ``{line_number: text}``; empty when the observation was masked, failed or is None.

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
    """Say a count with its noun in the right number.

    Args:
        n: the count.
        word: the singular noun; a final ``y`` becomes ``ies``, else ``s`` is added.

    Returns:
        ``"<n> <word>"`` in the singular for 1, the plural otherwise.

    >>> plural(1, "file"), plural(2, "directory")
    ('1 file', '2 directories')
    """
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") else f"{n} {word}s"


# --------------------------------------------------------------------------- building a reply

def use(tool_name: str, /, **input: Any) -> dict[str, Any]:
    """Build a ``tool_use`` block; its id is filled in by :func:`assign_tool_ids`.

    Args:
        tool_name: the tool; positional-only, so the input may have a ``name`` key of its own.
        input: the tool input, as keyword arguments.

    Returns:
        ``{"type": "tool_use", "id": "", "name": tool_name, "input": input}``.
    """
    return {"type": "tool_use", "id": "", "name": tool_name, "input": input}


def act(text: str, *uses: dict[str, Any]) -> Reply:
    """Build a reply that says something and calls tools.

    Args:
        text: the text block before the calls.
        uses: ``tool_use`` blocks from :func:`use`.

    Returns:
        A :data:`Reply` with ``stop_reason`` ``"tool_use"``.
    """
    return {"content": [{"type": "text", "text": text}, *uses], "stop_reason": "tool_use"}


def say(text: str) -> Reply:
    """Build a reply that says something and ends the turn.

    Args:
        text: the only text block.

    Returns:
        A :data:`Reply` with ``stop_reason`` ``"end_turn"``.
    """
    return {"content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}


def require_offered_tools(reply: Reply, request: dict[str, Any]) -> Reply:
    """Check that a reply calls only tools the request offers.

    Args:
        reply: the brain's reply.
        request: the ``/v1/messages`` body (its ``"tools"`` are read).

    Returns:
        ``reply`` itself when every tool it calls is offered, else an ``end_turn`` reply
        naming the missing tools.
    """
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
    """Describe a history by what views (masking) never change, for hashing tool ids.

    Args:
        messages: the request's history.

    Returns:
        JSON text of each text and tool_use block (role, text, name, input) and of each
        tool_result's place (its content left out).
    """
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
    """Undo ``auto_continue``: find the history before the cut reply and the text already sent.

    Each trailing (assistant piece, continue prompt) pair is dropped and the pieces' text
    kept, so a brain can recompute the reply it was cut off in and send only the rest
    (:func:`rest_after`).

    Args:
        messages: the request's history; never mutated.

    Returns:
        ``(history before the cut reply, text already sent)``; ``(messages, "")`` when the
        history does not end with a continue prompt.
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
    """Drop from a reply the text already sent before a ``max_tokens`` cut.

    Args:
        reply: the full reply the brain recomputed; not mutated.
        done: the text already sent (from :func:`split_continuation`).

    Returns:
        A new reply with the rest only; ``(That was the complete answer.)`` when nothing is
        left.
    """
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
