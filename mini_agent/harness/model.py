"""One model request: built in one place, sent through the SDK, its reply read as chunks.

:class:`Model` binds a client and the request settings (model name, output cap, system
prompt, tool definitions, ``prepare_request`` steps such as cache breakpoints). Every request
the kit sends is made by :meth:`Model.build_request`::

    {"model": str, "max_tokens": int, "messages": view, "system"?: str | list[block],
     "tools"?: [{"name", "description", "input_schema"}]}

then each ``prepare_request`` step in order, then ``validate_messages`` (a history the API
would refuse fails here, before anything is sent). :meth:`Model.send` makes the request
through the SDK (``client.messages.create(stream=True)``, or one plain request) and returns
the reply as loop chunks (:mod:`mini_agent.core.streaming`): the SDK's errors are raised by
``send`` itself, before any chunk. :func:`open_request` is what the loop calls for each turn:
the view policy, the request, and ONE retry with ``on_context_overflow``'s view when the API
answers "prompt is too long". :func:`stream_fault_kind` tells a stream that broke mid-way and
is worth sending again (an ``overloaded_error`` or ``api_error`` event, a dropped connection)
from an error that would only come back (a 400); the loop retries those and, when its retries
run out, raises :class:`StreamFaultError`.

IO: network (through the SDK). Taught in ``notebooks/01_agent_loop.ipynb``.
Source: 002_4516104fd432e704.txt section 1; Anthropic "Messages" and "Streaming Messages" docs.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, AsyncIterator, Callable, Mapping, Sequence

import anthropic
import httpx2

from mini_agent.core.messages import Message, MessageValidationError, validate_messages
from mini_agent.core.wire_rules import tools_required_problem
from mini_agent.core.streaming import Chunk, StreamAssembler, message_chunks
from mini_agent.core.tokens import approx_tokens
from mini_agent.core.view import ViewContext

PROMPT_TOO_LONG = "prompt is too long"
"""The API's 400 message prefix when a request exceeds the context window."""


class ContextOverflowError(RuntimeError):
    """The request exceeded the context window and no (or no sufficient) recovery exists.

    Attributes:
        raw_tokens: approx tokens of the history.
        view_tokens: approx tokens of the last view sent.
        api_message: the API's error text.
    """

    def __init__(self, message: str, *, raw_tokens: int, view_tokens: int,
                 api_message: str) -> None:
        super().__init__(message)
        self.raw_tokens = raw_tokens
        self.view_tokens = view_tokens
        self.api_message = api_message


RETRYABLE_ERROR_TYPES = ("overloaded_error", "api_error")
"""Error types of a mid-stream ``error`` event worth sending the request again for (the API's
529 "Overloaded" and 500 "Internal server error"); a 400 ``invalid_request_error`` would only
come back."""

DEFAULT_STREAM_RETRIES = 2
"""Requests the loop sends again after a stream broke mid-way, in a row, before it gives up
with :class:`StreamFaultError`."""


class StreamFaultError(anthropic.APIError):
    """A reply's stream broke mid-way on every attempt the loop was allowed.

    The history is valid when this is raised: a tool call that arrived complete before a
    break ran once and is stored with its result; nothing else of a broken reply is kept.
    The last fault is the exception's ``__cause__``. It is an ``anthropic.APIError``, so
    code that catches the SDK's errors (the REPL, which reports them in one line and goes
    back to the prompt) catches it too.

    Args:
        message: what happened, for the user.
        kind: :func:`stream_fault_kind` of the last fault (``"overloaded_error"``,
            ``"api_error"`` or ``"connection"``).
        attempts: requests whose stream broke, in a row (the first one included).
        cause: the last fault; it becomes ``__cause__``, and its HTTP request this error's.
    """

    def __init__(self, message: str, *, kind: str, attempts: int,
                 cause: BaseException | None = None) -> None:
        request = cause.request if isinstance(cause, anthropic.APIError) else \
            httpx2.Request("POST", "/v1/messages")
        super().__init__(message, request, body=None)
        self.kind = kind
        self.attempts = attempts
        self.__cause__ = cause


def stream_fault_kind(exc: BaseException) -> str | None:
    """Name a mid-stream failure worth a retry, or None for one that would come back.

    Args:
        exc: what reading the reply's stream raised.

    Returns:
        ``"overloaded_error"`` or ``"api_error"`` for an ``error`` event (or a 529 / 500
        status) of those types, ``"connection"`` for a dropped or timed-out connection
        (``anthropic.APIConnectionError``, ``httpx2.TransportError``), else None (a 400,
        a 401, a bug of ours).
    """
    if isinstance(exc, (anthropic.APIConnectionError, httpx2.TransportError)):
        return "connection"
    if isinstance(exc, anthropic.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        error = body.get("error") if isinstance(body.get("error"), dict) else body
        kind = error.get("type")
        if kind in RETRYABLE_ERROR_TYPES:
            return kind
        if exc.status_code in (500, 529):
            return "api_error" if exc.status_code == 500 else "overloaded_error"
    return None


@dataclasses.dataclass(frozen=True)
class Model:
    """A client and the settings of every request the loop sends with it.

    Attributes:
        client: ``anthropic.AsyncAnthropic`` (preferred) or ``anthropic.Anthropic`` (its
            blocking calls then run in worker threads), online or from ``mini_agent.offline``.
        model: the model name.
        max_tokens: the output cap per request (tokens); a continuation may scale it.
        system: the system prompt (str or blocks), or None.
        tool_definitions: ``[{"name", "description", "input_schema"}]``.
        stream: True streams the reply (tools start while it arrives); False makes one plain
            request.
        prepare_request: ``request -> request`` steps applied in order before validation.
    """

    client: Any
    model: str
    max_tokens: int
    system: Any = None
    tool_definitions: tuple[dict, ...] = ()
    stream: bool = True
    prepare_request: tuple[Callable[[dict], dict], ...] = ()

    def build_request(self, messages: list[Message], *, max_tokens_scale: int = 1) -> dict:
        """Return validated ``messages.create`` kwargs for ``messages`` (not mutated).

        Args:
            messages: the view to send.
            max_tokens_scale: the continuation's factor on :attr:`max_tokens` (1, 2, 4...).

        Returns:
            The request dict, after every ``prepare_request`` step.

        Raises:
            MessageValidationError: the request breaks an API rule (also: a history with
                tool calls and no tools, rule ``"tools_required"``).
        """
        request: dict[str, Any] = {"model": self.model,
                                   "max_tokens": self.max_tokens * max_tokens_scale,
                                   "messages": list(messages)}
        if self.system:
            request["system"] = self.system
        if self.tool_definitions:
            request["tools"] = list(self.tool_definitions)
        for prepare in self.prepare_request:
            request = prepare(request)
        validate_messages(request["messages"], system=request.get("system"),
                          tools=request.get("tools"))
        if not request.get("tools"):
            _require_tools_for_tool_blocks(request["messages"])
        return request

    async def send(self, request: dict[str, Any]) -> AsyncIterator[Chunk]:
        """Send ``request`` and return its reply as an async iterator of chunks.

        Args:
            request: ``messages.create`` kwargs from :meth:`build_request`.

        Returns:
            TextDelta / ToolUseReady / ToolUseTruncated chunks, then one StreamDone.
        Raises:
            the SDK's errors (``anthropic.BadRequestError`` ...), here, before any chunk.
        """
        create = self.client.messages.create
        is_async = isinstance(self.client, anthropic.AsyncAnthropic)
        if not self.stream:
            message = (await create(**request) if is_async
                       else await asyncio.to_thread(create, **request))
            return _iterate(message_chunks(message))
        if is_async:
            return _async_stream_chunks(await create(**request, stream=True))
        return _sync_stream_chunks(await asyncio.to_thread(create, **request, stream=True))


async def _iterate(chunks: list[Chunk]) -> AsyncIterator[Chunk]:
    for chunk in chunks:
        yield chunk


async def _async_stream_chunks(events: Any) -> AsyncIterator[Chunk]:
    assembler = StreamAssembler()
    async with events:
        async for event in events:
            for chunk in assembler.feed(event):
                yield chunk
    for chunk in assembler.finish():  # a stream that broke off before message_stop
        yield chunk


async def _sync_stream_chunks(events: Any) -> AsyncIterator[Chunk]:
    assembler = StreamAssembler()
    iterator, end = iter(events), object()
    try:
        while (event := await asyncio.to_thread(next, iterator, end)) is not end:
            for chunk in assembler.feed(event):
                yield chunk
    finally:
        events.close()
    for chunk in assembler.finish():
        yield chunk


def sdk_model(client: Any, *, model: str, max_tokens: int, system: Any = None,
              tools: Mapping[str, Any] | None = None, stream: bool = True,
              prepare_request: Callable[[dict], dict] | Sequence[Callable[[dict], dict]]
              | None = None) -> Model:
    """Return the :class:`Model` :func:`~mini_agent.harness.loop.run_loop` sends requests with.

    Args:
        client: the SDK client (see :class:`Model`).
        model: the model name.
        max_tokens: the output cap per request (tokens).
        system: the system prompt, or None.
        tools: ``{name: Tool}``; their ``definition()`` go into every request.
        stream: stream the replies (True) or make plain requests.
        prepare_request: one ``request -> request`` step or a sequence of them.

    Returns:
        The frozen :class:`Model`.
    """
    steps = (() if prepare_request is None else (prepare_request,)
             if callable(prepare_request) else tuple(prepare_request))
    return Model(client, model, max_tokens, system,
                 tuple(t.definition() for t in (tools or {}).values()), stream, steps)


@dataclasses.dataclass
class OpenRequest:
    """A request that was sent: its kwargs, its reply's chunks, and whether it is the retry
    made with ``on_context_overflow``'s view."""

    request: dict[str, Any]
    chunks: AsyncIterator[Chunk]
    overflow_retry: bool


def _is_too_long(exc: Exception) -> bool:
    return isinstance(exc, anthropic.BadRequestError) and PROMPT_TOO_LONG in str(exc)


async def open_request(model: Model, messages: list[Message], ctx: ViewContext, *,
                       view: Callable, on_context_overflow: Callable | None = None,
                       max_tokens_scale: int = 1) -> OpenRequest:
    """Build the view of ``messages``, send it, and retry once if it does not fit.

    Args:
        model: where and how to send.
        messages: the history (and any continuation messages); never mutated.
        ctx: the view context (times, now, turn).
        view: the view policy ``(messages, ctx) -> view``.
        on_context_overflow: ``(messages, ctx) -> view`` tried once on "prompt is too long".
        max_tokens_scale: the continuation's factor on ``model.max_tokens``.
    Returns:
        The :class:`OpenRequest` whose chunks the loop reads.
    Raises:
        ContextOverflowError: "prompt is too long" with no handler, or again after it.
        MessageValidationError: a view breaks an API rule; the SDK's other errors.
    """
    sent = view(messages, ctx)
    try:
        return await _open(model, sent, max_tokens_scale, overflow_retry=False)
    except anthropic.BadRequestError as exc:
        if not _is_too_long(exc):
            raise
        if on_context_overflow is None:
            raise _overflow(messages, sent, exc, "and no on_context_overflow is set") from exc
    sent = on_context_overflow(messages, ctx)
    try:
        return await _open(model, sent, max_tokens_scale, overflow_retry=True)
    except anthropic.BadRequestError as exc:
        if not _is_too_long(exc):
            raise
        raise _overflow(messages, sent, exc, "after on_context_overflow's view") from exc


async def _open(model: Model, view: list[Message], max_tokens_scale: int, *,
                overflow_retry: bool) -> OpenRequest:
    request = model.build_request(view, max_tokens_scale=max_tokens_scale)
    return OpenRequest(request, await model.send(request), overflow_retry)


def _overflow(messages: list[Message], view: list[Message],
              exc: anthropic.BadRequestError, how: str) -> ContextOverflowError:
    raw, sent = approx_tokens(messages), approx_tokens(view)
    return ContextOverflowError(
        f"the request does not fit the context window {how}: ~{raw} raw tokens, ~{sent} "
        f"sent ({exc.message})", raw_tokens=raw, view_tokens=sent, api_message=exc.message)


def _require_tools_for_tool_blocks(messages: list[Message]) -> None:
    """Refuse a request without tools whose history holds tool calls, as the API does.

    Typical cause: a session with tool calls resumed into an ``Agent`` built without tools.
    """
    missing = tools_required_problem(messages, None)
    if missing is not None:
        index, text = missing
        raise MessageValidationError(
            f"{text.rstrip('.')} (messages.{index} holds one; give the Agent the tools this "
            "history used)", rule="tools_required", index=index)
