"""The agent loop, readable top to bottom: request, stream, run tools, store, repeat.

A *turn* is one model request. A *step* is one assistant message and the user message of
tool results that answers it; it takes one turn, or more when a reply is cut by
``max_tokens`` and continued (:class:`~mini_agent.core.continuation.Continuation`). Each
step of :func:`run_loop` (seed 002, section 1):

1. **request and stream**: the view of the history is sent (:func:`~mini_agent.harness.model.open_request`:
   view policy, the request built in one place, one retry on "prompt is too long"). The reply
   arrives as chunks; each complete tool_use is scheduled on the
   :class:`~mini_agent.harness.executor.StreamingExecutor` at once, and results already settled
   are drained (in order) after every chunk. A reply cut by ``max_tokens`` is continued.
2. **store the reply** as ONE assistant message (pieces merged; no empty text block: the API
   says "text content blocks must be non-empty").
3. **drain**: the remaining results are awaited in tool_use order.
4. **store the results**: ONE user message holding every result (those drained during
   streaming AND after, in tool_use order: seed pitfall 1), plus a note for each tool_use cut
   by ``max_tokens`` (it never ran).
5. **decide**: no tool ran -> ``"completed"``; a hook said ``"continue": false`` ->
   ``"hook_stopped"``; ``max_turns`` requests made -> ``"max_turns_reached"``; else the next step.

The loop owns the history and its times: it appends each message to ``history`` and the clock
time to ``times`` (same index), and yields a :class:`MessageAppended` event for each, so a
caller can log it (write-ahead: the generator waits while the caller handles the event).
If the loop is interrupted after the assistant message was stored, every unanswered tool_use
gets an ``is_error`` result (:data:`~mini_agent.core.messages.NO_RESULT_TEXT`) so the history
stays valid.

Events, in order: :class:`TurnStart`, the stream chunks as they come
(:class:`~mini_agent.core.streaming.TextDelta`, :class:`~mini_agent.core.streaming.ToolUseReady`,
:class:`~mini_agent.core.streaming.ToolUseTruncated`), :class:`ToolResult` (interleaved, in
tool_use order), :class:`TurnEnd`, :class:`~mini_agent.core.continuation.Continuing` (another
turn of the same step follows), :class:`MessageAppended`, and last :class:`LoopEnd` whose
``exit_status`` is the loop's result (an async generator cannot ``return`` a value).
The :class:`~mini_agent.harness.agent.Agent` and the CLI run on this loop; it is the only one.

IO: network (through the SDK), tools (through the executor), the clock. Taught in
``notebooks/01_agent_loop.ipynb`` and ``02_parallel_tools.ipynb``.
Source: 002_4516104fd432e704.txt sections 1-2 (runLoop, flushText, drainReady/drainAll).
"""

from __future__ import annotations

import dataclasses
from typing import Any, AsyncIterator, Callable, Mapping

from mini_agent.core.clock import Clock
from mini_agent.core.continuation import MAX_CONTINUE_ATTEMPTS, Continuation, Continuing
from mini_agent.core.hook_output import HookNotice
from mini_agent.core.messages import (NO_RESULT_TEXT, Block, Message, content_blocks,
                                      tool_result_block, tool_uses)
from mini_agent.core.streaming import StreamDone, TextDelta, ToolUseReady, ToolUseTruncated
from mini_agent.core.tokens import approx_tokens
from mini_agent.core.view import ViewContext, full_view
from mini_agent.harness.clock import SystemClock
from mini_agent.harness.executor import StreamingExecutor, ToolOutcome
from mini_agent.harness.model import Model, open_request

DEFAULT_MAX_TURNS = 30
"""Model requests one ``run_loop`` may make before it stops with ``"max_turns_reached"``."""

DROPPED_NOTE = ("[The tool_use {name} ({id}) was cut off by max_tokens before its input was "
                "complete; it was not run.]")


# ------------------------------------------------------------------ events

@dataclasses.dataclass(frozen=True)
class TurnStart:
    """A model request begins; ``turn`` numbers the requests (from ``first_turn``)."""

    turn: int


@dataclasses.dataclass(frozen=True)
class TurnEnd:
    """A model request's reply ended.

    Attributes:
        turn: the request's number.
        stop_reason: the API's stop_reason of this reply (None if the stream broke off).
        usage: its token counts (``input_tokens``, ``output_tokens``,
            ``cache_creation_input_tokens``, ``cache_read_input_tokens``).
        raw_tokens: approx tokens of the history (and continuation messages) it was built from.
        view_tokens: approx tokens of the messages it sent.
        message_count: messages it sent.
        overflow_retry: it is the retry with ``on_context_overflow``'s view.
        request: the ``messages.create`` kwargs sent (not compared).
    """

    turn: int
    stop_reason: str | None
    usage: dict[str, int]
    raw_tokens: int = 0
    view_tokens: int = 0
    message_count: int = 0
    overflow_retry: bool = False
    request: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def record(self) -> dict[str, Any]:
        """``{"turn", "raw_tokens", "view_tokens", "usage", "stop_reason", "messages",
        "overflow_retry"}``: the per-request record widgets read (``messages`` is a count)."""
        return {"turn": self.turn, "raw_tokens": self.raw_tokens,
                "view_tokens": self.view_tokens, "usage": dict(self.usage),
                "stop_reason": self.stop_reason, "messages": self.message_count,
                "overflow_retry": self.overflow_retry}


@dataclasses.dataclass(frozen=True)
class ToolResult:
    """A tool's result, in tool_use order; ``outcome.block`` is the tool_result block."""

    outcome: ToolOutcome

    @property
    def block(self) -> Block:
        """The ``tool_result`` block sent back to the model."""
        return self.outcome.block


@dataclasses.dataclass(frozen=True)
class MessageAppended:
    """The loop appended ``message`` to the history (a user message that follows a user
    message is merged into it: ``message`` is then only the new part)."""

    message: Message


@dataclasses.dataclass(frozen=True)
class LoopEnd:
    """The loop's result: ``exit_status`` is ``"completed"``, ``"max_turns_reached"`` or
    ``"hook_stopped"`` (the Agent adds ``"prompt_blocked"``); ``turns``: requests made."""

    exit_status: str
    turns: int


LoopEvent = (TurnStart | TextDelta | ToolUseReady | ToolUseTruncated | ToolResult | TurnEnd
             | Continuing | MessageAppended | LoopEnd | HookNotice)


# ------------------------------------------------------------------ the history and its times

def append_message(history: list[Message], times: list[float], message: Message,
                   now: float) -> MessageAppended:
    """Append ``message`` and its time ``now`` (seconds); merge a user message into a user
    message that ends the history (a run that stopped on tool results, then a new prompt).

    Returns the :class:`MessageAppended` event to yield. Mutates ``history`` and ``times``.
    """
    if history and history[-1]["role"] == message["role"] == "user":
        history[-1] = {"role": "user",
                       "content": content_blocks(history[-1]) + content_blocks(message)}
        times[-1] = now
    else:
        history.append(message)
        times.append(now)
    return MessageAppended(message)


def view_context(times: list[float], message_count: int, *, now: float, turn: int) -> ViewContext:
    """The :class:`ViewContext` of a request over ``message_count`` messages: the recorded
    times, then ``now`` for messages that are not in the history (a continuation's)."""
    padded = list(times[:message_count]) + [now] * (message_count - len(times))
    return ViewContext(times=tuple(padded), now=now, turn=turn)


def _add_text(content: list[Block], text: str) -> None:
    """Extend the open text block of a reply piece, or start one after a tool_use."""
    if content and content[-1]["type"] == "text":
        content[-1] = {"type": "text", "text": content[-1]["text"] + text}
    else:
        content.append({"type": "text", "text": text})


# ------------------------------------------------------------------ the loop

async def run_loop(model: Model, history: list[Message], *, tools: Mapping[str, Any],
                   times: list[float] | None = None, clock: Clock | None = None,
                   prompt: list[Block] | None = None, view: Callable = full_view,
                   on_context_overflow: Callable | None = None, hooks: Any = None,
                   max_turns: int = DEFAULT_MAX_TURNS, auto_continue: bool = True,
                   max_continue_attempts: int = MAX_CONTINUE_ATTEMPTS,
                   first_turn: int = 1) -> AsyncIterator[LoopEvent]:
    """Run steps until the model stops asking for tools or ``max_turns`` requests were made.

    Args:
        model: where and how requests go (:func:`~mini_agent.harness.model.sdk_model`).
        history: the conversation, ending with a user message unless ``prompt`` is given.
            THE LOOP APPENDS TO THIS LIST (it is the loop's state).
        tools: ``{name: Tool}``.
        times: clock seconds per history message, appended in step (default: ``now`` for
            each message already there; a list of another length is an error).
        clock: the time source (default: the system clock).
        prompt: user content blocks to append first (merged into a trailing user message).
        view: the view policy ``(messages, ctx) -> view`` (default: everything).
        on_context_overflow: ``(messages, ctx) -> view`` tried once on "prompt is too long".
        hooks: a HookManager for PreToolUse/PostToolUse, or None.
        max_turns: model requests allowed (>= 1); a continuation never goes past it.
        auto_continue: continue replies cut by ``max_tokens`` (:mod:`mini_agent.core.continuation`).
        max_continue_attempts: requests per reply at most, the first included.
        first_turn: the number of the first request (the Agent counts over its life).
    Yields:
        the events above; the last one is :class:`LoopEnd`.
    Raises:
        ValueError: max_turns < 1, or times not parallel to history.
        ContextOverflowError, MessageValidationError and the SDK's errors propagate. Tool
        errors never raise: they are ``is_error`` results.
    """
    if max_turns < 1:
        raise ValueError(f"max_turns must be >= 1, got {max_turns}")
    clock = clock or SystemClock()
    if times is None:
        times = [clock.now()] * len(history)
    if len(times) != len(history):
        raise ValueError(f"times has {len(times)} entries for {len(history)} messages")
    if prompt is not None:
        yield append_message(history, times, {"role": "user", "content": prompt}, clock.now())
    last_turn = first_turn + max_turns - 1
    turn = first_turn - 1
    while True:
        executor = StreamingExecutor(tools, hooks=hooks)
        results: list[ToolOutcome] = []
        notes: list[str] = []
        attempts = min(max_continue_attempts, last_turn - turn) if auto_continue else 1
        reply = Continuation(history, max_attempts=attempts)
        try:
            # 1. request and stream, turn after turn while the reply is continued
            while True:
                turn += 1
                yield TurnStart(turn)
                ctx = view_context(times, len(reply.messages), now=clock.now(), turn=turn)
                sent = await open_request(model, reply.messages, ctx, view=view,
                                          on_context_overflow=on_context_overflow,
                                          max_tokens_scale=reply.max_tokens_scale)
                piece: list[Block] = []
                cut: list[str] = []
                done = StreamDone(None, {})
                async for chunk in sent.chunks:
                    if isinstance(chunk, StreamDone):
                        done = chunk
                        continue
                    if isinstance(chunk, TextDelta):
                        _add_text(piece, chunk.text)
                    elif isinstance(chunk, ToolUseReady):
                        piece.append(chunk.block)
                        executor.schedule(chunk.block)  # the tool starts now
                    elif isinstance(chunk, ToolUseTruncated):
                        cut.append(chunk.id)
                        notes.append(DROPPED_NOTE.format(name=chunk.name, id=chunk.id))
                    yield chunk
                    for outcome in executor.drain_ready():
                        results.append(outcome)
                        yield ToolResult(outcome)
                messages = sent.request["messages"]
                yield TurnEnd(turn, done.stop_reason, dict(done.usage),
                              raw_tokens=approx_tokens(reply.messages),
                              view_tokens=approx_tokens(messages), message_count=len(messages),
                              overflow_retry=sent.overflow_retry, request=sent.request)
                action = reply.feed(piece, stop_reason=done.stop_reason, usage=done.usage,
                                    dropped_tool_use_ids=cut)
                if action in ("done", "give_up"):
                    break
                yield Continuing(reply.attempts, action)
            # 2. store the reply
            if reply.content:
                yield append_message(history, times, {"role": "assistant",
                                                      "content": reply.content}, clock.now())
            # 3. drain the rest, in tool_use order
            async for outcome in executor.drain_all():
                results.append(outcome)
                yield ToolResult(outcome)
            # 4. store every result in one user message
            if results:
                content = [o.block for o in results]
                if notes:  # tell the model its cut tool call did not run
                    content.append({"type": "text", "text": "\n".join(notes)})
                yield append_message(history, times, {"role": "user", "content": content},
                                     clock.now())
        finally:
            if history and history[-1]["role"] == "assistant" and tool_uses(history[-1]):
                # interrupted mid-step: answer every tool_use, so the history stays valid
                done_ids = {o.tool_use_id for o in results}
                missing = [tool_result_block(b["id"], NO_RESULT_TEXT, is_error=True)
                           for b in tool_uses(history[-1]) if b["id"] not in done_ids]
                history.append({"role": "user", "content": [o.block for o in results] + missing})
                times.append(clock.now())
        # 5. decide
        turns = turn - first_turn + 1
        if not results:
            yield LoopEnd("completed", turns)
            return
        if any(o.hook_stop_reason for o in results):
            yield LoopEnd("hook_stopped", turns)
            return
        if turn >= last_turn:
            yield LoopEnd("max_turns_reached", turns)
            return
