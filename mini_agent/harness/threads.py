"""Threads for blocking work under asyncio: the tool pool, and sync calls from inside a running loop.

:func:`to_thread` runs a blocking tool in the kit's own worker pool (sized for IO-bound tools,
not the loop's default pool); :func:`call_outside_event_loop` lets sync code such as
``HookManager.fire_sync`` or the grader call ``asyncio.run`` even where a loop already runs
in this thread (a Jupyter cell, an async test).

IO: threads. Taught in ``notebooks/02_parallel_tools.ipynb``.
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
    """``asyncio.to_thread`` on the kit's tool pool: run ``fn(*args)`` in a worker thread
    (context variables copied), without blocking the event loop."""
    call = functools.partial(contextvars.copy_context().run, fn, *args)
    return await asyncio.get_running_loop().run_in_executor(_TOOL_POOL, call)


def call_outside_event_loop(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Return ``fn(*args, **kwargs)``; where an asyncio loop already runs in this thread (a
    Jupyter cell, an async test), call it in a fresh worker thread and wait, so ``fn`` may use
    ``asyncio.run``. Raises whatever ``fn`` raises."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return fn(*args, **kwargs)
    with concurrent.futures.ThreadPoolExecutor(1, "mini-agent-sync") as pool:
        return pool.submit(fn, *args, **kwargs).result()
