"""The agent loop of the kit: a streaming state machine that starts tools while the model speaks.

One turn has three phases (seed 002, section 1):

1. **stream**: the model's reply arrives as chunks (:mod:`mini_agent.core.streaming`). Text deltas
   are yielded live and buffered; the buffer is flushed into ONE text block before each
   tool_use and at the end of the stream (no empty text block is ever stored: the API says
   "text content blocks must be non-empty"). Each complete tool_use is scheduled on the
   :class:`~mini_agent.harness.executor.StreamingExecutor` at once, and results that are already
   settled are drained (in order) after every chunk.
2. **drain**: after the stream, the remaining results are awaited in tool_use order.
3. **decide**: no tool_use -> the loop ends with ``"completed"``; otherwise the assistant
   message and ONE user message holding every result (those drained during streaming AND
   after, in tool_use order: seed pitfall 1) are appended, and the next turn starts, unless
   ``max_turns`` requests have been made (``"max_turns_reached"``).

:func:`run_loop` is an async generator of typed events (:class:`TurnStart`,
:class:`TextChunk`, :class:`ToolUse`, :class:`ToolResult`, :class:`ToolUseDropped`,
:class:`Continued`, :class:`TurnEnd`) and ends with :class:`LoopEnd` whose ``stop_reason`` is
the loop's result (an async generator cannot ``return`` a value in Python, so the seed's
return value travels in this last event). :func:`stream_chunks` makes one request through the
SDK (``client.messages.create(stream=True)``, or without streaming) and yields chunks;
:func:`sdk_model` binds a client and request settings into the ``call_model`` the loop takes.
The :class:`~mini_agent.harness.agent.Agent` and the CLI run on this loop; it is the only one.

IO: network (through the SDK), tools (through the executor). Taught in
``notebooks/01_agent_loop.ipynb`` and ``02_parallel_tools.ipynb``.
Source: 002_4516104fd432e704.txt sections 1-2 (runLoop, flushText, drainReady/drainAll).
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from typing import Any, AsyncIterator, Callable, Mapping

import anthropic

from mini_agent.core.continuation import MAX_CONTINUE_ATTEMPTS, Continuing, continue_stream
from mini_agent.harness.executor import StreamingExecutor, ToolOutcome
from mini_agent.core.messages import Block, MessageParam, tool_result_block, validate_messages
from mini_agent.core.streaming import (StreamAssembler, StreamDone, TextDelta, ToolUseReady, ToolUseTruncated,
                                       message_chunks)

DEFAULT_MAX_TURNS = 30
"""Model requests one ``run_loop`` may make before it stops with ``"max_turns_reached"``."""

INTERRUPTED = "Interrupted before this tool finished"
DROPPED_NOTE = ("[The tool_use {name} ({id}) was cut off by max_tokens before its input was "
                "complete; it was not run.]")


# ------------------------------------------------------------------ events

@dataclasses.dataclass(frozen=True)
class TurnStart:
    """A model request begins; ``turn`` counts from 1."""

    turn: int


@dataclasses.dataclass(frozen=True)
class TextChunk:
    """A non-empty piece of assistant text, as it streams."""

    text: str


@dataclasses.dataclass(frozen=True)
class ToolUse:
    """A complete tool_use block ``{"type": "tool_use", "id", "name", "input"}``; it is
    already scheduled when this event is seen."""

    block: Block


@dataclasses.dataclass(frozen=True)
class ToolResult:
    """A tool's result, in tool_use order; ``outcome.block`` is the tool_result block."""

    outcome: ToolOutcome

    @property
    def block(self) -> Block:
        """The ``tool_result`` block sent back to the model."""
        return self.outcome.block


@dataclasses.dataclass(frozen=True)
class ToolUseDropped:
    """A tool_use cut by max_tokens: never run, never stored (``partial_json`` as received)."""

    id: str
    name: str
    partial_json: str


@dataclasses.dataclass(frozen=True)
class Continued:
    """The reply was cut by max_tokens and the loop asked for more (see ``continuation``)."""

    attempt: int
    action: str


@dataclasses.dataclass(frozen=True)
class TurnEnd:
    """A turn finished: ``stop_reason`` (merged over continuations), ``usage`` (token
    counts summed over the turn's requests), ``tool_count`` (tools run this turn)."""

    turn: int
    stop_reason: str | None
    usage: dict[str, int]
    tool_count: int


@dataclasses.dataclass(frozen=True)
class LoopEnd:
    """The loop's result: ``stop_reason`` is ``"completed"``, ``"max_turns_reached"`` or
    ``"hook_stopped"`` (the Agent adds ``"prompt_blocked"``)."""

    stop_reason: str
    turns: int


@dataclasses.dataclass(frozen=True)
class HookNotice:
    """What a hook said to the user: its ``systemMessage`` and any non-blocking errors
    (exit codes other than 0 and 2, timeouts, unreadable output). ``event`` is the hook event
    (``"PreToolUse"``...). Yielded by the Agent, never sent to the model."""

    event: str
    system_message: str | None
    errors: tuple[str, ...] = ()


LoopEvent = (TurnStart | TextChunk | ToolUse | ToolResult | ToolUseDropped | Continued
             | TurnEnd | LoopEnd | HookNotice)


# ------------------------------------------------------------------ model calls through the SDK

async def stream_chunks(client: Any, request: dict[str, Any], *,
                        stream: bool = True) -> AsyncIterator[Any]:
    """Send one Messages API request through the SDK and yield loop chunks.

    Args: client: ``anthropic.AsyncAnthropic`` (preferred) or ``anthropic.Anthropic`` (its
    blocking calls then run in worker threads); request: ``messages.create`` kwargs;
    stream: True uses ``messages.create(stream=True)`` and reduces the raw events with
    :class:`~mini_agent.core.streaming.StreamAssembler`; False makes one plain request.
    Yields: TextDelta / ToolUseReady / ToolUseTruncated chunks, then StreamDone.
    Raises: the SDK's errors (``anthropic.BadRequestError`` ...).
    """
    is_async = isinstance(client, anthropic.AsyncAnthropic)
    if not stream:
        if is_async:
            message = await client.messages.create(**request)
        else:
            message = await asyncio.to_thread(client.messages.create, **request)
        for chunk in message_chunks(message):
            yield chunk
        return
    assembler = StreamAssembler()
    if is_async:
        events = await client.messages.create(**request, stream=True)
        async with events:
            async for event in events:
                for chunk in assembler.feed(event):
                    yield chunk
    else:
        events = await asyncio.to_thread(client.messages.create, **request, stream=True)
        iterator = iter(events)
        end = object()
        try:
            while (event := await asyncio.to_thread(next, iterator, end)) is not end:
                for chunk in assembler.feed(event):
                    yield chunk
        finally:
            events.close()
    if not assembler.done:
        for chunk in assembler.finish():
            yield chunk


def sdk_model(client: Any, *, model: str, max_tokens: int, system: Any = None,
              tools: Mapping[str, Any] | None = None, stream: bool = True,
              prepare_request: Callable[[dict], dict] | None = None) -> Callable:
    """Return ``call_model(messages, *, max_tokens_scale=1)`` for :func:`run_loop`.

    Each call builds ``{"model", "max_tokens", "messages", "system"?, "tools"?}`` (tool
    definitions from each tool's ``definition()``), applies ``prepare_request``, checks it
    with ``validate_messages`` and yields :func:`stream_chunks`. ``messages`` is not mutated.
    """
    definitions = [t.definition() for t in (tools or {}).values()]

    def call_model(messages: list[MessageParam], *, max_tokens_scale: int = 1):
        request: dict[str, Any] = {"model": model, "max_tokens": max_tokens * max_tokens_scale,
                                   "messages": list(messages)}
        if system:
            request["system"] = system
        if definitions:
            request["tools"] = definitions
        if prepare_request is not None:
            request = prepare_request(request)
        validate_messages(request["messages"], system=request.get("system"),
                          tools=request.get("tools"))
        return stream_chunks(client, request, stream=stream)
    return call_model


async def maybe_await(value: Any) -> Any:
    """Await ``value`` if it is awaitable (callbacks may be sync or async)."""
    if inspect.isawaitable(value):
        return await value
    return value


# ------------------------------------------------------------------ the loop

async def run_loop(call_model: Callable[..., AsyncIterator[Any]], history: list[MessageParam],
                   *, tools: Mapping[str, Any], hooks: Any = None,
                   max_turns: int = DEFAULT_MAX_TURNS, auto_continue: bool = True,
                   max_continue_attempts: int = MAX_CONTINUE_ATTEMPTS,
                   on_message: Callable | None = None,
                   on_tool_result: Callable | None = None,
                   should_stop: Callable[[], str | None] | None = None,
                   ) -> AsyncIterator[LoopEvent]:
    """Run turns until the model stops asking for tools or ``max_turns`` requests were made.

    Args: call_model: ``call_model(messages, *, max_tokens_scale=1) -> async iterator of
    chunks`` (see :func:`sdk_model`); history: the conversation so far, ending with a user
    message. THE LOOP APPENDS TO THIS LIST (it is the loop's state): each assistant message
    and each user message of tool results; tools: ``{name: Tool}``; hooks: a HookManager for
    PreToolUse/PostToolUse (or None); max_turns: model requests allowed (>= 1);
    auto_continue: continue through ``max_tokens`` cuts (:mod:`mini_agent.core.continuation`).
    Callbacks, sync or async, all awaited before the loop goes on (so a write-ahead session
    can rely on them): ``on_message(message)`` after each append to ``history``;
    ``on_tool_result(block)`` for each tool_result block, in tool_use order, never before
    the assistant message holding its tool_use was passed to ``on_message``.
    ``should_stop()`` is asked after each turn whose results are stored (a hook's
    ``"continue": false``); a truthy answer ends the loop with ``"hook_stopped"`` while the
    history is valid.
    Yields: the events above; the last one is :class:`LoopEnd`.
    Raises: ValueError if max_turns < 1; the model's errors (SDK exceptions) propagate.
    Tool errors never raise: they are ``is_error`` results.
    """
    if max_turns < 1:
        raise ValueError(f"max_turns must be >= 1, got {max_turns}")
    turn = 1
    while True:
        yield TurnStart(turn)
        executor = StreamingExecutor(tools, hooks=hooks)
        blocks: list[Block] = []
        results: list[Block] = []
        notes: list[str] = []
        text_buffer: list[str] = []
        done = StreamDone(None, {})
        stored_assistant = follow_up_stored = False

        def flush_text() -> None:
            text = "".join(text_buffer)
            text_buffer.clear()
            if text.strip():
                blocks.append({"type": "text", "text": text})

        chunks = (continue_stream(call_model, history, max_attempts=max_continue_attempts)
                  if auto_continue else call_model(history))
        try:
            # Phase 1: stream; tools start as soon as their block is complete.
            async for chunk in chunks:
                if isinstance(chunk, TextDelta):
                    if chunk.text:
                        text_buffer.append(chunk.text)
                        yield TextChunk(chunk.text)
                elif isinstance(chunk, ToolUseReady):
                    flush_text()
                    blocks.append(chunk.block)
                    executor.schedule(chunk.block)
                    yield ToolUse(chunk.block)
                elif isinstance(chunk, ToolUseTruncated):
                    notes.append(DROPPED_NOTE.format(name=chunk.name, id=chunk.id))
                    yield ToolUseDropped(chunk.id, chunk.name, chunk.partial_json)
                elif isinstance(chunk, Continuing):
                    yield Continued(chunk.attempt, chunk.action)
                elif isinstance(chunk, StreamDone):
                    done = chunk
                for outcome in executor.drain_ready():
                    results.append(outcome.block)
                    yield ToolResult(outcome)
            flush_text()
            if blocks:
                history.append({"role": "assistant", "content": blocks})
                stored_assistant = True
                await maybe_await(on_message and on_message(history[-1]))
                for block in results:  # drained during streaming: report them now
                    await maybe_await(on_tool_result and on_tool_result(block))
            # Phase 2: the remaining results, in tool_use order.
            async for outcome in executor.drain_all():
                results.append(outcome.block)
                await maybe_await(on_tool_result and on_tool_result(outcome.block))
                yield ToolResult(outcome)
            tool_count = len(executor.drain)
            # Phase 3: decide (the follow-up holds every result, in tool_use order).
            if tool_count:
                content: list[Block] = list(results)
                if notes:  # tell the model its cut tool call did not run
                    content.append({"type": "text", "text": "\n".join(notes)})
                history.append({"role": "user", "content": content})
                follow_up_stored = True
                await maybe_await(on_message and on_message(history[-1]))
        finally:
            if stored_assistant and not follow_up_stored and len(executor.drain):
                # interrupted mid-turn: answer every tool_use so the history stays valid
                answered = {r["tool_use_id"] for r in results}
                results += [tool_result_block(b["id"], INTERRUPTED, is_error=True)
                            for b in blocks if b["type"] == "tool_use" and b["id"] not in answered]
                history.append({"role": "user", "content": results})
        yield TurnEnd(turn, done.stop_reason, dict(done.usage), tool_count)
        if not tool_count:
            yield LoopEnd("completed", turn)
            return
        if should_stop is not None and should_stop():
            yield LoopEnd("hook_stopped", turn)
            return
        if turn >= max_turns:
            yield LoopEnd("max_turns_reached", turn)
            return
        turn += 1


async def collect(events: AsyncIterator[LoopEvent]) -> list[LoopEvent]:
    """Consume an event stream into a list (handy in tests and notebooks)."""
    return [event async for event in events]
