"""MUTANT (wrong on purpose): drain_all returns at the first unsettled task like drain_ready, so results still running are never yielded; exposed by drain_all() while b runs.

Exercise 02: OrderedDrain, results in tool_use order (notebooks/02_parallel_tools.ipynb).

Tools run in parallel and finish in any order, but the follow-up user message must answer the
``tool_use`` blocks with ``tool_result`` blocks in the same order, each exactly once (a missing
one is the API's 400 "tool_use ids were found without tool_result blocks immediately after").
The loop takes results at two moments: while the model is still streaming (``drain_ready``:
take what is already settled at the head, never wait) and after the stream
(``drain_all``: wait for the rest). Both read ONE shared cursor, so a result taken during
streaming is not taken again, and none is lost.

* 02.1 ``OrderedDrain.add(task_id, awaitable)``: start the task, remember its place.
* 02.2 ``OrderedDrain.drain_ready()``: a plain generator: yield the results of the settled
  tasks at the head, in order; stop at the first task that is not done.
* 02.3 ``OrderedDrain.drain_all()``: an async generator: yield every remaining result in
  order, awaiting each one, so the first result leaves while later tasks still run.

A task that raised re-raises its exception when its turn comes, from whichever drain reaches
it; the cursor has already moved past it, so the next drain goes on with the task after it.

Use ``asyncio.ensure_future(awaitable)`` to start a task and ``future.done()`` /
``future.result()`` / ``await future`` to read it. Grade with ``mini-agent grade 02``. The kit's
own version is ``mini_agent.harness.executor.OrderedDrain``.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Awaitable, Iterator


class OrderedDrain:
    """Hand out task results in the order the tasks were added, each exactly once.

    Attributes: tasks: ``[(task_id, future)]`` in registration order; cursor: how many
    results have been yielded (shared by both drains).
    """

    def __init__(self) -> None:
        self.tasks: list[tuple[str, asyncio.Future]] = []
        self.cursor = 0

    def add(self, task_id: str, awaitable: Awaitable[Any]) -> None:
        """Start ``awaitable`` at once as a task (inside a running event loop) and queue its
        result. Any awaitable: a coroutine, a Task or a Future already running."""
        self.tasks.append((task_id, asyncio.ensure_future(awaitable)))

    def drain_ready(self) -> Iterator[Any]:
        """Yield settled results from the head, in order; return at the first unsettled task.
        Never waits. Move the cursor before yielding, so nothing is yielded twice."""
        while self.cursor < len(self.tasks):
            _, future = self.tasks[self.cursor]
            if not future.done():
                return
            self.cursor += 1
            yield future.result()

    async def drain_all(self) -> AsyncIterator[Any]:
        """Yield every remaining result in registration order, awaiting each unsettled one."""
        while self.cursor < len(self.tasks):
            _, future = self.tasks[self.cursor]
            if not future.done():
                return
            self.cursor += 1
            yield future.result()
