"""What plugs into the offline API: the brain and usage protocols, the fault plan, the errors.

:class:`Brain` decides a reply; :class:`UsageModel` fills the input side of ``usage``
(:class:`DefaultUsage` without caching; the default is the prompt-cache simulator);
:class:`FaultPlan` names the faults to inject on chosen requests (a reply cut by
``max_tokens``, a 529, an ``error`` event or a dropped connection mid-stream);
:func:`api_error` shapes an error response as the API does. Used by
:mod:`mini_agent.offline.transport`, which re-exports every name.
Source: Anthropic errors docs (error JSON ``{"type": "error", "error": {"type", "message"}}``,
529 overloaded) and "Streaming Messages" docs (error events mid-stream).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Protocol

import httpx2

from mini_agent.core.tokens import approx_body_tokens


class Brain(Protocol):
    """Decides the assistant's reply from the request. Stateless and deterministic."""

    def respond(self, request: dict[str, Any]) -> dict[str, Any]:
        """Decide the reply to one request.

        Args:
            request: the ``/v1/messages`` body as the model sees it (after context management).

        Returns:
            ``{"content": [blocks], "stop_reason": "end_turn" | "tool_use" | ...}``.
        """
        ...  # pragma: no cover - protocol


class UsageModel(Protocol):
    """Computes the input side of ``usage`` for a request (e.g. a prompt-cache simulator)."""

    def usage(self, request: dict[str, Any], *, now: float) -> dict[str, Any]:
        """Compute the input side of ``usage`` for one request.

        Args:
            request: the ``/v1/messages`` body as the model sees it.
            now: the transport clock's time (seconds), for cache lifetimes.

        Returns:
            ``{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}``,
            optionally ``"cache_creation"`` (the writes split by TTL; without it every write
            counts at 5 minutes). The transport adds the rest of the API's ``usage``
            (:func:`mini_agent.offline.usage_fields.response_usage`).
        """
        ...  # pragma: no cover - protocol


RequestTransform = Callable[[dict[str, Any]], "tuple[dict[str, Any], dict[str, Any]]"]


@dataclasses.dataclass
class FaultPlan:
    """Faults to inject, by request number (1-based count of ``/v1/messages`` HTTP requests).

    Attributes: max_tokens_at: ``{n: "text" | "tool_use"}``: cut request n's reply inside its
    first text block, or inside its last tool_use's JSON input, with ``stop_reason:
    "max_tokens"``; overloaded_at: request numbers answered with 529 ``overloaded_error``
    (the SDK retries these by itself); stream_error_at: ``{n: "overloaded_error" | ...}``:
    request n's stream sends an ``error`` event of that type after its first content block
    (the SDK raises it mid-stream and does not retry a stream that has started; the agent
    loop does);
    stream_drop_at: request numbers whose connection drops after the first content block
    (tools may have started); stream_delay_seconds: pause between SSE events, so tools
    visibly start while the model is still streaming.
    """

    max_tokens_at: dict[int, str] = dataclasses.field(default_factory=dict)
    overloaded_at: set[int] = dataclasses.field(default_factory=set)
    stream_error_at: dict[int, str] = dataclasses.field(default_factory=dict)
    stream_drop_at: set[int] = dataclasses.field(default_factory=set)
    stream_delay_seconds: float = 0.0


class DefaultUsage:
    """Usage without prompt caching: every input token is uncached (``approx_body_tokens``)."""

    def usage(self, request: dict[str, Any], *, now: float) -> dict[str, Any]:
        """Count every input token as uncached.

        Args:
            request: the ``/v1/messages`` body.
            now: ignored (nothing expires without a cache).

        Returns:
            ``{"input_tokens": approx_body_tokens(request), "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0}``.
        """
        tokens = approx_body_tokens(request)
        return {"input_tokens": tokens, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0}


def api_error(status: int, kind: str, message: str) -> httpx2.Response:
    """Build an API-shaped error response.

    Args:
        status: the HTTP status (400, 404, 529...).
        kind: the error type (``"invalid_request_error"``, ``"overloaded_error"``...).
        message: the error text, worded as the API words it.

    Returns:
        An ``httpx2.Response`` whose JSON is ``{"type": "error", "error": {"type", "message"}}``.
    """
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return httpx2.Response(status, json=body, headers={"request-id": "req_offline_error"})


class _WallClock:
    """The wall clock the transport uses when given none (``time.time()``, seconds)."""

    def now(self) -> float:
        return time.time()
