"""Lifecycle hooks: run code (Python callables or shell commands) at six points of an agent run.

Events (wire names as Claude Code spells them): ``"SessionStart"``, ``"UserPromptSubmit"``,
``"PreToolUse"``, ``"PostToolUse"``, ``"Stop"``, and ``"SubagentStop"`` (a subagent's Stop:
:mod:`mini_agent.harness.subagent_hooks`). :meth:`HookManager.fire` runs the handlers
registered for an event serially, in registration order (a later handler sees an earlier one's
``updatedInput``); the first ``block`` returns at once and later handlers do not run; the other
outputs merge, later wins. A handler returns the same JSON a Claude Code command hook prints::

    {"decision": "block", "reason": str,                    # block (PostToolUse/Stop: feedback)
     "continue": false, "stopReason": str,                  # stop the whole run
     "systemMessage": str,                                  # shown to the user, not the model
     "hookSpecificOutput": {"hookEventName": str,
         "permissionDecision": "allow" | "deny" | "ask",    # PreToolUse; "deny" and "ask" block
         "permissionDecisionReason": str,
         "updatedInput": dict,                              # PreToolUse: the input that runs
         "additionalContext": str,                          # reaches the model
         "updatedToolOutput": str | list[block]}}           # PostToolUse: replaces the output
                                                            # (alias: "updatedMCPToolOutput")

Command hooks (:class:`~mini_agent.harness.command_hooks.CommandHook`, registered with
:meth:`HookManager.add_command`) get the event's JSON on stdin and answer on stdout, with Claude
Code's exit codes; :meth:`HookManager.from_settings` loads Claude-Code ``settings.json``
(:mod:`mini_agent.harness.hook_settings`).

Hostile output: every field is checked against the contract above (a wrong or unknown
field is ignored and reported in ``errors``, never raised, never sent to the API); a command
hook's answer that is too large or too deeply nested to parse fails closed (the tool call or
prompt is blocked, a PostToolUse output withheld), and so does a PreToolUse ``updatedInput``
that is not an object (a list, a string: the call is blocked rather than run with the model's
input; ``null`` is no change).

What this module does not do: decide what a result means for the run (the Agent turns a blocked
PreToolUse into an ``is_error`` tool_result, a blocked prompt into a refusal; the loop turns a
blocked Stop into a ``"Stop hook feedback:"`` user message and one more request, with
``stop_hook_active`` in the next Stop's payload: :mod:`mini_agent.harness.stop_hook`). Taught in
``notebooks/06_hooks.ipynb``.

Source:
    section 5 of 002_4516104fd432e704.txt (HookManager, commandHook); Claude Code hooks
    reference (docs.anthropic.com/en/docs/claude-code/hooks).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
from pathlib import Path
from typing import Any, Awaitable, Callable, Union

from mini_agent.core.hook_output import (BLOCKING_EVENTS, EVENTS,  # noqa: F401
                                         MAX_HOOK_OUTPUT_CHARS, PERMISSION_DECISIONS, HookResult,
                                         cap_text, check_result, no_answer,
                                         parse_hook_output, tool_output_problem)
from mini_agent.harness.command_hooks import (DEFAULT_TIMEOUT_SECONDS, CommandHook,
                                             check_timeout_seconds)
from mini_agent.harness.hook_calls import (HandlerExited, HandlerStillRunning, HandlerTimeout,
                                           LateCalls, call_handler, timeout_result)
from mini_agent.harness.hook_settings import add_settings_hooks
from mini_agent.harness.threads import call_outside_event_loop

log = logging.getLogger(__name__)

CLAUDE_CODE_TOOL_NAMES = {"run_bash": "Bash", "read_file": "Read", "edit_file": "Edit",
                          "grep": "Grep", "glob": "Glob", "list_dir": "LS"}
"""Kit tool name -> Claude Code tool name: a matcher written for either one matches (``Bash``
matches ``run_bash``), so a hook written for Claude Code works here."""

HandlerOutput = Union[dict, "HookResult", None]
Handler = Callable[[dict], Union[HandlerOutput, Awaitable[HandlerOutput]]]


_MERGED_FIELDS = ("updated_input", "updated_output", "additional_context", "system_message",
                  "permission_decision")


def matches(matcher: str | None, event: str, payload: dict) -> bool:
    """Return True if a handler registered with ``matcher`` applies to this event's payload.

    ``None``, ``""`` and ``"*"`` match everything; otherwise ``matcher`` is a regex that must
    match the whole tool name (PreToolUse/PostToolUse; ``"Edit|Write"``, ``"mcp__.*"``), or
    its Claude Code alias, or the ``source`` of SessionStart, or the ``agent_type`` of
    SubagentStop. Other events ignore matchers.

    Args:
        matcher: the handler's matcher: None, ``""``, ``"*"`` or a regex.
        event: the event's wire name, e.g. ``"PreToolUse"``.
        payload: the event's payload (``tool_name``, ``source`` or ``agent_type`` is read).

    Returns:
        True when the handler should run for this payload.

    >>> matches("Bash", "PreToolUse", {"tool_name": "run_bash"})
    True
    """
    if matcher in (None, "", "*"):
        return True
    if event in ("PreToolUse", "PostToolUse"):
        name = str(payload.get("tool_name", ""))
        names = (name, CLAUDE_CODE_TOOL_NAMES.get(name, name))
    elif event == "SessionStart":
        names = (str(payload.get("source", "")),)
    elif event == "SubagentStop":
        names = (str(payload.get("agent_type", "")),)
    else:
        return True
    return any(re.fullmatch(matcher, n) for n in names)


def _as_result(output: Any, event: str, name: str = "a handler") -> HookResult:
    """Read a handler's return value. One that is neither a dict, a HookResult nor None
    (``return "block"``, ``return False``) cannot be read: it blocks in a
    :data:`BLOCKING_EVENTS` event (fail closed), elsewhere it is a reported error."""
    if isinstance(output, HookResult):
        return check_result(output, event)
    if output is None or isinstance(output, dict):
        return parse_hook_output(output, event=event)
    why = (f"{event} hook {name} returned {type(output).__name__} {output!r:.60}, not a dict, "
           "a HookResult or None")
    return no_answer(event, why)


def _next_payload(event: str, payload: dict, result: HookResult) -> dict:
    """The payload the next handler sees: earlier updates applied (never mutates ``payload``)."""
    if event == "PreToolUse" and result.updated_input is not None:
        return {**payload, "tool_input": result.updated_input}
    if event == "PostToolUse" and result.updated_output is not None:
        return {**payload, "tool_response": result.updated_output}
    return payload


class HookManager:
    """Handlers per event, fired serially; see the module docstring for the output contract.

    Attributes:
        warnings: settings entries skipped by :meth:`from_settings` (unknown events, hook
            types).

    >>> import asyncio; m = HookManager()
    >>> _ = m.on("PreToolUse", lambda p: {"decision": "block", "reason": "no"}, matcher="Bash")
    >>> asyncio.run(m.fire("PreToolUse", {"tool_name": "Bash", "tool_input": {}})).reason
    'no'
    """

    def __init__(self) -> None:
        self._handlers: dict[str, list[tuple[str | None, Handler]]] = {e: [] for e in EVENTS}
        # each handler's time limit in seconds, parallel to _handlers (None: its own limit)
        self._limits: dict[str, list[float | None]] = {e: [] for e in EVENTS}
        # each handler's calls still running past their limit, parallel to _handlers
        self._late: dict[str, list[LateCalls]] = {e: [] for e in EVENTS}
        self.warnings: list[str] = []
        """Settings entries skipped by :meth:`from_settings` (unknown events, hook types)."""

    def on(self, event: str, handler: Handler, *, matcher: str | None = None,
           timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS) -> Handler:
        """Register a handler for an event.

        A handler runs in its own daemon thread (an async one on that thread's own event
        loop) and gets ``timeout_seconds`` to answer (:mod:`mini_agent.harness.hook_calls`:
        past it, a PreToolUse or UserPromptSubmit handler blocks, fail closed; elsewhere it is
        a reported error; a coroutine is cancelled, a sync handler's thread is left running,
        and until that call returns the handler is not called again). A
        :class:`CommandHook` keeps its own ``timeout_seconds``.

        Args:
            event: one of the six wire names in ``EVENTS``, e.g. ``"PreToolUse"``.
            handler: ``handler(payload) -> dict | HookResult | None``, sync or async.
            matcher: which payloads it applies to (see :func:`matches`); None matches all.
            timeout_seconds: the handler's time limit in seconds (default
                ``DEFAULT_TIMEOUT_SECONDS`` = 60, a command hook's default); above 0 and up
                to one day.

        Returns:
            The handler itself (usable as a decorator via ``functools.partial``).

        Raises:
            ValueError: an unknown event, an invalid matcher regex, or a timeout that is not
                a number of seconds in (0, 86400].
        """
        if event not in self._handlers:
            raise ValueError(f"unknown hook event {event!r}; expected one of {EVENTS}")
        check_timeout_seconds(timeout_seconds)
        if matcher not in (None, "", "*"):
            try:
                re.compile(matcher)  # fail now, not at fire time
            except re.error as exc:
                raise ValueError(f"invalid matcher regex {matcher!r}: {exc}") from exc
        self._handlers[event].append((matcher, handler))
        self._limits[event].append(None if isinstance(handler, CommandHook)
                                   else float(timeout_seconds))
        self._late[event].append(LateCalls())
        return handler

    def handlers(self, event: str) -> list[tuple[str | None, Handler]]:
        """List the handlers registered for an event.

        Args:
            event: the event's wire name.

        Returns:
            A new list of ``(matcher, handler)`` pairs in registration order.

        Raises:
            KeyError: an unknown event.
        """
        return list(self._handlers[event])

    async def fire(self, event: str, payload: dict) -> HookResult:
        """Run the matching handlers for ``event`` one after another and merge their outputs.

        The payload gets ``"hook_event_name": event`` if absent (it is not mutated). A handler
        that raises is a non-blocking error (in ``errors``), like a command hook's exit 1; one
        that returns something other than a dict, a HookResult or None blocks in a
        PreToolUse or UserPromptSubmit event (fail closed) and is a reported error elsewhere.
        So does one that does not answer within its ``timeout_seconds`` (see :meth:`on`;
        a sync handler's thread is left running as a daemon, the event goes on without it),
        one whose earlier call ran past its limit and still runs (it is not called again
        until that call returns), and one that raises ``SystemExit`` or
        ``KeyboardInterrupt`` (``sys.exit(2)``).

        Args:
            event: the event's wire name.
            payload: the event's JSON payload; never mutated.

        Returns:
            The first blocking result at once (with the errors so far); otherwise the merge of
            all outputs (each field: the last non-None value).

        Raises:
            ValueError: an unknown event.
        """
        if event not in self._handlers:
            raise ValueError(f"unknown hook event {event!r}; expected one of {EVENTS}")
        payload = {"hook_event_name": event, **payload}
        merged = HookResult()
        for (matcher, handler), limit, late in zip(self._handlers[event], self._limits[event],
                                                   self._late[event]):
            if not matches(matcher, event, payload):
                continue
            name = getattr(handler, "__name__", repr(handler))
            try:
                output = await call_handler(handler, payload, event, limit, late)
                result = _as_result(output, event, name)
            except (HandlerTimeout, HandlerExited, HandlerStillRunning) as timeout:  # no answer
                result = timeout_result(event, name, timeout)
                log.info(result.errors[-1])
            except Exception as exc:  # noqa: BLE001 - a broken hook must not break the run
                merged.errors.append(f"{event} hook {name} raised {type(exc).__name__}: {exc}")
                log.info(merged.errors[-1])
                continue
            merged.errors.extend(result.errors)
            if result.blocked:
                return dataclasses.replace(result, errors=merged.errors)
            for field in _MERGED_FIELDS:
                value = getattr(result, field)
                if value is not None:
                    setattr(merged, field, value)
            payload = _next_payload(event, payload, result)
        return merged

    def fire_sync(self, event: str, payload: dict) -> HookResult:
        """Run :meth:`fire` for a synchronous caller; works inside a running loop (Jupyter) too.

        Args:
            event: the event's wire name.
            payload: the event's JSON payload; never mutated.

        Returns:
            The merged :class:`HookResult`, as :meth:`fire` returns it.

        Raises:
            ValueError: an unknown event.
        """
        return call_outside_event_loop(lambda: asyncio.run(self.fire(event, payload)))

    def add_command(self, event: str, command: str, *, matcher: str | None = None,
                    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
                    cwd: str | Path | None = None) -> CommandHook:
        """Register a shell command as a hook (see :class:`CommandHook`).

        Args:
            event: the event's wire name.
            command: the shell command; it reads the payload JSON on stdin.
            matcher: which payloads it applies to (see :func:`matches`); None matches all.
            timeout_seconds: the command's time limit in seconds (default
                ``DEFAULT_TIMEOUT_SECONDS`` = 60).
            cwd: the command's working directory (None: the payload's ``cwd``, else the
                current directory).

        Returns:
            The registered :class:`CommandHook`.

        Raises:
            ValueError: an unknown event or an invalid matcher regex.
        """
        hook = CommandHook(command, timeout_seconds=timeout_seconds, cwd=cwd)
        self.on(event, hook, matcher=matcher)
        return hook

    @classmethod
    def from_settings(cls, settings: str | Path | dict, *,
                      cwd: str | Path | None = None) -> "HookManager":
        """Build a manager from a Claude-Code-style settings file (path) or its parsed dict.

        See :func:`~mini_agent.harness.hook_settings.add_settings_hooks` for the shape and the
        skipped entries (in ``manager.warnings``).

        Args:
            settings: a settings file path, or its parsed dict.
            cwd: the working directory of the command hooks (None: the payload's ``cwd``,
                else the current directory).

        Returns:
            A new manager with the settings' command hooks registered.

        Raises:
            HookSettingsError: a malformed entry (named by its path in the file).
            FileNotFoundError: the settings file does not exist.
        """
        return add_settings_hooks(cls(), settings, cwd=cwd)


@dataclasses.dataclass(frozen=True)
class HookFields:
    """Wrap a HookManager so every payload also carries common fields.

    The common fields are ``session_id`` and ``cwd``, as Claude Code sends them. Stateless:
    what the hooks answer comes back in results. Example: ``HookFields(manager, {"cwd":
    "/w"}).fire("Stop", {})`` fires ``{"cwd": "/w"}`` (plus the ``hook_event_name`` the
    manager adds).

    Attributes:
        hooks: the wrapped :class:`HookManager` (anything with an async ``fire``).
        fields: the common fields, a dict; a payload's own keys win over them.
    """

    hooks: Any
    fields: Any

    async def fire(self, event: str, payload: dict) -> HookResult:
        """Fire ``event`` on the wrapped manager with the common fields added.

        Args:
            event: the event's wire name.
            payload: the event's own payload; its keys win over ``fields``.

        Returns:
            What ``hooks.fire(event, {**fields, **payload})`` returns.
        """
        return await self.hooks.fire(event, {**self.fields, **payload})
