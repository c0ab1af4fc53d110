"""The agent loop, readable top to bottom: request, stream, run tools, store, repeat.

A *turn* is one model request. A *step* is one assistant message and the user message of
tool results that answers it; it takes one turn, or more when a reply is cut by
``max_tokens`` and continued (:class:`~mini_agent.core.continuation.Continuation`). Each
step of :func:`run_loop` (seed 002, section 1):

1. **request and stream**: the view of the history is sent
   (:func:`~mini_agent.harness.model.open_request`: view policy, the request built in one
   place, one retry on "prompt is too long"). The reply
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
6. **Stop hook** (when ``hooks`` is given and the loop would end): ``Stop`` fires with
   ``stop_hook_active`` and the would-be ``exit_status``. If it blocks a ``"completed"`` end
   (``decision: "block"``, exit code 2), its reason is appended as ONE user message
   ``"Stop hook feedback:\n<reason>"`` (:mod:`mini_agent.harness.stop_hook`: the text
   Claude Code sends) and the next step begins. The guard: after ``max_stop_hook_blocks``
   (default 8, Claude Code's cap) such continuations the next block ends the loop with
   ``"stop_hook_limit"``; with no request left under ``max_turns`` it ends with
   ``"max_turns_reached"``. A block of any other end changes nothing (the run ends).

**A stream that breaks mid-way** (an ``overloaded_error`` or ``api_error`` event, a dropped
connection: :func:`~mini_agent.harness.model.stream_fault_kind`) is not the end of the run.
The tool calls that arrived complete before the break were already scheduled, so they may
have run: the history KEEPS them (the partial assistant message, text included) and their
results, and the next request carries those results, so no tool runs twice and the model
does not ask for what it already has (the API accepts it: every tool_use is answered in the
next message). A break before any complete tool call drops the piece and sends the same
request again. After ``max_stream_retries`` breaks in a row the loop raises
:class:`~mini_agent.harness.model.StreamFaultError`, its history valid. A 400 is never retried.

The loop owns the history and its times: it appends each message to ``history`` and the clock
time to ``times`` (same index), and yields a :class:`MessageAppended` event for each, so a
caller can log it (write-ahead: the generator waits while the caller handles the event).
**Interrupted** (the caller closes the event stream with ``aclose()``, the task is
cancelled, Ctrl-C): tools not yet started never start (they answer
:data:`~mini_agent.harness.executor.INTERRUPTED_TEXT`, ``is_error``), running ones are asked
to stop (run_bash and grep kill their processes; other tools finish), a reply still
streaming keeps its complete tool calls as above, and the step's results are
appended as ONE user message before the generator closes (with the note of each tool call
cut by ``max_tokens``, as in step 4), so the history stays valid (a
second cancellation while this settles waits for it:
:func:`~mini_agent.harness.loop_settle.settle_to_the_end`). That message is appended
without an event (a closing generator cannot yield): the caller reads it from ``history``
(the Agent logs it to the session).

Events, in order: :class:`TurnStart`, the stream chunks as they come
(:class:`~mini_agent.core.streaming.TextDelta`, :class:`~mini_agent.core.streaming.ToolUseReady`,
:class:`~mini_agent.core.streaming.ToolUseTruncated`), :class:`ToolResult` (interleaved, in
tool_use order), :class:`TurnEnd`, :class:`~mini_agent.core.continuation.Continuing` (another
turn of the same step follows), :class:`StreamRetry` (the stream broke),
:class:`MessageAppended`, the Stop hook's notices and :class:`StopBlocked`, and last
:class:`LoopEnd` whose
``exit_status`` is the loop's result (an async generator cannot ``return`` a value).
The :class:`~mini_agent.harness.agent.Agent` and the CLI run on this loop; it is the only one.

IO: network (through the SDK), tools (through the executor), the clock. Taught in
``notebooks/01_agent_loop.ipynb`` and ``02_parallel_tools.ipynb``.
Source: 002_4516104fd432e704.txt sections 1-2 (runLoop, flushText, drainReady/drainAll).
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Callable, Mapping

from mini_agent.core.clock import Clock
from mini_agent.core.continuation import (MAX_CONTINUE_ATTEMPTS, Continuation, Continuing,
                                          merge_pieces)
from mini_agent.core.hook_output import hook_notices
from mini_agent.core.messages import Block, Message, content_blocks, tool_uses
from mini_agent.core.streaming import StreamDone, TextDelta, ToolUseReady, ToolUseTruncated
from mini_agent.core.tokens import approx_tokens
from mini_agent.core.view import ViewContext, full_view
from mini_agent.harness.clock import SystemClock
from mini_agent.harness.executor import StreamingExecutor, ToolOutcome
from mini_agent.harness.loop_events import (LoopEnd, LoopEvent, MessageAppended, StopBlocked,
                                            StreamRetry, ToolResult, TurnEnd, TurnStart)
from mini_agent.harness.loop_settle import settle_interrupted, settle_to_the_end
from mini_agent.harness.result_text import encodable_blocks
from mini_agent.harness.model import (DEFAULT_STREAM_RETRIES, Model, StreamFaultError,
                                      open_request, stream_fault_kind)
from mini_agent.harness.stop_hook import (DEFAULT_MAX_STOP_HOOK_BLOCKS, STOP_HOOK_LIMIT,
                                          stop_feedback, stop_payload)

DEFAULT_MAX_TURNS = 30
"""Model requests one ``run_loop`` may make before it stops with ``"max_turns_reached"``."""

DROPPED_NOTE = ("[The tool_use {name} ({id}) was cut off by max_tokens before its input was "
                "complete; it was not run.]")


# ------------------------------------------------------------------ the history and its times

def append_message(history: list[Message], times: list[float], message: Message,
                   now: float) -> MessageAppended:
    """Append ``message`` and its time to the history, merging user into user.

    A user message that follows a user message (a run that stopped on tool results, then a
    new prompt) is merged into it, and that message's time becomes ``now``.

    Args:
        history: the conversation; MUTATED (appended to, or its last message replaced).
        times: clock seconds parallel to ``history``; MUTATED in step.
        message: the message to add.
        now: its time (clock seconds).

    Returns:
        The :class:`MessageAppended` event to yield (its ``message`` is only the new part).
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
    """Build the :class:`ViewContext` of a request over ``message_count`` messages.

    Args:
        times: the recorded clock seconds of the history's messages.
        message_count: messages the request is built from (a continuation adds some).
        now: the current clock time (seconds), also used for messages not in ``times``.
        turn: the request's number.

    Returns:
        ``ViewContext(times, now, turn)`` with one time per message.
    """
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
                   max_stream_retries: int = DEFAULT_STREAM_RETRIES,
                   max_stop_hook_blocks: int = DEFAULT_MAX_STOP_HOOK_BLOCKS,
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
        hooks: a HookManager for PreToolUse/PostToolUse and Stop (step 6), or None.
        max_turns: model requests allowed (>= 1); a continuation or a retry never goes past it.
        auto_continue: continue replies cut by ``max_tokens`` (:mod:`mini_agent.core.continuation`).
        max_continue_attempts: requests per reply at most, the first included.
        max_stream_retries: requests sent again, in a row, after a stream broke mid-way
            (default 2; 0 gives up at the first break).
        max_stop_hook_blocks: Stop-hook blocks turned into more work per call (default 8,
            >= 0); the block after them ends the loop with ``"stop_hook_limit"``.
        first_turn: the number of the first request (the Agent counts over its life).

    Yields:
        The events above; the last one is :class:`LoopEnd`.

    Raises:
        ValueError: max_turns < 1, max_stop_hook_blocks < 0, or times not parallel to history.
        StreamFaultError: a reply's stream broke ``max_stream_retries + 1`` times in a row
            (the history is valid: see :class:`~mini_agent.harness.model.StreamFaultError`).
        ContextOverflowError, MessageValidationError and the SDK's other errors propagate.
        Tool errors never raise: they are ``is_error`` results.
    """
    if max_turns < 1:
        raise ValueError(f"max_turns must be >= 1, got {max_turns}")
    if max_stop_hook_blocks < 0:
        raise ValueError(f"max_stop_hook_blocks must be >= 0, got {max_stop_hook_blocks}")
    clock = clock or SystemClock()
    if times is None:
        times = [clock.now()] * len(history)
    if len(times) != len(history):
        raise ValueError(f"times has {len(times)} entries for {len(history)} messages")
    if prompt is not None:
        yield append_message(history, times, {"role": "user", "content": prompt}, clock.now())
    last_turn = first_turn + max_turns - 1
    turn = first_turn - 1
    faults_in_a_row = stop_blocks = 0
    while True:
        executor = StreamingExecutor(tools, hooks=hooks)
        results: list[ToolOutcome] = []
        notes: list[str] = []
        attempts = min(max_continue_attempts, last_turn - turn) if auto_continue else 1
        reply = Continuation(history, max_attempts=attempts)
        piece: list[Block] = []
        given_up: StreamFaultError | None = None
        stored = finished = False
        try:
            # 1. request and stream, turn after turn while the reply is continued or retried
            while True:
                turn += 1
                yield TurnStart(turn)
                ctx = view_context(times, len(reply.messages), now=clock.now(), turn=turn)
                sent = await open_request(model, reply.messages, ctx, view=view,
                                          on_context_overflow=on_context_overflow,
                                          max_tokens_scale=reply.max_tokens_scale)
                piece, cut, done, fault = [], [], StreamDone(None, {}), None
                try:
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
                except Exception as exc:  # noqa: BLE001 - only a stream fault is caught
                    if stream_fault_kind(exc) is None:
                        raise
                    fault = exc
                piece = encodable_blocks(piece)  # a lone surrogate would break the next send
                messages = sent.request["messages"]
                yield TurnEnd(turn, done.stop_reason, dict(done.usage),
                              raw_tokens=approx_tokens(reply.messages),
                              view_tokens=approx_tokens(messages), message_count=len(messages),
                              overflow_retry=sent.overflow_retry, request=sent.request)
                if fault is not None:
                    # 1b. the stream broke: keep the tool calls that arrived (they may have
                    # run), drop the rest of the piece, and send the request again
                    faults_in_a_row += 1
                    kept = kept_reply(reply.pieces, piece)
                    # a request follows only within max_turns (kept calls still get answers)
                    exhausted = faults_in_a_row > max_stream_retries
                    retrying = not exhausted and turn < last_turn
                    kind = stream_fault_kind(fault) or "connection"
                    yield StreamRetry(turn, faults_in_a_row, kind, str(fault),
                                      tuple(b["id"] for b in tool_uses(
                                          {"role": "assistant", "content": kept})), retrying)
                    if not retrying and (exhausted or not kept):
                        ends = ("the kept tool calls and their results" if kept
                                else "the last user message")
                        why = "" if exhausted else "; max_turns leaves no request to retry"
                        given_up = StreamFaultError(
                            f"the reply's stream broke {faults_in_a_row} time(s) in a row "
                            f"(last: {kind}: {fault}){why}; the history is valid and ends "
                            f"with {ends}", kind=kind, attempts=faults_in_a_row, cause=fault)
                        if not kept:
                            raise given_up
                    if kept:   # those tools' results go back in the next request
                        content = kept
                        break
                    continue   # nothing kept: the same request again
                faults_in_a_row = 0
                action = reply.feed(piece, stop_reason=done.stop_reason, usage=done.usage,
                                    dropped_tool_use_ids=cut)
                if action in ("done", "give_up"):
                    content = reply.content
                    break
                yield Continuing(reply.attempts, action)
            # 2. store the reply (from here on, the reply is the history's)
            stored = True
            if content:
                yield append_message(history, times, {"role": "assistant", "content": content},
                                     clock.now())
            # 3. drain the rest, in tool_use order
            async for outcome in executor.drain_all():
                results.append(outcome)
                yield ToolResult(outcome)
            # 4. store every result in one user message
            finished = True
            if results:
                blocks = [o.block for o in results]
                if notes:  # tell the model its cut tool call did not run
                    blocks.append({"type": "text", "text": "\n".join(notes)})
                yield append_message(history, times, {"role": "user", "content": blocks},
                                     clock.now())
        finally:
            if not finished:   # interrupted (closed, cancelled, Ctrl-C) or an error
                await settle_to_the_end(settle_interrupted(
                    history, times, clock.now(), executor, results,
                    [] if stored else kept_reply(reply.pieces, piece), notes))
        if given_up is not None:
            raise given_up
        # 5. decide
        if not results:
            status = "completed"
        elif any(o.hook_stop_reason for o in results):
            status = "hook_stopped"
        elif turn >= last_turn:
            status = "max_turns_reached"
        else:
            continue
        # 6. the Stop hook may send the model on, with its reason as a user message
        if hooks is not None:
            said = await hooks.fire("Stop", stop_payload(history, status, stop_blocks))
            for notice in hook_notices("Stop", said):
                yield notice
            if said.blocked and not said.stop and status == "completed":
                stop_blocks += 1
                going = stop_blocks <= max_stop_hook_blocks and turn < last_turn
                yield StopBlocked(said.reason, stop_blocks, going, max_stop_hook_blocks)
                if going:
                    yield append_message(history, times, stop_feedback(said), clock.now())
                    continue
                status = (STOP_HOOK_LIMIT if stop_blocks > max_stop_hook_blocks
                          else "max_turns_reached")
            elif said.blocked and not said.stop:
                yield StopBlocked(said.reason, stop_blocks + 1, False, max_stop_hook_blocks)
        yield LoopEnd(status, turn - first_turn + 1)
        return


def kept_reply(pieces: list[list[Block]], piece: list[Block]) -> list[Block]:
    """Return what of an unfinished reply is stored: all of it when it holds a tool call.

    A tool_use that arrived complete was scheduled at once, so it may have run; the history
    keeps it (and the text around it) so that its result can follow it. A reply with no
    complete tool call is dropped whole: nothing of it happened outside the stream.

    Args:
        pieces: the reply's earlier pieces (a continuation's), oldest first; not mutated.
        piece: the blocks of the piece that was streaming when the reply stopped.

    Returns:
        The merged reply (:func:`~mini_agent.core.continuation.merge_pieces`) if it holds a
        ``tool_use`` block, else ``[]``.
    """
    merged = merge_pieces([*pieces, piece])
    return merged if any(b.get("type") == "tool_use" for b in merged) else []


__all__ = ["DEFAULT_MAX_TURNS", "DROPPED_NOTE", "LoopEnd", "LoopEvent", "MessageAppended",
           "StopBlocked", "StreamRetry", "ToolResult", "TurnEnd", "TurnStart", "append_message",
           "kept_reply", "run_loop", "view_context"]
