"""An independent statement of the Messages API's request rules, for the fuzz tests.

Written from the API reference, the tool-use and prompt-caching docs and the SDK's param
types, NOT from ``mini_agent.core.messages.validate_messages``: the fuzzer checks the kit's
transformations against this, so a rule the kit's own validator forgets is still caught.
:func:`request_problems` returns every broken rule of a request body as a sentence (an empty
list: the API would accept it). Where the API is more lenient than the kit promises to be
(it merges consecutive same-role turns), this states the kit's promise: roles alternate.
"""

from __future__ import annotations

import re
from typing import Any

ROLES = ("user", "assistant")
BLOCK_KEYS = {
    "text": {"type", "text", "cache_control", "citations"},
    "image": {"type", "source", "cache_control"},
    "document": {"type", "source", "cache_control", "title", "context", "citations"},
    "search_result": {"type", "source", "title", "content", "citations", "cache_control"},
    "tool_use": {"type", "id", "name", "input", "cache_control"},
    "tool_result": {"type", "tool_use_id", "content", "is_error", "cache_control"},
    "thinking": {"type", "thinking", "signature"},
    "redacted_thinking": {"type", "data"},
    "compaction": {"type", "content", "encrypted_content", "cache_control"},
}
USER_ONLY = {"tool_result", "image", "document", "search_result"}
ASSISTANT_ONLY = {"tool_use", "thinking", "redacted_thinking", "compaction"}
RESULT_PARTS = {"text", "image", "document", "search_result"}
MEDIA_TYPES = {"image/jpeg", "image/png", "image/gif", "image/webp"}
TTL_SECONDS = {"5m": 300, "1h": 3600}
TOOL_ID = re.compile(r"[a-zA-Z0-9_-]+")
MAX_BREAKPOINTS = 4


def _blank(text: Any) -> bool:
    return not isinstance(text, str) or text.strip() == ""


def _marker_problem(block: dict, where: str) -> list[str]:
    if "cache_control" not in block:
        return []
    marker = block["cache_control"]
    if not isinstance(marker, dict) or marker.get("type") != "ephemeral" or \
            set(marker) - {"type", "ttl"} or marker.get("ttl", "5m") not in TTL_SECONDS:
        return [f"{where}: invalid cache_control {marker!r}"]
    if block.get("type") in ("thinking", "redacted_thinking"):
        return [f"{where}: cache_control on a thinking block"]
    if block.get("type") == "text" and _blank(block.get("text")):
        return [f"{where}: cache_control on an empty text block"]
    return []


def _image_problem(block: dict, where: str) -> list[str]:
    source = block.get("source")
    if not isinstance(source, dict):
        return [f"{where}: image without a source"]
    if source.get("type") == "base64":
        if source.get("media_type") not in MEDIA_TYPES or _blank(source.get("data")):
            return [f"{where}: bad base64 image source"]
    elif source.get("type") != "url" or _blank(source.get("url")):
        return [f"{where}: bad image source"]
    return []


def _block_problems(block: Any, role: str, where: str) -> list[str]:
    if not isinstance(block, dict):
        return [f"{where}: a block must be an object"]
    kind = block.get("type")
    if kind not in BLOCK_KEYS:
        return [f"{where}: unknown block type {kind!r}"]
    out = [f"{where}: unexpected key {k!r}" for k in sorted(set(block) - BLOCK_KEYS[kind])]
    out += _marker_problem(block, where)
    if kind in USER_ONLY and role != "user":
        out.append(f"{where}: {kind} only in user messages")
    if kind in ASSISTANT_ONLY and role != "assistant":
        out.append(f"{where}: {kind} only in assistant messages")
    if kind == "text" and _blank(block.get("text")):
        out.append(f"{where}: text content blocks must be non-empty")
    elif kind == "image":
        out += _image_problem(block, where)
    elif kind == "tool_use":
        if not isinstance(block.get("id"), str) or not TOOL_ID.fullmatch(block["id"]):
            out.append(f"{where}: tool_use id must match [a-zA-Z0-9_-]+")
        if _blank(block.get("name")):
            out.append(f"{where}: tool_use needs a name")
        if not isinstance(block.get("input"), dict):
            out.append(f"{where}: tool_use input must be an object")
    elif kind == "tool_result":
        if not isinstance(block.get("tool_use_id"), str):
            out.append(f"{where}: tool_result needs a tool_use_id")
        if "is_error" in block and not isinstance(block["is_error"], bool):
            out.append(f"{where}: is_error must be a boolean")
        content = block.get("content", "")
        if isinstance(content, list):
            for k, part in enumerate(content):
                if not isinstance(part, dict) or part.get("type") not in RESULT_PARTS:
                    out.append(f"{where}.content.{k}: not a text/image/document block")
                else:
                    out += _block_problems(part, "user", f"{where}.content.{k}")
        elif not isinstance(content, str):
            out.append(f"{where}: tool_result content must be a string or a list")
    return out


def _pairing_problems(messages: list[dict]) -> list[str]:
    out = []
    seen_ids: set = set()
    for i, message in enumerate(messages):
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        if message.get("role") == "assistant":
            ids = [b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
            for tid in ids:
                if tid in seen_ids:
                    out.append(f"messages.{i}: tool_use id {tid} used twice")
                seen_ids.add(tid)
            if not ids:
                continue
            nxt = messages[i + 1] if i + 1 < len(messages) else {}
            nxt_blocks = nxt.get("content") if isinstance(nxt.get("content"), list) else []
            answered = {b.get("tool_use_id") for b in nxt_blocks
                        if isinstance(b, dict) and b.get("type") == "tool_result"}
            missing = [t for t in ids if t not in answered]
            if missing:
                out.append(f"messages.{i}: tool_use without a tool_result right after: {missing}")
        else:
            kinds = [b.get("type") if isinstance(b, dict) else None for b in blocks]
            results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
            if not results:
                continue
            if kinds[:len(results)] != ["tool_result"] * len(results):
                out.append(f"messages.{i}: tool_result blocks must come first")
            prev = messages[i - 1] if i else {}
            prev_blocks = prev.get("content") if isinstance(prev.get("content"), list) else []
            asked = {b.get("id") for b in prev_blocks
                     if isinstance(b, dict) and b.get("type") == "tool_use"}
            ids = [b.get("tool_use_id") for b in results]
            for tid in ids:
                if tid not in asked:
                    out.append(f"messages.{i}: tool_result {tid} answers no tool_use before it")
            if len(set(map(str, ids))) != len(ids):
                out.append(f"messages.{i}: two tool_results for one tool_use")
    return out


def _markers_in_order(request: dict) -> list[dict]:
    """Every block carrying cache_control, in the API's order: tools, system, messages."""
    found: list[dict] = []

    def walk(item: Any) -> None:
        if isinstance(item, dict):
            if "cache_control" in item:
                found.append(item)
            for value in item.values():
                walk(value)
        elif isinstance(item, list):
            for value in item:
                walk(value)
    for part in ("tools", "system", "messages"):
        walk(request.get(part) or [])
    return found


def request_problems(request: dict) -> list[str]:
    """Every rule of the Messages API that ``request`` (a ``messages.create`` body) breaks."""
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["messages: at least one message is required"]
    out: list[str] = []
    for i, message in enumerate(messages):
        where = f"messages.{i}"
        if not isinstance(message, dict) or set(message) != {"role", "content"}:
            out.append(f"{where}: a message is exactly {{role, content}}")
            continue
        role = message["role"]
        if role not in ROLES:
            out.append(f"{where}: bad role {role!r}")
        if i == 0 and role != "user":
            out.append("messages.0: the first message must be a user message")
        if i and messages[i - 1].get("role") == role:
            out.append(f"{where}: roles must alternate")
        content = message["content"]
        final_assistant = role == "assistant" and i == len(messages) - 1
        if isinstance(content, str):
            if _blank(content) and not final_assistant:
                out.append(f"{where}: content must be non-empty")
        elif isinstance(content, list) and content:
            for j, block in enumerate(content):
                out += _block_problems(block, role, f"{where}.content.{j}")
        else:
            out.append(f"{where}: content must be a non-empty string or list")
        if final_assistant:
            tail = content if isinstance(content, str) else (
                content[-1].get("text", "") if content and isinstance(content[-1], dict)
                and content[-1].get("type") == "text" else "")
            if isinstance(tail, str) and tail != tail.rstrip():
                out.append("final assistant content cannot end with trailing whitespace")
    out += _pairing_problems(messages)
    system = request.get("system")
    if isinstance(system, list):
        for j, block in enumerate(system):
            if not isinstance(block, dict) or block.get("type") != "text":
                out.append(f"system.{j}: system blocks are text blocks")
            else:
                out += _block_problems(block, "system", f"system.{j}")
    elif system is not None and not isinstance(system, str):
        out.append("system: a string or a list of text blocks")
    for j, tool in enumerate(request.get("tools") or []):
        out += _marker_problem(tool, f"tools.{j}")
    markers = _markers_in_order(request)
    if len(markers) > MAX_BREAKPOINTS:
        out.append(f"{len(markers)} cache_control breakpoints (at most {MAX_BREAKPOINTS})")
    ttls = [TTL_SECONDS.get((b["cache_control"] or {}).get("ttl", "5m"), 300)
            if isinstance(b["cache_control"], dict) else 300 for b in markers]
    if any(later > earlier for earlier, later in zip(ttls, ttls[1:])):
        out.append(f"cache TTLs out of order (longer must come first): {ttls}")
    return out


def continued(messages: list[dict]) -> list[dict]:
    """``messages`` as the next request would carry them: an assistant turn at the end is
    followed by the results of its tool calls (interrupted) or by the next prompt."""
    if not messages or messages[-1].get("role") != "assistant":
        return list(messages)
    content = messages[-1]["content"]
    ids = [b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "tool_use"] \
        if isinstance(content, list) else []
    if ids:
        return [*messages, {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": t, "content": "interrupted", "is_error": True}
            for t in ids]}]
    return [*messages, {"role": "user", "content": "continue"}]
