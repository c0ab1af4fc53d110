"""Hook output: Claude Code's hook output contract, checked field by field.

A hook answers with JSON (module docstring of :mod:`mini_agent.harness.hooks`);
:func:`parse_hook_output` turns it into a :class:`HookResult`, and :func:`check_result` checks a
result a Python handler returns directly. A field of the wrong type, with a value outside the
contract, sent for an event that does not take it, or unknown, is ignored and named in
``HookResult.errors``: hostile or buggy output never raises, never crashes the run and never
reaches the API. A block is never read as an allow: a ``decision`` or ``permissionDecision``
spelled in another case or with its synonym (``"Block"``, ``"DENY"``, ``"decision": "deny"``)
means what it says, and one the kit cannot read at all (``"nope"``, ``true``) blocks in a
:data:`BLOCKING_EVENTS` event (fail closed), where a mistaken allow would run a tool or send a
prompt the hook meant to stop (the field-by-field reading is
:mod:`mini_agent.core.hook_contract`'s). Text that reaches the model or the user is capped
(:data:`MAX_HOOK_OUTPUT_CHARS`).

Pure: no IO, inputs never mutated. Taught in ``notebooks/06_hooks.ipynb``.

Source:
    Claude Code hooks reference (docs.anthropic.com/en/docs/claude-code/hooks: "Advanced: JSON
    output", common fields, hookSpecificOutput per event); tool_result content blocks
    (Messages API).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from typing import Any

from mini_agent.core.hook_contract import (  # noqa: F401 - re-exported
    BLOCKING_EVENTS, EVENTS, PERMISSION_DECISIONS, PERMISSION_WORDS, contract_fields)
from mini_agent.core.wire_rules import base64_image_problem

MAX_HOOK_OUTPUT_CHARS = 10_000
"""Cap on a command hook's text that reaches the model (plain-stdout context, exit-2 reason),
in characters; Claude Code cuts hook output at about the same size. Longer text is cut and a
non-blocking error says so."""

_IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


_OUTPUT_KEYS = (("updated_input", "updatedInput"), ("updated_output", "updatedToolOutput"),
                ("additional_context", "additionalContext"), ("system_message", "systemMessage"),
                ("permission_decision", "permissionDecision"))


@dataclasses.dataclass(eq=False)
class HookResult(Mapping):
    """The merged outcome of one :meth:`HookManager.fire`.

    Read as a mapping, it is the seed's flat output (:meth:`as_output`), the dict exercise 06
    returns: ``result == {"decision": "block", "reason": "no"}``, ``result["systemMessage"]``.
    Two HookResults are equal when every attribute is, ``errors`` included.

    Attributes:
        blocked: a handler said ``block``/``deny``, exited 2, or asked to stop.
        reason: why (for the model: a blocked tool call's error result, a refused prompt).
        updated_input: PreToolUse input that replaces the model's.
        updated_output: PostToolUse tool output (str or blocks) that replaces the tool's.
        additional_context: text that reaches the model.
        system_message: text shown to the user only.
        permission_decision: "allow" | "deny" | "ask" | None.
        stop: ``"continue": false`` (end the run, show ``stop_reason``).
        stop_reason: the text shown when ``stop`` ends the run.
        errors: non-blocking failures (exit 1, timeouts, bad JSON) to report.
    """

    blocked: bool = False
    reason: str = ""
    updated_input: dict | None = None
    updated_output: Any = None
    additional_context: str | None = None
    system_message: str | None = None
    permission_decision: str | None = None
    stop: bool = False
    stop_reason: str = ""
    errors: list[str] = dataclasses.field(default_factory=list)

    def as_output(self) -> dict[str, Any]:
        """Return the seed's flat output dict.

        Returns:
            ``{"decision": "block", "reason"}`` for a block, ``{"continue": False, "stopReason"}``
            for a stop, and each set field under its wire name (``updatedInput``,
            ``updatedToolOutput``, ``additionalContext``, ``systemMessage``,
            ``permissionDecision``); ``errors`` are not part of it.
        """
        out: dict[str, Any] = {}
        if self.stop:
            out.update({"continue": False, "stopReason": self.stop_reason})
        if self.blocked:
            out.update({"decision": "block", "reason": self.reason})
        for name, key in _OUTPUT_KEYS:
            if getattr(self, name) is not None:
                out[key] = getattr(self, name)
        return out

    def __getitem__(self, key: str) -> Any:
        return self.as_output()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.as_output())

    def __len__(self) -> int:
        return len(self.as_output())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HookResult):
            return all(getattr(self, f.name) == getattr(other, f.name)
                       for f in dataclasses.fields(self))
        if isinstance(other, Mapping):
            return self.as_output() == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a dict


@dataclasses.dataclass(frozen=True)
class HookNotice:
    """What a hook said to the user, never to the model: a loop event.

    Attributes:
        event: the hook event (``"PreToolUse"``...).
        system_message: the hook's ``systemMessage``, or None.
        errors: non-blocking errors (exit codes other than 0 and 2, timeouts, unreadable
            output).
    """

    event: str
    system_message: str | None
    errors: tuple[str, ...] = ()


def hook_notices(event: str, result: Any) -> list[HookNotice]:
    """Turn a fired event's ``result`` into what the user is shown.

    Args:
        event: the hook event name (``"Stop"``, ``"PreToolUse"``...).
        result: the event's :class:`HookResult` (anything with ``system_message`` and
            ``errors``).

    Returns:
        One :class:`HookNotice`, or ``[]`` when the result says nothing to the user:
        ``hook_notices("Stop", HookResult(system_message="bye")) == [HookNotice("Stop",
        "bye")]``.
    """
    message = getattr(result, "system_message", None)
    errors = tuple(str(e) for e in getattr(result, "errors", None) or ())
    return [HookNotice(event, message, errors)] if message or errors else []


def no_answer(event: str, what: str, *, said: str | None = None,
              ignored: str = "; ignored") -> HookResult:
    """The outcome of a hook that gave no answer the kit can read (hung, exited, garbage).

    Args:
        event: the event's wire name.
        what: what went wrong, e.g. ``"`sleep 5` timed out after 0.3 s and was killed"``.
        said: the block's reason before ``"; blocked to be safe (fail closed)"`` when it
            should differ from ``what`` (default ``what``).
        ignored: appended to ``what`` for the error outside the blocking events.

    Returns:
        In a :data:`BLOCKING_EVENTS` event a block (fail closed: a guard that gave no answer
        is not an allow) with the error ``"<what>; blocked"``; elsewhere a result whose only
        field is the error ``"<what><ignored>"``.
    """
    if event in BLOCKING_EVENTS:
        return HookResult(blocked=True, reason=f"{said or what}; blocked to be safe (fail closed)",
                          errors=[f"{what}; blocked"])
    return HookResult(errors=[f"{what}{ignored}"])


def parse_hook_output(data: Any, *, event: str = "") -> HookResult:
    """Convert a handler's Claude-Code-shaped JSON output (a dict) into a :class:`HookResult`.

    Accepts the documented shape (module docstring) and the seed's flat shape
    (``{"decision": "block", "updatedInput": ..., "additionalContext": ...}`` at top level).
    Every field is checked against Claude Code's hook output contract (its type, its allowed
    values, the events that may send it; with ``event`` given): a wrong or unknown field is
    ignored and named in ``errors``, never raised. A block reason that is not a string becomes
    one (a block must block). ``decision`` and ``permissionDecision`` are read in any case
    and with their synonyms (``"Block"``, ``"deny"`` -> block; ``"Allow"``, ``"approve"`` ->
    allow; the spelling is named in ``errors``); a value the kit cannot read (``"nope"``,
    ``true``) blocks in a :data:`BLOCKING_EVENTS` event (fail closed) and is ignored elsewhere.
    A PreToolUse ``updatedInput`` that is not an object (a list, a string, a number) blocks
    too (fail closed: running the model's input would ignore the hook's change; the error
    names it); elsewhere it is ignored. ``null`` is no opinion (for ``updatedInput``: no
    change).

    Args:
        data: the parsed JSON; ``None`` or ``{}`` is "no opinion".
        event: the event that fired ("" skips the per-event checks).

    Returns:
        The checked :class:`HookResult`.

    Raises:
        TypeError: ``data`` is neither a dict nor None.

    >>> parse_hook_output({"decision": "block", "reason": "no"}).blocked
    True
    """
    if data is None:
        return HookResult()
    if not isinstance(data, dict):
        raise TypeError(f"hook output must be a JSON object, got {type(data).__name__}")
    errors: list[str] = []
    doubts: list[str] = []
    top, specific = contract_fields(data, event, errors, doubts)

    def pick(key: str) -> Any:
        return specific.get(key, top.get(key))

    result = HookResult(
        errors=errors,
        updated_input=pick("updatedInput"),
        updated_output=pick("updatedToolOutput") if pick("updatedToolOutput") is not None
        else pick("updatedMCPToolOutput"),
        additional_context=pick("additionalContext"),
        system_message=top.get("systemMessage"),
        permission_decision=pick("permissionDecision"),
    )
    default_reason = f"blocked by a {event or 'hook'} hook"
    if top.get("continue") is False:
        result.stop = result.blocked = True
        result.stop_reason = str(top.get("stopReason") or "stopped by a hook")
        result.reason = result.stop_reason
    elif top.get("decision") == "block":
        result.blocked = True
        result.reason = str(top.get("reason") or default_reason)
    elif result.permission_decision in ("deny", "ask"):
        result.blocked = result.permission_decision == "deny"
        result.reason = str(pick("permissionDecisionReason") or top.get("reason")
                            or (default_reason if result.blocked else ""))
    elif doubts:
        result.blocked = True
        result.reason = f"the {event} hook answered {doubts[0]}; blocked to be safe (fail closed)"
    return check_result(result, event)


def tool_output_problem(value: Any) -> str | None:
    """Say why ``value`` cannot replace a tool's output (``updatedToolOutput``).

    Valid: a string, or a non-empty list of ``{"type": "text", "text": non-blank str}`` and
    ``{"type": "image", "source": {"type": "base64", "media_type": "image/png"|...,
    "data": str} | {"type": "url", "url": str}}`` blocks: what a tool_result may hold. A
    base64 image must decode and match its media type
    (:func:`~mini_agent.core.wire_rules.base64_image_problem`): the API refuses it otherwise,
    and the history would keep the refused image for every later request.

    Args:
        value: the proposed replacement output.

    Returns:
        The problem in one line, or None when ``value`` is valid.

    >>> tool_output_problem([{"type": "bogus"}])
    "block 0 has type 'bogus' (only text and image blocks)"
    """
    if isinstance(value, str):
        return None
    if not isinstance(value, list):
        return f"it is {type(value).__name__}, not a string or a list of blocks"
    if not value:
        return "the list of blocks is empty"
    for i, block in enumerate(value):
        if not isinstance(block, dict):
            return f"block {i} is {type(block).__name__}, not an object"
        kind = block.get("type")
        if kind == "text":
            if set(block) != {"type", "text"}:
                return f"text block {i} has keys {sorted(block)} (only type and text)"
            if not isinstance(block["text"], str) or not block["text"].strip():
                return f"text block {i} is empty or not a string"
        elif kind == "image":
            source = block.get("source")
            if set(block) != {"type", "source"} or not isinstance(source, dict):
                return f"image block {i} needs exactly type and a source object"
            if source.get("type") == "base64":
                ok = (set(source) == {"type", "media_type", "data"}
                      and source["media_type"] in _IMAGE_MEDIA_TYPES
                      and isinstance(source["data"], str) and source["data"] != "")
                problem = base64_image_problem(source) if ok else None
                if problem:   # the API would refuse this request and every later one
                    return f"image block {i}: {problem}"
            else:
                ok = (source.get("type") == "url" and set(source) == {"type", "url"}
                      and isinstance(source["url"], str) and source["url"] != "")
            if not ok:
                return f"image block {i} has an invalid source"
        else:
            return f"block {i} has type {kind!r} (only text and image blocks)"
    return None


_TRUNCATED = re.compile(r"\n\[\.\.\. truncated: [\d,]+ more characters\]")


def cap_text(text: str, limit_chars: int = MAX_HOOK_OUTPUT_CHARS) -> str:
    """Cut ``text`` to ``limit_chars`` characters plus a ``[... truncated: N more characters]``.

    A text this function already cut is returned as it is (idempotent).

    Args:
        text: hook text on its way to the model or the user.
        limit_chars: characters kept (default :data:`MAX_HOOK_OUTPUT_CHARS`).

    Returns:
        ``text`` itself when short enough or already cut, else the cut text.

    >>> cap_text("abcdef", 2)
    'ab\\n[... truncated: 4 more characters]'
    """
    if len(text) <= limit_chars or _TRUNCATED.fullmatch(text, limit_chars):
        return text
    return text[:limit_chars] + f"\n[... truncated: {len(text) - limit_chars:,} more characters]"


def check_result(result: HookResult, event: str = "") -> HookResult:
    """Return ``result`` with every value the contract does not allow removed and reported.

    Checks what a Python handler may return directly as a HookResult as well as parsed
    JSON: ``updated_output`` (see :func:`tool_output_problem`), ``updated_input`` (a dict;
    anything else blocks in PreToolUse, fail closed: the hook meant to change the input),
    ``additional_context``/``system_message`` (strings), ``permission_decision`` (allow,
    deny, ask); text that reaches the model or the user (reason, additional context, system
    message) is cut to :data:`MAX_HOOK_OUTPUT_CHARS`. Idempotent. A ``permission_decision``
    of ``"deny"`` (any case, or ``"block"``) blocks even when ``blocked`` was left False; one
    the kit cannot read blocks in a :data:`BLOCKING_EVENTS` event (fail closed). ``"ask"``
    blocks too: Claude Code would ask the user, and the kit has no one to ask.

    Args:
        result: the handler's result; never mutated.
        event: the event that fired ("" skips the per-event checks).

    Returns:
        A HookResult whose ``errors`` name each value removed.
    """
    changes: dict[str, Any] = {}
    errors = list(result.errors)
    problem = (tool_output_problem(result.updated_output)
               if result.updated_output is not None else None)
    if problem:
        errors.append(f"hook output updatedToolOutput ignored: {problem}")
        changes["updated_output"] = None
    decision = result.permission_decision
    if decision is not None and decision not in PERMISSION_DECISIONS:
        word = PERMISSION_WORDS.get(decision.strip().lower()) \
            if isinstance(decision, str) else None
        if word is not None:
            errors.append(f"hook result permission_decision {decision!r:.60} read as {word!r}")
            changes["permission_decision"] = decision = word
        elif event in BLOCKING_EVENTS and not result.blocked:
            errors.append(f"hook result permission_decision {decision!r:.60} is not one of "
                          f"{', '.join(PERMISSION_DECISIONS)}; blocked to be safe (fail closed)")
            changes.update(permission_decision=None, blocked=True,
                           reason=f"the {event} hook answered a permission decision the kit "
                                  f"cannot read ({decision!r:.60}); blocked to be safe")
    if decision == "deny" and not result.blocked:
        changes.update(blocked=True, reason=result.reason or f"blocked by a {event or 'hook'} hook")
    elif decision == "ask" and not result.blocked:
        # Claude Code asks the user; the kit has no one to ask, and running the call anyway
        # would turn the hook's "not without a person's OK" into an allow
        changes.update(blocked=True, reason=(
            f"{result.reason or 'the hook asks for a confirmation'}; mini-agent runs without "
            "a person to confirm, so the call is refused (permissionDecision 'ask')"))
    for name, kind in (("updated_input", dict), ("additional_context", str),
                       ("system_message", str), ("permission_decision", str)):
        value = changes.get(name, getattr(result, name))
        if value is not None and (not isinstance(value, kind) or (
                name == "permission_decision" and value not in PERMISSION_DECISIONS)):
            changes[name] = None
            if name == "updated_input" and event == "PreToolUse":
                # the hook meant to change the input: running the model's input is no answer
                errors.append(f"hook result updated_input {value!r:.60} is not an object; "
                              "blocked")
                if not changes.get("blocked", result.blocked):
                    changes.update(blocked=True, reason=(
                        f"the PreToolUse hook answered an updated_input the kit cannot use "
                        f"({type(value).__name__}, not an object); blocked to be safe "
                        "(fail closed)"))
                continue
            errors.append(f"hook result {name} {value!r:.60} is not allowed; ignored")
    for name in ("reason", "additional_context", "system_message", "stop_reason"):
        text = changes.get(name, getattr(result, name))
        if isinstance(text, str) and cap_text(text) != text:
            changes[name] = cap_text(text)
            errors.append(f"hook output {name} of {len(text):,} characters cut to "
                          f"{MAX_HOOK_OUTPUT_CHARS:,}")
    if not isinstance(result.reason, str):
        changes["reason"] = str(result.reason)
    if not changes:
        return result
    return dataclasses.replace(result, errors=errors, **changes)
