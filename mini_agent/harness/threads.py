"""Threads for blocking work under asyncio: the tool pool, and sync calls from inside a running loop.

:func:`to_thread` runs a blocking tool in the kit's own worker pool (sized for IO-bound tools,
not the loop's default pool); :func:`call_outside_event_loop` lets sync code such as
``HookManager.fire_sync`` or the grader call ``asyncio.run`` even where a loop already runs
in this thread (a Jupyter cell, an async test). A thread cannot be stopped from outside, so
a tool call is stopped by asking: :func:`to_thread` hands the tool a cancel event
(:func:`cancel_event`) that is set when the call is interrupted, and a tool that runs a
process (run_bash, grep) watches it and kills its process.

IO: threads. Taught in ``notebooks/02_parallel_tools.ipynb``.

Source:
    section 2 of 002_4516104fd432e704.txt (read-only tools run in parallel; bench: about 3x
    over serial).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import threading
from typing import Any

MAX_TOOL_THREADS = 32
"""Worker threads for sync tools. ``asyncio.to_thread`` uses the loop's default pool of
``min(32, cpus + 4)`` threads, which caps parallel blocking tools at 6 on a 2-core machine
(measured: 8 tools of 0.2 s took 0.4 s); tools wait on IO, not CPU, so they get their own pool."""

_TOOL_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=MAX_TOOL_THREADS,
                                                   thread_name_prefix="mini-agent-tool")


_CANCEL: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "mini_agent_tool_cancel", default=None)


def cancel_event() -> threading.Event:
    """Return the event that is set when the tool call running in this thread is interrupted.

    A tool that waits on a process polls it (``event.is_set()`` or ``event.wait(s)``) and
    stops its work when it is set: the executor sets it on an interrupt (closed, cancelled,
    Ctrl-C), :func:`to_thread` when the coroutine awaiting the call is cancelled.

    Returns:
        The call's event; outside a call started by :func:`to_thread` with a ``cancel``
        event (a tool called directly), a fresh event that nothing sets.
    """
    event = _CANCEL.get()
    return event if event is not None else threading.Event()


async def to_thread(fn: Any, *args: Any, cancel: threading.Event | None = None) -> Any:
    """Run ``fn(*args)`` in the kit's tool pool without blocking the event loop.

    Like ``asyncio.to_thread`` (context variables copied), but on a pool of
    ``MAX_TOOL_THREADS`` = 32 threads, and with a way to ask ``fn`` to stop.

    Args:
        fn: a blocking callable.
        args: its positional arguments.
        cancel: the event ``fn`` sees as :func:`cancel_event` (None: a fresh one); set here
            when the awaiting coroutine is cancelled, so the thread stops its process
            instead of running on unseen.

    Returns:
        What ``fn`` returns; what it raises is raised here.

    Raises:
        asyncio.CancelledError: the awaiting coroutine was cancelled (``cancel`` is set
            first; the thread may still be finishing).
    """
    cancel = cancel if cancel is not None else threading.Event()
    context = contextvars.copy_context()
    context.run(_CANCEL.set, cancel)
    call = functools.partial(context.run, fn, *args)
    try:
        return await asyncio.get_running_loop().run_in_executor(_TOOL_POOL, call)
    except asyncio.CancelledError:
        cancel.set()
        raise


def call_outside_event_loop(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` so that it may use ``asyncio.run``, even inside a running loop.

    Where an asyncio loop already runs in this thread (a Jupyter cell, an async test), ``fn``
    runs in a fresh worker thread and this thread waits for it (blocking the loop meanwhile);
    otherwise it runs here.

    Args:
        fn: the callable.
        args: its positional arguments.
        kwargs: its keyword arguments.

    Returns:
        What ``fn(*args, **kwargs)`` returns; what it raises is raised here.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return fn(*args, **kwargs)
    with concurrent.futures.ThreadPoolExecutor(1, "mini-agent-sync") as pool:
        return pool.submit(fn, *args, **kwargs).result()
