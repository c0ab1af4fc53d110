"""Small rules of the Messages API wire format that several checks share.

``cache_control`` markers (shape, TTL values, longer TTLs first), what a list-shaped
``tool_result`` content may hold, the final assistant turn's trailing whitespace, tools
being required once the messages hold tool blocks, and the patterns of tool names and
tool_use ids, and a base64 image's data against its media type. Each
function returns a problem sentence or None; :func:`mini_agent.core.messages.validate_messages`
raises on them. Pure: no IO, inputs never mutated. Taught in ``notebooks/05_prompt_caching.ipynb``
(TTLs) and ``01_agent_loop.ipynb``.
Source: prompt caching docs ("Mixing different TTLs":
longer TTLs must appear before shorter ones, in the order tools, system, messages); the
SDK's ``ToolResultBlockParam`` and ``CacheControlEphemeralParam`` types; the API's 400s
"final assistant content cannot end with trailing whitespace" and "a ttl='1h' cache_control
block must not come after a ttl='5m' cache_control block".
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

TOOL_NAME_PATTERN = re.compile(r"[a-zA-Z0-9_-]{1,128}")
"""A custom tool's ``name`` the API takes (its ``^[a-zA-Z0-9_-]{1,128}$``, matched whole):
the kit's ``Tool`` refuses others when it is made, the offline API when they are sent."""

TOOL_USE_ID_PATTERN = re.compile(r"[a-zA-Z0-9_-]+")
"""A ``tool_use`` block's ``id`` (the API's ``^[a-zA-Z0-9_-]+$``, matched whole)."""

TOOL_RESULT_CONTENT_TYPES = frozenset({"text", "image", "document", "search_result",
                                       "tool_reference"})
"""Block types a list-shaped ``tool_result`` content may hold (SDK ``ToolResultBlockParam``)."""

CACHE_TTL_ORDER = {"5m": 0, "1h": 1}
"""``cache_control.ttl`` values the API accepts, shortest first (no ttl means "5m")."""


def cache_control_problem(marker: Any) -> str | None:
    """Say why ``marker`` is not a valid ``cache_control`` value.

    Args:
        marker: the value of a ``cache_control`` key.

    Returns:
        The problem sentence, or None for a valid marker
        (``{"type": "ephemeral", "ttl"?: "5m" | "1h"}``).

    >>> cache_control_problem({"type": "ephemeral", "ttl": "2h"}) is not None
    True
    """
    if marker is None:
        return None
    if (isinstance(marker, dict) and marker.get("type") == "ephemeral"
            and set(marker) <= {"type", "ttl"} and isinstance(marker.get("ttl", "5m"), str)
            and marker.get("ttl", "5m") in CACHE_TTL_ORDER):
        return None
    return (f"cache_control must be {{'type': 'ephemeral'}} with an optional ttl '5m' or "
            f"'1h', got {marker!r:.80}")


def cache_markers(parts: Any) -> list[dict]:
    """Collect every ``cache_control`` value inside ``parts``, in document order (depth first).

    Every dict (a marker's own value included) is looked at; strings and numbers are never
    visited. The walk is recursive (about 1.5x faster than a stack of every value); a nesting
    deeper than the interpreter's stack falls back to :func:`cache_markers_iterative`, which
    returns the same list (``tests/test_validate_fast.py`` compares the two).

    Args:
        parts: any nesting of dicts and lists (``[tools, system, messages]``).

    Returns:
        The marker values, in order.

    >>> cache_markers([[{"cache_control": {"type": "ephemeral"}}], []])
    [{'type': 'ephemeral'}]
    """
    found: list[dict] = []
    try:
        _collect_markers(parts, found)
    except RecursionError:
        return cache_markers_iterative(parts)
    return found


def _collect_markers(item: Any, found: list) -> None:
    """Append the markers inside ``item`` to ``found`` (the recursive walk of cache_markers)."""
    if isinstance(item, dict):
        marker = item.get("cache_control")
        if marker is not None:
            found.append(marker)
        for value in item.values():
            if isinstance(value, (dict, list)):
                _collect_markers(value, found)
    elif isinstance(item, list):
        for value in item:
            if isinstance(value, (dict, list)):
                _collect_markers(value, found)


def cache_markers_iterative(parts: Any) -> list[dict]:
    """:func:`cache_markers` with an explicit stack: any depth, slower (its reference form).

    A container inside itself (built in Python: JSON cannot hold one) is walked once per
    path, not for ever, so a later rule's error is still found.

    Args:
        parts: any nesting of dicts and lists.

    Returns:
        The marker values, in document order (depth first).
    """
    found: list[dict] = []
    stack: list[Any] = [parts]
    path: set[int] = set()        # the containers being walked: one inside itself is a cycle
    leave = object()              # marks where a container's walk ends
    while stack:
        item = stack.pop()
        if item is leave:
            path.discard(stack.pop())
        elif isinstance(item, (dict, list)) and id(item) not in path:
            path.add(id(item))
            stack += [id(item), leave]
            if isinstance(item, dict):
                if item.get("cache_control") is not None:
                    found.append(item["cache_control"])
                stack.extend(reversed(list(item.values())))
            else:
                stack.extend(reversed(item))
    return found


def ttl_rank(marker: Any) -> int:
    """Rank a marker's TTL in :data:`CACHE_TTL_ORDER`.

    Args:
        marker: a ``cache_control`` value.

    Returns:
        Its TTL's index (unknown values rank as "5m").
    """
    return CACHE_TTL_ORDER.get(marker.get("ttl", "5m"), 0) if isinstance(marker, dict) else 0


def cache_markers_with_paths(parts: Any) -> list[tuple[str, dict]]:
    """Collect every ``cache_control`` in ``[tools, system, messages]`` with its API path.

    Args:
        parts: ``[tools, system, messages]`` (each a list, possibly empty).

    Returns:
        ``[(path, marker)]`` in document order, the path as the API names the block
        (``"tools.2"``, ``"system.0"``, ``"messages.4.content.1"``).

    >>> cache_markers_with_paths([[], [{"cache_control": {"type": "ephemeral"}}], []])
    [('system.0', {'type': 'ephemeral'})]
    """
    found: list[tuple[str, dict]] = []

    def walk(item: Any, path: tuple) -> None:
        if isinstance(item, dict):
            if item.get("cache_control") is not None:
                found.append((".".join(map(str, path)), item["cache_control"]))
            for key, value in item.items():
                if key != "cache_control":
                    walk(value, (*path, key))
        elif isinstance(item, list):
            for i, value in enumerate(item):
                walk(value, (*path, i))

    for name, part in zip(("tools", "system", "messages"), parts):
        walk(part, (name,))
    return found


def ttl_order_problem(parts: Any) -> str | None:
    """Return the API's refusal of a marker with a longer TTL than one before it, or None.

    Args:
        parts: ``[tools, system, messages]``, processed in that order by the API.

    Returns:
        The 400 message naming the offending marker's path, or None ("longer TTLs must come
        first" holds).

    >>> print(ttl_order_problem([[], [], [{"role": "user", "content": [
    ...     {"cache_control": {"type": "ephemeral"}},
    ...     {"cache_control": {"type": "ephemeral", "ttl": "1h"}}]}]]))
    messages.0.content.1.cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`.
    """
    shortest = max(CACHE_TTL_ORDER.values())
    for path, marker in cache_markers_with_paths(parts):
        rank = ttl_rank(marker)
        if rank > shortest:
            before = next(name for name, r in CACHE_TTL_ORDER.items() if r == shortest)
            return (f"{path}.cache_control.ttl: a ttl={marker.get('ttl')!r} cache_control "
                    f"block must not come after a ttl={before!r} cache_control block. Note "
                    "that blocks are processed in the following order: `tools`, `system`, "
                    "`messages`.")
        shortest = rank
    return None


def final_whitespace_problem(message: Any) -> str | None:
    """Return the API's refusal of a final assistant message ending in whitespace, or None.

    Args:
        message: the last message of a request.

    Returns:
        ``"final assistant content cannot end with trailing whitespace"`` for an assistant
        message whose content ends in whitespace, else None.

    >>> final_whitespace_problem({"role": "assistant", "content": "Done.\\n"})
    'final assistant content cannot end with trailing whitespace'
    """
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return None
    content = message.get("content")
    if isinstance(content, list):
        tail = content[-1] if content and isinstance(content[-1], dict) else {}
        content = tail.get("text", "") if tail.get("type") == "text" else ""
    if isinstance(content, str) and content != content.rstrip():
        return "final assistant content cannot end with trailing whitespace"
    return None


def shorten_later_ttls(parts: Any) -> int:
    """Shorten every marker whose TTL is longer than one before it, so longer TTLs come first.

    A later, longer marker is shortened (never an earlier one lengthened: that would raise
    the write price). MUTATES the markers in ``parts``: pass a copy you own.

    Args:
        parts: ``[tools, system, messages]``.

    Returns:
        How many markers were shortened.

    >>> parts = [[], [{"cache_control": {"type": "ephemeral"}}],
    ...          [{"cache_control": {"type": "ephemeral", "ttl": "1h"}}]]
    >>> shorten_later_ttls(parts), parts[2][0]["cache_control"]
    (1, {'type': 'ephemeral'})
    """
    shortest = max(CACHE_TTL_ORDER.values())
    shortened = 0
    for marker in cache_markers(parts):
        if not isinstance(marker, dict):
            continue
        rank = ttl_rank(marker)
        if rank > shortest:
            ttl = next(name for name, r in CACHE_TTL_ORDER.items() if r == shortest)
            if ttl == "5m":
                marker.pop("ttl", None)
            else:
                marker["ttl"] = ttl
            shortened += 1
        else:
            shortest = rank
    return shortened


TOOLS_REQUIRED = "Requests which include `tool_use` or `tool_result` blocks must define tools."
"""The API's 400 for a request whose messages hold tool blocks and whose ``tools`` is empty."""


def tools_required_problem(messages: Any, tools: Any) -> tuple[int, str] | None:
    """Find the first message that makes a request without tools invalid.

    Args:
        messages: the request's ``messages`` (anything; non-list parts are skipped).
        tools: the request's ``tools`` (None or empty: no tools).

    Returns:
        ``(index, TOOLS_REQUIRED)`` for the first message holding a ``tool_use`` or
        ``tool_result`` block when there are no tools; None otherwise.
    """
    if tools or not isinstance(messages, list):
        return None
    for index, message in enumerate(messages):
        if isinstance(message, dict) and isinstance(message.get("content"), list) and any(
                isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result")
                for b in message["content"]):
            return index, TOOLS_REQUIRED
    return None


_IMAGE_MAGIC = {"image/png": (b"\x89PNG\r\n\x1a\n",), "image/jpeg": (b"\xff\xd8\xff",),
                "image/gif": (b"GIF87a", b"GIF89a"), "image/webp": (b"RIFF",)}


def base64_image_problem(source: Any) -> str | None:
    """Say why a base64 image ``source`` would be refused by the API, or None.

    The API decodes the data and checks it against ``media_type``; a hook's or a tool's
    image that fails there makes the request a 400, and, kept in the history, every later
    request too. Checked here: the media type is one of the four the API takes, the data
    is valid base64 (padding included, no line breaks) and starts with that type's magic
    bytes (PNG ``\\x89PNG``, JPEG ``\\xff\\xd8\\xff``, GIF ``GIF87a``/``GIF89a``, WebP
    ``RIFF....WEBP``). An image whose bytes are damaged further on is not caught.

    Args:
        source: the image block's ``source`` with ``"type": "base64"``; never mutated.

    Returns:
        ``"invalid base64 data"``, ``"Image does not match the provided media type
        image/png"`` (the API's wording), another one-line problem, or None.

    >>> base64_image_problem({"type": "base64", "media_type": "image/png", "data": "iVBOR"})
    'invalid base64 data'
    """
    if not isinstance(source, dict):
        return "the image source is not an object"
    media_type, data = source.get("media_type"), source.get("data")
    if media_type not in _IMAGE_MAGIC:
        return (f"media_type {media_type!r:.40} is not one of "
                f"{', '.join(sorted(_IMAGE_MAGIC))}")
    if not isinstance(data, str) or not data:
        return "the image data is empty or not a string"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return "invalid base64 data"
    if not raw.startswith(_IMAGE_MAGIC[media_type]) or (
            media_type == "image/webp" and raw[8:12] != b"WEBP"):
        return f"Image does not match the provided media type {media_type}"
    return None
