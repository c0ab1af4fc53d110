"""Hook output fields: which fields Claude Code's hook output contract has, and reading them.

:func:`contract_fields` splits a hook's JSON answer into the top-level and
``hookSpecificOutput`` fields that obey the contract (their type, their allowed values, the
events that may send them) and names every other field in an error list. Decisions are read
so that a block is never read as an allow: ``decision``/``permissionDecision`` in another case
or by a synonym (``"Block"``, ``"DENY"``, ``"decision": "deny"``) mean what they say, a
decision put one level too deep (``hookSpecificOutput.decision``) still counts, and one the
kit cannot read (``"nope"``, ``true``) is a doubt that blocks in a :data:`BLOCKING_EVENTS`
event, and so is a PreToolUse ``updatedInput`` that is not an object (a list, a string; ``null``
is no change). :mod:`mini_agent.core.hook_output` builds the result from these fields.

Pure: no IO, inputs never mutated. Taught in ``notebooks/06_hooks.ipynb``.

Source:
    Claude Code hooks reference (docs.anthropic.com/en/docs/claude-code/hooks: "Advanced: JSON
    output", common fields, hookSpecificOutput per event).
"""

from __future__ import annotations

from typing import Any

EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
          "SubagentStop")
"""The events the kit fires, spelled as Claude Code spells them (``SubagentStop``: when a
subagent of :mod:`mini_agent.harness.subagents` would finish)."""

PERMISSION_DECISIONS = ("allow", "deny", "ask")
"""Values of ``hookSpecificOutput.permissionDecision`` (PreToolUse) in Claude Code's contract."""

BLOCKING_EVENTS = frozenset({"PreToolUse", "UserPromptSubmit"})
"""Events whose block stops something before it happens (a tool call, a prompt). There a
``decision``/``permissionDecision`` the kit cannot read counts as a block (fail closed)."""

# Claude Code's hook output contract: top-level fields, and hookSpecificOutput fields with the
# events that may send them. Anything else is reported and ignored.
_TOP_LEVEL_FIELDS = {"continue": bool, "stopReason": str, "suppressOutput": bool,
                     "systemMessage": str, "decision": str, "reason": str,
                     "hookSpecificOutput": dict}
_SPECIFIC_FIELDS = {
    "hookEventName": (str, frozenset(EVENTS)),
    "permissionDecision": (str, frozenset({"PreToolUse"})),
    "permissionDecisionReason": (str, frozenset({"PreToolUse"})),
    "updatedInput": (dict, frozenset({"PreToolUse"})),
    "additionalContext": (str, frozenset({"PreToolUse", "PostToolUse", "UserPromptSubmit",
                                          "SessionStart"})),
    "updatedToolOutput": (object, frozenset({"PostToolUse"})),
    "updatedMCPToolOutput": (object, frozenset({"PostToolUse"})),
}
_DECISIONS = ("block", "approve")
# Case-insensitive spellings and synonyms -> the contract's word, per field.
_DECISION_WORDS = {"block": "block", "deny": "block", "approve": "approve", "allow": "approve"}
PERMISSION_WORDS = {"allow": "allow", "approve": "allow", "deny": "deny", "block": "deny",
                    "ask": "ask"}
"""A ``permissionDecision`` in lower case, stripped -> the contract's word: case and the
synonyms of ``decision`` (``approve``, ``block``) never turn a deny into an allow."""


def _kind_name(kind: type) -> str:
    return {str: "a string", dict: "an object", bool: "a boolean"}.get(kind, kind.__name__)


def _unreadable_decision(key: str, value: Any, event: str, errors: list[str],
                         doubts: list[str]) -> None:
    """Note a decision the kit cannot read: in a :data:`BLOCKING_EVENTS` event it goes to
    ``doubts`` (the answer will block, fail closed), elsewhere it is ignored."""
    words = _DECISIONS if key == "decision" else PERMISSION_DECISIONS
    what = f"hook output {key} must be one of {', '.join(words)}, got {value!r:.60}"
    if event in BLOCKING_EVENTS:
        errors.append(f"{what}; blocked to be safe (fail closed)")
        doubts.append(f"a decision the kit cannot read ({what})")
    else:
        errors.append(f"{what}; ignored")


def _unusable_input(value: Any, event: str, errors: list[str], doubts: list[str]) -> None:
    """Note an ``updatedInput`` that is not an object (a list, a string, a number): in
    PreToolUse it goes to ``doubts`` (the answer will block, fail closed: running the
    model's input would ignore what the hook meant to change), elsewhere it is ignored."""
    what = f"hook output updatedInput must be an object, got {type(value).__name__}"
    if event == "PreToolUse":
        errors.append(f"{what}; blocked to be safe (fail closed)")
        doubts.append(f"an updatedInput the kit cannot use ({what})")
    else:
        errors.append(f"{what}; ignored")


def contract_fields(data: dict, event: str, errors: list[str],
                    doubts: list[str]) -> tuple[dict, dict]:
    """Split a hook's answer into the top-level and hookSpecificOutput fields that obey the contract.

    Flat-shape specific fields (``{"updatedInput": ...}`` at top level, the seed's shape)
    count as specific ones; ``decision``/``reason`` put inside ``hookSpecificOutput`` are read
    at the top level, with an error saying so.

    Args:
        data: the parsed JSON answer; never mutated.
        event: the event that fired ("" skips the per-event checks).
        errors: a list every field outside the contract is named in (appended to).
        doubts: a list a decision the kit cannot read, or a PreToolUse ``updatedInput``
            that is not an object, is noted in, in a :data:`BLOCKING_EVENTS` event (appended
            to, as ``"a decision the kit cannot read (...)"``): the caller blocks (fail closed).

    Returns:
        ``(top, specific)``: the fields kept, by wire name; ``decision`` normalised to
        ``"block"``/``"approve"`` and ``permissionDecision`` to allow/deny/ask.
    """
    top: dict[str, Any] = {}
    specific: dict[str, Any] = {}

    def check_specific(key: str, value: Any, into: dict[str, Any]) -> None:
        kind, events = _SPECIFIC_FIELDS[key]
        if key == "permissionDecision" and not isinstance(value, str) and value is not None \
                and (not event or event in events):
            _unreadable_decision(key, value, event, errors, doubts)
        elif key == "updatedInput" and value is None:
            pass   # null is no change, as the seed reads it (``.get("updatedInput") is not None``)
        elif key == "updatedInput" and not isinstance(value, dict):
            _unusable_input(value, event, errors, doubts)
        elif kind is not object and not isinstance(value, kind):
            errors.append(f"hook output {key} must be {_kind_name(kind)}, got "
                          f"{type(value).__name__}; ignored")
        elif event and event not in events:
            errors.append(f"hook output {key} is not part of the {event} output "
                          f"(only {', '.join(sorted(events))}); ignored")
        elif key == "permissionDecision" and value not in PERMISSION_DECISIONS:
            word = PERMISSION_WORDS.get(value.strip().lower())
            if word is not None:
                errors.append(f"hook output permissionDecision {value!r:.60} read as {word!r} "
                              f"(the contract spells it {', '.join(PERMISSION_DECISIONS)})")
                into[key] = word
            else:
                _unreadable_decision(key, value, event, errors, doubts)
        elif key == "hookEventName":
            if event and value != event:
                errors.append(f"hook output hookEventName {value!r} does not match the event "
                              f"{event!r}; ignored")
        else:
            into[key] = value

    def check_decision(value: Any) -> None:
        word = _DECISION_WORDS.get(value.strip().lower()) if isinstance(value, str) else None
        if word is not None:
            if value != word:
                errors.append(f"hook output decision {value!r:.60} read as {word!r} (the "
                              f"contract spells it {', '.join(_DECISIONS)})")
            top["decision"] = word
        else:
            _unreadable_decision("decision", value, event, errors, doubts)

    for key, value in data.items():
        if key in ("reason", "stopReason"):
            top[key] = value  # block reasons: any value becomes a string later
        elif key == "decision" and value is not None and value not in _DECISIONS:
            check_decision(value)
        elif key in _TOP_LEVEL_FIELDS:
            kind = _TOP_LEVEL_FIELDS[key]
            if not isinstance(value, kind):
                errors.append(f"hook output {key} must be {_kind_name(kind)}, got "
                              f"{type(value).__name__}; ignored")
            elif key != "hookSpecificOutput":
                top[key] = value
        elif key in _SPECIFIC_FIELDS:
            check_specific(key, value, top)
        else:
            errors.append(f"hook output field {key!r} is not in Claude Code's hook output "
                          "contract; ignored")
    nested = data.get("hookSpecificOutput")
    if isinstance(nested, dict):
        for key, value in nested.items():
            if key in _SPECIFIC_FIELDS:
                check_specific(key, value, specific)
            elif key == "decision" and isinstance(value, dict):
                # PermissionRequest's {"behavior": ...}: an event the kit never fires
                errors.append("hook output hookSpecificOutput.decision is an object (the "
                              "PermissionRequest shape, an event the kit does not fire); "
                              "ignored")
            elif key in ("decision", "reason") and key not in data and value is not None:
                # a block put one level too deep still blocks
                errors.append(f"hook output hookSpecificOutput.{key} belongs at the top "
                              "level; read there")
                if key == "decision":
                    check_decision(value)
                else:
                    top["reason"] = value
            else:
                errors.append(f"hook output hookSpecificOutput.{key!r} is not in Claude "
                              "Code's hook output contract; ignored")
    return top, specific


