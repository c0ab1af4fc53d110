"""Calling one Python hook handler under a time limit, so a handler that hangs cannot hang the agent.

A command hook has its own timeout (:class:`~mini_agent.harness.command_hooks.CommandHook`
kills its process group). A Python handler gets the same limit here
(:data:`~mini_agent.harness.command_hooks.DEFAULT_TIMEOUT_SECONDS` = 60 s unless registered
with another): it runs in a new daemon thread that :func:`call_handler` waits on, an ``async
def`` one on that thread's own event loop. The wait is the caller's, so the limit holds for a
coroutine that blocks without awaiting (``time.sleep`` inside ``async def``) as for a plain
function. When the limit passes:

* a coroutine is cancelled (it stops at its next ``await``; one that blocks never gets there
  and is left running, as below);
* a sync handler cannot be stopped (Python has no way to kill a thread): its thread is left
  running as a daemon, so it never keeps the interpreter from exiting, and the timeout's
  error says so. What it returns later is dropped.

Either way the handler counts as having given no answer, and the named behaviour applies:
in a :data:`~mini_agent.core.hook_output.BLOCKING_EVENTS` event (PreToolUse,
UserPromptSubmit) the tool call or prompt is blocked (fail closed: a guard that hangs must not
let everything through); in any other event it is a non-blocking error in ``errors``.  A
command hook that runs past its timeout follows the same rule, and is killed besides.

A handler whose call ran past its limit and still runs is not called again until that call
returns (:class:`HandlerStillRunning`, no answer at once, with the same named behaviour): a
hung guard would otherwise leak one more thread, and cost its whole limit, at every tool call.

Each handler gets its own deep copy of the payload: changing it in place changes nothing
(a PreToolUse handler changes the input only through ``updatedInput``).

A handler that raises ``SystemExit`` (``sys.exit(2)``, the command hooks' way to block) or
``KeyboardInterrupt`` gives no answer either (:class:`HandlerExited`), with the same named
behaviour: blocked in a blocking event, a reported error elsewhere. Uncaught, it would stop
the agent's event-loop thread and hang ``Agent.run``.

An ``async def`` handler runs on an event loop of its own, not the agent's: it cannot await a
future or a queue made in the agent's loop (a :class:`CommandHook`, which has no limit here,
is awaited in the agent's loop).

The cost of the thread: a sync handler's call takes about 0.3-0.5 ms more (a thread started
and the event loop woken; measured on a shared 2-core machine: 39 us per ``fire`` with one
trivial handler before, 0.5 ms after), an async one about 1 ms (its event loop made too; 0.1
ms when it ran in the agent's loop), nothing beside a tool call or a model request. The
handlers of one ``fire`` still run one after another, but two ``fire`` calls that overlap
within the limit (PreToolUse of read-only tools that run in parallel) may run the same handler
at the same time in two threads, as command hooks already did: a handler that counts or
appends into shared state guards it with a lock.

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
        thread_left: True when the handler's daemon thread still runs (a sync handler, or a
            coroutine that did not stop when cancelled).
        coroutine: True when the handler was a coroutine, cancelled at the limit.
    """

    def __init__(self, seconds: float, thread_left: bool, coroutine: bool = False) -> None:
        """Record the limit and whether a thread was left running.

        Args:
            seconds: the limit that passed, in seconds.
            thread_left: True when the handler's daemon thread still runs.
            coroutine: True for a coroutine handler (it was cancelled at the limit).
        """
        super().__init__(f"did not return within {seconds:g} s")
        self.seconds = seconds
        self.thread_left = thread_left
        self.coroutine = coroutine


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


class HandlerStillRunning(Exception):
    """A handler was not called: its earlier call ran past its limit and is still running.

    Calling it again would start one more thread beside the stuck one at every event (a hung
    guard would leak a thread and cost its whole limit per tool call); so until that call
    returns, the handler gives no answer at once (see :func:`timeout_result`).

    Attributes:
        seconds: the handler's limit, in seconds.
    """

    def __init__(self, seconds: float) -> None:
        """Record the limit the earlier call ran past.

        Args:
            seconds: the handler's limit, in seconds.
        """
        super().__init__(f"was not called: its earlier call ran past its {seconds:g} s limit "
                         "and is still running")
        self.seconds = seconds


class LateCalls:
    """The calls of one registered handler that ran past their limit and still run.

    A :class:`~mini_agent.harness.hooks.HookManager` keeps one per registration and hands it
    to :func:`call_handler`, which refuses a new call while it is not empty
    (:class:`HandlerStillRunning`). Thread-safe: a late call leaves it from its own thread.
    """

    def __init__(self) -> None:
        """Start with no late call."""
        self._lock = threading.Lock()
        self._running = 0

    def __len__(self) -> int:
        """Count the late calls still running.

        Returns:
            How many calls of the handler ran past their limit and have not returned.
        """
        with self._lock:
            return self._running


class _Call:
    """One handler call in its daemon thread, seen from the waiting coroutine and the thread."""

    def __init__(self, late: LateCalls | None) -> None:
        self.late = late
        self.ended = False       # the thread is done (answered, raised or cancelled)
        self.counted = False     # counted in ``late``
        self.stop_asked = False
        self.own_loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task | None = None
        self.lock = late._lock if late is not None else threading.Lock()

    def stop(self) -> bool:
        """Ask a coroutine running on the thread's own loop to stop; True when one runs."""
        with self.lock:
            self.stop_asked = True
            if self.task is None or self.own_loop is None:
                return False
            self.own_loop.call_soon_threadsafe(self.task.cancel)
            return True

    def mark_late(self) -> bool:
        """Count this call in ``late`` unless its thread ended; True when it still runs."""
        with self.lock:
            if self.ended:
                return False
            if self.late is not None and not self.counted:
                self.late._running += 1
                self.counted = True
            return True

    def end(self) -> None:
        """Called by the thread as it finishes: leave ``late``."""
        with self.lock:
            self.ended = True
            if self.counted:
                self.late._running -= 1   # type: ignore[union-attr]

    def run_coroutine(self, awaitable: Any, context: contextvars.Context) -> Any:
        """Run ``awaitable`` to its end on a new event loop owned by this thread."""
        own = asyncio.new_event_loop()
        try:
            with self.lock:
                self.own_loop, self.task = own, own.create_task(_coroutine(awaitable),
                                                                context=context)
                if self.stop_asked:
                    self.task.cancel()
            return own.run_until_complete(self.task)
        finally:
            with self.lock:
                task, self.own_loop, self.task = self.task, None, None
            if task is not None and task.done() and not task.cancelled():
                task.exception()   # retrieved: raised here already (SystemExit), not logged
            left = asyncio.all_tasks(own)   # tasks the handler started and left: as asyncio.run
            for stray in left:
                stray.cancel()
            if left:
                own.run_until_complete(asyncio.gather(*left, return_exceptions=True))
            own.close()


async def _coroutine(awaitable: Any) -> Any:
    return await awaitable


CANCEL_GRACE_SECONDS = 0.5
"""How long the caller waits, past the limit, for a cancelled coroutine handler to stop
before it reports the handler's thread as left running (a coroutine that blocks without
awaiting never sees the cancellation)."""


def runs_in_event_loop(handler: Callable[..., Any]) -> bool:
    """Tell an async handler (``async def``) from a sync one.

    Both run in a daemon thread of their own when they have a time limit (an async one on
    that thread's own event loop); a :class:`CommandHook`, async and with no limit given
    here (it keeps its own), is awaited in the agent's event loop.

    Args:
        handler: the registered callable: a function, a lambda, or an object whose
            ``__call__`` is ``async def`` (a :class:`CommandHook`).

    Returns:
        True for an ``async def`` function or an object with an ``async def __call__``.
    """
    return (inspect.iscoroutinefunction(handler)
            or inspect.iscoroutinefunction(getattr(handler, "__call__", None)))


async def call_handler(handler: Callable[[dict], Any], payload: dict, event: str,
                       timeout_seconds: float | None, late: LateCalls | None = None) -> Any:
    """Call ``handler(payload)`` and wait at most ``timeout_seconds`` for its answer.

    With a limit, the handler runs in a new daemon thread (an ``async def`` one, or the
    awaitable a sync one returns, on that thread's own event loop), so the limit holds even
    for a coroutine that blocks without awaiting (``time.sleep`` inside ``async def``): the
    wait is the caller's. At the limit a coroutine is cancelled (it stops at its next
    ``await``; the caller waits :data:`CANCEL_GRACE_SECONDS` more for it); a sync function,
    or a coroutine that does not stop, is left running as a daemon and counted in ``late``.

    Args:
        handler: the handler, sync or async.
        payload: the event's payload; the handler gets a deep copy, so a handler that
            mutates it (``payload["tool_input"]["command"] = ...``) changes neither the tool
            call nor the history nor the next handler's payload (``updatedInput`` does).
        event: the event's wire name (names the worker thread).
        timeout_seconds: the limit in seconds; None awaits an async handler in the running
            event loop as long as it takes (a :class:`CommandHook` keeps its own limit).
        late: the handler's calls still running past their limit (None: not tracked); while
            one runs, the handler is not called again.

    Returns:
        What the handler returned (an awaitable it returned is awaited within the limit).

    Raises:
        HandlerTimeout: the limit passed first.
        HandlerExited: the handler raised ``SystemExit`` or ``KeyboardInterrupt`` (caught so
            that it cannot stop the event loop).
        HandlerStillRunning: an earlier call ran past its limit and has not returned; the
            handler was not called.
    """
    payload = copy.deepcopy(payload)   # the handler's own: mutating it changes nothing
    if timeout_seconds is None and runs_in_event_loop(handler):
        try:
            return await handler(payload)
        except (SystemExit, KeyboardInterrupt) as exc:
            raise HandlerExited(exc) from None
    if late is not None and len(late):
        raise HandlerStillRunning(timeout_seconds or 0.0)
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[Any] = loop.create_future()
    ended: asyncio.Future[None] = loop.create_future()
    context = contextvars.copy_context()
    call = _Call(late)

    def settle(value: Any, error: BaseException | None) -> None:
        if not ended.done():
            ended.set_result(None)
        if answer.done():   # timed out already: the late answer is dropped
            return
        if error is not None:
            answer.set_exception(error)
        else:
            answer.set_result(value)

    def work() -> None:
        try:
            value, error = context.run(handler, payload), None
            if inspect.isawaitable(value):
                value = call.run_coroutine(value, context)
        except (SystemExit, KeyboardInterrupt) as exc:   # would stop the event loop
            value, error = None, HandlerExited(exc)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting coroutine
            value, error = None, exc
        call.end()
        try:
            loop.call_soon_threadsafe(settle, value, error)
        except RuntimeError:  # the event loop is closed: nobody waits any more
            pass

    threading.Thread(target=work, name=f"{HANDLER_THREAD_PREFIX}-{event}", daemon=True).start()
    try:
        async with asyncio.timeout(timeout_seconds):
            return await answer   # cancelled at the limit: a late answer is dropped
    except TimeoutError:
        coroutine = call.stop()
        if coroutine:
            await asyncio.wait([ended], timeout=CANCEL_GRACE_SECONDS)
        left = call.mark_late()
        raise HandlerTimeout(timeout_seconds or 0.0, thread_left=left,
                             coroutine=coroutine) from None
    except asyncio.CancelledError:   # the run was interrupted: stop a coroutine too
        call.stop()
        raise


def timeout_result(event: str, name: str,
                   timeout: HandlerTimeout | HandlerExited | HandlerStillRunning) -> HookResult:
    """Say what a handler that gave no answer means: a block in a blocking event, else an error.

    Args:
        event: the event's wire name.
        name: the handler's name, for the message.
        timeout: the :class:`HandlerTimeout`, :class:`HandlerExited` or
            :class:`HandlerStillRunning` raised (an exit reads
            ``"... raised SystemExit(2) instead of returning an answer (return {"decision":
            "block", "reason": ...} to block)"``).

    Returns:
        In a :data:`BLOCKING_EVENTS` event a blocked :class:`HookResult` whose reason ends
        ``"blocked to be safe (fail closed)"``; elsewhere one whose only field is the error
        ``"... ; ignored"``. For a timeout both name the limit and, for a sync handler or a
        coroutine that did not stop when cancelled, that its daemon thread was left
        running; for an exit, what was raised; for a handler still running, that it was not
        called (``"... was not called: its earlier call ran past its 0.2 s limit and is
        still running"``).
    """
    if isinstance(timeout, HandlerExited):
        what = (f"{event} hook {name} {timeout} (return {{\"decision\": \"block\", "
                "\"reason\": ...} to block)")
    elif isinstance(timeout, HandlerStillRunning):
        what = f"{event} hook {name} {timeout}"
    elif timeout.thread_left and timeout.coroutine:
        what = (f"{event} hook {name} did not return within {timeout.seconds:g} s and did not "
                "stop when cancelled (it blocks without awaiting: its thread is left running "
                "as a daemon)")
    elif timeout.thread_left:
        what = (f"{event} hook {name} did not return within {timeout.seconds:g} s (its thread "
                "is left running as a daemon: Python cannot stop it)")
    else:
        what = f"{event} hook {name} did not return within {timeout.seconds:g} s and was cancelled"
    return no_answer(event, what)
