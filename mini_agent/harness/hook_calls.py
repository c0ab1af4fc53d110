"""Calling one Python hook handler under a time limit, so a handler that hangs cannot hang the agent.

A command hook has its own timeout (:class:`~mini_agent.harness.command_hooks.CommandHook`
kills its process group). A Python handler gets the same limit here
(:data:`~mini_agent.harness.command_hooks.DEFAULT_TIMEOUT_SECONDS` = 60 s unless registered
with another): a sync handler runs in a new daemon thread that :func:`call_handler` waits on;
an async handler is awaited under ``asyncio.timeout``. When the limit passes:

* an async handler is cancelled (it stops at its next ``await``);
* a sync handler cannot be stopped (Python has no way to kill a thread): its thread is left
  running as a daemon, so it never keeps the interpreter from exiting, and the timeout's
  error says so. What it returns later is dropped.

Either way the handler counts as having given no answer, and the named behaviour applies:
in a :data:`~mini_agent.core.hook_output.BLOCKING_EVENTS` event (PreToolUse,
UserPromptSubmit) the tool call or prompt is blocked (fail closed: a guard that hangs must not
let everything through); in any other event it is a non-blocking error in ``errors``.  A
command hook that runs past its timeout follows the same rule, and is killed besides.

Each handler gets its own deep copy of the payload: changing it in place changes nothing
(a PreToolUse handler changes the input only through ``updatedInput``).

A handler that raises ``SystemExit`` (``sys.exit(2)``, the command hooks' way to block) or
``KeyboardInterrupt`` gives no answer either (:class:`HandlerExited`), with the same named
behaviour: blocked in a blocking event, a reported error elsewhere. Uncaught, it would stop
the agent's event-loop thread and hang ``Agent.run``.

An ``async def`` handler that blocks without awaiting (``time.sleep`` inside it) blocks the
event loop itself; no timeout can interrupt it. Write blocking handlers as plain functions.

The cost and one consequence of the thread: a sync handler's call takes about 0.3-0.5 ms more
(a thread started and the event loop woken; measured on a shared 2-core machine: 39 us per
``fire`` with one trivial handler before, 0.5 ms after), nothing beside a tool call or a model
request. And the handlers of one ``fire`` still run one after another, but two ``fire`` calls
that overlap (PreToolUse of read-only tools that run in parallel) may now run the same sync
handler at the same time in two threads, as command hooks already did: a handler that
counts or appends into shared state guards it with a lock.

IO: threads. Taught in ``notebooks/06_hooks.ipynb``.

Source:
    Claude Code hooks reference (docs.anthropic.com/en/docs/claude-code/hooks: "timeout",
    60 s by default); the kit's own fail-closed rule (:mod:`mini_agent.core.hook_contract`).
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import inspect
import threading
from typing import Any, Callable

from mini_agent.core.hook_output import HookResult, no_answer

HANDLER_THREAD_PREFIX = "mini-agent-hook"
"""Name prefix of the daemon threads sync handlers run in (``mini-agent-hook-PreToolUse``)."""


class HandlerTimeout(Exception):
    """A Python hook handler did not return within its time limit.

    Attributes:
        seconds: the limit that passed, in seconds.
        thread_left: True when the handler is a sync one whose daemon thread still runs.
    """

    def __init__(self, seconds: float, thread_left: bool) -> None:
        """Record the limit and whether a thread was left running.

        Args:
            seconds: the limit that passed, in seconds.
            thread_left: True for a sync handler still running in its daemon thread.
        """
        super().__init__(f"did not return within {seconds:g} s")
        self.seconds = seconds
        self.thread_left = thread_left


class HandlerExited(Exception):
    """A Python hook handler raised ``SystemExit`` or ``KeyboardInterrupt`` instead of answering.

    ``sys.exit(2)`` is how a command hook blocks; in a Python handler it answers nothing, and
    raised in the event loop's thread it would stop that loop (the agent would hang). It is
    caught and turned into this error, which counts as no answer (see :func:`timeout_result`).

    Attributes:
        raised: the caught exception, e.g. ``SystemExit(2)``.
    """

    def __init__(self, raised: BaseException) -> None:
        """Record what the handler raised.

        Args:
            raised: the ``SystemExit`` or ``KeyboardInterrupt`` instance.
        """
        super().__init__(f"raised {raised!r} instead of returning an answer")
        self.raised = raised


def runs_in_event_loop(handler: Callable[..., Any]) -> bool:
    """Tell an async handler (awaited in the event loop) from a sync one (run in a thread).

    Args:
        handler: the registered callable: a function, a lambda, or an object whose
            ``__call__`` is ``async def`` (a :class:`CommandHook`).

    Returns:
        True for an ``async def`` function or an object with an ``async def __call__``.
    """
    return (inspect.iscoroutinefunction(handler)
            or inspect.iscoroutinefunction(getattr(handler, "__call__", None)))


async def call_handler(handler: Callable[[dict], Any], payload: dict, event: str,
                       timeout_seconds: float | None) -> Any:
    """Call ``handler(payload)`` and wait at most ``timeout_seconds`` for its answer.

    Args:
        handler: the handler, sync or async.
        payload: the event's payload; the handler gets a deep copy, so a handler that
            mutates it (``payload["tool_input"]["command"] = ...``) changes neither the tool
            call nor the history nor the next handler's payload (``updatedInput`` does).
        event: the event's wire name (names the worker thread).
        timeout_seconds: the limit in seconds; None waits as long as the handler takes (a
            :class:`CommandHook` keeps its own limit).

    Returns:
        What the handler returned (an awaitable it returned is awaited within the limit).

    Raises:
        HandlerTimeout: the limit passed first.
        HandlerExited: the handler raised ``SystemExit`` or ``KeyboardInterrupt`` (caught so
            that it cannot stop the event loop).
    """
    payload = copy.deepcopy(payload)   # the handler's own: mutating it changes nothing
    if runs_in_event_loop(handler):
        try:
            return await _await_within(handler(payload), timeout_seconds)
        except (SystemExit, KeyboardInterrupt) as exc:
            raise HandlerExited(exc) from None
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(value: Any, error: BaseException | None) -> None:
        if answer.done():   # timed out already: the late answer is dropped
            return
        if error is not None:
            answer.set_exception(error)
        else:
            answer.set_result(value)

    def work() -> None:
        try:
            value, error = context.run(handler, payload), None
        except (SystemExit, KeyboardInterrupt) as exc:   # would stop the event loop
            value, error = None, HandlerExited(exc)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting coroutine
            value, error = None, exc
        try:
            loop.call_soon_threadsafe(settle, value, error)
        except RuntimeError:  # the event loop is closed: nobody waits any more
            pass

    threading.Thread(target=work, name=f"{HANDLER_THREAD_PREFIX}-{event}", daemon=True).start()
    try:
        async with asyncio.timeout(timeout_seconds):
            output = await answer   # cancelled at the limit: a late answer is dropped
    except TimeoutError:
        raise HandlerTimeout(timeout_seconds or 0.0, thread_left=True) from None
    if inspect.isawaitable(output):   # a sync function that returned a coroutine
        try:
            return await _await_within(output, timeout_seconds)
        except (SystemExit, KeyboardInterrupt) as exc:
            raise HandlerExited(exc) from None
    return output


async def _await_within(awaitable: Any, timeout_seconds: float | None) -> Any:
    """Await ``awaitable`` under ``asyncio.timeout``; a timeout cancels it."""
    try:
        async with asyncio.timeout(timeout_seconds):
            return await awaitable
    except TimeoutError:
        raise HandlerTimeout(timeout_seconds or 0.0, thread_left=False) from None


def timeout_result(event: str, name: str,
                   timeout: HandlerTimeout | HandlerExited) -> HookResult:
    """Say what a handler that gave no answer means: a block in a blocking event, else an error.

    Args:
        event: the event's wire name.
        name: the handler's name, for the message.
        timeout: the :class:`HandlerTimeout` or :class:`HandlerExited` raised (an exit reads
            ``"... raised SystemExit(2) instead of returning an answer (return {"decision":
            "block", "reason": ...} to block)"``).

    Returns:
        In a :data:`BLOCKING_EVENTS` event a blocked :class:`HookResult` whose reason ends
        ``"blocked to be safe (fail closed)"``; elsewhere one whose only field is the error
        ``"... ; ignored"``. For a timeout both name the limit and, for a sync handler,
        that its daemon thread was left running; for an exit, what was raised.
    """
    if isinstance(timeout, HandlerExited):
        what = (f"{event} hook {name} {timeout} (return {{\"decision\": \"block\", "
                "\"reason\": ...} to block)")
    elif timeout.thread_left:
        what = (f"{event} hook {name} did not return within {timeout.seconds:g} s (its thread "
                "is left running as a daemon: Python cannot stop it)")
    else:
        what = f"{event} hook {name} did not return within {timeout.seconds:g} s and was cancelled"
    return no_answer(event, what)
