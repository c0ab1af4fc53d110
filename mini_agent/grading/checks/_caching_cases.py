"""The requests exercise 05's checks feed the code under test, and how they describe results.

Tool lists (the same two tools in other bytes: another order, key order and a marker), a
system prompt with its dynamic boundary, a request that already carries markers, and helpers
that find, collect or strip ``cache_control`` markers and name what changed in a request for a
failure message. Used by :mod:`mini_agent.grading.checks.checks_05_prompt_caching`; no checks
here.

Source: exercise 05 (``solutions/05_prompt_caching.py``) and its seed, section 4 of
002_4516104fd432e704.txt (the dynamic boundary of the system prompt); Anthropic's prompt
caching docs (``cache_control`` breakpoints).
"""

from __future__ import annotations

import copy

from mini_agent.grading.checks import _report

BOUNDARY = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__"
MARKER = {"type": "ephemeral"}
TOOLS = [{"name": "read_file", "description": "Read a file",
          "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
         {"name": "grep", "description": "Search", "input_schema": {"type": "object"}}]
SAME_TOOLS_OTHER_BYTES = [
    {"input_schema": {"type": "object"}, "description": "Search", "name": "grep"},
    {"input_schema": {"properties": {"path": {"type": "string"}}, "type": "object"},
     "description": "Read a file", "name": "read_file", "cache_control": {"type": "ephemeral"}}]
SYSTEM = "You are careful." + BOUNDARY + "time 10:00"


def short(value, limit: int = 90) -> str:
    """Show a value briefly (:func:`._report.short`, with room for a system prompt's start).

    Args:
        value: anything; its ``repr`` is shown.
        limit: the longest text kept (characters; default 90).

    Returns:
        ``repr(value)``, cut to ``limit`` characters ending in ``...`` when longer.
    """
    return _report.short(value, limit)


def names(tools) -> str:
    """List tools by name, marking those that carry a ``cache_control`` marker.

    Args:
        tools: tool definitions, in order.

    Returns:
        ``"[read_file (marked), grep]"``.
    """
    return "[" + ", ".join(t.get("name", "?") + (" (marked)" if "cache_control" in t else "")
                           for t in tools) + "]"


def changes(before: dict, after: dict) -> str:
    """Name the top-level parts of a request that differ between two versions.

    Args:
        before: the request as it was.
        after: the request as it came back.

    Returns:
        ``"tools [grep, read_file]; messages ..."``; "" when nothing differs.
    """
    parts = []
    for key in sorted(set(before) | set(after), key=str):
        if before.get(key) != after.get(key):
            parts.append(f"tools {names(after.get(key) or [])}" if key == "tools"
                         else f"{key} {short(after.get(key), 60)}")
    return "; ".join(parts)


def marker_paths(obj, path: str = "") -> list[str]:
    """Find where the ``cache_control`` markers are.

    Args:
        obj: a request or any part of it.
        path: the path of ``obj`` itself (callers leave the default "").

    Returns:
        ``["tools[1]", "messages[2].content[0]"]``, in document order.
    """
    found = []
    if isinstance(obj, dict):
        if "cache_control" in obj:
            found.append(path)
        for key, value in obj.items():
            if key != "cache_control":
                found += marker_paths(value, f"{path}.{key}" if path else key)
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            found += marker_paths(value, f"{path}[{i}]")
    return found


def markers(obj) -> list:
    """Collect every ``cache_control`` value in ``obj``.

    Args:
        obj: a request or any part of it.

    Returns:
        The marker dicts, in document order.
    """
    if isinstance(obj, dict):
        own = [obj["cache_control"]] if "cache_control" in obj else []
        return own + [m for k, v in obj.items() if k != "cache_control" for m in markers(v)]
    if isinstance(obj, list):
        return [m for v in obj for m in markers(v)]
    return []


def strip(obj):
    """Copy a request without its ``cache_control`` markers.

    Args:
        obj: a request or any part of it.

    Returns:
        A copy with every ``cache_control`` key left out.
    """
    if isinstance(obj, dict):
        return {k: strip(v) for k, v in obj.items() if k != "cache_control"}
    if isinstance(obj, list):
        return [strip(v) for v in obj]
    return obj


def request():
    """Build a request that already carries markers, and ends in a blank text block.

    Returns:
        A marked first tool, a marked static system block then a dynamic one ("now: 10:00"),
        a marked first user text, and a last user message ending in a whitespace-only text block.
    """
    tools = copy.deepcopy(TOOLS)
    tools[0]["cache_control"] = {"type": "ephemeral"}
    return {"model": "claude-sonnet-4-6", "max_tokens": 1024, "tools": tools,
            "system": [{"type": "text", "text": "Rules.", "cache_control": {"type": "ephemeral"}},
                       {"type": "text", "text": "now: 10:00"}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "hi",
                                              "cache_control": {"type": "ephemeral"}}]},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": [{"type": "text", "text": "fix it"},
                                             {"type": "text", "text": "   "}]}]}
