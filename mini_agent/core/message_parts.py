"""The parts of a Messages API history: build messages and blocks, read them back.

Plain dicts, the shape of the SDK's ``MessageParam`` (:data:`Message`, :data:`Block`):
builders (:func:`user`, :func:`tool_result_block`...) and readers (:func:`content_blocks`,
:func:`tool_uses`, :func:`tool_result_text`...). What this module does not do: check a
history against the API's rules (:func:`mini_agent.core.messages.validate_messages`, which
re-exports every name here). Pure: no IO, inputs never mutated. Taught in
``notebooks/01_agent_loop.ipynb``.
Source: Messages API reference (docs.anthropic.com/en/api/messages), the shapes of the
SDK's ``MessageParam`` and ``*BlockParam`` types.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from mini_agent.core.tokens import SCANS_KEY, session_memo
from mini_agent.core.wire_rules import cache_markers

Message = dict[str, Any]
"""One message as a plain dict, ``{"role": "user" | "assistant", "content": str | list[Block]}``:
the shape of the SDK's ``MessageParam``, named apart from that type (this is only an alias)."""

Block = dict[str, Any]
"""One content block as a plain dict (``{"type": "text", "text": str}``, ...)."""


def text_block(text: str) -> Block:
    """Return a text block.

    Args:
        text: its text (not checked: an empty text is refused by the API).

    Returns:
        ``{"type": "text", "text": text}``. Example: ``text_block("hi")["type"] == "text"``.
    """
    return {"type": "text", "text": text}


def user(content: str | list[Block]) -> Message:
    """Return a user message (content is not copied).

    Args:
        content: a string or a list of blocks.

    Returns:
        ``{"role": "user", "content": content}``.
    """
    return {"role": "user", "content": content}


def assistant(content: str | list[Block]) -> Message:
    """Return an assistant message (content is not copied).

    Args:
        content: a string or a list of blocks.

    Returns:
        ``{"role": "assistant", "content": content}``.
    """
    return {"role": "assistant", "content": content}


def tool_use_block(id: str, name: str, input: dict[str, Any]) -> Block:
    """Return a ``tool_use`` block.

    Args:
        id: the call's id (``toolu_...``).
        name: the tool's name.
        input: the call's input dict.

    Returns:
        ``{"type": "tool_use", "id", "name", "input"}``.
    """
    return {"type": "tool_use", "id": id, "name": name, "input": input}


def tool_result_block(tool_use_id: str, content: str | list[Block], *,
                      is_error: bool = False) -> Block:
    """Return a ``tool_result`` block; ``is_error`` is written only when True.

    Args:
        tool_use_id: the id of the call it answers.
        content: a string or a list of text/image blocks.
        is_error: True for a failed call.

    Returns:
        ``{"type": "tool_result", "tool_use_id", "content", "is_error"?: True}``. Example:
        ``tool_result_block("toolu_1", "ok") == {"type": "tool_result",
        "tool_use_id": "toolu_1", "content": "ok"}``.
    """
    block: Block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


# --------------------------------------------------------------------------- readers

def content_blocks(message: Message) -> list[Block]:
    """Return a message's content as a list of blocks (a string becomes one text block).

    Args:
        message: a message dict.

    Returns:
        A new list; the blocks are the message's own (do not mutate them).
    """
    content = message.get("content")
    if isinstance(content, str):
        return [text_block(content)]
    return list(content or [])


def iter_blocks(messages: Iterable[Message]) -> Iterator[tuple[int, int, Block]]:
    """Walk every block of a history, oldest first.

    Args:
        messages: the history.

    Returns:
        An iterator of ``(message_index, block_index, block)``.
    """
    for i, message in enumerate(messages):
        for j, block in enumerate(content_blocks(message)):
            yield i, j, block


def tool_uses(message: Message) -> list[Block]:
    """Return the ``tool_use`` blocks of one message, in order.

    Args:
        message: a message dict.

    Returns:
        A new list of the message's own blocks.
    """
    return [b for b in content_blocks(message) if b.get("type") == "tool_use"]


def tool_results(message: Message) -> list[Block]:
    """Return the ``tool_result`` blocks of one message, in order.

    Args:
        message: a message dict.

    Returns:
        A new list of the message's own blocks.
    """
    return [b for b in content_blocks(message) if b.get("type") == "tool_result"]


def tool_result_text(block: Block) -> str:
    """Return the text of a ``tool_result``: str content, or the text parts of list content.

    Args:
        block: a ``tool_result`` block.

    Returns:
        The text (list content's text blocks joined, other blocks skipped). Example:
        ``tool_result_text({"type": "tool_result", "tool_use_id": "t",
        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}) == "ab"``.
    """
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if part.get("type") == "text")


def tool_result_positions(messages: list[Message]) -> list[tuple[int, int]]:
    """Locate every ``tool_result`` in a user message, oldest first.

    Args:
        messages: the history.

    Returns:
        ``[(message_index, block_index)]``. Example: ``tool_result_positions([user("go"),
        assistant([tool_use_block("t", "ls", {})]), user([tool_result_block("t", "ok")])])
        == [(2, 0)]``.
    """
    memo = session_memo()
    if memo is not None and messages and isinstance(messages, list) and \
            isinstance(messages[0], dict) and id(messages[0]) in memo.get(SCANS_KEY, ()):
        from mini_agent.core.history_scan import scan_for  # (it imports this module)

        scan = scan_for(messages, create=False)  # None outside a token memo
        if scan is not None:  # a prefix of a history already scanned: its positions
            return scan.positions[:scan.results_upto[len(messages)]]
    return [(i, j) for i, message in enumerate(messages) if message.get("role") == "user"
            and not isinstance(message.get("content"), str)
            for j, block in enumerate(message.get("content") or [])
            if block.get("type") == "tool_result"]


def tool_names_by_id(messages: Iterable[Message]) -> dict[str, str]:
    """Map each ``tool_use`` id in the history to its tool name.

    Args:
        messages: the history.

    Returns:
        ``{tool_use_id: name}``.
    """
    return {b["id"]: b.get("name", "") for _, _, b in iter_blocks(messages)
            if b.get("type") == "tool_use"}


def count_cache_control(request_parts: Iterable[Any]) -> int:
    """Count ``cache_control`` markers in any nested structure (tools, system, messages).

    Args:
        request_parts: the parts to search, e.g. ``[tools, system, messages]``.

    Returns:
        The number of dicts that carry a ``cache_control`` key.
    """
    return len(cache_markers(list(request_parts)))


# --------------------------------------------------------------------------- validation
