"""The offline API's output budget: cut a brain's reply where ``max_tokens`` runs out.

A reply longer than the budget stops with ``stop_reason: "max_tokens"``; a ``tool_use`` cut
mid-input keeps the JSON streamed so far (parsed in partial mode, as the SDK's stream
accumulator does). A fault plan can force a cut in text or in a tool call. The budget is
approximate: 4 characters per output token (a named assumption: the offline API has no
tokenizer). Taught in ``notebooks/01_agent_loop.ipynb`` and ``03_observation_masking.ipynb``.

:func:`one_tool_use` ends a reply after its first tool call when the request's
``tool_choice`` sets ``disable_parallel_tool_use`` ("the model will output at most one tool
use"), and leaves tool calls out when it is ``none``. :func:`apply_stop_sequences` ends a
reply at the first of the request's ``stop_sequences`` in its text, as the API does (``stop_reason: "stop_sequence"``, the matched string in
``stop_sequence``, the sequence itself left out of the text).

Source: Anthropic "Messages" docs (``stop_reason: "max_tokens"``; ``stop_sequences``: "the
response stop_reason value will be "stop_sequence" and the response stop_sequence value
will contain the matched stop sequence"); the SDK's stream accumulator
(``input_json_delta`` parsed in partial mode); ``ToolChoiceAutoParam`` ("If set to true, the
model will output at most one tool use"), ``ToolChoiceNoneParam`` ("The model will not be
allowed to use tools"). ASSUMPTIONS: stop sequences are matched in text blocks only (not in
thinking or tool input), and a text block cut to nothing is left out.
"""

from __future__ import annotations

import json
from typing import Any

import jiter

__all__ = ["apply_stop_sequences", "enforce_max_tokens", "one_tool_use"]


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


def apply_stop_sequences(content: list[dict], stop_sequences: list[str] | None
                         ) -> tuple[list[dict], str | None]:
    """End a reply at the first stop sequence its text generates.

    Args:
        content: the brain's reply blocks, in generation order (not mutated).
        stop_sequences: the request's ``stop_sequences`` (None or empty: nothing to match;
            empty strings are ignored).

    Returns:
        ``(content, matched)``: the blocks up to the match, the text cut just before the
        sequence (a text block cut to "" is left out), and the matched sequence; or the
        content unchanged and None when no text holds one. When two sequences could match,
        the one that starts first wins (the longer one at the same place).

    >>> apply_stop_sequences([{"type": "text", "text": "a</x>b"}, {"type": "text",
    ...                       "text": "c"}], ["</x>"])
    ([{'type': 'text', 'text': 'a'}], '</x>')
    """
    sequences = [s for s in stop_sequences or [] if s]
    for i, block in enumerate(content):
        if block.get("type") != "text" or not sequences:
            continue
        text = block["text"]
        hits = [(text.find(s), -len(s), s) for s in sequences if s in text]
        if not hits:
            continue
        at, _, matched = min(hits)
        head = [dict(b) for b in content[:i]]
        if text[:at]:
            head.append({**block, "text": text[:at]})
        return head, matched
    return [dict(b) for b in content], None


def one_tool_use(content: list[dict], tool_choice: Any) -> list[dict]:
    """Keep a reply up to its first tool call when parallel tool use is disabled.

    With ``tool_choice: {"type": "none"}`` the model calls no tool: every ``tool_use`` block
    is left out (ASSUMPTION: the rest of the reply is what the model says instead).

    Args:
        content: the brain's reply blocks, in generation order (not mutated).
        tool_choice: the request's ``tool_choice`` (None, or a dict whose
            ``disable_parallel_tool_use`` may be True).

    Returns:
        The blocks up to and including the first ``tool_use`` when
        ``disable_parallel_tool_use`` is True (ASSUMPTION: the model stops there, nothing
        after it is generated); the blocks other than ``tool_use`` for ``none``; otherwise a
        copy of ``content``.

    >>> one_tool_use([{"type": "tool_use", "id": "a"}, {"type": "tool_use", "id": "b"}],
    ...              {"type": "auto", "disable_parallel_tool_use": True})
    [{'type': 'tool_use', 'id': 'a'}]
    """
    blocks = [dict(b) for b in content]
    if isinstance(tool_choice, dict) and tool_choice.get("type") == "none":
        return [b for b in blocks if b.get("type") != "tool_use"]
    if not isinstance(tool_choice, dict) or tool_choice.get("disable_parallel_tool_use") \
            is not True:
        return blocks
    for i, block in enumerate(blocks):
        if block.get("type") == "tool_use":
            return blocks[: i + 1]
    return blocks


def _parse_partial(text: str) -> dict:
    try:
        value = jiter.from_json(text.encode(), partial_mode="trailing-strings")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
