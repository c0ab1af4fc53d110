"""What a request forces on the model's reply: a tool call (``tool_choice``), a JSON answer.

The offline brain writes a reply without reading these settings; the real model cannot
ignore them, so the offline API makes the reply obey:

* :func:`force_tool_choice`: with ``tool_choice: {"type": "any"}`` the reply calls a tool,
  with ``{"type": "tool", "name": X}`` it calls X, and in both cases it holds no text (the
  API prefills the assistant turn with the tool call). The brain's own calls are kept (for
  ``tool`` from its first call of X on); a brain that called none gets a call made up from
  the tool's ``input_schema`` (its required fields, smallest values). ``stop_reason`` is
  ``"tool_use"``.
* :func:`force_output_format`: with ``output_config.format`` (``json_schema``) the answer
  text is JSON valid against the schema; a brain's text that is not is replaced by the
  smallest valid value (:func:`mini_agent.offline.json_schemas.example_value`).
* :func:`output_format_problem`: the 400 for an ``output_config.format`` of the wrong shape
  or with a schema feature the API does not take
  (:func:`mini_agent.offline.json_schemas.schema_problem`).

Pure: no IO, inputs never mutated. Used by :mod:`mini_agent.offline.transport` (before the
stop sequences and ``max_tokens`` cut the reply) and :mod:`mini_agent.offline.request_check`.

Source: tool use docs ("any tells Claude that it must use one of the provided tools";
"tool allows us to force Claude to always use a particular tool"; "When using tool_choice
as any or tool, we will prefill the assistant message to force a tool to be used. This means
that the models will not emit a natural language response or chain-of-thought text content
blocks before tool_use content blocks"); the tool-choice cookbook
(platform.claude.com/cookbook/tool-use-tool-choice); Bedrock's ``ToolChoice`` reference for
Claude ("The model must request at least one tool (no text is generated)"); SDK
``ToolChoiceAnyParam`` / ``ToolChoiceToolParam``, ``OutputConfigParam.format``,
``JSONOutputFormatParam`` (``{"type": "json_schema", "schema": {...}}``, both required);
programmatic tool calling docs (``allowed_callers``: ``["direct"]``, "Only Claude can call
this tool directly (default if omitted)");
structured outputs docs (JSON outputs "constrain the model's text response to a JSON object
that matches a schema you provide"). ASSUMPTIONS: thinking blocks before the call are kept
(adaptive thinking may run with a forced tool); the made-up input is the schema's smallest
value; with structured outputs, a reply that calls tools keeps its text as is (the schema
constrains the answer, the turn that calls no tool); the shape refusals' wording (pydantic
style, like the API's other field errors).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from mini_agent.offline.json_schemas import example_value, is_valid, schema_problem

__all__ = ["force_output_format", "force_tool_choice", "forced_tool_id", "output_format_problem"]

_THINKING = ("thinking", "redacted_thinking")


def forced_tool_id(number: int) -> str:
    """Return the id of a tool call the offline API makes up for request ``number``.

    Args:
        number: the request's number on the transport (1 for the first).

    Returns:
        ``"toolu_offline_forced_NNNN"`` (matches the API's ``[a-zA-Z0-9_-]+`` id pattern).
    """
    return f"toolu_offline_forced_{number:04d}"


def force_tool_choice(content: list[dict], stop_reason: str, body: Mapping[str, Any], *,
                      tool_id: str) -> tuple[list[dict], str]:
    """Make a reply call a tool when the request's ``tool_choice`` forces one.

    Args:
        content: the brain's reply blocks, in generation order (not mutated).
        stop_reason: the brain's stop_reason.
        body: the request (``tool_choice`` and ``tools`` read).
        tool_id: the id of a call made up when the reply has none to keep.

    Returns:
        ``(content, stop_reason)``: unchanged unless ``tool_choice.type`` is ``any`` or
        ``tool``; then the reply's leading thinking blocks, then its tool calls (``tool``:
        from its first call of the named tool on), or one made-up call (``any``: the first
        tool the model may call directly, its ``allowed_callers`` holding ``"direct"`` or
        unset, that has an ``input_schema``; else the first such tool), with
        ``"tool_use"``.

    >>> force_tool_choice([{"type": "text", "text": "hi"}], "end_turn",
    ...                   {"tool_choice": {"type": "tool", "name": "ls"}, "tools": [
    ...                    {"name": "ls", "input_schema": {"type": "object"}}]},
    ...                   tool_id="toolu_1")[0]
    [{'type': 'tool_use', 'id': 'toolu_1', 'name': 'ls', 'input': {}}]
    """
    choice = body.get("tool_choice")
    kind = choice.get("type") if isinstance(choice, Mapping) else None
    if kind not in ("any", "tool"):
        return [dict(b) for b in content], stop_reason
    head = []
    for block in content:
        if block.get("type") not in _THINKING:
            break
        head.append(dict(block))
    calls = [dict(b) for b in content if b.get("type") == "tool_use"]
    if kind == "tool":
        named = [i for i, b in enumerate(calls) if b.get("name") == choice.get("name")]
        calls = calls[named[0]:] if named else []
    if not calls:
        tool = _forced_tool(body, choice.get("name") if kind == "tool" else None)
        calls = [{"type": "tool_use", "id": tool_id, "name": tool.get("name"),
                  "input": _example_input(tool.get("input_schema"))}]
    return head + calls, "tool_use"


def _forced_tool(body: Mapping[str, Any], name: str | None) -> Mapping[str, Any]:
    tools = [t for t in body.get("tools") or [] if isinstance(t, Mapping)]
    if name is not None:
        return next(t for t in tools if t.get("name") == name)
    direct = [t for t in tools if "direct" in (t.get("allowed_callers") or ["direct"])]
    return next((t for t in direct if isinstance(t.get("input_schema"), Mapping)),
                (direct or tools)[0])


def _example_input(schema: Any) -> dict:
    value = example_value(schema) if isinstance(schema, Mapping) else {}
    return value if isinstance(value, dict) else {}


def output_format_problem(body: Mapping[str, Any]) -> str | None:
    """Return the API's 400 message for a malformed ``output_config.format``, or None.

    Args:
        body: the request body (never mutated).

    Returns:
        The message for a format that is not an object, of a type other than
        ``json_schema``, without a ``schema``, with another field, or whose schema uses a
        feature structured outputs do not take; None when there is no format or it is fine.

    >>> output_format_problem({"output_config": {"format": {"type": "json_schema"}}})
    'output_config.format.schema: Field required'
    """
    config = body.get("output_config")
    if not isinstance(config, Mapping) or config.get("format") is None:
        return None
    fmt = config["format"]
    if not isinstance(fmt, Mapping):
        return "output_config.format: Input should be a valid dictionary"
    if fmt.get("type") != "json_schema":
        return "output_config.format.type: Input should be 'json_schema'"
    if "schema" not in fmt:
        return "output_config.format.schema: Field required"
    extra = sorted(set(fmt) - {"type", "schema"})
    if extra:
        return f"output_config.format.{extra[0]}: Extra inputs are not permitted"
    return schema_problem(fmt["schema"])


def _output_schema(body: Mapping[str, Any]) -> Any:
    config = body.get("output_config")
    fmt = config.get("format") if isinstance(config, Mapping) else None
    return fmt.get("schema") if isinstance(fmt, Mapping) else None


def force_output_format(content: list[dict], body: Mapping[str, Any]) -> list[dict]:
    """Make a reply's answer JSON valid against the request's ``output_config.format``.

    Args:
        content: the reply blocks (not mutated).
        body: the request (``output_config.format.schema`` read; already checked).

    Returns:
        A copy of ``content`` when there is no format, when the reply calls a tool, or when
        its text (the text blocks joined) parses as JSON valid against the schema;
        otherwise the blocks other than text, then one text block holding the schema's
        smallest valid value (compact JSON).

    >>> force_output_format([{"type": "text", "text": "Sure!"}], {"output_config": {
    ...     "format": {"type": "json_schema", "schema": {"type": "boolean"}}}})
    [{'type': 'text', 'text': 'false'}]
    """
    schema = _output_schema(body)
    blocks = [dict(b) for b in content]
    if schema is None or any(b.get("type") == "tool_use" for b in blocks):
        return blocks
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    try:
        if is_valid(json.loads(text), schema):
            return blocks
    except ValueError:
        pass
    answer = json.dumps(example_value(schema), separators=(",", ":"))
    return [b for b in blocks if b.get("type") != "text"] + [{"type": "text", "text": answer}]
