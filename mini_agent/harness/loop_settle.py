"""Settling an interrupted step of the loop, so the history it leaves is one the API accepts.

:func:`settle_interrupted` stores what of an unfinished reply may have run and answers every
tool_use (results collected so far, tools stopped or finished, ``is_error`` for the rest);
:func:`settle_to_the_end` keeps a second cancellation from stopping that half-way. Used by
:func:`~mini_agent.harness.loop.run_loop` when it is closed, cancelled or interrupted.

IO: awaits the executor's running tools. Taught in ``notebooks/02_parallel_tools.ipynb``.
Source: 002_4516104fd432e704.txt section 2 (every tool_use answered before the next request).
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Sequence

from mini_agent.core.messages import (NO_RESULT_TEXT, Block, Message, tool_result_block,
                                      tool_uses)
from mini_agent.harness.executor import StreamingExecutor, ToolOutcome


async def settle_to_the_end(settling: Awaitable[None]) -> None:
    """Await ``settling`` to its end even when the task is cancelled again meanwhile.

    An impatient caller (a second ``task.cancel()``, a timeout around a cancelled run) must
    not stop the settling half-way: the history would end with tool calls and no answers,
    and every later request would be refused. Each cancellation that arrives meanwhile is
    held until the settling is done, then raised.

    Args:
        settling: the coroutine that leaves the history valid.

    Raises:
        asyncio.CancelledError: the task was cancelled while ``settling`` ran (raised once it
            finished). The settling's own errors propagate.
    """
    task = asyncio.ensure_future(settling)
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError as exc:
            if task.cancelled():
                raise
            cancelled = exc
    task.result()
    if cancelled is not None:
        raise cancelled


async def settle_interrupted(history: list[Message], times: list[float], now: float,
                              executor: StreamingExecutor, results: list[ToolOutcome],
                              kept: list[Block], notes: Sequence[str] = ()) -> None:
    """Leave the history valid after an interrupted step, every tool_use answered.

    No tool starts afterwards, the running ones are asked to stop, and every tool_use of the
    stored reply gets its answer; the notes of tool calls cut by ``max_tokens`` follow the
    answers in the same user message, as they do when the step ends normally (the model
    learns its cut call did not run).

    Args:
        history: the conversation; MUTATED (the kept reply and one user message of answers).
        times: clock seconds parallel to ``history``; MUTATED in step.
        now: the clock time (seconds) of what is appended.
        executor: the step's executor; its queued tools never start.
        results: the outcomes collected before the interruption.
        kept: the unfinished reply to store first (:func:`~mini_agent.harness.loop.kept_reply`),
            or ``[]`` when the reply was stored already.
        notes: one line per tool_use the step's reply lost to ``max_tokens``
            (:data:`~mini_agent.harness.loop.DROPPED_NOTE`), joined into one text block after
            the answers; stored only with them (a reply dropped whole needs none).
    """
    if kept:   # the reply was still streaming: its complete tool calls may have run
        history.append({"role": "assistant", "content": kept})
        times.append(now)
    settled = await executor.settle()
    if history and history[-1]["role"] == "assistant" and tool_uses(history[-1]):
        answers = {o.tool_use_id: o.block for o in [*results, *settled]}
        content = [answers.get(b["id"]) or tool_result_block(b["id"], NO_RESULT_TEXT,
                                                             is_error=True)
                   for b in tool_uses(history[-1])]
        if notes:   # tell the model its cut tool call did not run
            content.append({"type": "text", "text": "\n".join(notes)})
        history.append({"role": "user", "content": content})
        times.append(now)


__all__ = ["settle_interrupted", "settle_to_the_end"]
