"""Run tools while the model streams: reads in parallel, writes serialized, results in order.

The Messages API wants every ``tool_use`` of an assistant message answered by a
``tool_result`` in the next user message; the kit keeps them in ``tool_use`` order through an
:class:`~mini_agent.harness.ordered_drain.OrderedDrain`. :class:`StreamingExecutor` schedules each
complete tool_use the moment it arrives:

* a ``"read-only"`` tool runs at once, in parallel with other reads, but after the last write
  scheduled before it has finished;
* a ``"write"`` tool waits for everything scheduled before it, and everything scheduled after
  it waits for it (real pending-write tracking; the seed's ``pendingWrites()`` is always false);
* a write tool that fails (raises) makes every later sibling answer ``Sibling tool aborted``
  with ``is_error`` (seed: "DB migration failed, so do not restart the app");
* an unknown tool name, a hook's block and any exception become ``is_error`` results: tool
  errors are data for the model, never exceptions for the loop (a ``KeyboardInterrupt`` or
  other ``BaseException`` raised in a tool's thread too: Ctrl-C reaches the main thread only);
* an interrupt (closed, cancelled, Ctrl-C) stops the calls not yet started and asks the
  running ones to stop (:func:`~mini_agent.harness.threads.cancel_event`): run_bash and grep
  kill their process (group) and answer that they were interrupted; a tool that does not
  watch the event runs to its end;
* the result is made valid UTF-8 (a non-UTF-8 file name) and capped at
  :data:`MAX_TOOL_RESULT_CHARS`.

It is the one path every tool call takes: the loop's, :func:`run_serially` (the naive
baseline) and :func:`run_tool` (one call from sync code, e.g. a resume check).

Sync tools run in worker threads (:func:`~mini_agent.harness.threads.to_thread`: a pool sized
for IO-bound tools) so the event loop keeps reading the stream; ``Tool.latency_seconds`` (the
offline kit's simulated tool latency) is awaited first.
Taught in ``notebooks/02_parallel_tools.ipynb``; exercise ``02``.
Source: 002_4516104fd432e704.txt section 2 (OrderedDrain, StreamingExecutor).
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from typing import Any, AsyncIterator, Iterator, Mapping

from mini_agent.core.hook_output import HookNotice, hook_notices, tool_output_problem
from mini_agent.core.messages import Block, tool_result_block
from mini_agent.harness.ordered_drain import OrderedDrain
from mini_agent.harness.result_text import (MAX_TOOL_RESULT_CHARS,  # noqa: F401 (re-exported)
                                          cap_result_content, encodable_content,
                                          encodable_text)
from mini_agent.harness.threads import call_outside_event_loop, to_thread
from mini_agent.harness.tools import Tool, check_input
from mini_agent.harness.workspace import ToolError

SIBLING_ABORTED = "Sibling tool aborted"
"""Content of the results of tools skipped after a failing write tool (seed wording)."""

INTERRUPTED_TEXT = ("Not run: the run was interrupted (closed, cancelled or Ctrl-C) before this "
                    "tool started, so it had no effect.")
"""Content of the ``is_error`` results of tools that had not started when the run was
interrupted (:meth:`StreamingExecutor.interrupt`): unlike a crash, the executor knows they
never ran."""


def error_text(name: str, exc: BaseException) -> str:
    """Word the ``is_error`` result text of a failed tool.

    Args:
        name: the tool's name.
        exc: what the tool raised.

    Returns:
        A :class:`ToolError`'s own (actionable) message; for a ``SystemExit`` (a tool
        wrapping a command line that called ``sys.exit``) ``"<name> exited with status
        <code> (SystemExit); nothing else is known of its work"``; else ``"<name> failed:
        <ExceptionType>: <message>"``.
    """
    if isinstance(exc, ToolError):
        return str(exc) or f"{name} failed"
    if isinstance(exc, SystemExit):
        return (f"{name} exited with status {exc.code} (SystemExit); nothing else is known "
                "of its work")
    return f"{name} failed: {type(exc).__name__}: {exc}"


def _capture(run: Any, input: Any) -> tuple[Any, BaseException | None]:
    """Call ``run(input)`` in a tool thread; return ``(output, None)`` or ``(None, exception)``.

    Whatever a tool raises in its thread is the tool's failure, BaseException subclasses
    included: the user's Ctrl-C is delivered to the main thread, never to a tool's, so a
    ``KeyboardInterrupt``, ``GeneratorExit``, ``CancelledError`` or a library's own
    ``BaseException`` raised here would otherwise escape the event loop (asyncio re-raises a
    task's KeyboardInterrupt at once) and leave its tool_use unanswered.
    """
    try:
        return run(input), None
    except BaseException as exc:  # noqa: BLE001 - reported as the tool's is_error result
        return None, exc


def _append_text(content: Any, extra: str) -> Any:
    """Append ``extra`` after a blank line to str content, or as a text block to list content."""
    if isinstance(content, list):
        return [*content, {"type": "text", "text": extra}]
    return f"{content}\n\n{extra}"


@dataclasses.dataclass
class ToolOutcome:
    """One executed (or refused) tool_use.

    Attributes:
        block: the ``tool_result`` block to send (``{"type": "tool_result", "tool_use_id",
            "content": str | list[block], "is_error": True?}``).
        name: the tool name.
        input: the input the tool ran with (after a PreToolUse hook's ``updated_input``).
        scheduled_at, started_at, ended_at: ``time.perf_counter()`` seconds (started_at is
            None when the tool never ran).
        hook_notices: what the PreToolUse/PostToolUse hooks said to the user, in order.
        hook_stop_reason: a hook answered ``"continue": false``: its ``stopReason`` (the
            loop ends once this step's results are stored), else None.
    """

    block: Block
    name: str
    input: dict[str, Any]
    scheduled_at: float
    started_at: float | None
    ended_at: float
    hook_notices: tuple[HookNotice, ...] = ()
    hook_stop_reason: str | None = None

    @property
    def tool_use_id(self) -> str:
        """The id of the tool_use this answers."""
        return self.block["tool_use_id"]

    @property
    def is_error(self) -> bool:
        """True for error results (unknown tool, exception, hook block, sibling abort)."""
        return bool(self.block.get("is_error"))


@dataclasses.dataclass
class _Call:
    """What one tool call gathers on its way to a :class:`ToolOutcome`."""

    block: Block
    input: Any
    scheduled_at: float
    started_at: float | None = None
    cancel: threading.Event = dataclasses.field(default_factory=threading.Event)
    notices: list[HookNotice] = dataclasses.field(default_factory=list)
    stop_reason: str | None = None

    def heard(self, event: str, result: Any) -> Any:
        """Note what a hook's ``result`` says to the user and whether it stops the run."""
        self.notices += hook_notices(event, result)
        if getattr(result, "stop", False):
            self.stop_reason = (getattr(result, "stop_reason", None)
                                or f"a {event} hook stopped the run")
        return result


class StreamingExecutor:
    """Schedule tool_use blocks as they stream in; drain their results in tool_use order.

    Every tool call of the kit takes this path (the loop, :func:`run_serially` and
    :func:`run_tool` included), so a result reads the same however the call was made.

    Args:
        tools: ``{name: Tool}``; each tool has ``safety`` ("read-only" | "write"),
            ``run(input: dict) -> str`` (sync; raising means failure) and optionally
            ``latency_seconds`` (float, awaited before running).
        hooks: an object with ``async fire(event, payload) -> HookResult``
            (``mini_agent.harness.hooks.HookManager``) or None. PreToolUse payload
            ``{"tool_name", "tool_input", "tool_use_id"}``: ``blocked`` gives an error result
            with the reason, ``updated_input`` replaces the input. PostToolUse payload adds
            ``"tool_response"`` (the result text) and ``"is_error"``; its
            ``additional_context`` is appended to the result text after a blank line, and
            so is a block's reason (``"PostToolUse hook: <reason>"``, feedback: the tool
            already ran); ``updated_output`` replaces the text. What the hooks say to the user and a
            ``"continue": false`` travel in the :class:`ToolOutcome`.
    Attributes:
        outcomes: every :class:`ToolOutcome`, in completion order (timelines).
    """

    def __init__(self, tools: Mapping[str, Any], *, hooks: Any = None) -> None:
        self.tools = tools
        self.hooks = hooks
        self.drain: OrderedDrain[ToolOutcome] = OrderedDrain()
        self.outcomes: list[ToolOutcome] = []
        self._all: list[asyncio.Future] = []       # every scheduled task, in order
        self._last_write: asyncio.Future | None = None
        self._write_failed = False
        self._interrupted = False
        self._cancels: list[threading.Event] = []   # one per started call

    def schedule(self, block: Block) -> None:
        """Start (or queue) the tool of a complete ``tool_use`` block.

        Call inside a running event loop. Never raises for tool problems: an unknown tool, a
        hook's block or a failure becomes an ``is_error`` result. After :meth:`interrupt`, the
        call is answered :data:`INTERRUPTED_TEXT` without starting.

        Args:
            block: ``{"type": "tool_use", "id", "name", "input"}``, complete (never a cut one).
        """
        raw = block.get("input")
        call = _Call(block, dict(raw) if isinstance(raw, dict) else raw if raw is not None
                     else {}, time.perf_counter())
        tool = self.tools.get(block["name"])
        if tool is None:
            known = ", ".join(sorted(self.tools)) or "none"
            coro = self._finish(call, f"Unknown tool: {block['name']} (available: {known})",
                                True)
        elif getattr(tool, "safety", "write") == "read-only":
            waits = [self._last_write] if self._last_write is not None else []
            coro = self._run(call, tool, waits)
        else:  # "write", or anything undeclared: the safe default is to serialize
            coro = self._run(call, tool, list(self._all))
        future = asyncio.ensure_future(coro)
        if tool is not None and getattr(tool, "safety", "write") != "read-only":
            self._last_write = future
        self._all.append(future)
        self.drain.add(block["id"], future)

    async def _run(self, call: _Call, tool: Any, waits: list[asyncio.Future]) -> ToolOutcome:
        if waits:
            await asyncio.wait(waits)
        if self._interrupted:
            return await self._finish(call, INTERRUPTED_TEXT, True)
        if self._write_failed:
            return await self._finish(call, SIBLING_ABORTED, True)
        if self.hooks is not None:
            pre = call.heard("PreToolUse", await self.hooks.fire("PreToolUse", {
                "tool_name": call.block["name"], "tool_input": call.input,
                "tool_use_id": call.block["id"]}))
            if pre.blocked:
                return await self._finish(call, f"Blocked by hook: {pre.reason}", True)
            if pre.updated_input is not None:
                call.input = dict(pre.updated_input)
        if self._interrupted:   # interrupted while the PreToolUse hook ran
            return await self._finish(call, INTERRUPTED_TEXT, True)
        call.started_at = time.perf_counter()
        self._cancels.append(call.cancel)
        raised: BaseException | None = None
        try:
            latency = float(getattr(tool, "latency_seconds", 0.0) or 0.0)
            if latency > 0:
                await asyncio.sleep(latency)
            if isinstance(tool, Tool):  # duck-typed tools skip the input check
                check_input(tool, call.input)
            output, raised = await to_thread(_capture, tool.run, call.input,
                                             cancel=call.cancel)
            if raised is None:
                content, is_error = (output if isinstance(output, str) else str(output)), False
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a failure is data for the model
            # SystemExit too: a tool wrapping a CLI (argparse, click) may call sys.exit, and
            # letting it through would end the loop's thread with a tool_use unanswered
            raised = exc
        if raised is not None:
            content, is_error = error_text(call.block["name"], raised), True
            if getattr(tool, "safety", "write") != "read-only":
                self._write_failed = True
        return await self._finish(call, content, is_error)

    async def _finish(self, call: _Call, content: Any, is_error: bool) -> ToolOutcome:
        block = call.block
        if self.hooks is not None and call.started_at is not None:
            post = call.heard("PostToolUse", await self.hooks.fire("PostToolUse", {
                "tool_name": block["name"], "tool_input": call.input,
                "tool_use_id": block["id"], "tool_response": content, "is_error": is_error}))
            replacement = getattr(post, "updated_output", None)
            if replacement is not None and tool_output_problem(replacement) is None:
                content = replacement
            extra = getattr(post, "additional_context", None)
            if isinstance(extra, str) and extra.strip():
                content = _append_text(content, extra)
            feedback = getattr(post, "reason", None)
            if (getattr(post, "blocked", False) and not getattr(post, "stop", False)
                    and isinstance(feedback, str) and feedback.strip()):
                # Claude Code: a PostToolUse block cannot undo the call; its reason is
                # feedback the model must see, so it joins the result
                content = _append_text(content, f"PostToolUse hook: {feedback}")
        if isinstance(content, str) and not content.strip():
            content = "(no output)"
        outcome = ToolOutcome(
            block=tool_result_block(block["id"], cap_result_content(encodable_content(content)),
                                    is_error=is_error),
            name=block["name"], input=call.input, scheduled_at=call.scheduled_at,
            started_at=call.started_at, ended_at=time.perf_counter(),
            hook_notices=tuple(call.notices), hook_stop_reason=call.stop_reason)
        self.outcomes.append(outcome)
        return outcome

    def drain_ready(self) -> Iterator[ToolOutcome]:
        """Hand out the settled results from the head, in tool_use order, without waiting.

        Returns:
            An iterator of :class:`ToolOutcome`; it stops at the first unsettled call.
        """
        return self.drain.drain_ready()

    def drain_all(self) -> AsyncIterator[ToolOutcome]:
        """Hand out every remaining result, in tool_use order, waiting for each.

        Returns:
            An async iterator of :class:`ToolOutcome`.
        """
        return self.drain.drain_all()

    def interrupt(self) -> None:
        """Stop every call that has not started and ask the running ones to stop.

        A call not yet started answers :data:`INTERRUPTED_TEXT`; calls scheduled after this
        are not started either. A call has started once its PreToolUse hook let it through
        (``started_at`` is set): its cancel event
        (:func:`~mini_agent.harness.threads.cancel_event`) is set, so run_bash and grep kill
        their process group and child at once and answer ``is_error`` that they were
        interrupted; a tool that does not watch the event runs to its end (a thread cannot
        be stopped from outside). Idempotent.
        """
        self._interrupted = True
        for cancel in self._cancels:
            cancel.set()

    async def settle(self) -> list[ToolOutcome]:
        """Interrupt, then wait for the running calls and return every undrained result.

        Returns:
            The results not yet handed out, in tool_use order: a running call's own result
            (run_bash's and grep's say they were interrupted), an unstarted call's
            ``is_error`` :data:`INTERRUPTED_TEXT`.
        """
        self.interrupt()
        return [outcome async for outcome in self.drain_all()]


async def run_serially(tools: Mapping[str, Any], blocks: list[Block]) -> list[ToolOutcome]:
    """Run tool_use blocks one after another: the naive ReAct baseline for benchmarks.

    Each tool starts only when the previous one has finished; errors are handled as in
    :class:`StreamingExecutor`.

    Args:
        tools: ``{name: Tool}``.
        blocks: the ``tool_use`` blocks, in order.

    Returns:
        One :class:`ToolOutcome` per block, in order.
    """
    outcomes = []
    for block in blocks:
        executor = StreamingExecutor(tools)
        executor.schedule(block)
        outcomes.extend([o async for o in executor.drain_all()])
    return outcomes


def run_tool(tools: Mapping[str, Any], name: str, input: Any) -> tuple[Any, bool]:
    """Run one tool call through the executor and return ``(content, is_error)``.

    The synchronous door to the same path the loop takes (resume checks, tests, small
    drivers): the tool's latency is awaited, the input checked, any failure and an unknown
    name become ``(actionable message, True)``; never raises for tool failures. Works inside
    a running event loop too (Jupyter).

    Args:
        tools: ``{name: Tool}``.
        name: the tool to call.
        input: its input dict.

    Returns:
        ``(content, is_error)``: the tool_result content and whether it is an error.

    Example: ``run_tool({}, "nope", {}) == ("Unknown tool: nope (available: none)", True)``.
    """
    block = {"type": "tool_use", "id": "toolu_run_tool", "name": name, "input": input}
    outcome, = call_outside_event_loop(asyncio.run, run_serially(tools, [block]))
    return outcome.block["content"], outcome.is_error
