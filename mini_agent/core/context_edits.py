"""Server-side context editing, offline: the ``clear_tool_uses_20250919`` edit.

The real API applies ``context_management.edits`` to the prompt before Claude sees it; the
client keeps its full history. Here the same happens inside the offline Claude: plug
:func:`clear_tool_uses_transform` into the transport's ``request_transforms`` and send
requests through the SDK's beta API::

    client.beta.messages.create(..., betas=[CONTEXT_MANAGEMENT_BETA],
                                context_management={"edits": [clear_tool_uses_edit(keep=3)]})

The edited request is what the brain and the prompt-cache simulator see; the response carries
``context_management.applied_edits``. This module does not do thinking-block clearing
(``clear_thinking_20251015``). Taught in ``notebooks/05_prompt_caching.ipynb``.

Source:
    context editing docs, https://platform.claude.com/docs/en/build-with-claude/
    context-editing, and the SDK's ``BetaClearToolUses20250919EditParam``, read 2026-11-29.

Rules, from those sources:
  * ``trigger``: ``{"type": "input_tokens", "value": N}`` (default 100,000) or
    ``{"type": "tool_uses", "value": N}``; the edit runs once the prompt exceeds it.
  * ``keep``: ``{"type": "tool_uses", "value": N}`` (default 3): the newest N tool uses keep
    their results; older results are cleared oldest first, "replacing them with placeholder
    text to let Claude know the tool result was removed".
  * ``clear_at_least``: ``{"type": "input_tokens", "value": N}``: "Context will only be
    modified if at least this many tokens can be removed" (so the cache break pays off).
  * ``exclude_tools``: names whose uses are never cleared.
  * ``clear_tool_inputs``: False (default), True (also clear every cleared tool_use's input)
    or a list of tool names whose inputs are cleared.
  * Response: ``{"context_management": {"applied_edits": [{"type": "clear_tool_uses_20250919",
    "cleared_tool_uses": n, "cleared_input_tokens": t}]}}``.
ASSUMPTIONS: the placeholder wording (:data:`CLEARED_PLACEHOLDER`, Claude Code's own); a
cleared input becomes ``{}``; the edit clears ALL eligible results beyond ``keep`` (the docs
describe no partial clearing); results already equal to the placeholder are not counted
again; tokens are the kit's estimate (``mini_agent.core.tokens``).
"""

from __future__ import annotations

import copy
from typing import Any, Mapping, Sequence

from mini_agent.core.cache import CLEARED_TOOL_RESULT
from mini_agent.core.messages import content_blocks
from mini_agent.core.tokens import approx_body_tokens

CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
"""The beta flag (``anthropic-beta`` header) that enables context editing."""

CLEAR_TOOL_USES = "clear_tool_uses_20250919"
CLEARED_PLACEHOLDER = CLEARED_TOOL_RESULT
DEFAULT_TRIGGER = {"type": "input_tokens", "value": 100_000}
DEFAULT_KEEP = {"type": "tool_uses", "value": 3}


def clear_tool_uses_edit(*, trigger_input_tokens: int | None = None,
                         trigger_tool_uses: int | None = None, keep: int | None = None,
                         clear_at_least_tokens: int | None = None,
                         exclude_tools: Sequence[str] = (),
                         clear_tool_inputs: bool | Sequence[str] = False) -> dict[str, Any]:
    """Build one ``clear_tool_uses_20250919`` edit dict; unset options use the API defaults.

    Args:
        trigger_input_tokens: run once the prompt exceeds this many input tokens (API default
            100,000); not with ``trigger_tool_uses``.
        trigger_tool_uses: run once the prompt holds more than this many tool uses.
        keep: the newest tool uses whose results stay (API default 3).
        clear_at_least_tokens: clear only if at least this many tokens can be removed.
        exclude_tools: tool names whose uses are never cleared.
        clear_tool_inputs: False (default), True (also clear every cleared tool_use's input),
            or the tool names whose inputs are cleared.

    Returns:
        The edit dict for ``context_management.edits``.

    Raises:
        ValueError: both triggers are given or a number is negative.

    >>> clear_tool_uses_edit(keep=2)
    {'type': 'clear_tool_uses_20250919', 'keep': {'type': 'tool_uses', 'value': 2}}
    """
    if trigger_input_tokens is not None and trigger_tool_uses is not None:
        raise ValueError("give one trigger: input tokens or tool uses")
    for name, value in (("trigger_input_tokens", trigger_input_tokens),
                        ("trigger_tool_uses", trigger_tool_uses), ("keep", keep),
                        ("clear_at_least_tokens", clear_at_least_tokens)):
        if value is not None and value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
    edit: dict[str, Any] = {"type": CLEAR_TOOL_USES}
    if trigger_input_tokens is not None:
        edit["trigger"] = {"type": "input_tokens", "value": trigger_input_tokens}
    if trigger_tool_uses is not None:
        edit["trigger"] = {"type": "tool_uses", "value": trigger_tool_uses}
    if keep is not None:
        edit["keep"] = {"type": "tool_uses", "value": keep}
    if clear_at_least_tokens is not None:
        edit["clear_at_least"] = {"type": "input_tokens", "value": clear_at_least_tokens}
    if exclude_tools:
        edit["exclude_tools"] = list(exclude_tools)
    if clear_tool_inputs:
        edit["clear_tool_inputs"] = clear_tool_inputs if isinstance(clear_tool_inputs, bool) \
            else list(clear_tool_inputs)
    return edit


def apply_clear_tool_uses(request: Mapping[str, Any],
                          edit: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Apply one ``clear_tool_uses_20250919`` edit to a request body.

    The input is not mutated; tool_use ids and the tool_use/tool_result pairing are never
    changed.

    Args:
        request: the Messages API request body.
        edit: the edit dict (see :func:`clear_tool_uses_edit`).

    Returns:
        ``(new_request, applied)`` where ``applied`` is ``{"type", "cleared_tool_uses",
        "cleared_input_tokens"}``, or None when the edit did not run (trigger not exceeded,
        nothing eligible, or less than ``clear_at_least`` to gain).

    Raises:
        ValueError: an unknown trigger or keep type.
    """
    trigger = edit.get("trigger") or DEFAULT_TRIGGER
    keep = (edit.get("keep") or DEFAULT_KEEP)
    if keep.get("type") != "tool_uses":
        raise ValueError(f"keep.type must be 'tool_uses', got {keep.get('type')!r}")
    messages = request.get("messages") or []
    uses = [(i, b) for i, m in enumerate(messages) for b in content_blocks(m)
            if b.get("type") == "tool_use"]
    if trigger.get("type") == "input_tokens":
        fired = approx_body_tokens(request) > trigger["value"]
    elif trigger.get("type") == "tool_uses":
        fired = len(uses) > trigger["value"]
    else:
        raise ValueError(f"trigger.type must be 'input_tokens' or 'tool_uses', "
                         f"got {trigger.get('type')!r}")
    if not fired:
        return dict(request), None
    excluded = set(edit.get("exclude_tools") or ())
    clear_inputs = edit.get("clear_tool_inputs") or False
    kept = int(keep["value"])
    older = uses[: max(0, len(uses) - kept)]
    targets = {b["id"]: b.get("name", "") for _, b in older if b.get("name") not in excluded}
    new = copy.deepcopy(dict(request))
    cleared_ids = set()
    for message in new.get("messages") or []:
        if isinstance(message.get("content"), str):
            continue
        for block in message["content"]:
            if block.get("type") == "tool_result" and block.get("tool_use_id") in targets:
                if block.get("content") != CLEARED_PLACEHOLDER:
                    block["content"] = CLEARED_PLACEHOLDER
                    cleared_ids.add(block["tool_use_id"])
            elif block.get("type") == "tool_use" and block.get("id") in targets:
                wanted = clear_inputs is True or (
                    isinstance(clear_inputs, list) and block.get("name") in clear_inputs)
                if wanted and block.get("input"):
                    block["input"] = {}
                    cleared_ids.add(block["id"])
    if not cleared_ids:
        return dict(request), None
    gained = approx_body_tokens(request) - approx_body_tokens(new)
    least = (edit.get("clear_at_least") or {}).get("value", 0)
    if gained < least:
        return dict(request), None
    return new, {"type": CLEAR_TOOL_USES, "cleared_tool_uses": len(cleared_ids),
                 "cleared_input_tokens": gained}


def clear_tool_uses_transform(request: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Apply the request's ``context_management`` edits: a transport ``request_transform``.

    Edits of other types are ignored.

    Args:
        request: the Messages API request body.

    Returns:
        ``(request seen by the model, extra response fields)``: a request without
        ``context_management`` passes unchanged with no extra; one with it gets
        ``{"context_management": {"applied_edits": [...]}}`` (an empty list when no edit ran).
    """
    config = request.get("context_management")
    if not config:
        return request, {}
    applied = []
    for edit in config.get("edits") or []:
        if edit.get("type") != CLEAR_TOOL_USES:
            continue
        request, result = apply_clear_tool_uses(request, edit)
        if result:
            applied.append(result)
    return request, {"context_management": {"applied_edits": applied}}

