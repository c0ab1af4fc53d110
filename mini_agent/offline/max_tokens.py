"""The offline API's output budget: cut a brain's reply where ``max_tokens`` runs out.

A reply longer than the budget stops with ``stop_reason: "max_tokens"``; a ``tool_use`` cut
mid-input keeps the JSON streamed so far (parsed in partial mode, as the SDK's stream
accumulator does). A fault plan can force a cut in text or in a tool call. The budget is
approximate: 4 characters per output token (a named assumption: the offline API has no
tokenizer). Taught in ``notebooks/01_agent_loop.ipynb`` and ``03_observation_masking.ipynb``.

Source: Anthropic "Messages" docs (``stop_reason: "max_tokens"``); the SDK's stream
accumulator (``input_json_delta`` parsed in partial mode).
"""

from __future__ import annotations

import json

import jiter

__all__ = ["enforce_max_tokens"]


def enforce_max_tokens(content: list[dict], stop_reason: str, max_tokens: int,
                       forced: str | None) -> tuple[list[dict], str, dict[int, str]]:
    """Cut the reply where the output budget runs out (or where a fault says).

    Args:
        content: the brain's reply blocks (not mutated).
        stop_reason: the brain's stop_reason, kept when nothing is cut.
        max_tokens: the request's output budget (tokens, 4 characters each).
        forced: ``"text"`` or ``"tool_use"`` to cut there whatever the budget (a fault
            plan's ``max_tokens_at``), or None.

    Returns:
        ``(content, stop_reason, partial_json)``; ``partial_json`` maps the index of a
        tool_use cut mid-input to the JSON text streamed so far (its ``input`` in the JSON
        reply is that text parsed in partial mode, as the SDK's stream accumulator does).
    """
    content = [dict(b) for b in content]
    if forced == "text":
        for i, block in enumerate(content):
            if block["type"] == "text" and len(block["text"]) > 1:
                block["text"] = block["text"][: max(1, len(block["text"]) // 2)]
                return content[: i + 1], "max_tokens", {}
    if forced == "tool_use":
        uses = [i for i, b in enumerate(content) if b["type"] == "tool_use"]
        if uses:
            i = uses[-1]
            text = json.dumps(content[i]["input"])
            cut = text[: max(1, len(text) // 2)]
            content[i]["input"] = _parse_partial(cut)
            return content[: i + 1], "max_tokens", {i: cut}
    budget_chars = max_tokens * 4
    used = 0
    for i, block in enumerate(content):
        if block["type"] == "text":
            size = len(block["text"])
            if used + size > budget_chars:
                block["text"] = block["text"][: max(1, budget_chars - used)]
                return content[: i + 1], "max_tokens", {}
            used += size
        elif block["type"] == "tool_use":
            text = json.dumps(block["input"])
            size = len(text) + len(block["name"]) + 20
            if used + size > budget_chars:
                cut = text[: max(1, budget_chars - used - len(block["name"]) - 20)]
                block["input"] = _parse_partial(cut)
                return content[: i + 1], "max_tokens", {i: cut}
            used += size
    return content, stop_reason, {}


def _parse_partial(text: str) -> dict:
    try:
        value = jiter.from_json(text.encode(), partial_mode="trailing-strings")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
