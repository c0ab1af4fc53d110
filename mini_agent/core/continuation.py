"""Recover from ``stop_reason == "max_tokens"``: ask the model to continue, then merge the pieces.

When a reply hits its output cap mid-plan, the kit does not pretend nothing happened. It sends
the partial assistant turn back followed by a user turn with :data:`CONTINUE_PROMPT`, up to
:data:`MAX_CONTINUE_ATTEMPTS` requests in all, and merges the pieces into ONE assistant turn
(adjacent text joined, empty text dropped). What is sent back never ends in whitespace (the
API rejects trailing whitespace in a final assistant turn) and never holds an empty text block.

The merged turn's ``stop_reason`` is the last piece's, or a synthetic ``"end_turn"`` when all
attempts were cut: callers need not know a continuation happened. This is a deliberate,
documented lie of the abstraction (seed 000).

A ``tool_use`` cut by ``max_tokens`` has incomplete JSON input. It is NEVER executed and never
sent back half-written: it is dropped, and

* if the reply so far holds complete tool_use blocks, the turn ends there (stop_reason
  ``"tool_use"``): those tools run and the model, seeing their results, goes on in the next
  turn (a continuation request would need their results first);
* else if it holds text, that text is sent back with the continue prompt, as for plain text;
* else (nothing but the cut tool_use) the same request is retried with twice the
  ``max_tokens``, since an empty assistant turn cannot be sent back.

Two forms: :func:`auto_continue` / :func:`async_auto_continue` wrap a non-streaming
``client.messages.create``; :func:`continue_stream` does the same for the streaming loop
(``mini_agent.harness.loop``), chunk by chunk. Both share :func:`next_step`. Taught in
``notebooks/03_observation_masking.ipynb``. Source: 000_86e3ff2076a5ae37.txt (autoContinue).
"""

from __future__ import annotations

import dataclasses
from typing import Any, AsyncIterator, Callable, Generator

from mini_agent.core.messages import Block, MessageParam, assistant, user
from mini_agent.core.streaming import (USAGE_FIELDS, StreamDone, TextDelta, ToolUseReady, ToolUseTruncated,
                                       event_dict)

CONTINUE_PROMPT = "Continue where you left off. Do not repeat what you already said."
"""The follow-up user turn (seed 000: without "do not repeat" the model re-sends its text)."""

MAX_CONTINUE_ATTEMPTS = 3
"""Requests per turn at most, the first included (seed 000: "three 2048-token bursts")."""


@dataclasses.dataclass(frozen=True)
class Continuing:
    """Loop-level notice: piece ``attempt`` was cut by max_tokens; ``action`` is
    ``"continue"`` (continue prompt sent) or ``"retry_larger"`` (max_tokens doubled)."""

    attempt: int
    action: str
    dropped_tool_use_ids: tuple[str, ...] = ()


def merge_pieces(pieces: list[list[Block]]) -> list[Block]:
    """Concatenate content pieces into one list; adjacent text blocks joined, then text that
    is empty or whitespace-only dropped (the API refuses such blocks).

    Returns a new list (inputs not mutated); ``[]`` when no piece held anything but
    whitespace (there is no reply to store, as in the streaming loop). Example:
    ``merge_pieces([[{"type": "text", "text": "Hel"}], [{"type": "text", "text": "lo"}]])
    == [{"type": "text", "text": "Hello"}]``; ``merge_pieces([[{"type": "text", "text":
    "\\n"}]]) == []``.
    """
    merged: list[Block] = []
    for piece in pieces:
        for block in piece:
            if block.get("type") == "text":
                text = block.get("text") or ""
                if merged and merged[-1].get("type") == "text":
                    merged[-1] = {"type": "text", "text": merged[-1]["text"] + text}
                else:
                    merged.append({"type": "text", "text": text})
            else:
                merged.append(dict(block))
    return [b for b in merged if b.get("type") != "text" or b["text"].strip()]


def continuation_messages(messages: list[MessageParam], text_so_far: str) -> list[MessageParam]:
    """Return ``messages + [assistant(text, trailing whitespace stripped), user(CONTINUE_PROMPT)]``.

    Raises ValueError if the stripped text is empty (an empty assistant turn is invalid).
    The input list is not mutated.
    """
    text = text_so_far.rstrip()
    if not text:
        raise ValueError("nothing to continue from: the partial reply has no text")
    return [*messages, assistant([{"type": "text", "text": text}]), user(CONTINUE_PROMPT)]


def next_step(*, stop_reason: str | None, text_so_far: str, has_complete_tool_use: bool,
              attempt: int, max_attempts: int = MAX_CONTINUE_ATTEMPTS) -> str:
    """Decide what follows a reply piece: ``"done"``, ``"continue"``, ``"retry_larger"`` or
    ``"give_up"`` (attempts exhausted: synthetic end_turn). ``attempt`` counts from 1."""
    if stop_reason != "max_tokens" or has_complete_tool_use:
        return "done"
    if attempt >= max_attempts:
        return "give_up"
    return "continue" if text_so_far.strip() else "retry_larger"


def _drop_truncated(content: list[Block], stop_reason: str | None) -> tuple[list[Block], list[str]]:
    """Remove the last tool_use of a max_tokens reply (its input JSON is incomplete)."""
    if stop_reason != "max_tokens" or not content or content[-1].get("type") != "tool_use":
        return list(content), []
    return list(content[:-1]), [content[-1].get("id", "")]


def _add_usage(total: dict[str, int], usage: dict[str, Any] | None) -> None:
    for key in USAGE_FIELDS:
        total[key] = total.get(key, 0) + int((usage or {}).get(key) or 0)


def _driver(request: dict[str, Any], max_attempts: int
            ) -> Generator[dict[str, Any], Any, dict[str, Any]]:
    """Sans-IO core of auto_continue: yields request kwargs, receives Message objects/dicts."""
    pieces: list[list[Block]] = []
    dropped: list[str] = []
    usage: dict[str, int] = {}
    messages = request["messages"]
    max_tokens = request["max_tokens"]
    for attempt in range(1, max_attempts + 1):
        response = event_dict((yield {**request, "messages": messages,
                                      "max_tokens": max_tokens}))
        stop_reason = response.get("stop_reason")
        _add_usage(usage, response.get("usage"))
        content, cut = _drop_truncated(response.get("content") or [], stop_reason)
        dropped += cut
        pieces.append(content)
        merged = merge_pieces(pieces)
        text = "".join(b["text"] for b in merged if b["type"] == "text")
        step = next_step(stop_reason=stop_reason, text_so_far=text, attempt=attempt,
                         max_attempts=max_attempts,
                         has_complete_tool_use=any(b["type"] == "tool_use" for b in merged))
        if step == "done":
            final = "tool_use" if (stop_reason == "max_tokens" and cut) else stop_reason
            return {"role": "assistant", "content": merged, "stop_reason": final,
                    "usage": usage, "attempts": attempt, "dropped_tool_use_ids": dropped}
        if step == "give_up":
            break
        if step == "continue":
            messages = continuation_messages(request["messages"], text)
        else:
            max_tokens *= 2
    return {"role": "assistant", "content": merge_pieces(pieces), "stop_reason": "end_turn",
            "usage": usage, "attempts": max_attempts, "dropped_tool_use_ids": dropped}


def auto_continue(client: Any, *, max_attempts: int = MAX_CONTINUE_ATTEMPTS,
                  **create_kwargs: Any) -> dict[str, Any]:
    """``client.messages.create(**create_kwargs)`` that continues through ``max_tokens``.

    Args: client: a sync ``anthropic.Anthropic`` (online or ``offline_client()``);
    create_kwargs: ``model``, ``max_tokens``, ``messages`` (not mutated), ``system``, ``tools``...
    Returns: ``{"role": "assistant", "content": [blocks], "stop_reason": str, "usage": {summed
    token counts}, "attempts": int, "dropped_tool_use_ids": [str]}``; append
    ``{"role", "content"}`` of it to the history, unless ``content`` is ``[]`` (every attempt
    answered only whitespace: there is no reply to store). ``stop_reason`` is synthetic
    ``"end_turn"`` when every attempt was cut, ``"tool_use"`` when a cut tool_use was dropped
    after complete ones. Raises: the SDK's errors (``anthropic.APIStatusError`` ...).
    """
    driver = _driver(create_kwargs, max_attempts)
    request = next(driver)
    while True:
        try:
            request = driver.send(client.messages.create(**request))
        except StopIteration as stop:
            return stop.value


async def async_auto_continue(client: Any, *, max_attempts: int = MAX_CONTINUE_ATTEMPTS,
                              **create_kwargs: Any) -> dict[str, Any]:
    """The same as :func:`auto_continue` for an ``anthropic.AsyncAnthropic`` client."""
    driver = _driver(create_kwargs, max_attempts)
    request = next(driver)
    while True:
        try:
            request = driver.send(await client.messages.create(**request))
        except StopIteration as stop:
            return stop.value


CallModel = Callable[..., AsyncIterator[Any]]


async def continue_stream(call_model: CallModel, messages: list[MessageParam], *,
                          max_attempts: int = MAX_CONTINUE_ATTEMPTS) -> AsyncIterator[Any]:
    """Stream one assistant turn through ``max_tokens`` cuts (the loop's form of auto_continue).

    Args: call_model: ``call_model(messages, *, max_tokens_scale=1) -> async iterator of
    streaming chunks`` (one request); messages: the request history (not mutated).
    Yields: the pieces' TextDelta / ToolUseReady / ToolUseTruncated chunks as they come, a
    :class:`Continuing` notice before each extra request, then ONE :class:`StreamDone` whose
    ``usage`` sums all requests and whose ``stop_reason`` follows the module docstring.
    Text from successive pieces arrives as consecutive deltas, so the loop's text buffer joins
    them into one block.
    """
    usage: dict[str, int] = {}
    text = ""
    has_tool = False
    scale = 1
    request = messages
    message_id = ""
    for attempt in range(1, max_attempts + 1):
        done: StreamDone | None = None
        cut: list[str] = []
        async for chunk in call_model(request, max_tokens_scale=scale):
            if isinstance(chunk, StreamDone):
                done = chunk
                continue
            if isinstance(chunk, TextDelta):
                text += chunk.text
            elif isinstance(chunk, ToolUseReady):
                has_tool = True
            elif isinstance(chunk, ToolUseTruncated):
                cut.append(chunk.id)
            yield chunk
        stop_reason = done.stop_reason if done else None
        _add_usage(usage, done.usage if done else None)
        message_id = done.message_id if done else message_id
        step = next_step(stop_reason=stop_reason, text_so_far=text, attempt=attempt,
                         has_complete_tool_use=has_tool, max_attempts=max_attempts)
        if step == "done":
            final = "tool_use" if (stop_reason == "max_tokens" and has_tool) else stop_reason
            yield StreamDone(final, usage, message_id)
            return
        if step == "give_up":
            break
        yield Continuing(attempt, step, tuple(cut))
        if step == "continue":
            request = continuation_messages(messages, text)
        else:
            scale *= 2
    yield StreamDone("end_turn", usage, message_id)
