"""What one content block may hold: the block types and keys the Messages API accepts.

What this module does: lists the block types a request may carry, the keys each type accepts
and the keys a message accepts, and checks one block against them (a valid ``cache_control``,
no kit-private keys, non-empty text, the block types a list-shaped ``tool_result`` content may
hold). Each check returns ``(rule, sentence)`` or None, like ``mini_agent.core.wire_rules``;
:func:`mini_agent.core.messages.validate_messages` raises them as ``MessageValidationError``.
What it does not do: look across blocks or messages (roles, tool pairing, marker counts are
``validate_messages``'s). Pure: no IO, inputs never mutated. Taught in
``notebooks/01_agent_loop.ipynb``.

Source: the SDK's ``*BlockParam`` types (anthropic 2.14, stable and beta) for the keys and
types; the API's 400 answers "Extra inputs are not permitted", "Input tag ... does not match
any of the expected tags", "text content blocks must be non-empty" and "must contain
non-whitespace text", "cache_control cannot be set for empty text blocks".
"""

from __future__ import annotations

from typing import Any

from mini_agent.core.wire_rules import TOOL_RESULT_CONTENT_TYPES, cache_control_problem

Problem = tuple[str, str]
"""``(rule, sentence)``: a short rule name (``"extra_keys"``) and the error message, which
names the message's position (``"messages.3: ..."``)."""

# Keys the API accepts on each content block type. Anything else is a kit-private key that
# leaked into the wire format (the API answers "Extra inputs are not permitted").
ALLOWED_BLOCK_KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text", "cache_control", "citations"}),
    "image": frozenset({"type", "source", "cache_control", "transformations"}),
    "document": frozenset({"type", "source", "cache_control", "title", "context", "citations"}),
    "tool_use": frozenset({"type", "id", "name", "input", "cache_control", "caller",
                           "toolset_name"}),
    "tool_result": frozenset({"type", "tool_use_id", "content", "is_error", "cache_control",
                              "toolset_name"}),
    "thinking": frozenset({"type", "thinking", "signature"}),
    "redacted_thinking": frozenset({"type", "data"}),
    "server_tool_use": frozenset({"type", "id", "name", "input", "cache_control"}),
    "web_search_tool_result": frozenset({"type", "tool_use_id", "content", "cache_control"}),
    "search_result": frozenset({"type", "source", "title", "content", "citations", "cache_control"}),
}
ALLOWED_MESSAGE_KEYS = frozenset({"role", "content"})

# Block types a request may carry (the SDK's ``*BlockParam`` types, stable and beta, 2.14).
# Any other type is refused, as the API does ("Input tag ... does not match any of the
# expected tags").
KNOWN_BLOCK_TYPES = frozenset({
    "text", "image", "document", "search_result", "tool_use", "tool_result", "thinking",
    "redacted_thinking", "server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
    "code_execution_tool_result", "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result", "tool_search_tool_result", "container_upload",
    "mcp_tool_use", "mcp_tool_result", "compaction", "advisor_tool_result", "tool_reference",
})


def block_keys_problem(block: dict[str, Any], index: int, where: str = "") -> Problem | None:
    """Why a block's ``cache_control`` or keys would be refused, or None.

    Args:
        block: one content block.
        index: the position of its message in the history (named in the sentence).
        where: text put before the rest of the sentence (``"tool_result content: "`` for a
            block inside a tool result).
    Returns:
        ``("cache_control", sentence)`` for a malformed marker, ``("extra_keys", sentence)``
        for a key its type does not accept, else None (an unknown block type is not this
        check's business).

    >>> block_keys_problem({"type": "text", "text": "hi", "timestamp": 1}, 0)[0]
    'extra_keys'
    """
    problem = cache_control_problem(block.get("cache_control"))
    if problem:
        return "cache_control", f"messages.{index}: {where}{problem}"
    kind = block.get("type")
    allowed = ALLOWED_BLOCK_KEYS.get(kind)
    if allowed is None:
        return None  # unknown block types are the API's business, not a kit leak
    extra = sorted(set(block) - allowed)
    if extra:
        return "extra_keys", (f"messages.{index}: {where}{kind} block has unexpected keys "
                              f"{extra} (kit metadata must stay beside the message, never "
                              "inside it)")
    return None


def text_problem(block: dict[str, Any], index: int, where: str = "") -> Problem | None:
    """``("empty_text", sentence)`` when a text block's text is missing, empty or only whitespace.

    The sentences are the API's: "cache_control cannot be set for empty text blocks" (with
    the block's path), "text content blocks must be non-empty", "text content blocks must
    contain non-whitespace text" (the last two name no position, as the API words them).

    Args:
        block: a ``{"type": "text"}`` block.
        index: the position of its message in the history.
        where: the block's path inside its message (``"content.1"``), or "".

    Returns:
        ``("empty_text", sentence)`` for a missing, empty or whitespace-only text, else None.

    >>> text_problem({"type": "text", "text": " "}, 2)
    ('empty_text', 'messages: text content blocks must contain non-whitespace text')
    >>> text_problem({"type": "text", "text": "", "cache_control": {"type": "ephemeral"}}, 0,
    ...              "content.1")[1]
    'messages.0.content.1: cache_control cannot be set for empty text blocks'
    """
    text = block.get("text")
    if block.get("cache_control") is not None and (not isinstance(text, str) or not text):
        path = f"messages.{index}" + (f".{where}" if where else "")
        return "empty_text", f"{path}: cache_control cannot be set for empty text blocks"
    if not isinstance(text, str) or not text:
        return "empty_text", "messages: text content blocks must be non-empty"
    if not text.strip():
        return "empty_text", "messages: text content blocks must contain non-whitespace text"
    return None


def tool_result_content_problem(parts: list[Any], index: int) -> Problem | None:
    """Why a list-shaped ``tool_result`` content would be refused, or None.

    Args:
        parts: the ``content`` list of a ``tool_result`` block.
        index: the position of its message in the history.
    Returns:
        ``("tool_result_content", sentence)`` for a part that is not a dict of a type in
        ``TOOL_RESULT_CONTENT_TYPES``, else the first problem :func:`block_keys_problem` or
        :func:`text_problem` finds in a part, else None.
    """
    where = "tool_result content: "
    for part in parts:
        if not isinstance(part, dict) or part.get("type") not in TOOL_RESULT_CONTENT_TYPES:
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            return "tool_result_content", (f"messages.{index}: {where}block type {kind!r} is "
                                           f"not one of {sorted(TOOL_RESULT_CONTENT_TYPES)}")
        problem = block_keys_problem(part, index, where)
        if problem is None and part.get("type") == "text":
            problem = text_problem(part, index)
        if problem:
            return problem
    return None
