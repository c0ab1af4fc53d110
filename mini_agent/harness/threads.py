"""Threads for blocking work under asyncio: the tool pool, and sync calls from inside a running loop.

:func:`to_thread` runs a blocking tool in the kit's own worker pool (sized for IO-bound tools,
not the loop's default pool); :func:`call_outside_event_loop` lets sync code such as
``HookManager.fire_sync`` or the grader call ``asyncio.run`` even where a loop already runs
in this thread (a Jupyter cell, an async test).

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
from typing import Any

MAX_TOOL_THREADS = 32
"""Worker threads for sync tools. ``asyncio.to_thread`` uses the loop's default pool of
``min(32, cpus + 4)`` threads, which caps parallel blocking tools at 6 on a 2-core machine
(measured: 8 tools of 0.2 s took 0.4 s); tools wait on IO, not CPU, so they get their own pool."""

_TOOL_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=MAX_TOOL_THREADS,
                                                   thread_name_prefix="mini-agent-tool")


async def to_thread(fn: Any, *args: Any) -> Any:
    """Run ``fn(*args)`` in the kit's tool pool without blocking the event loop.

    Like ``asyncio.to_thread`` (context variables copied), but on a pool of
    ``MAX_TOOL_THREADS`` = 32 threads.

    Args:
        fn: a blocking callable.
        args: its positional arguments.

    Returns:
        What ``fn`` returns; what it raises is raised here.
    """
    call = functools.partial(contextvars.copy_context().run, fn, *args)
    return await asyncio.get_running_loop().run_in_executor(_TOOL_POOL, call)


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
