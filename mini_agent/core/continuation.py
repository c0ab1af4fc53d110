"""Recover from ``stop_reason == "max_tokens"``: ask the model to continue, then merge the pieces.

When a reply hits its output cap mid-plan, the kit does not pretend nothing happened. It sends
the partial assistant message back followed by a user message with :data:`CONTINUE_PROMPT`, up
to :data:`MAX_CONTINUE_ATTEMPTS` requests in all, and merges the pieces into ONE assistant
message (adjacent text joined, empty text dropped). What is sent back never ends in whitespace
(the API rejects trailing whitespace in a final assistant message) and never holds an empty
text block.

The merged reply's ``stop_reason`` is the last piece's, or a synthetic ``"end_turn"`` when all
attempts were cut: callers need not know a continuation happened. This is a deliberate,
documented lie of the abstraction (seed 000).

A ``tool_use`` cut by ``max_tokens`` has incomplete JSON input. It is NEVER executed and never
sent back half-written: it is dropped, and

* if the reply so far holds complete tool_use blocks, the reply ends there (stop_reason
  ``"tool_use"``): those tools run and the model, seeing their results, goes on in the next
  request (a continuation request would need their results first);
* else if it holds text, that text is sent back with the continue prompt, as for plain text;
* else (nothing but the cut tool_use) the same request is retried with twice the
  ``max_tokens``, since an empty assistant message cannot be sent back.

One algorithm, two drivers. :class:`Continuation` is the sans-IO state of one reply: feed it
each piece (its complete blocks, stop_reason and usage) and it says what to do next and which
messages and ``max_tokens`` scale the next request takes. :func:`auto_continue` /
:func:`async_auto_continue` drive it with plain ``client.messages.create`` calls; the agent
loop (:func:`mini_agent.harness.loop.run_loop`) drives it with streamed pieces. Taught in
``notebooks/03_observation_masking.ipynb``.
Source: 000_86e3ff2076a5ae37.txt (autoContinue).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mini_agent.core.messages import Block, Message, assistant, user
from mini_agent.core.streaming import USAGE_FIELDS, event_dict

CONTINUE_PROMPT = "Continue where you left off. Do not repeat what you already said."
"""The follow-up user message (seed 000: without "do not repeat" the model re-sends its text)."""

MAX_CONTINUE_ATTEMPTS = 3
"""Requests per reply at most, the first included (seed 000: "three 2048-token bursts")."""


@dataclasses.dataclass(frozen=True)
class Continuing:
    """A loop event: piece ``attempt`` was cut by max_tokens and another request follows;
    ``action`` is ``"continue"`` (continue prompt sent) or ``"retry_larger"`` (max_tokens
    doubled). The cut tool_use blocks were reported as ``ToolUseTruncated`` chunks."""

    attempt: int
    action: str


def merge_pieces(pieces: list[list[Block]]) -> list[Block]:
    """Merge content pieces into one reply: adjacent text joined, blank text dropped.

    Text that is empty or whitespace-only after joining is dropped (the API refuses such
    blocks).

    Args:
        pieces: the pieces' content blocks, oldest first (not mutated).

    Returns:
        A new list; ``[]`` when no piece held anything but whitespace (there is no reply to
        store, as in the streaming loop). Example: ``merge_pieces([[{"type": "text", "text":
        "Hel"}], [{"type": "text", "text": "lo"}]]) == [{"type": "text", "text": "Hello"}]``;
        ``merge_pieces([[{"type": "text", "text": "\\n"}]]) == []``.
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


def continuation_messages(messages: list[Message], text_so_far: str) -> list[Message]:
    """Return the messages of a continuation request.

    Args:
        messages: the history the reply answers (not mutated).
        text_so_far: the reply's text so far.

    Returns:
        ``messages + [assistant(text, trailing whitespace stripped), user(CONTINUE_PROMPT)]``.

    Raises:
        ValueError: the stripped text is empty (an empty assistant message is invalid).
    """
    text = text_so_far.rstrip()
    if not text:
        raise ValueError("nothing to continue from: the partial reply has no text")
    return [*messages, assistant([{"type": "text", "text": text}]), user(CONTINUE_PROMPT)]


def next_step(*, stop_reason: str | None, text_so_far: str, has_complete_tool_use: bool,
              attempt: int, max_attempts: int = MAX_CONTINUE_ATTEMPTS) -> str:
    """Decide what follows a reply piece.

    Args:
        stop_reason: the piece's stop_reason.
        text_so_far: the merged reply's text so far.
        has_complete_tool_use: the merged reply holds a complete tool_use.
        attempt: requests made for this reply, counting from 1.
        max_attempts: requests allowed, the first included.

    Returns:
        ``"done"``, ``"continue"`` (text to continue from), ``"retry_larger"`` (nothing to
        send back: double ``max_tokens``) or ``"give_up"`` (attempts exhausted: synthetic
        end_turn).
    """
    if stop_reason != "max_tokens" or has_complete_tool_use:
        return "done"
    if attempt >= max_attempts:
        return "give_up"
    return "continue" if text_so_far.strip() else "retry_larger"


def drop_truncated(content: list[Block], stop_reason: str | None) -> tuple[list[Block], list[str]]:
    """Split a reply's content into its complete blocks and the ids of a cut tool_use.

    Args:
        content: the reply's content blocks (not mutated).
        stop_reason: the reply's stop_reason.
    Returns:
        ``(blocks, dropped_ids)``: when the reply stopped at ``max_tokens`` inside a tool_use
        (its last block), that block is left out (its input JSON is incomplete) and its id
        returned; otherwise ``(list(content), [])``.
    """
    if stop_reason != "max_tokens" or not content or content[-1].get("type") != "tool_use":
        return list(content), []
    return list(content[:-1]), [content[-1].get("id", "")]


def add_usage(total: dict[str, int], usage: dict[str, Any] | None) -> dict[str, int]:
    """Add two usage dicts field by field over :data:`USAGE_FIELDS`.

    Args:
        total: the counts so far.
        usage: one response's ``usage`` (None counts as zeros).

    Returns:
        A new dict. Example: ``add_usage({"input_tokens": 1}, {"input_tokens":
        2})["input_tokens"] == 3``.
    """
    return {key: total.get(key, 0) + int((usage or {}).get(key) or 0) for key in USAGE_FIELDS}


class Continuation:
    """One assistant reply through ``max_tokens`` cuts: the one continuation algorithm (sans-IO).

    Send a request with :attr:`messages` and ``max_tokens * max_tokens_scale``, then
    :meth:`feed` the piece that came back; repeat while it answers ``"continue"`` or
    ``"retry_larger"``. Afterwards :attr:`content` is the merged reply, :attr:`stop_reason`
    its merged stop_reason (the module docstring), :attr:`usage` the token counts summed over
    the pieces, :attr:`attempts` the requests made and :attr:`dropped_tool_use_ids` the cut
    tool_use blocks that were left out.

    Args:
        messages: the history the first request sends (not mutated).
        max_attempts: requests at most, the first included (>= 1; 1 turns continuation off).
    Raises:
        ValueError: max_attempts < 1.
    Example: a reply cut in its text asks for ``"continue"``, and the next request carries
    the text so far and :data:`CONTINUE_PROMPT`.
    """

    def __init__(self, messages: list[Message], *,
                 max_attempts: int = MAX_CONTINUE_ATTEMPTS) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        self.base = list(messages)
        self.messages = list(messages)
        self.max_tokens_scale = 1
        self.max_attempts = max_attempts
        self.attempts = 0
        self.pieces: list[list[Block]] = []
        self.usage: dict[str, int] = add_usage({}, None)
        self.stop_reason: str | None = None
        self.dropped_tool_use_ids: list[str] = []

    @property
    def content(self) -> list[Block]:
        """The pieces so far merged into one reply (:func:`merge_pieces`)."""
        return merge_pieces(self.pieces)

    def feed(self, content: list[Block], *, stop_reason: str | None,
             usage: dict[str, Any] | None = None, dropped_tool_use_ids: Any = ()) -> str:
        """Take one piece and return what comes next.

        Args:
            content: the piece's COMPLETE blocks (a cut tool_use already left out).
            stop_reason: the piece's stop_reason.
            usage: the piece's token counts.
            dropped_tool_use_ids: ids of the piece's cut tool_use blocks.
        Returns:
            ``"done"`` or ``"give_up"`` (the reply is complete: read :attr:`content` and
            :attr:`stop_reason`), ``"continue"`` (:attr:`messages` now ends with the text so far
            and the continue prompt) or ``"retry_larger"`` (:attr:`max_tokens_scale` doubled).
        """
        self.attempts += 1
        self.pieces.append(list(content))
        self.usage = add_usage(self.usage, usage)
        self.dropped_tool_use_ids += list(dropped_tool_use_ids)
        merged = self.content
        text = "".join(b["text"] for b in merged if b["type"] == "text")
        step = next_step(stop_reason=stop_reason, text_so_far=text, attempt=self.attempts,
                         max_attempts=self.max_attempts,
                         has_complete_tool_use=any(b["type"] == "tool_use" for b in merged))
        if step == "done":  # cut after complete tool_use blocks: the reply ends with those
            self.stop_reason = "tool_use" if stop_reason == "max_tokens" else stop_reason
        elif step == "give_up":
            self.stop_reason = "end_turn"
        elif step == "continue":
            self.messages = continuation_messages(self.base, text)
        else:
            self.max_tokens_scale *= 2
        return step

    def result(self) -> dict[str, Any]:
        """Return the merged reply, as :func:`auto_continue` returns it.

        Returns:
            ``{"role": "assistant", "content", "stop_reason", "usage", "attempts",
            "dropped_tool_use_ids"}``.
        """
        return {"role": "assistant", "content": self.content, "stop_reason": self.stop_reason,
                "usage": dict(self.usage), "attempts": self.attempts,
                "dropped_tool_use_ids": list(self.dropped_tool_use_ids)}


def _feed_response(continuation: Continuation, response: Any) -> str:
    data = event_dict(response)
    stop_reason = data.get("stop_reason")
    content, dropped = drop_truncated(data.get("content") or [], stop_reason)
    return continuation.feed(content, stop_reason=stop_reason, usage=data.get("usage"),
                             dropped_tool_use_ids=dropped)


def _request(continuation: Continuation, create_kwargs: dict[str, Any]) -> dict[str, Any]:
    return {**create_kwargs, "messages": continuation.messages,
            "max_tokens": create_kwargs["max_tokens"] * continuation.max_tokens_scale}


def auto_continue(client: Any, *, max_attempts: int = MAX_CONTINUE_ATTEMPTS,
                  **create_kwargs: Any) -> dict[str, Any]:
    """``client.messages.create(**create_kwargs)`` that continues through ``max_tokens``.

    Args:
        client: a sync ``anthropic.Anthropic`` (online or ``offline_client()``).
        max_attempts: requests at most, the first included.
        create_kwargs: ``model``, ``max_tokens``, ``messages`` (not mutated), ``system``,
            ``tools``...
    Returns:
        ``{"role": "assistant", "content": [blocks], "stop_reason": str, "usage": {summed
        token counts}, "attempts": int, "dropped_tool_use_ids": [str]}``; append
        ``{"role", "content"}`` of it to the history, unless ``content`` is ``[]`` (every
        attempt answered only whitespace: there is no reply to store). ``stop_reason`` is a
        synthetic ``"end_turn"`` when every attempt was cut, ``"tool_use"`` when the cut came
        after complete tool_use blocks.
    Raises:
        the SDK's errors (``anthropic.APIStatusError`` ...).
    """
    continuation = Continuation(create_kwargs["messages"], max_attempts=max_attempts)
    while _feed_response(continuation, client.messages.create(
            **_request(continuation, create_kwargs))) in ("continue", "retry_larger"):
        pass
    return continuation.result()


async def async_auto_continue(client: Any, *, max_attempts: int = MAX_CONTINUE_ATTEMPTS,
                              **create_kwargs: Any) -> dict[str, Any]:
    """Continue through ``max_tokens`` with an ``anthropic.AsyncAnthropic`` client.

    The same algorithm as :func:`auto_continue`.

    Args:
        client: an ``anthropic.AsyncAnthropic`` (online or ``offline_async_client()``).
        max_attempts: requests at most, the first included.
        create_kwargs: ``model``, ``max_tokens``, ``messages`` (not mutated), ...

    Returns:
        The same dict as :func:`auto_continue`.
    """
    continuation = Continuation(create_kwargs["messages"], max_attempts=max_attempts)
    while _feed_response(continuation, await client.messages.create(
            **_request(continuation, create_kwargs))) in ("continue", "retry_larger"):
        pass
    return continuation.result()
