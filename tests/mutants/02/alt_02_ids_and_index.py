"""ALTERNATIVE (correct, written differently): futures by task id, an ordered id list and an index.

Exercise 02: OrderedDrain, results in tool_use order (notebooks/02_parallel_tools.ipynb).
"""

from __future__ import annotations

import asyncio


class OrderedDrain:
    def __init__(self):
        self.order = []
        self.futures = {}
        self.cursor = 0

    def add(self, task_id, awaitable):
        key = (len(self.order), task_id)
        self.futures[key] = asyncio.ensure_future(awaitable)
        self.order.append(key)

    def _take(self):
        future = self.futures.pop(self.order[self.cursor])
        self.cursor += 1
        return future

    def drain_ready(self):
        for key in self.order[self.cursor:]:
            if not self.futures[key].done():
                break
            yield self._take().result()

    async def drain_all(self):
        while self.cursor < len(self.order):
            head = self.futures[self.order[self.cursor]]
            if not head.done():
                await asyncio.wait({head})
            yield self._take().result()
