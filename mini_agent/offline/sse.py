"""The offline API's Server-Sent Events: a message as the API streams it, and a byte stream
that can break mid-way.

:func:`sse_events` serialises a complete message dict in the API's event order
(``message_start``, ``ping``, per block ``content_block_start`` / ``_delta`` /
``_stop``, ``message_delta``, ``message_stop``); :class:`EventStream` hands the events to
httpx2 one per chunk, paced, and injects the stream faults of a ``FaultPlan`` (an ``error``
event, a dropped connection). Used by :mod:`mini_agent.offline.transport`; the SDK's own
stream parser reads what it produces.
``message_start`` carries the reply's usage without its output side, ``message_delta`` the
cumulative counts (:func:`mini_agent.offline.usage_fields.stream_usages`).
Source: Anthropic "Streaming Messages" docs; the SDK's
``BetaCompactionContentBlockDelta`` (a compaction block starts empty and arrives in one
``compaction_delta``).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any, Iterator

import httpx2

from mini_agent.offline.usage_fields import stream_usages


class EventStream(httpx2.SyncByteStream, httpx2.AsyncByteStream):
    """SSE bytes, one event per chunk, optionally paced (sync sleeps or asyncio sleeps).

    Args: events: the serialised events; delay_seconds: pause before each; error_type: send
    an ``error`` event of that type after the first content block and stop; drop: raise
    ``httpx2.RemoteProtocolError`` there instead (the connection dropped).
    """

    def __init__(self, events: list[bytes], delay_seconds: float, *,
                 error_type: str | None = None, drop: bool = False) -> None:
        self.events = events
        self.delay_seconds = delay_seconds
        self.error_type = error_type
        self.drop = drop

    def _cut(self) -> int:
        """Index after the first ``content_block_stop`` (where a fault strikes)."""
        for i, event in enumerate(self.events):
            if event.startswith(b"event: content_block_stop"):
                return i + 1
        return min(2, len(self.events))

    def _planned(self) -> Iterator[bytes]:
        if not (self.error_type or self.drop):
            yield from self.events
            return
        yield from self.events[: self._cut()]
        if self.error_type:
            yield sse_frame("error", {"type": "error", "error": {
                "type": self.error_type, "message": _ERROR_TEXTS.get(self.error_type,
                                                                     self.error_type)}})
            return
        raise httpx2.RemoteProtocolError("peer closed connection without sending complete "
                                         "message body (incomplete chunked read)")

    def __iter__(self) -> Iterator[bytes]:
        for event in self._planned():
            if self.delay_seconds:
                time.sleep(self.delay_seconds)
            yield event

    async def __aiter__(self):  # type: ignore[override]
        for event in self._planned():
            if self.delay_seconds:
                await asyncio.sleep(self.delay_seconds)
            else:
                await asyncio.sleep(0)  # let tools scheduled during the stream run
            yield event


_ERROR_TEXTS = {"overloaded_error": "Overloaded", "api_error": "Internal server error"}



def sse_frame(event: str, data: dict[str, Any]) -> bytes:
    """Encode one server-sent event as the API writes it.

    Args:
        event: the event name (``"message_start"``, ``"content_block_delta"``, ``"error"``...).
        data: its JSON payload (written compact, no spaces).

    Returns:
        ``b"event: <event>\\ndata: <json>\\n\\n"``, UTF-8.
    """
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _chunks(text: str, rng: random.Random, low: int, high: int) -> list[str]:
    """Split ``text`` into pieces of ``low..high`` characters (deterministic for a seed)."""
    pieces, i = [], 0
    while i < len(text):
        n = rng.randint(low, high)
        pieces.append(text[i:i + n])
        i += n
    return pieces


def sse_events(message: dict[str, Any], *, partial_json: dict[int, str] | None = None,
               seed: int = 0) -> Iterator[bytes]:
    """Serialise a complete message dict as the API's SSE event stream (bytes per event).

    Text is split into small ``text_delta`` pieces and tool input JSON into
    ``input_json_delta`` fragments cut at arbitrary points (an empty first fragment, as the
    API sends). Deterministic for a given ``seed``. Source: Anthropic "Streaming Messages" docs.

    Args:
        message: ``{"id", "type": "message", "role", "model", "content", "stop_reason",
            "usage", "context_management"?}``.
        partial_json: ``{block index: JSON text}``: the streamed text of a tool_use cut by
            max_tokens (default: none).
        seed: seeds the piece sizes (the offline API passes the request number).

    Returns:
        A generator of SSE frames (``event:`` line, ``data:`` line, blank line), in the API's
    order.
    """
    rng = random.Random(seed)
    partial_json = partial_json or {}
    start_usage, delta_usage = stream_usages(message["usage"])
    head = {k: v for k, v in message.items() if k not in ("content", "stop_reason", "usage")}
    head.update(content=[], stop_reason=None, stop_sequence=None, usage=start_usage)
    extras = {k: message[k] for k in ("context_management",) if k in message}
    yield sse_frame("message_start", {"type": "message_start", "message": head})
    yield sse_frame("ping", {"type": "ping"})
    for index, block in enumerate(message["content"]):
        def start(shown: dict) -> bytes:
            return sse_frame("content_block_start", {"type": "content_block_start",
                                                     "index": index, "content_block": shown})

        def delta(change: dict) -> bytes:
            return sse_frame("content_block_delta", {"type": "content_block_delta",
                                                     "index": index, "delta": change})

        if block["type"] == "text":
            yield start({"type": "text", "text": ""})
            for piece in _chunks(block["text"], rng, 3, 24):
                yield delta({"type": "text_delta", "text": piece})
        elif block["type"] == "tool_use":
            yield start({**block, "input": {}})
            text = partial_json.get(index, json.dumps(block["input"]))
            for piece in [""] + _chunks(text, rng, 1, 12):
                yield delta({"type": "input_json_delta", "partial_json": piece})
        elif block["type"] == "compaction":
            # the block starts empty; its summary arrives whole in one compaction_delta
            yield start({**block, "content": None, "encrypted_content": None})
            yield delta({"type": "compaction_delta", "content": block.get("content"),
                         "encrypted_content": block.get("encrypted_content")})
        else:
            yield start(block)
        yield sse_frame("content_block_stop", {"type": "content_block_stop", "index": index})
    yield sse_frame("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": message["stop_reason"],
                                                "stop_sequence": message.get("stop_sequence")},
                                      "usage": delta_usage, **extras})
    yield sse_frame("message_stop", {"type": "message_stop"})
