"""Run tools while the model streams: reads in parallel, writes serialized, results in order.

The Messages API wants every ``tool_use`` of an assistant message answered by a
``tool_result`` in the next user message; the kit keeps them in ``tool_use`` order.
:class:`OrderedDrain` hands results out in registration order however the tasks finish:
``drain_ready()`` yields settled results from the head and stops at the first unsettled one
(it never waits); ``drain_all()`` awaits each in turn. Both share ONE cursor, so a result taken
during streaming is never yielded again after it.

:class:`StreamingExecutor` schedules each complete tool_use the moment it arrives:

* a ``"read-only"`` tool runs at once, in parallel with other reads, but after the last write
  scheduled before it has finished;
* a ``"write"`` tool waits for everything scheduled before it, and everything scheduled after
  it waits for it (real pending-write tracking; the seed's ``pendingWrites()`` is always false);
* a write tool that fails (raises) makes every later sibling answer ``Sibling tool aborted``
  with ``is_error`` (seed: "DB migration failed, so do not restart the app");
* an unknown tool name, a hook's block and any exception become ``is_error`` results: tool
  errors are data for the model, never exceptions for the loop.

Sync tools run in worker threads (:func:`to_thread`: ``asyncio.to_thread`` on a pool sized for
IO-bound tools) so the event loop keeps reading the stream; ``Tool.latency_seconds`` (the
offline kit's simulated tool latency) is awaited first.
Taught in ``notebooks/02_parallel_tools.ipynb``; exercise ``02``.
Source: 002_4516104fd432e704.txt section 2 (OrderedDrain, StreamingExecutor).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import dataclasses
import functools
import time
from typing import Any, AsyncIterator, Awaitable, Generic, Iterator, Mapping, TypeVar

from mini_agent.core.hook_output import tool_output_problem
from mini_agent.core.messages import Block, tool_result_block
from mini_agent.harness.tools import Tool, ToolError, check_input

T = TypeVar("T")

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


MAX_TOOL_RESULT_CHARS = 100_000
"""Cap on one tool_result's content as the executor stores and sends it (characters; an
image counts its base64 data). The kit's own tools cut their output far lower
(``DEFAULT_MAX_OUTPUT_CHARS``); this bounds what other tools and PostToolUse hooks may put
into the history and the session file."""

SIBLING_ABORTED = "Sibling tool aborted"
"""Content of the results of tools skipped after a failing write tool (seed wording)."""


def error_text(name: str, exc: BaseException) -> str:
    """The is_error result text for a failed tool: a ToolError's own (actionable) message,
    else ``"<name> failed: <ExceptionType>: <message>"``."""
    if isinstance(exc, ToolError):
        return str(exc) or f"{name} failed"
    return f"{name} failed: {type(exc).__name__}: {exc}"


def cap_result_content(content: str | list[Block], limit_chars: int = MAX_TOOL_RESULT_CHARS
                       ) -> str | list[Block]:
    """Return tool_result ``content`` cut to ``limit_chars`` characters (input not mutated).

    A string keeps its first ``limit_chars`` characters and gets a ``[... truncated: N more
    characters]`` line; in a list, text blocks share the budget in order and an image whose
    data does not fit is replaced by a text note. Content under the cap is returned as is.

    >>> cap_result_content("abcdef", 3)
    'abc\\n[... truncated: 3 more characters]'
    """
    if isinstance(content, str):
        if len(content) <= limit_chars:
            return content
        return (content[:limit_chars]
                + f"\n[... truncated: {len(content) - limit_chars:,} more characters]")
    sizes = [len(b.get("text", "")) if b.get("type") == "text"
             else len(str((b.get("source") or {}).get("data", ""))) for b in content]
    if sum(sizes) <= limit_chars:
        return content
    out: list[Block] = []
    left = limit_chars
    for block, size in zip(content, sizes):
        if block.get("type") == "text":
            if left > 0:
                out.append({**block, "text": cap_result_content(block["text"], left)})
            left -= size
        elif size <= left:
            out.append(block)
            left -= size
        else:
            out.append({"type": "text", "text": f"[an image of {size:,} characters was "
                        "dropped: over the tool result size cap]"})
    return out


def _append_text(content: Any, extra: str) -> Any:
    """Append ``extra`` after a blank line to str content, or as a text block to list content."""
    if isinstance(content, list):
        return [*content, {"type": "text", "text": extra}]
    return f"{content}\n\n{extra}"


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
        """Register a task; its result will leave after every task added before it."""
        self._tasks.append((task_id, asyncio.ensure_future(awaitable)))

    def __len__(self) -> int:
        return len(self._tasks)

    @property
    def pending(self) -> int:
        """How many results have not been yielded yet."""
        return len(self._tasks) - self._cursor

    def drain_ready(self) -> Iterator[T]:
        """Yield settled results from the head, in order; stop at the first unsettled task."""
        while self._cursor < len(self._tasks):
            _, future = self._tasks[self._cursor]
            if not future.done():
                return
            self._cursor += 1
            yield future.result()

    async def drain_all(self) -> AsyncIterator[T]:
        """Yield every remaining result in order, awaiting each unsettled one."""
        while self._cursor < len(self._tasks):
            _, future = self._tasks[self._cursor]
            await asyncio.wait([future])
            self._cursor += 1
            yield future.result()


@dataclasses.dataclass
class ToolOutcome:
    """One executed (or refused) tool_use.

    Attributes: block: the ``tool_result`` block to send (``{"type": "tool_result",
    "tool_use_id", "content": str, "is_error": True?}``); name: the tool name; input: the input
    the tool ran with (after a PreToolUse hook's ``updated_input``); scheduled_at, started_at,
    ended_at: ``time.perf_counter()`` seconds (started_at is None when the tool never ran).
    """

    block: Block
    name: str
    input: dict[str, Any]
    scheduled_at: float
    started_at: float | None
    ended_at: float

    @property
    def tool_use_id(self) -> str:
        """The id of the tool_use this answers."""
        return self.block["tool_use_id"]

    @property
    def is_error(self) -> bool:
        """True for error results (unknown tool, exception, hook block, sibling abort)."""
        return bool(self.block.get("is_error"))


class StreamingExecutor:
    """Schedule tool_use blocks as they stream in; drain their results in tool_use order.

    Args: tools: ``{name: Tool}``; each tool has ``safety`` ("read-only" | "write"),
    ``run(input: dict) -> str`` (sync; raising means failure) and optionally
    ``latency_seconds`` (float, awaited before running); hooks: an object with
    ``async fire(event, payload) -> HookResult`` (``mini_agent.harness.hooks.HookManager``) or None.
    PreToolUse payload ``{"tool_name", "tool_input", "tool_use_id"}``: ``blocked`` gives an
    error result with the reason, ``updated_input`` replaces the input. PostToolUse payload
    adds ``"tool_response"`` (the result text) and ``"is_error"``; its ``additional_context``
    is appended to the result text after a blank line; ``updated_output`` replaces the text.
    Attributes: outcomes: every :class:`ToolOutcome`, in completion order (timelines).
    """

    def __init__(self, tools: Mapping[str, Any], *, hooks: Any = None) -> None:
        self.tools = tools
        self.hooks = hooks
        self.drain: OrderedDrain[ToolOutcome] = OrderedDrain()
        self.outcomes: list[ToolOutcome] = []
        self._all: list[asyncio.Future] = []       # every scheduled task, in order
        self._last_write: asyncio.Future | None = None
        self._write_failed = False

    def schedule(self, block: Block) -> None:
        """Start (or queue) the tool for a complete ``tool_use`` block. Never raises for
        tool problems: they become error results. Call inside a running event loop."""
        scheduled_at = time.perf_counter()
        tool = self.tools.get(block["name"])
        if tool is None:
            known = ", ".join(sorted(self.tools)) or "none"
            coro = self._finish(block, block.get("input") or {}, scheduled_at, None,
                                f"Unknown tool: {block['name']} (available: {known})", True)
        elif getattr(tool, "safety", "write") == "read-only":
            waits = [self._last_write] if self._last_write is not None else []
            coro = self._run(block, tool, waits, scheduled_at)
        else:  # "write", or anything undeclared: the safe default is to serialize
            coro = self._run(block, tool, list(self._all), scheduled_at)
        future = asyncio.ensure_future(coro)
        if tool is not None and getattr(tool, "safety", "write") != "read-only":
            self._last_write = future
        self._all.append(future)
        self.drain.add(block["id"], future)

    async def _run(self, block: Block, tool: Any, waits: list[asyncio.Future],
                   scheduled_at: float) -> ToolOutcome:
        if waits:
            await asyncio.wait(waits)
        tool_input = dict(block.get("input") or {})
        if self._write_failed:
            return await self._finish(block, tool_input, scheduled_at, None,
                                      SIBLING_ABORTED, True)
        if self.hooks is not None:
            pre = await self.hooks.fire("PreToolUse", {
                "tool_name": block["name"], "tool_input": tool_input,
                "tool_use_id": block["id"]})
            if pre.blocked:
                return await self._finish(block, tool_input, scheduled_at, None,
                                          f"Blocked by hook: {pre.reason}", True)
            if pre.updated_input is not None:
                tool_input = dict(pre.updated_input)
        started_at = time.perf_counter()
        try:
            latency = float(getattr(tool, "latency_seconds", 0.0) or 0.0)
            if latency > 0:
                await asyncio.sleep(latency)
            if isinstance(tool, Tool):  # duck-typed tools skip the input check
                check_input(tool, tool_input)
            output = await to_thread(tool.run, tool_input)
            content, is_error = (output if isinstance(output, str) else str(output)), False
        except Exception as exc:  # noqa: BLE001 - a tool failure is data for the model
            content, is_error = error_text(block["name"], exc), True
            if getattr(tool, "safety", "write") != "read-only":
                self._write_failed = True
        return await self._finish(block, tool_input, scheduled_at, started_at, content,
                                  is_error)

    async def _finish(self, block: Block, tool_input: dict[str, Any], scheduled_at: float,
                      started_at: float | None, content: str, is_error: bool) -> ToolOutcome:
        if self.hooks is not None and started_at is not None:
            post = await self.hooks.fire("PostToolUse", {
                "tool_name": block["name"], "tool_input": tool_input,
                "tool_use_id": block["id"], "tool_response": content, "is_error": is_error})
            replacement = getattr(post, "updated_output", None)
            if replacement is not None and tool_output_problem(replacement) is None:
                content = replacement
            extra = getattr(post, "additional_context", None)
            if isinstance(extra, str) and extra.strip():
                content = _append_text(content, extra)
        if isinstance(content, str) and not content.strip():
            content = "(no output)"
        outcome = ToolOutcome(
            block=tool_result_block(block["id"], cap_result_content(content),
                                    is_error=is_error),
            name=block["name"], input=tool_input, scheduled_at=scheduled_at,
            started_at=started_at, ended_at=time.perf_counter())
        self.outcomes.append(outcome)
        return outcome

    def drain_ready(self) -> Iterator[ToolOutcome]:
        """Settled results from the head, in tool_use order (never waits)."""
        return self.drain.drain_ready()

    def drain_all(self) -> AsyncIterator[ToolOutcome]:
        """Every remaining result, in tool_use order (waits for each)."""
        return self.drain.drain_all()


async def run_serially(tools: Mapping[str, Any], blocks: list[Block]) -> list[ToolOutcome]:
    """Run tool_use blocks one after another (the naive ReAct baseline for benchmarks):
    each tool starts only when the previous one has finished. Same error handling."""
    outcomes = []
    for block in blocks:
        executor = StreamingExecutor(tools)
        executor.schedule(block)
        outcomes.extend([o async for o in executor.drain_all()])
    return outcomes
