"""Shapes of a request body the real API refuses that the shared request rules do not cover.

:func:`shape_problem` returns the 400 message for: a custom tool whose name does not match
:data:`TOOL_NAME_PATTERN`, two tools of one name, a custom tool without an object
``input_schema``, a system block that is not a text block of the SDK's ``TextBlockParam``
shape, an invalid ``cache_control`` on a system block or a tool, an empty system text block, a
``tool_choice`` that is not an object, of an unknown type, with a field its type does not
take, a non-boolean ``disable_parallel_tool_use``, naming a tool the request does not define
or given without tools, manual thinking with a ``tool_choice`` that forces tool use,
``stop_sequences`` / ``stream`` / ``metadata`` / ``service_tier`` of the wrong type, a stop
sequence that is empty or whitespace only, an ``inference_geo`` other than ``global`` or
``us``, a ``tool_use`` id outside ``[a-zA-Z0-9_-]``, a ``tool_result`` whose ``is_error`` is
not a boolean, a base64 image whose data does not decode or match its media type (the API's
"Image does not match the provided media type image/png"), thinking blocks out of place
(:func:`thinking_order_problem`) and a ``context_management`` whose edits do not have the
SDK's shapes or that clears thinking with thinking off (:func:`context_management_problem`,
from :mod:`mini_agent.offline.edit_shapes`, re-exported here).
The offline API (:mod:`mini_agent.offline.transport`) runs it after
:func:`mini_agent.core.request_rules.request_problem`, so a request the real API would refuse
is refused offline too, with a 400 rather than a crash of the usage model.

Pure: no IO. Taught with ``notebooks/01_agent_loop.ipynb`` (what the API refuses).

Source: Anthropic Messages API reference (tool ``name`` pattern ``^[a-zA-Z0-9_-]{1,128}$``,
``input_schema`` required, ``tool_choice`` types auto/any/tool/none, ``metadata.user_id``,
``service_tier`` auto/standard_only); extended-thinking docs ("tool_choice any or tool ...
will result in an error" with thinking on; "Thinking in tool and multi-turn workflows":
forced tool use errors with manual ``enabled`` thinking only, "adaptive thinking supports
forced tool use"); the thinking-order refusals as the API words them (quoted in public bug
reports: anthropics/claude-code#20705, #11978; tailcallhq/forgecode#2107, #1853) and the
clear-thinking refusal (anthropics/claude-code#11971); the stop-sequence refusals
(BerriAI/litellm#3286, MegaGrindStone/mcp-web-ui#5); ``BetaAllowedInferenceGeo`` ("global",
"us"). ASSUMPTIONS (wording not documented): the texts of the duplicate-name, unknown-tool,
tool_choice-without-tools, empty-system-text and ``inference_geo`` refusals, and the field
paths of the tool_use id, is_error and ``tool_choice`` field refusals (pydantic style).
"""

from __future__ import annotations

from typing import Any, Mapping

from mini_agent.core.wire_rules import (TOOL_NAME_PATTERN, TOOL_USE_ID_PATTERN,
                                       base64_image_problem, cache_control_problem)
from mini_agent.offline.edit_shapes import (CLEAR_THINKING_NEEDS_THINKING,  # noqa: F401
                                            context_management_problem)

__all__ = ["TOOL_NAME_PATTERN", "TOOL_USE_ID_PATTERN", "shape_problem", "thinking_order_problem",
           "context_management_problem"]

TOOL_CHOICE_TYPES = ("auto", "any", "tool", "none")
TOOL_CHOICE_FIELDS = {"auto": frozenset({"type", "disable_parallel_tool_use"}),
                      "any": frozenset({"type", "disable_parallel_tool_use"}),
                      "tool": frozenset({"type", "name", "disable_parallel_tool_use"}),
                      "none": frozenset({"type"})}
"""``tool_choice.type`` -> the fields it takes (SDK ``ToolChoice*Param``)."""
INFERENCE_GEOS = ("global", "us")
"""Values of ``inference_geo`` (SDK ``BetaAllowedInferenceGeo``; data residency docs)."""
SERVICE_TIERS = ("auto", "standard_only")


def shape_problem(body: Mapping[str, Any]) -> str | None:
    """Return the API's 400 message for the first shape problem of ``body``, or None.

    Args:
        body: the JSON request body, already past ``request_problem`` and the offline API's
            type checks of ``messages``, ``system`` (a string or a list of objects) and
            ``tools`` (a list of objects with a string name); never mutated.

    Returns:
        The message (``"<field path>: <what is wrong>"``), or None when the shapes hold.
    """
    return (_tools_problem(body.get("tools")) or _system_problem(body.get("system"))
            or _tool_choice_problem(body) or _scalars_problem(body)
            or _blocks_problem(body.get("messages")) or thinking_order_problem(body)
            or context_management_problem(body))


_THINKING = ("thinking", "redacted_thinking")
THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"


def thinking_order_problem(body: Mapping[str, Any]) -> str | None:
    """Return the API's 400 message for thinking blocks out of place in ``messages``, or None.

    The rules, as the API words its refusals: an assistant message holding any thinking
    block must start with one; with thinking off, the assistant message in the final
    position holds none; with ``thinking.type == "enabled"``, the final assistant message
    (the last message, or the one whose ``tool_use`` the trailing ``tool_result`` user turn
    answers) starts with a thinking block, so a tool loop must send back the thinking it got;
    and an assistant message in the final position does not end with a thinking block.
    With ``adaptive`` (or ``between_tools``) thinking the model may skip thinking, so the
    start-with-thinking rule is not applied (ASSUMPTION: the docs say the round-trip rules
    are "identical" but that thinking is optional in that mode); the other rules are.

    Args:
        body: the request body; ``messages`` a list (other shapes are skipped); never mutated.

    Returns:
        The message (``"messages.<i>...: <what is wrong>"``), or None.
    """
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None

    def blocks(i: int) -> list:
        message = messages[i]
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []

    def role(i: int) -> Any:
        return messages[i].get("role") if isinstance(messages[i], dict) else None

    for i in range(len(messages)):
        content = blocks(i)
        if role(i) == "assistant" and content and content[0].get("type") not in _THINKING \
                and any(b.get("type") in _THINKING for b in content):
            return (f"messages.{i}.content.0: If an assistant message contains any thinking "
                    f"blocks, the first block must be thinking or redacted_thinking. Found "
                    f"{content[0].get('type')}.")
    if not messages:
        return None
    last = len(messages) - 1
    thinking = body.get("thinking")
    kind = thinking.get("type") if isinstance(thinking, Mapping) else None
    if role(last) == "assistant":
        content = blocks(last)
        if kind in (None, "disabled"):
            for j, block in enumerate(content):
                if block.get("type") in _THINKING:
                    return (f"messages.{last}.content.{j}: When thinking is disabled, an "
                            "`assistant` message in the final position cannot contain "
                            "`thinking`. To use thinking blocks, enable `thinking` in your "
                            "request.")
        if content and content[-1].get("type") in _THINKING:
            return (f"messages.{last}: The final block in an assistant message cannot be "
                    "`thinking`.")
        final = last
    elif role(last) == "user" and last > 0 and role(last - 1) == "assistant" and \
            blocks(last) and blocks(last)[0].get("type") == "tool_result":
        final = last - 1
    else:
        return None
    content = blocks(final)
    if kind == "enabled" and content and content[0].get("type") not in _THINKING:
        return (f"messages.{final}.content.0.type: Expected `thinking` or `redacted_thinking`, "
                f"but found `{content[0].get('type')}`. When `thinking` is enabled, a final "
                "`assistant` message must start with a thinking block (preceeding the "
                "lastmost set of `tool_use` and `tool_result` blocks). We recommend you "
                "include thinking blocks from previous turns. To avoid this requirement, "
                f"disable `thinking`. Please consult our documentation at {THINKING_DOCS}")
    return None


def _custom(tool: Mapping[str, Any]) -> bool:
    """A client tool with a schema of its own (server tools carry a versioned ``type``)."""
    return tool.get("type") in (None, "custom")


def _tools_problem(tools: Any) -> str | None:
    if not isinstance(tools, list):
        return None
    names = [tool["name"] for tool in tools]
    for i, tool in enumerate(tools):
        if _custom(tool):
            if not TOOL_NAME_PATTERN.fullmatch(tool["name"]):
                return (f"tools.{i}.name: String should match pattern "
                        f"'^[a-zA-Z0-9_-]{{1,128}}$'")
            schema = tool.get("input_schema")
            if schema is None:
                return f"tools.{i}.input_schema: Field required"
            if not isinstance(schema, dict) or schema.get("type") != "object":
                return f"tools.{i}.input_schema.type: Input should be 'object'"
        problem = cache_control_problem(tool.get("cache_control"))
        if problem:
            return f"tools.{i}.cache_control: {problem}"
    if len(set(names)) != len(names):
        return "tools: Tool names must be unique."
    return None


def _system_problem(system: Any) -> str | None:
    if not isinstance(system, list):
        return None
    for i, block in enumerate(system):
        if block.get("type") != "text":   # the system prompt holds text blocks only
            return f"system.{i}.type: Input should be 'text'"
        if not isinstance(block.get("text"), str):
            return f"system.{i}.text: Input should be a valid string"
        extra = sorted(set(block) - {"type", "text", "cache_control", "citations"})
        if extra:
            return f"system.{i}.{extra[0]}: Extra inputs are not permitted"
        problem = cache_control_problem(block.get("cache_control"))
        if problem:
            return f"system.{i}.cache_control: {problem}"
        if block.get("type") == "text" and isinstance(block.get("text"), str) \
                and not block["text"]:
            return "system: text content blocks must be non-empty"
    return None


def _tool_choice_problem(body: Mapping[str, Any]) -> str | None:
    choice = body.get("tool_choice")
    if choice is None:
        return None
    if not isinstance(choice, dict):
        return "tool_choice: Input should be an object"
    kind = choice.get("type")
    if kind not in TOOL_CHOICE_TYPES:
        return "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'"
    extra = sorted(set(choice) - TOOL_CHOICE_FIELDS[kind])
    if extra:
        return f"tool_choice.{kind}.{extra[0]}: Extra inputs are not permitted"
    if "disable_parallel_tool_use" in choice and \
            not isinstance(choice["disable_parallel_tool_use"], bool):
        return f"tool_choice.{kind}.disable_parallel_tool_use: Input should be a valid boolean"
    tools = body.get("tools") or []
    if kind in ("any", "tool") and not tools:
        return "tool_choice: may only be specified while providing tools"
    if kind == "tool" and choice.get("name") not in {t["name"] for t in tools}:
        return f"tool_choice.name: no tool named {choice.get('name')!r} in tools"
    thinking = body.get("thinking")
    if kind in ("any", "tool") and isinstance(thinking, dict) \
            and thinking.get("type") == "enabled":
        return "Thinking may not be enabled when tool_choice forces tool use."
    return None


def _scalars_problem(body: Mapping[str, Any]) -> str | None:
    stops = body.get("stop_sequences")
    if stops is not None:
        if not isinstance(stops, list):
            return "stop_sequences: Input should be a valid list"
        for i, stop in enumerate(stops):
            if not isinstance(stop, str):
                return f"stop_sequences.{i}: Input should be a valid string"
        if any(stop == "" for stop in stops):
            return "stop_sequences: each stop sequence must be non-empty"
        if any(not stop.strip() for stop in stops):
            return "stop_sequences: each stop sequence must contain non-whitespace"
    if "stream" in body and not isinstance(body["stream"], bool):
        return "stream: Input should be a valid boolean"
    metadata = body.get("metadata")
    if metadata is not None:
        if not isinstance(metadata, dict):
            return "metadata: Input should be a valid dictionary"
        for key, value in metadata.items():
            if key != "user_id":
                return f"metadata.{key}: Extra inputs are not permitted"
            if value is not None and not isinstance(value, str):
                return "metadata.user_id: Input should be a valid string"
    geo = body.get("inference_geo")
    if geo is not None and geo not in INFERENCE_GEOS:
        return "inference_geo: Input should be 'global' or 'us'"
    tier = body.get("service_tier")
    if tier is not None and tier not in SERVICE_TIERS:
        return "service_tier: Input should be 'auto' or 'standard_only'"
    return None


def _blocks_problem(messages: Any) -> str | None:
    for i, message in enumerate(messages if isinstance(messages, list) else []):
        content = message.get("content") if isinstance(message, dict) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str) \
                    and not TOOL_USE_ID_PATTERN.fullmatch(block["id"]):
                return (f"messages.{i}.content.{j}.tool_use.id: String should match pattern "
                        "'^[a-zA-Z0-9_-]+$'")
            if block.get("type") == "tool_result" and "is_error" in block \
                    and not isinstance(block["is_error"], bool):
                return (f"messages.{i}.content.{j}.tool_result.is_error: Input should be a "
                        "valid boolean")
            problem = _image_problem(block, f"messages.{i}.content.{j}")
            inner = block.get("content") if block.get("type") == "tool_result" else None
            for k, part in enumerate(inner if isinstance(inner, list) else []):
                problem = problem or _image_problem(
                    part, f"messages.{i}.content.{j}.tool_result.content.{k}")
            if problem:
                return problem
    return None


def _image_problem(block: Any, where: str) -> str | None:
    """The refusal of a base64 image whose data does not decode or match its media type
    (a media type outside the four is ``validate_messages``'s to refuse)."""
    if not isinstance(block, dict) or block.get("type") != "image":
        return None
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64" \
            or source.get("media_type") not in ("image/png", "image/jpeg", "image/gif",
                                                "image/webp"):
        return None
    problem = base64_image_problem(source)
    return f"{where}.image.source.base64.data: {problem}" if problem else None
