"""Lifecycle hooks: run code (Python callables or shell commands) at five points of an agent run.

Events (wire names as Claude Code spells them): ``"SessionStart"``, ``"UserPromptSubmit"``,
``"PreToolUse"``, ``"PostToolUse"``, ``"Stop"``. :meth:`HookManager.fire` runs the handlers
registered for an event serially, in registration order (a later handler sees an earlier one's
``updatedInput``); the first ``block`` returns at once and later handlers do not run; the other
outputs merge, later wins. A handler returns the same JSON a Claude Code command hook prints::

    {"decision": "block", "reason": str,                    # block (PostToolUse/Stop: feedback)
     "continue": false, "stopReason": str,                  # stop the whole run
     "systemMessage": str,                                  # shown to the user, not the model
     "hookSpecificOutput": {"hookEventName": str,
         "permissionDecision": "allow" | "deny" | "ask",    # PreToolUse; "deny" blocks
         "permissionDecisionReason": str,
         "updatedInput": dict,                              # PreToolUse: the input that runs
         "additionalContext": str,                          # reaches the model
         "updatedToolOutput": str | list[block]}}           # PostToolUse: replaces the output
                                                            # (alias: "updatedMCPToolOutput")

Command hooks (:class:`CommandHook`) get the event's JSON on stdin and answer on stdout. Exit
codes as Claude Code: 0 = success (stdout JSON applied; other stdout is ignored with a warning,
except for UserPromptSubmit/SessionStart where plain stdout becomes ``additionalContext``);
2 = block with stderr as the reason; anything else = a non-blocking error, reported in
``HookResult.errors``. :meth:`HookManager.from_settings` loads Claude-Code ``settings.json``.

Hostile output: every field is checked against the contract above (a wrong or unknown
field is ignored and reported in ``errors``, never raised, never sent to the API); stdout
is parsed whole, never cut first, and an answer too large or too deeply nested to parse
fails closed (the tool call or prompt is blocked, a PostToolUse output withheld).

What this module does not do: decide what a result means for the run (the Agent turns a blocked
PreToolUse into an ``is_error`` tool_result, a blocked prompt into a refusal). Taught in
``notebooks/06_hooks.ipynb``. Source: section 5 of 002_4516104fd432e704.txt (HookManager,
commandHook); Claude Code hooks reference (docs.anthropic.com/en/docs/claude-code/hooks).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import logging
import os
import re
import signal
import tempfile
from pathlib import Path
from typing import Any, Awaitable, Callable, Union

from mini_agent.harness.executor import call_outside_event_loop
from mini_agent.core.hook_output import (EVENTS, MAX_HOOK_OUTPUT_CHARS, PERMISSION_DECISIONS,  # noqa: F401
                                         HookResult, cap_text, check_result, parse_hook_output,
                                         tool_output_problem)

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_SECONDS = 60.0
"""Claude Code's default command-hook timeout (the seed's sample uses 5 s)."""

EXIT_CODE_BLOCK = 2
"""A command hook exiting with 2 blocks; its stderr is the reason (Claude Code contract)."""

MAX_HOOK_READ_BYTES = 1_048_576
"""At most this much of a command hook's stderr is read (bytes)."""

MAX_HOOK_PARSE_BYTES = 16 * 1_048_576
"""A command hook's stdout is read and parsed whole up to this size (bytes). Larger output
is never cut before parsing (a cut would lose its ``"decision": "block"``): the hook fails
closed instead (see :data:`FAIL_CLOSED_EVENTS`)."""

MAX_HOOK_TIMEOUT_SECONDS = 86_400.0
"""The longest ``timeout`` a settings file may give a command hook (one day, in seconds)."""

FAIL_CLOSED_EVENTS = frozenset({"PreToolUse", "UserPromptSubmit", "PostToolUse"})
"""Events where a hook whose answer cannot be read (stdout over :data:`MAX_HOOK_PARSE_BYTES`,
JSON nested too deeply to parse) counts as a block: the tool call is refused, the prompt is
refused, the tool's output is withheld. Elsewhere it is a non-blocking error."""

PLAIN_STDOUT_IS_CONTEXT = frozenset({"UserPromptSubmit", "SessionStart"})
"""Events whose plain (non-JSON) stdout on exit 0 becomes additional context, as in Claude Code."""

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
    its Claude Code alias, or the ``source`` of SessionStart. Other events ignore matchers.

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
    else:
        return True
    return any(re.fullmatch(matcher, n) for n in names)


def _as_result(output: Any, event: str) -> HookResult:
    if isinstance(output, HookResult):
        return check_result(output, event)
    return parse_hook_output(output, event=event)


def _next_payload(event: str, payload: dict, result: HookResult) -> dict:
    """The payload the next handler sees: earlier updates applied (never mutates ``payload``)."""
    if event == "PreToolUse" and result.updated_input is not None:
        return {**payload, "tool_input": result.updated_input}
    if event == "PostToolUse" and result.updated_output is not None:
        return {**payload, "tool_response": result.updated_output}
    return payload


class HookManager:
    """Handlers per event, fired serially. See the module docstring for the output contract.

    >>> import asyncio; m = HookManager()
    >>> _ = m.on("PreToolUse", lambda p: {"decision": "block", "reason": "no"}, matcher="Bash")
    >>> asyncio.run(m.fire("PreToolUse", {"tool_name": "Bash", "tool_input": {}})).reason
    'no'
    """

    def __init__(self) -> None:
        self._handlers: dict[str, list[tuple[str | None, Handler]]] = {e: [] for e in EVENTS}
        self.warnings: list[str] = []
        """Settings entries skipped by :meth:`from_settings` (unknown events, hook types)."""

    def on(self, event: str, handler: Handler, *, matcher: str | None = None) -> Handler:
        """Register ``handler(payload) -> dict | HookResult | None`` (sync or async) for ``event``.

        Returns the handler (usable as a decorator via ``functools.partial``).
        Raises: ValueError for an unknown event or an invalid matcher regex.
        """
        if event not in self._handlers:
            raise ValueError(f"unknown hook event {event!r}; expected one of {EVENTS}")
        if matcher not in (None, "", "*"):
            try:
                re.compile(matcher)  # fail now, not at fire time
            except re.error as exc:
                raise ValueError(f"invalid matcher regex {matcher!r}: {exc}") from exc
        self._handlers[event].append((matcher, handler))
        return handler

    def handlers(self, event: str) -> list[tuple[str | None, Handler]]:
        """Return ``[(matcher, handler), ...]`` registered for ``event``, in order."""
        return list(self._handlers[event])

    async def fire(self, event: str, payload: dict) -> HookResult:
        """Run the matching handlers for ``event`` one after another and merge their outputs.

        The payload gets ``"hook_event_name": event`` if absent (it is not mutated). A handler
        that raises is a non-blocking error (in ``errors``), like a command hook's exit 1.
        Returns the first blocking result at once (with errors so far); otherwise the merge
        (each field: the last non-None value). Raises: ValueError for an unknown event.
        """
        if event not in self._handlers:
            raise ValueError(f"unknown hook event {event!r}; expected one of {EVENTS}")
        payload = {"hook_event_name": event, **payload}
        merged = HookResult()
        for matcher, handler in self._handlers[event]:
            if not matches(matcher, event, payload):
                continue
            try:
                output = handler(payload)
                if inspect.isawaitable(output):
                    output = await output
                result = _as_result(output, event)
            except Exception as exc:  # noqa: BLE001 - a broken hook must not break the run
                name = getattr(handler, "__name__", repr(handler))
                merged.errors.append(f"{event} hook {name} raised {type(exc).__name__}: {exc}")
                log.info(merged.errors[-1])
                continue
            merged.errors.extend(result.errors)
            if result.blocked:
                return dataclasses.replace(result, errors=merged.errors)
            for name in _MERGED_FIELDS:
                value = getattr(result, name)
                if value is not None:
                    setattr(merged, name, value)
            payload = _next_payload(event, payload, result)
        return merged

    def fire_sync(self, event: str, payload: dict) -> HookResult:
        """:meth:`fire` for synchronous callers; works inside a running loop (Jupyter) too."""
        return call_outside_event_loop(lambda: asyncio.run(self.fire(event, payload)))

    def add_command(self, event: str, command: str, *, matcher: str | None = None,
                    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
                    cwd: str | Path | None = None) -> "CommandHook":
        """Register a shell command as a hook (see :class:`CommandHook`); returns it."""
        hook = CommandHook(command, timeout_seconds=timeout_seconds, cwd=cwd)
        self.on(event, hook, matcher=matcher)
        return hook

    @classmethod
    def from_settings(cls, settings: str | Path | dict, *,
                      cwd: str | Path | None = None) -> "HookManager":
        """Build a manager from a Claude-Code-style settings file (path) or its parsed dict.

        Shape: ``{"hooks": {event: [{"matcher": regex, "hooks": [{"type": "command",
        "command": str, "timeout": seconds}]}]}}``. Events the kit does not fire
        (``Notification``, ``PreCompact``...) and hook types other than ``"command"`` are
        skipped and listed in ``manager.warnings``. Commands run in ``cwd`` (default: the
        current directory) with ``$CLAUDE_PROJECT_DIR`` set to it.
        Raises: HookSettingsError (a ValueError) naming the path of a malformed entry, or
        the file's path when it cannot be read as JSON (a directory, not UTF-8, invalid or
        too deeply nested JSON; a json.JSONDecodeError is its ``__cause__``);
        FileNotFoundError for a missing file.
        """
        if not isinstance(settings, dict):
            settings = _read_settings(Path(settings))
        if not isinstance(settings, dict):
            raise HookSettingsError(f"settings must be a JSON object, got "
                                    f"{type(settings).__name__}")
        manager = cls()
        table = settings.get("hooks", {})
        if not isinstance(table, dict):
            raise HookSettingsError("settings.hooks must be an object of event -> list")
        for event, groups in table.items():
            if event not in EVENTS:
                manager.warnings.append(f"hooks.{event}: event not fired by mini-agent; skipped")
                continue
            if not isinstance(groups, list):
                raise HookSettingsError(f"hooks.{event} must be a list")
            for i, group in enumerate(groups):
                if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                    raise HookSettingsError(f"hooks.{event}[{i}] needs a 'hooks' list")
                for j, spec in enumerate(group["hooks"]):
                    where = f"hooks.{event}[{i}].hooks[{j}]"
                    if not isinstance(spec, dict):
                        raise HookSettingsError(f"{where} must be an object")
                    if spec.get("type", "command") != "command":
                        manager.warnings.append(f"{where}: type {spec.get('type')!r} "
                                                "not supported; skipped")
                        continue
                    if not isinstance(spec.get("command"), str) or not spec["command"].strip():
                        raise HookSettingsError(f"{where} needs a non-empty 'command'")
                    timeout = spec.get("timeout", DEFAULT_TIMEOUT_SECONDS)
                    if (not isinstance(timeout, (int, float)) or isinstance(timeout, bool)
                            or not 0 < timeout < float("inf")):
                        raise HookSettingsError(f"{where}.timeout must be a positive number")
                    if timeout > MAX_HOOK_TIMEOUT_SECONDS:
                        raise HookSettingsError(f"{where}.timeout must be a positive number "
                                                f"of seconds up to {MAX_HOOK_TIMEOUT_SECONDS:g}")
                    if group.get("matcher") is not None and not isinstance(
                            group["matcher"], str):
                        raise HookSettingsError(f"hooks.{event}[{i}].matcher must be a string")
                    try:
                        manager.add_command(event, spec["command"], matcher=group.get("matcher"),
                                            timeout_seconds=float(timeout), cwd=cwd)
                    except ValueError as exc:
                        raise HookSettingsError(f"hooks.{event}[{i}].matcher: {exc}") from exc
        return manager


class HookSettingsError(ValueError):
    """A settings.json ``hooks`` section is malformed (the message names the entry), or the
    file cannot be read as JSON (the message names the file)."""


def _read_settings(path: Path) -> Any:
    """Parse a settings file. Raises: FileNotFoundError; HookSettingsError naming ``path``
    for anything else that keeps it from being JSON."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:  # a directory, a permission problem
        raise HookSettingsError(f"{path}: cannot read the settings file "
                                f"({type(exc).__name__}: {exc.strerror or exc})") from exc
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise HookSettingsError(f"{path}: the settings file is not UTF-8 (byte "
                                f"{exc.start})") from exc
    except RecursionError as exc:
        raise HookSettingsError(f"{path}: the settings JSON is nested too deeply") from exc
    except ValueError as exc:
        raise HookSettingsError(f"{path}: the settings file is not valid JSON ({exc})") from exc


@dataclasses.dataclass
class CommandHook:
    """A hook that runs ``command`` through ``/bin/sh`` with the payload JSON on stdin.

    The timeout (seconds) covers the whole exchange, writing stdin included; on timeout the
    hook's whole process group is killed and the result is a non-blocking error. A hook that
    exits without reading stdin is fine. stdout/stderr go to temporary files, not pipes, so a
    background child that keeps them open cannot make the agent wait: the hook is done when
    its own process exits. Environment: the agent's, plus ``CLAUDE_PROJECT_DIR`` (= ``cwd``).
    POSIX only (process groups).
    """

    command: str
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    cwd: str | Path | None = None

    @property
    def __name__(self) -> str:  # noqa: D401 - used in error messages
        return f"`{self.command}`"

    async def __call__(self, payload: dict) -> HookResult:
        """Run the command once for ``payload``; return its parsed :class:`HookResult`."""
        event = payload.get("hook_event_name", "")
        cwd = str(self.cwd or payload.get("cwd") or os.getcwd())
        env = {**os.environ, "CLAUDE_PROJECT_DIR": cwd}
        data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            try:
                proc = await asyncio.create_subprocess_shell(
                    self.command, stdin=asyncio.subprocess.PIPE, stdout=out, stderr=err,
                    cwd=cwd, env=env, start_new_session=True)
            except OSError as exc:
                return HookResult(errors=[f"{self.__name__} could not start: {exc}"])
            try:
                async with asyncio.timeout(self.timeout_seconds):
                    await _feed(proc, data)
                    code = await proc.wait()
            except TimeoutError:
                _kill_group(proc.pid)
                await proc.wait()
                return HookResult(errors=[f"{self.__name__} timed out after "
                                          f"{self.timeout_seconds:g} s and was killed"])
            err.seek(0)
            stderr = err.read(MAX_HOOK_READ_BYTES).decode("utf-8", "replace").strip()
            size = os.fstat(out.fileno()).st_size
            if code == 0 and size > MAX_HOOK_PARSE_BYTES:
                return self._unreadable(event, f"printed {size:,} bytes on stdout, more than "
                                        f"the {MAX_HOOK_PARSE_BYTES:,} bytes the kit parses")
            out.seek(0)
            stdout = out.read().decode("utf-8", "replace") if code == 0 else ""
        try:
            result = self._interpret(event, code, stdout, stderr)
        except RecursionError:
            return self._unreadable(event, "printed JSON nested too deeply to parse")
        for name in ("additional_context", "reason"):
            text = getattr(result, name)
            if isinstance(text, str) and cap_text(text) != text:
                setattr(result, name, cap_text(text))
                result.errors.append(f"{self.__name__} printed {len(text):,} characters; "
                                     f"cut to {MAX_HOOK_OUTPUT_CHARS:,}")
        return result

    def _unreadable(self, event: str, why: str) -> HookResult:
        """Fail closed: an answer the kit cannot read may hold a block, so it counts as one
        where a block protects something (:data:`FAIL_CLOSED_EVENTS`); elsewhere it is a
        non-blocking error. PostToolUse: the tool already ran, so its output is withheld."""
        message = f"{self.__name__} {why}"
        log.info(message)
        if event not in FAIL_CLOSED_EVENTS:
            return HookResult(errors=[f"{message}; ignored"])
        if event == "PostToolUse":
            return HookResult(updated_output=f"[tool output withheld: the PostToolUse hook "
                              f"{self.__name__} {why}]", errors=[f"{message}; output withheld"])
        return HookResult(blocked=True, reason=f"the {event} hook {self.__name__} {why}; "
                          "blocked to be safe (fail closed)", errors=[f"{message}; blocked"])

    def _interpret(self, event: str, code: int, stdout: str, stderr: str) -> HookResult:
        if code == EXIT_CODE_BLOCK:
            reason = stderr or f"blocked by {event} hook {self.__name__} (exit code 2, no message)"
            return HookResult(blocked=True, reason=reason)
        if code != 0:
            return HookResult(errors=[f"{self.__name__} failed with exit code {code}"
                                      + (f": {stderr}" if stderr else "")])
        text = stdout.strip()
        if not text:
            return HookResult()
        try:
            return parse_hook_output(json.loads(text), event=event)
        except (ValueError, TypeError) as exc:
            if event in PLAIN_STDOUT_IS_CONTEXT:
                return HookResult(additional_context=text)
            message = f"{self.__name__} printed non-JSON stdout; ignored ({exc})"
            log.info(message)
            return HookResult(errors=[message])


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    """Write ``data`` to the hook's stdin and close it; a hook that never reads is fine."""
    assert proc.stdin is not None
    try:
        proc.stdin.write(data)
        await proc.stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the hook exited (or closed stdin) without reading: not a failure
    finally:
        try:
            proc.stdin.close()
        except (BrokenPipeError, ConnectionResetError):  # pragma: no cover - platform detail
            pass


def _kill_group(pid: int) -> None:
    """SIGKILL the hook's process group (it leads its own session), ignoring a finished one."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "hook_examples"
"""Example hooks shipped with the kit: ``block_destructive.py``, ``log_tool_calls.sh``,
``redact_secrets.py`` and a ``settings.json`` that wires them (paths relative to
``$CLAUDE_PROJECT_DIR``)."""
