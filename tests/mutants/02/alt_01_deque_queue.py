"""ALTERNATIVE (correct, written differently): a deque of pending futures, popped from the left.

Exercise 02: OrderedDrain, results in tool_use order (notebooks/02_parallel_tools.ipynb).
"""

from __future__ import annotations

import asyncio
from collections import deque


class OrderedDrain:
    def __init__(self):
        self.pending = deque()
        self.cursor = 0

    def add(self, task_id, awaitable):
        self.pending.append(asyncio.ensure_future(awaitable))

    def drain_ready(self):
        while self.pending and self.pending[0].done():
            future = self.pending.popleft()
            self.cursor += 1
            yield future.result()

    async def drain_all(self):
        while self.pending:
            head = self.pending[0]
            try:
                await asyncio.shield(head)
            except Exception:  # noqa: BLE001 - re-raised by result() below, in its turn
                pass
            self.pending.popleft()
            self.cursor += 1
            yield head.result()
