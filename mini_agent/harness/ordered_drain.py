"""Hand out the results of concurrent tasks in the order the tasks were added, each exactly once.

The Messages API wants every ``tool_use`` of an assistant message answered, in order, in the
next user message; tools finish in any order. :class:`OrderedDrain` keeps one cursor:
``drain_ready()`` yields the settled results at the head and stops at the first unsettled one
(it never waits), ``drain_all()`` awaits each in turn, and a result taken during streaming is
never yielded again after it (seed pitfall 1). The executor
(:mod:`mini_agent.harness.executor`) drains its tools through one.

IO: none beyond asyncio tasks. Taught in ``notebooks/02_parallel_tools.ipynb``; exercise ``02``.
Source: 002_4516104fd432e704.txt section 2 (OrderedDrain).
"""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, Awaitable, Generic, Iterator, TypeVar

T = TypeVar("T")


class OrderedDrain(Generic[T]):
    """Hand out task results in the order the tasks were added, each exactly once.

    ``add(id, awaitable)`` starts the task (``asyncio.ensure_future``; call it inside a running
    event loop). ``drain_ready()`` is a plain generator: it yields the results of the settled
    tasks at the head and returns at the first unsettled one, without waiting.
    ``drain_all()`` is an async generator that awaits the head task before yielding it.
    The cursor moves BEFORE each yield, so a consumer that stops early never gets a result
    twice. A task that raised re-raises its exception when its turn comes.
    Example: add a (slow) then b (fast): ``drain_ready()`` yields nothing until a settles.
    """

    def __init__(self) -> None:
        self._tasks: list[tuple[str, asyncio.Future]] = []
        self._cursor = 0

    def add(self, task_id: str, awaitable: Awaitable[T]) -> None:
        """Register a task; its result will leave after every task added before it.

        Args:
            task_id: the id the result answers (a tool_use id).
            awaitable: the task's coroutine or future; started at once (``ensure_future``).
        """
        self._tasks.append((task_id, asyncio.ensure_future(awaitable)))

    def __len__(self) -> int:
        return len(self._tasks)

    @property
    def pending(self) -> int:
        """How many results have not been yielded yet."""
        return len(self._tasks) - self._cursor

    def drain_ready(self) -> Iterator[T]:
        """Yield settled results from the head, in order; stop at the first unsettled task.

        Returns:
            A generator of results (it never waits); a task that raised re-raises here.
        """
        while self._cursor < len(self._tasks):
            _, future = self._tasks[self._cursor]
            if not future.done():
                return
            self._cursor += 1
            yield future.result()

    async def drain_all(self) -> AsyncIterator[T]:
        """Yield every remaining result in order, awaiting each unsettled one.

        Returns:
            An async generator of results; a task that raised re-raises when its turn comes.
        """
        while self._cursor < len(self._tasks):
            _, future = self._tasks[self._cursor]
            await asyncio.wait([future])
            self._cursor += 1
            yield future.result()
