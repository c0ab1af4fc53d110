"""Turn the SDK's raw stream events into loop chunks: text deltas and COMPLETE tool_use blocks.

The Messages API streams a reply as server-sent events (``message_start``,
``content_block_start`` / ``content_block_delta`` / ``content_block_stop`` per block,
``message_delta`` with the ``stop_reason`` and cumulative ``usage``, ``message_stop``).
A ``tool_use`` block's input is ``{}`` at ``content_block_start``; the real input arrives as
``input_json_delta`` fragments cut at arbitrary points (inside a string, inside an escape),
and is only complete at ``content_block_stop``. :class:`StreamAssembler` is a small state
machine over those events: feed it one event, get back zero or more chunks:

* :class:`TextDelta` for every non-empty ``text_delta``;
* :class:`ToolUseReady` with a complete block ``{"type": "tool_use", "id", "name", "input"}``
  as soon as the block is known to be complete, so the executor can start the tool while the
  model is still streaming;
* :class:`ToolUseTruncated` for a tool_use cut by ``max_tokens`` (never to be executed);
* :class:`StreamDone` once, at ``message_stop``, with ``stop_reason`` and ``usage``.

When is a tool_use complete? Its fragments are joined and parsed once, at
``content_block_stop``; an empty fragment sequence means ``{}`` (a tool without
arguments). A reply cut by ``max_tokens`` stops inside its LAST block, so a block followed by
another block is complete; the last block is complete unless the stop_reason is
``max_tokens``. Hence: a tool_use whose JSON does not parse at its stop is truncated, and a
tool_use with an empty fragment sequence is held until the next block starts or the
``stop_reason`` arrives (``{}`` with ``max_tokens`` may be a cut, so it is not run).

This module does no IO: events in, chunks out (sans-IO, like h11). It accepts the SDK's
``RawMessageStreamEvent`` objects or their plain dicts. Taught in
``notebooks/01_agent_loop.ipynb``; exercise ``01``.
Source: 002_4516104fd432e704.txt section 1
(pitfall 2: "content_block_start input is always {}"); Anthropic "Streaming Messages" docs.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Iterable, Union

from mini_agent.core.messages import Block


@dataclasses.dataclass(frozen=True)
class TextDelta:
    """A piece of assistant text (never empty)."""

    text: str


@dataclasses.dataclass(frozen=True)
class ToolUseReady:
    """A complete tool_use block ``{"type": "tool_use", "id", "name", "input": dict}``."""

    block: Block


@dataclasses.dataclass(frozen=True)
class ToolUseTruncated:
    """A tool_use cut by ``max_tokens`` before its JSON input was complete: never run it.

    Attributes: id, name: the block's; partial_json: the fragments received (a JSON prefix).
    """

    id: str
    name: str
    partial_json: str


@dataclasses.dataclass(frozen=True)
class StreamDone:
    """End of one reply: ``stop_reason`` (API value, None if the stream broke off), ``usage``
    (``{"input_tokens", "output_tokens", "cache_creation_input_tokens",
    "cache_read_input_tokens"}``, ints, missing fields 0) and the message ``id``."""

    stop_reason: str | None
    usage: dict[str, int]
    message_id: str = ""


Chunk = Union[TextDelta, ToolUseReady, ToolUseTruncated, StreamDone]

USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens",
                "cache_read_input_tokens")


def event_dict(event: Any) -> dict[str, Any]:
    """Return a raw stream event as a plain dict (SDK pydantic objects or dicts accepted).

    Args:
        event: a ``RawMessageStreamEvent`` (or any pydantic model) or a dict.

    Returns:
        The event's dict (a dict is returned as is).

    Raises:
        TypeError: anything else.
    """
    if isinstance(event, dict):
        return event
    if hasattr(event, "to_dict"):
        return event.to_dict()
    raise TypeError(f"not a stream event: {event!r}")


def parse_tool_input(fragments: Iterable[str]) -> dict[str, Any]:
    """Join a tool_use's ``partial_json`` fragments and parse them into its input.

    Args:
        fragments: the strings of its ``input_json_delta`` events, in order (one string, the
            fragments already joined, is accepted too).
    Returns:
        The input dict; ``{}`` when the joined text is empty (a tool without arguments).
    Raises:
        ValueError: (``json.JSONDecodeError`` is one) the joined text is not exactly one
            complete JSON object: a prefix cut by ``max_tokens``, two objects, an array...
    Source: 002_4516104fd432e704.txt section 1 (pitfall 2); exercise 01.1.

    >>> parse_tool_input(['{"path": "a', '.py"}'])
    {'path': 'a.py'}
    """
    text = "".join(fragments)
    if text == "":
        return {}
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"tool input must be a JSON object, got {type(value).__name__}")
    return value


class StreamAssembler:
    """Feed raw stream events in order; get loop chunks back (see the module docstring).

    Attributes (read them after the stream for the whole reply): content: the accumulated
    blocks, text joined per block, tool_use inputs parsed, truncated tool_use blocks left
    out; truncated: the :class:`ToolUseTruncated` chunks; stop_reason; usage.
    Raises (from :meth:`feed`): ValueError for an event that references an unknown block
    index, or an event before ``message_start``.
    """

    def __init__(self) -> None:
        self.started = False
        self.message_id = ""
        self.stop_reason: str | None = None
        self.usage: dict[str, int] = {k: 0 for k in USAGE_FIELDS}
        self.content: list[Block] = []
        self.truncated: list[ToolUseTruncated] = []
        self._blocks: dict[int, dict[str, Any]] = {}   # index -> block being built
        self._json: dict[int, list[str]] = {}          # index -> input fragments
        self._held: int | None = None                  # no-argument tool_use awaiting proof
        self.done = False

    # -- helpers ---------------------------------------------------------------------
    def _update_usage(self, usage: dict[str, Any] | None) -> None:
        for key in USAGE_FIELDS:
            value = (usage or {}).get(key)
            if value is not None:  # message_delta totals are cumulative: overwrite
                self.usage[key] = int(value)

    def _release_held(self, *, cut: bool) -> list[Chunk]:
        if self._held is None:
            return []
        block = self._blocks[self._held]
        self._held = None
        if cut:
            chunk = ToolUseTruncated(block["id"], block["name"], "")
            self.truncated.append(chunk)
            return [chunk]
        complete = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        self.content.append(complete)
        return [ToolUseReady(complete)]

    # -- the state machine -------------------------------------------------------------
    def feed(self, event: Any) -> list[Chunk]:
        """Consume one raw event and return the chunks it completes (often none).

        Args:
            event: the next raw stream event (object or dict).

        Returns:
            The :class:`TextDelta`, :class:`ToolUseReady`, :class:`ToolUseTruncated` and
            :class:`StreamDone` chunks it completes, in order.

        Raises:
            ValueError: an event before ``message_start``, or a delta for an unknown block.
        """
        ev = event_dict(event)
        kind = ev.get("type")
        if kind == "message_start":
            self.started = True
            message = ev.get("message") or {}
            self.message_id = message.get("id", "")
            self._update_usage(message.get("usage"))
            return []
        if not self.started and kind != "ping":
            raise ValueError(f"stream event {kind!r} before message_start")
        if kind == "content_block_start":
            out = self._release_held(cut=False)  # a later block proves the held one complete
            index = ev["index"]
            block = dict(ev.get("content_block") or {})
            self._blocks[index] = block
            if block.get("type") == "tool_use":
                self._json[index] = []
            elif block.get("type") == "text" and block.get("text"):
                out.append(TextDelta(block["text"]))
            return out
        if kind == "content_block_delta":
            index = ev["index"]
            if index not in self._blocks:
                raise ValueError(f"content_block_delta for unknown block index {index}")
            delta = ev.get("delta") or {}
            if delta.get("type") == "text_delta":
                text = delta.get("text") or ""
                block = self._blocks[index]
                block["text"] = block.get("text", "") + text
                return [TextDelta(text)] if text else []
            if delta.get("type") == "input_json_delta" and index in self._json:
                self._json[index].append(delta.get("partial_json") or "")
            return []  # thinking, signature and citations deltas are not loop chunks
        if kind == "content_block_stop":
            return self._stop_block(ev["index"])
        if kind == "message_delta":
            self.stop_reason = (ev.get("delta") or {}).get("stop_reason")
            self._update_usage(ev.get("usage"))
            return self._release_held(cut=self.stop_reason == "max_tokens")
        if kind == "message_stop":
            return self._finish()
        return []  # ping and unknown events

    def _stop_block(self, index: int) -> list[Chunk]:
        if index not in self._blocks:
            raise ValueError(f"content_block_stop for unknown block index {index}")
        block = self._blocks[index]
        if block.get("type") == "text":
            if block.get("text"):
                self.content.append({"type": "text", "text": block["text"]})
            return []
        if block.get("type") != "tool_use":
            self.content.append(block)
            return []
        partial = "".join(self._json.pop(index))
        if partial == "":
            self._held = index  # {} or cut at once: decided by what comes next
            return []
        try:
            tool_input = parse_tool_input(partial)
        except ValueError:
            chunk = ToolUseTruncated(block["id"], block["name"], partial)
            self.truncated.append(chunk)
            return [chunk]
        complete = {"type": "tool_use", "id": block["id"], "name": block["name"],
                    "input": tool_input}
        self.content.append(complete)
        return [ToolUseReady(complete)]

    def _finish(self) -> list[Chunk]:
        if self.done:
            return []
        out = self._release_held(cut=self.stop_reason in ("max_tokens", None))
        # a tool_use still open at the end of the stream was cut off
        for index, fragments in sorted(self._json.items()):
            block = self._blocks[index]
            chunk = ToolUseTruncated(block["id"], block["name"], "".join(fragments))
            self.truncated.append(chunk)
            out.append(chunk)
        self._json.clear()
        self.done = True
        out.append(StreamDone(self.stop_reason, dict(self.usage), self.message_id))
        return out

    def finish(self) -> list[Chunk]:
        """Close a stream that ended without ``message_stop`` (a broken connection).

        Returns:
            The remaining chunks: open tool_use blocks reported truncated, :class:`StreamDone`
            last.
        """
        return self._finish()


def assemble(events: Iterable[Any]) -> tuple[list[Chunk], StreamAssembler]:
    """Run a whole event sequence through a :class:`StreamAssembler`.

    Args:
        events: the raw events of one reply.

    Returns:
        ``(chunks, assembler)``; ``assembler.content`` is the reply's content blocks.
        Example: ``assemble(events)[1].content == [{"type": "text", "text": "Hi"}]``.
    """
    assembler = StreamAssembler()
    chunks: list[Chunk] = []
    for event in events:
        chunks.extend(assembler.feed(event))
    chunks.extend(assembler.finish())
    return chunks, assembler


def assemble_tool_uses(events: Iterable[Any]) -> list[Block]:
    """The complete tool_use blocks of one streamed reply, in the order they complete.

    Args:
        events: the reply's raw stream events (dicts or SDK objects), ``message_start``
            first.
    Returns:
        ``[{"type": "tool_use", "id", "name", "input": dict}, ...]``: every
        :class:`ToolUseReady` of :func:`assemble`. Left out: a tool_use whose JSON does not
        parse (cut by ``max_tokens``), an argument-less one that is the last block of a reply
        that did not end normally (``max_tokens``, or no ``stop_reason`` at all), one that
        never got its ``content_block_stop``, and ``server_tool_use`` blocks (the API runs
        them). The events are not mutated.
    Raises:
        ValueError: an event before ``message_start`` or for an unknown block index.
    Source: exercise 01.2 (the same checks grade both).
    """
    chunks, _ = assemble(events)
    return [chunk.block for chunk in chunks if isinstance(chunk, ToolUseReady)]


def message_chunks(message: Any) -> list[Chunk]:
    """Return the chunks of a complete (non-streamed) Message: the shape the loop consumes.

    Args:
        message: an SDK ``Message`` or its dict.

    Returns:
        One :class:`TextDelta` per text block (empty text skipped), :class:`ToolUseReady`
        per tool_use except the last one when ``stop_reason == "max_tokens"`` (its input is
        the partial JSON parsed leniently, so it is reported truncated), then
        :class:`StreamDone`.
    """
    msg = event_dict(message)
    out: list[Chunk] = []
    content = msg.get("content") or []
    stop_reason = msg.get("stop_reason")
    for i, block in enumerate(content):
        if block.get("type") == "text" and block.get("text"):
            out.append(TextDelta(block["text"]))
        elif block.get("type") == "tool_use":
            if stop_reason == "max_tokens" and i == len(content) - 1:
                out.append(ToolUseTruncated(block["id"], block["name"],
                                            json.dumps(block.get("input") or {})))
            else:
                out.append(ToolUseReady({"type": "tool_use", "id": block["id"],
                                         "name": block["name"],
                                         "input": dict(block.get("input") or {})}))
    usage = {k: int((msg.get("usage") or {}).get(k) or 0) for k in USAGE_FIELDS}
    out.append(StreamDone(stop_reason, usage, msg.get("id", "")))
    return out
