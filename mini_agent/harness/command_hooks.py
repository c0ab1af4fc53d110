"""Command hooks: a shell command per event, fed the event's JSON, answering as Claude Code's do.

:class:`CommandHook` runs its command through ``/bin/sh`` with the payload JSON on stdin and
reads the answer from stdout. Exit codes as Claude Code: 0 = success (stdout JSON applied;
other stdout is ignored with a warning, except for UserPromptSubmit/SessionStart where plain
stdout becomes ``additionalContext``); 2 = block with stderr as the reason; anything else = a
non-blocking error, reported in ``HookResult.errors``. The timeout kills the hook's whole
process group. Hostile output: stdout is parsed whole, never cut first, and an answer too
large or too deeply nested to parse, or one that looks like JSON but is not (a Python dict
printed with ``print()``, log lines before the JSON), fails closed (:data:`FAIL_CLOSED_EVENTS`).
Where the kit departs from Claude Code so that a block never becomes an allow: a hook that
printed a block and then exits with another code, or is killed at its timeout, still blocks;
and a PreToolUse or UserPromptSubmit hook killed at its timeout blocks even having printed
nothing (a guard that hangs is not an allow; Claude Code goes on with a non-blocking error).
:data:`EXAMPLES_DIR` holds the example hooks shipped with the kit.

IO: processes, temporary files. Taught in ``notebooks/06_hooks.ipynb``.

Source:
    section 5 of 002_4516104fd432e704.txt (commandHook); Claude Code hooks reference.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import signal
import tempfile
from pathlib import Path
from typing import Any

from mini_agent.core.hook_output import (MAX_HOOK_OUTPUT_CHARS, HookResult, cap_text, no_answer,
                                         parse_hook_output)

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


def check_timeout_seconds(timeout: Any) -> None:
    """Refuse a hook time limit that would skip the hook or never end.

    Args:
        timeout: the limit given, meant as seconds.

    Raises:
        ValueError: ``timeout`` is a bool, not a number, or outside (0,
            :data:`MAX_HOOK_TIMEOUT_SECONDS`] (0, negative, NaN, infinite, over a day).
    """
    if (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
            or not 0 < timeout <= MAX_HOOK_TIMEOUT_SECONDS):
        raise ValueError(f"timeout_seconds must be a number of seconds above 0 and up to "
                         f"{MAX_HOOK_TIMEOUT_SECONDS:g}, got {timeout!r}")


@dataclasses.dataclass
class CommandHook:
    """A hook that runs ``command`` through ``/bin/sh`` with the payload JSON on stdin.

    The timeout (seconds) covers the whole exchange, writing stdin included; on timeout the
    hook's whole process group is killed and the result is a non-blocking error. A hook that
    exits without reading stdin is fine. stdout/stderr go to temporary files, not pipes, so a
    background child that keeps them open cannot make the agent wait: the hook is done when
    its own process exits. Environment: the agent's, plus ``CLAUDE_PROJECT_DIR`` (= ``cwd``).
    POSIX only (process groups).

    Attributes:
        command: the shell command.
        timeout_seconds: the limit for the whole exchange in seconds (default 60, Claude
            Code's).
        cwd: the working directory; None uses the payload's ``cwd``, else the current
            directory.
    """

    command: str
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    cwd: str | Path | None = None

    def __post_init__(self) -> None:
        """Refuse a timeout that would skip the hook: 0, negative, NaN, infinite, too long.

        A zero timeout used to time the hook out before it ran, a non-blocking error, so a
        PreToolUse guard registered with ``timeout_seconds=0`` ("no limit") let every call
        through.

        Raises:
            ValueError: ``timeout_seconds`` is not a number of seconds in (0,
                :data:`MAX_HOOK_TIMEOUT_SECONDS`], or ``command`` is not a non-blank string.
        """
        if not isinstance(self.command, str) or not self.command.strip():
            raise ValueError(f"a command hook needs a non-blank command, got {self.command!r}")
        check_timeout_seconds(self.timeout_seconds)

    @property
    def __name__(self) -> str:  # noqa: D401 - used in error messages
        return f"`{self.command}`"

    async def __call__(self, payload: dict) -> HookResult:
        """Run the command once for ``payload``; return its parsed :class:`HookResult`."""
        event = payload.get("hook_event_name", "")
        cwd = str(self.cwd or payload.get("cwd") or os.getcwd())
        env = {**os.environ, "CLAUDE_PROJECT_DIR": cwd}
        data = _payload_bytes(payload)
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
                failure = (f"{self.__name__} timed out after {self.timeout_seconds:g} s and "
                           "was killed")
                return self._printed_block(event, out, failure) or self._timed_out(event, failure)
            except BaseException:  # cancelled, Ctrl-C: the hook's whole group goes too
                _kill_group(proc.pid)  # asyncio's child watcher reaps it: no zombie
                raise
            err.seek(0)
            stderr = err.read(MAX_HOOK_READ_BYTES).decode("utf-8", "replace").strip()
            if code not in (0, EXIT_CODE_BLOCK):
                failure = (f"{self.__name__} failed with exit code {code}"
                           + (f": {stderr}" if stderr else ""))
                return self._printed_block(event, out, failure) or HookResult(errors=[failure])
            size = os.fstat(out.fileno()).st_size
            if code == 0 and size > MAX_HOOK_PARSE_BYTES:
                return self._unreadable(event, f"printed {size:,} bytes on stdout, more than "
                                        f"the {MAX_HOOK_PARSE_BYTES:,} bytes the kit parses")
            out.seek(0)
            # utf-8-sig: a byte order mark (PowerShell writes one) does not hide the answer
            stdout = out.read().decode("utf-8-sig", "replace") if code == 0 else ""
        try:
            result = self._interpret(event, code, stdout, stderr)
        except RecursionError:
            return self._unreadable(event, "printed JSON nested too deeply to parse")
        if result is None:
            return self._unreadable(event, "printed stdout that looks like a JSON answer but "
                                    "is not one JSON object (a Python dict printed with "
                                    "print()? log lines before it? print json.dumps(answer) "
                                    "and nothing else)")
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

    def _timed_out(self, event: str, failure: str) -> HookResult:
        """A hook killed at its timeout having printed no block: fail closed in a guard event.

        Args:
            event: the hook's event name.
            failure: the error line that says the hook timed out and was killed.

        Returns:
            In a :data:`~mini_agent.core.hook_output.BLOCKING_EVENTS` event (PreToolUse,
            UserPromptSubmit) a block naming the timeout: a guard that hangs is not an allow,
            the same rule as a Python handler past its limit. Claude Code reads this as a
            non-blocking error and goes on; the kit does that in every other event.
        """
        return no_answer(event, failure, said=f"the {event} hook {failure}", ignored="")

    def _printed_block(self, event: str, out: Any, failure: str) -> HookResult | None:
        """The block a hook printed on stdout before it failed (an exit code other than 0 and
        2, or killed at its timeout), or None. Claude Code ignores such stdout; the kit reads
        it for a block only, so a hook that says block and then crashes or hangs still blocks
        (every other field of that answer is ignored)."""
        if event not in FAIL_CLOSED_EVENTS or os.fstat(out.fileno()).st_size > MAX_HOOK_PARSE_BYTES:
            return None
        out.seek(0)
        try:
            data = json.loads(out.read().decode("utf-8-sig", "replace").strip())
            answer = parse_hook_output(data, event=event) if isinstance(data, dict) else None
        except (ValueError, TypeError, RecursionError):
            return None
        if answer is None or not answer.blocked:
            return None
        return HookResult(blocked=True, reason=answer.reason,
                          errors=[*answer.errors, f"{failure}; the block it printed first stands"])

    def _interpret(self, event: str, code: int, stdout: str,
                   stderr: str) -> HookResult | None:
        """Read an exit-0 or exit-2 answer; None for stdout the kit cannot read in a
        :data:`FAIL_CLOSED_EVENTS` event (see :func:`_looks_like_json`)."""
        if code == EXIT_CODE_BLOCK:
            reason = stderr or f"blocked by {event} hook {self.__name__} (exit code 2, no message)"
            return HookResult(blocked=True, reason=reason)
        text = stdout.strip()
        if not text:
            return HookResult()
        try:
            data = json.loads(text)
        except ValueError as exc:
            if event in FAIL_CLOSED_EVENTS and _looks_like_json(text, event):
                return None
            if event in PLAIN_STDOUT_IS_CONTEXT:
                return HookResult(additional_context=text)
            message = f"{self.__name__} printed non-JSON stdout; ignored ({exc})"
            log.info(message)
            return HookResult(errors=[message])
        if isinstance(data, dict) or data is None:
            return parse_hook_output(data, event=event)
        if event in FAIL_CLOSED_EVENTS and isinstance(data, list):
            return None
        if event in PLAIN_STDOUT_IS_CONTEXT:
            return HookResult(additional_context=text)
        message = (f"{self.__name__} printed JSON {type(data).__name__}, not an object; "
                   "ignored")
        log.info(message)
        return HookResult(errors=[message])


def _looks_like_json(text: str, event: str) -> bool:
    """True when non-JSON stdout still looks like an attempt at a JSON answer: it starts with
    ``{`` or ``[`` (a Python dict printed with ``print()``, JSON cut short), or, for the tool
    events, one of its lines does (log lines printed before the JSON answer). Plain text that
    merely holds a brace elsewhere (UserPromptSubmit context) does not."""
    if text.startswith(("{", "[")):
        return True
    return event in ("PreToolUse", "PostToolUse") and any(
        line.lstrip().startswith("{") for line in text.splitlines())


def _payload_bytes(payload: dict) -> bytes:
    """The payload as UTF-8 JSON; one UTF-8 cannot carry (a lone surrogate in a tool input)
    is sent with ``\\u`` escapes instead, so the hook still sees it rather than being skipped."""
    text = json.dumps(payload, ensure_ascii=False, default=str)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(payload, ensure_ascii=True, default=str).encode("ascii")


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
