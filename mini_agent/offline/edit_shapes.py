"""Shapes of a request's ``context_management`` the real API refuses.

:func:`context_management_problem` returns the 400 message for a ``context_management`` that is
not an object holding only ``edits``, edits that are not a list of objects, an edit field its
type does not take, a ``trigger`` / ``keep`` / ``clear_at_least`` that is not a
``{"type", "value"}`` object of the right kind with a non-negative integer value,
``exclude_tools`` / ``clear_tool_inputs`` that are not lists of names, and a
``clear_thinking_20251015`` edit with thinking off or not listed first. Part of
:func:`mini_agent.offline.wire_shapes.shape_problem`, which re-exports the name; unknown edit
types and missing beta flags are :func:`mini_agent.core.request_rules.request_problem`'s to
refuse. Pure: no IO, the body never mutated. Taught with ``notebooks/01_agent_loop.ipynb``
(what the API refuses).

Source: the SDK's param types (``BetaContextManagementConfigParam``,
``BetaClearToolUses20250919EditParam``, ``BetaClearThinking20251015EditParam``); the
clear-thinking refusal as the API words it (anthropics/claude-code#11971). ASSUMPTIONS
(wording not documented): the field paths and texts of the other refusals (pydantic style)
and the must-come-first refusal; adaptive / between_tools thinking count as thinking on.
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["CLEAR_THINKING_NEEDS_THINKING", "context_management_problem"]

CLEAR_THINKING_NEEDS_THINKING = \
    "`clear_thinking_20251015` strategy requires `thinking` to be enabled"
"""The API's refusal of the clear-thinking edit without thinking (anthropics/claude-code#11971)."""

_EDIT_FIELDS = {
    "clear_tool_uses_20250919": frozenset({"type", "trigger", "keep", "clear_at_least",
                                           "exclude_tools", "clear_tool_inputs"}),
    "clear_thinking_20251015": frozenset({"type", "keep"}),
}
_COUNTS = {  # field -> the ``type`` values its {"type", "value"} object may take
    "trigger": ("input_tokens", "tool_uses"), "keep": ("tool_uses",),
    "clear_at_least": ("input_tokens",),
}


def _quoted(values: tuple[str, ...]) -> str:
    return " or ".join(f"'{v}'" for v in values)


def _count_problem(where: str, value: Any, kinds: tuple[str, ...]) -> str | None:
    """A ``{"type": kind, "value": int >= 0}`` object (trigger, keep, clear_at_least)."""
    if not isinstance(value, Mapping):
        return f"{where}: Input should be a valid dictionary"
    if value.get("type") not in kinds:
        return f"{where}.type: Input should be {_quoted(kinds)}"
    extra = sorted(set(value) - {"type", "value"})
    if extra:
        return f"{where}.{extra[0]}: Extra inputs are not permitted"
    number = value.get("value")
    if "value" not in value:
        return f"{where}.value: Field required"
    if not isinstance(number, int) or isinstance(number, bool):
        return f"{where}.value: Input should be a valid integer"
    if number < 0:
        return f"{where}.value: Input should be greater than or equal to 0"
    return None


def _names_problem(where: str, value: Any) -> str | None:
    if not isinstance(value, list):
        return f"{where}: Input should be a valid list"
    for k, name in enumerate(value):
        if not isinstance(name, str):
            return f"{where}.{k}: Input should be a valid string"
    return None


def context_management_problem(body: Mapping[str, Any]) -> str | None:
    """Return the API's 400 message for a malformed ``context_management``, or None.

    Checked against the SDK's param types (``BetaContextManagementConfigParam`` and the edit
    params): an object with only ``edits``, a list of objects; ``clear_tool_uses_20250919``
    takes ``trigger`` (``{"type": "input_tokens" | "tool_uses", "value": int}``), ``keep``
    (``tool_uses``), ``clear_at_least`` (``input_tokens``), ``exclude_tools`` (a list of
    names) and ``clear_tool_inputs`` (a boolean or a list of names); ``clear_thinking_20251015``
    takes ``keep`` (``{"type": "thinking_turns", "value": int}``, ``{"type": "all"}`` or
    ``"all"``), needs thinking on (``enabled``, or ``adaptive`` / ``between_tools``:
    ASSUMPTION) and, with other edits, comes first. Unknown edit types are
    :func:`mini_agent.core.request_rules.request_problem`'s to refuse; the compaction edit's
    fields are checked where it is applied.

    Args:
        body: the request body; never mutated.

    Returns:
        The message (``"context_management.edits.<i>...: <what is wrong>"``), or None.
    """
    if "context_management" not in body or body["context_management"] is None:
        return None
    config = body["context_management"]
    if not isinstance(config, Mapping):
        return "context_management: Input should be a valid dictionary"
    extra = sorted(set(config) - {"edits"})
    if extra:
        return f"context_management.{extra[0]}: Extra inputs are not permitted"
    edits = config.get("edits", [])
    if not isinstance(edits, list):
        return "context_management.edits: Input should be a valid list"
    for i, edit in enumerate(edits):
        if not isinstance(edit, Mapping):
            return f"context_management.edits.{i}: Input should be a valid dictionary"
        kind = edit.get("type")
        fields = _EDIT_FIELDS.get(kind) if isinstance(kind, str) else None
        if fields is None:
            continue
        where = f"context_management.edits.{i}.{kind}"
        extra = sorted(set(edit) - fields)
        if extra:
            return f"{where}.{extra[0]}: Extra inputs are not permitted"
        if kind == "clear_thinking_20251015":
            thinking = body.get("thinking")
            if not isinstance(thinking, Mapping) or thinking.get("type") in (None, "disabled"):
                return CLEAR_THINKING_NEEDS_THINKING
            if i > 0:
                return (f"context_management.edits.{i}: the clear_thinking_20251015 edit must "
                        "be listed first in edits")
            keep = edit.get("keep", "all")
            if keep != "all" and keep != {"type": "all"}:
                problem = _count_problem(f"{where}.keep", keep, ("thinking_turns",))
                if problem:
                    return problem
            continue
        for name, kinds in _COUNTS.items():
            if edit.get(name) is not None or (name != "clear_at_least" and name in edit):
                problem = _count_problem(f"{where}.{name}", edit[name], kinds)
                if problem:
                    return problem
        if edit.get("exclude_tools") is not None:
            problem = _names_problem(f"{where}.exclude_tools", edit["exclude_tools"])
            if problem:
                return problem
        inputs = edit.get("clear_tool_inputs")
        if inputs is not None and not isinstance(inputs, bool):
            problem = _names_problem(f"{where}.clear_tool_inputs", inputs)
            if problem:
                return f"{problem} (or a boolean)"
    return None
