"""The top-level automatic ``cache_control`` of a Messages API request, as the API places it.

A request may carry one ``cache_control`` at the top level instead of (or besides) markers on
its blocks: the API checks its shape (``{"type": "ephemeral"}`` with an optional ``ttl`` of
``5m`` or ``1h``) and puts it on the last block of the prompt that can carry one, in the order
tools, system, messages, walking back over thinking blocks and empty texts. Pure: no IO,
inputs never mutated. :mod:`mini_agent.core.request_rules` re-exports every name here; used by
:mod:`mini_agent.core.prompt_cache` and the offline API; taught in
``notebooks/05_prompt_caching.ipynb`` (automatic caching).

Source: prompt caching docs, "Automatic caching" ("the system automatically applies the cache
breakpoint to the last cacheable block"); the SDK 2.14 ``MessageCreateParamsBase``
(``cache_control``). ASSUMPTION (the docs give no wording): the text of the top-level
``cache_control`` refusal.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping

NOT_CACHEABLE = frozenset({"thinking", "redacted_thinking"})
"""Block types that cannot carry ``cache_control``; automatic caching walks back over them."""


def content_blocks(content: Any) -> list:
    """Return a message's or a system prompt's content as a list of blocks.

    Args:
        content: a string (one text block; an empty string gives none), a list of blocks
            (copied, not mutated) or anything else (no blocks).

    Returns:
        A new list of the blocks.

    >>> content_blocks("hi")
    [{'type': 'text', 'text': 'hi'}]
    """
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content) if isinstance(content, list) else []


def _cacheable(block: Any) -> bool:
    if not isinstance(block, Mapping) or block.get("type") in NOT_CACHEABLE:
        return False
    return block.get("type") != "text" or bool(str(block.get("text", "")).strip())


def automatic_cache_control_problem(body: Mapping[str, Any]) -> str | None:
    """Return the refusal of a malformed top-level ``cache_control``, or None.

    ASSUMPTION: the wording (pydantic style, like the API's other field errors).

    Args:
        body: the JSON request body.

    Returns:
        The message, or None when there is none or it is well formed.
    """
    marker = body.get("cache_control")
    if marker is None:
        return None
    if not isinstance(marker, Mapping) or marker.get("type") != "ephemeral":
        return "cache_control.type: Input should be 'ephemeral'"
    if marker.get("ttl", "5m") not in ("5m", "1h") or set(marker) - {"type", "ttl"}:
        return "cache_control.ttl: Input should be '5m' or '1h'"
    return None


def place_automatic_cache_control(body: Mapping[str, Any]) -> dict[str, Any]:
    """Put a body's top-level ``cache_control`` on its last cacheable block.

    The last block of the prompt in the order tools, system, messages is marked; when it
    cannot carry a marker (a thinking block, an empty text) the marker walks back to the
    block before it. A string ``content`` or ``system`` becomes one text block. A block that
    already has its own marker keeps it (ASSUMPTION: the automatic breakpoint then uses no
    extra slot). Source: prompt caching docs, "Automatic caching": "the system automatically
    applies the cache breakpoint to the last cacheable block".

    Args:
        body: the JSON request body (not mutated).

    Returns:
        A copy with the marker placed; a body without one comes back as a shallow copy.

    >>> placed = place_automatic_cache_control({"cache_control": {"type": "ephemeral"},
    ...     "messages": [{"role": "user", "content": "hi"}]})
    >>> placed["messages"][0]["content"]
    [{'type': 'text', 'text': 'hi', 'cache_control': {'type': 'ephemeral'}}]
    """
    new = dict(body)
    marker = new.pop("cache_control", None)
    if marker is None:
        return new
    new = copy.deepcopy(new)
    messages = new.get("messages") if isinstance(new.get("messages"), list) else []
    for message in reversed(messages):
        if not isinstance(message, dict):
            continue
        blocks = content_blocks(message.get("content"))
        for k in range(len(blocks) - 1, -1, -1):
            if _cacheable(blocks[k]):
                blocks[k] = {**blocks[k], "cache_control": blocks[k].get("cache_control")
                             or dict(marker)}
                message["content"] = blocks
                return new
    system = new.get("system")
    system_blocks = content_blocks(system) if isinstance(system, (str, list)) else []
    for k in range(len(system_blocks) - 1, -1, -1):
        if _cacheable(system_blocks[k]):
            system_blocks[k] = {**system_blocks[k], "cache_control":
                                system_blocks[k].get("cache_control") or dict(marker)}
            new["system"] = system_blocks
            return new
    tools = new.get("tools") if isinstance(new.get("tools"), list) else []
    if tools and isinstance(tools[-1], dict):
        tools[-1] = {**tools[-1], "cache_control": tools[-1].get("cache_control")
                     or dict(marker)}
    return new
