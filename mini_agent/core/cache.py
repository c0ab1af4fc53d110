"""Prompt caching on the client side: a stable prefix and where its breakpoints go.

What this module does: splits a system prompt into a static (cached) and a dynamic part at
:data:`DYNAMIC_BOUNDARY`; serialises requests canonically (sorted keys and tools, no stray
markers), so the same logical request gives the same bytes; places at most four
``cache_control`` breakpoints on a whole request (tools, system, messages). What it does not
do: notice cache breaks (``mini_agent.core.cache_breaks``), price usage
(``mini_agent.core.pricing``), simulate the server's cache (``mini_agent.core.prompt_cache``)
or talk to the network. Pure; no function mutates its input. Taught in
``notebooks/05_prompt_caching.ipynb``.

Source: (read 2026-11-29)
  * Seed 002_4516104fd432e704.txt, section 4 (promptCache.ts: DYNAMIC_BOUNDARY,
    splitSystemPrompt).
  * Seed 004_b74ef821c58ee4ec.txt ("prompt cache and context layout": tools -> system ->
    messages, key order and tool order break the cache) and 000_86e3ff2076a5ae37.txt
    (masking moves the prefix; move the mask boundary in fixed chunks).
  * Anthropic prompt caching docs,
    https://platform.claude.com/docs/en/build-with-claude/prompt-caching : at most 4
    breakpoints; prefix order tools -> system -> messages; TTL "5m" (default) or "1h",
    refreshed on each hit; longer TTLs before shorter ones.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Iterable, Mapping

from mini_agent.core.masking import is_masked
from mini_agent.core.messages import MAX_CACHE_CONTROL_MARKERS
from mini_agent.core.wire_rules import shorten_later_ttls

DYNAMIC_BOUNDARY = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__"
"""Marker that separates the static (cacheable) part of a system prompt from the dynamic part
(seed 002, promptCache.ts). Everything after it may change per request without breaking the
cache of what comes before it."""

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
"""Cache lifetimes by ``cache_control.ttl`` value (prompt caching docs: default "5m")."""

CLEARED_TOOL_RESULT = "[Old tool result content cleared]"
"""Placeholder of cleared tool results (server-side context editing, seed 002 micro-compact)."""


def split_system_prompt(prompt: str) -> tuple[str, str]:
    """Split ``prompt`` at the first :data:`DYNAMIC_BOUNDARY` into ``(static, dynamic)``.

    Source: splitSystemPrompt in 002_4516104fd432e704.txt.

    Args:
        prompt: the whole system prompt.

    Returns:
        ``(static, dynamic)``; without the marker the whole prompt is static and dynamic is
        ``""``. The marker itself is dropped.

    >>> split_system_prompt("rules" + DYNAMIC_BOUNDARY + "time: 12:00")
    ('rules', 'time: 12:00')
    >>> split_system_prompt("rules")
    ('rules', '')
    """
    index = prompt.find(DYNAMIC_BOUNDARY)
    if index == -1:
        return prompt, ""
    return prompt[:index], prompt[index + len(DYNAMIC_BOUNDARY):]


def cache_control(ttl: str = "5m") -> dict[str, str]:
    """Return the ``cache_control`` value for a TTL.

    Args:
        ttl: ``"5m"`` (the API default) or ``"1h"``.

    Returns:
        ``{"type": "ephemeral"}`` for "5m" (written without ``ttl`` so requests stay
        minimal) or ``{"type": "ephemeral", "ttl": "1h"}``.

    Raises:
        ValueError: any other ttl.
    """
    if ttl not in TTL_SECONDS:
        raise ValueError(f"cache ttl must be one of {sorted(TTL_SECONDS)}, got {ttl!r}")
    return {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}


def build_system_blocks(prompt: str, *, ttl: str = "5m") -> list[dict[str, Any]]:
    """Return system text blocks with ``cache_control`` on the static part only.

    Source: seed 002 section 4.

    Args:
        prompt: the system prompt, possibly holding :data:`DYNAMIC_BOUNDARY`.
        ttl: the static part's TTL (``"5m"`` or ``"1h"``).

    Returns:
        ``[{"type": "text", "text": static, "cache_control": {...}}, {"type": "text",
        "text": dynamic}]``; an empty (or whitespace-only) part is left out, because the API
        rejects empty text blocks; a prompt with no static text gets no marker.

    Raises:
        ValueError: an unknown ttl (from :func:`cache_control`).

    >>> [b.get("cache_control") for b in build_system_blocks("A" + DYNAMIC_BOUNDARY + "B")]
    [{'type': 'ephemeral'}, None]
    """
    static, dynamic = split_system_prompt(prompt)
    blocks: list[dict[str, Any]] = []
    if static.strip():
        blocks.append({"type": "text", "text": static, "cache_control": cache_control(ttl)})
    if dynamic.strip():
        blocks.append({"type": "text", "text": dynamic})
    return blocks


def strip_cache_control(obj: Any) -> Any:
    """Remove every ``cache_control`` key, at any depth, from a copy of ``obj``.

    Args:
        obj: any nesting of dicts and lists (untouched).

    Returns:
        A deep copy without the markers.
    """
    if isinstance(obj, dict):
        return {k: strip_cache_control(v) for k, v in obj.items() if k != "cache_control"}
    if isinstance(obj, list):
        return [strip_cache_control(v) for v in obj]
    return obj


def _sorted_keys(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _sorted_keys(obj[k]) for k in sorted(obj)}
    if isinstance(obj, list):
        return [_sorted_keys(v) for v in obj]
    return obj


def canonical_json(obj: Any) -> str:
    """Serialise ``obj`` the same way every time: sorted keys, no spaces, UTF-8 kept.

    Args:
        obj: any JSON-serialisable value.

    Returns:
        The JSON text.

    >>> canonical_json({"b": 1, "a": [2, {"d": 3, "c": 4}]})
    '{"a":[2,{"c":4,"d":3}],"b":1}'
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_tools(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Return tool definitions sorted by ``name`` with every dict's keys in sorted order.

    The SDK writes dicts in insertion order, so rebuilding them sorted makes the wire bytes
    depend only on the content (seed 004: tool order and key order must not change between
    requests).

    Args:
        tools: tool definitions (not mutated).

    Returns:
        New dicts, sorted.
    """
    return [_sorted_keys(copy.deepcopy(dict(t))) for t in sorted(tools, key=lambda t: t["name"])]


def is_markable(block: Mapping[str, Any]) -> bool:
    """Tell whether a block may carry ``cache_control``.

    Args:
        block: a content block.

    Returns:
        False for thinking blocks and for empty or whitespace-only text blocks (the API
        refuses a marker there); True otherwise.
    """
    kind = block.get("type")
    if kind in ("thinking", "redacted_thinking"):
        return False
    if kind == "text":
        return bool(str(block.get("text", "")).strip())
    return True


def _mark_last_block(message: dict[str, Any], marker: dict[str, str]) -> bool:
    """Put ``marker`` on the last markable block of ``message`` (in place on a copy)."""
    content = message["content"]
    if isinstance(content, str):
        if not content.strip():
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": dict(marker)}]
        return True
    for block in reversed(content):
        if is_markable(block):
            block["cache_control"] = dict(marker)
            return True
    return False


def place_breakpoints(request: Mapping[str, Any], *, ttl: str = "5m",
                      static_ttl: str | None = None, canonical: bool = False,
                      anchors: bool = False) -> dict[str, Any]:
    """Return a copy of a request with at most 4 ``cache_control`` breakpoints.

    The breakpoints of seed 002 (exercise 05.4), in prefix order:
      1. every existing ``cache_control`` is removed, except the caller's last one on a
         system block: it marks the end of the static part (the blocks after it may change);
      2. the last tool, in the order given, gets one (``static_ttl``);
      3. a list ``system`` keeps that marker or, with none, its last non-empty block gets
         one; a caller's marker on a block that may not carry one (a whitespace-only text)
         moves back to the last block before it that may, never forward into the dynamic
         part; a string ``system`` becomes :func:`build_system_blocks` (the marker on the
         static part, never on the dynamic part) (``static_ttl``);
      4. a rolling one on the last markable block of the LAST message (written now, read by
         the next request): not a thinking block nor a whitespace-only text block; a
         tool_result takes it itself; string content becomes one text block.
    Never more than :data:`~mini_agent.core.messages.MAX_CACHE_CONTROL_MARKERS`, and never
    one on an empty or whitespace-only text block, marked, kept or created (the API answers
    400 "cache_control cannot be set for empty text blocks"): empty string content stays a
    string, and no block is added or dropped. Mixed TTLs:
    the docs require longer TTLs before shorter ones, so ``static_ttl`` may only be longer
    than or equal to ``ttl``; a caller's own system marker shorter than a marker after it
    shortens that marker (:func:`~mini_agent.core.wire_rules.shorten_later_ttls`).
    Args:
        request: ``{"model", "messages", "system"?, "tools"?, ...}``; never mutated.
        ttl: "5m" or "1h" for the rolling breakpoints.
        static_ttl: for tools and system (default ``ttl``).
        canonical: also sort the tools by name and every dict's keys first, so the same
            logical request has the same bytes across runs and hash seeds (seed 004); the
            kit's requests use it.
        anchors: also, while markers are left, one on the newest masked (or cleared)
            tool_result (when the mask boundary moves, the request still reads everything up
            to the old boundary) and one on the last markable block of the previous message
            of the same role, which the previous request wrote (so a turn that adds more than
            the 20 blocks the API looks back still reads it); the kit's requests use it.
    Returns:
        A new dict. As an Agent ``prepare_request`` callable with options:
        ``functools.partial(place_breakpoints, canonical=True, anchors=True)``.
    Raises:
        ValueError: an unknown ttl, or a static_ttl shorter than ttl.
    Source: prompt caching docs (4 breakpoints, "mixing TTLs"), seed 002 and seed 004.
    """
    static_ttl = static_ttl or ttl
    cache_control(ttl), cache_control(static_ttl)  # validate both
    if TTL_SECONDS[static_ttl] < TTL_SECONDS[ttl]:
        raise ValueError("a longer-TTL breakpoint must come before shorter ones "
                         f"(static_ttl={static_ttl!r} < ttl={ttl!r})")
    out = copy.deepcopy(dict(request))
    if canonical:
        out = _sorted_keys(out)
    budget = MAX_CACHE_CONTROL_MARKERS
    if "tools" in out:
        out["tools"] = strip_cache_control(canonical_tools(out["tools"]) if canonical
                                           else out["tools"])
    if out.get("tools"):
        out["tools"][-1]["cache_control"] = cache_control(static_ttl)
        budget -= 1
    system = out.get("system")
    if isinstance(system, str):
        blocks = build_system_blocks(system, ttl=static_ttl)
        if blocks:
            out["system"] = blocks
            budget -= sum(1 for b in blocks if "cache_control" in b)
        else:
            out.pop("system")
    elif isinstance(system, list) and system:
        marked = [i for i, b in enumerate(system) if b.get("cache_control")]
        end = marked[-1] if marked else len(system) - 1   # the end of the static part
        own = system[end].get("cache_control") or cache_control(static_ttl)
        for b in system:
            b.pop("cache_control", None)
        for b in reversed(system[:end + 1]):   # never after the end: that part is dynamic
            if is_markable(b):                # never an empty text block (the API's 400)
                b["cache_control"] = own
                break
        budget -= sum(1 for b in system if b.get("cache_control"))
    messages = strip_cache_control(out.get("messages", []))
    out["messages"] = messages
    if messages and budget > 0:
        last = len(messages) - 1
        if _mark_last_block(messages[last], cache_control(ttl)):
            budget -= 1
        anchor = _last_masked_result(messages[:last]) if anchors else None
        if anchor is not None and budget > 0:
            i, j = anchor
            messages[i]["content"][j]["cache_control"] = cache_control(ttl)
            budget -= 1
        if anchors and last >= 2 and budget > 0 and _mark_last_block(messages[last - 2],
                                                                     cache_control(ttl)):
            budget -= 1
    shorten_later_ttls([out.get("tools") or [], out.get("system") or [], messages])
    return out


def _last_masked_result(messages: list[dict[str, Any]]) -> tuple[int, int] | None:
    """``(message_index, block_index)`` of the newest tool_result whose content is a mask or
    clearing placeholder, or None."""
    for i in range(len(messages) - 1, -1, -1):
        content = messages[i].get("content")
        if isinstance(content, str):
            continue
        for j in range(len(content) - 1, -1, -1):
            block = content[j]
            if block.get("type") == "tool_result" and (
                    is_masked(block) or block.get("content") == CLEARED_TOOL_RESULT):
                return i, j
    return None


def request_bytes(request_kwargs: Mapping[str, Any]) -> bytes:
    """Return the JSON body the SDK would send for these kwargs (insertion order kept).

    Used to show that :func:`place_breakpoints` with ``canonical=True`` gives the same bytes
    for the same logical request, whatever the order its dicts were built in.

    Args:
        request_kwargs: ``messages.create`` kwargs.

    Returns:
        The compact UTF-8 JSON bytes.
    """
    return json.dumps(dict(request_kwargs), ensure_ascii=False, separators=(",", ":")).encode()
