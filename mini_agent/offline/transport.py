"""The offline Claude: a real ``anthropic`` client whose HTTP goes to a transport of ours.

``offline_client()`` returns ``anthropic.Anthropic(http_client=httpx2.Client(transport=
OfflineTransport(...)))``. Everything above the transport (request building, streaming
parsers, response types, retries, errors) is the SDK's own code, exactly as online. The
transport plays the API's part:

* validates each request body like the API of the version the SDK sends
  (:mod:`mini_agent.offline.request_check`; 2026-10-21:
  :mod:`mini_agent.core.request_rules` for the top-level rules, then ``validate_messages``
  on the conversation with consecutive same-role turns combined, as the API combines them;
  ``role: "system"`` messages only on the models that take them,
  :mod:`mini_agent.core.system_messages`) and answers 400 with the API's error JSON when a
  rule is broken, so a kit bug shows up offline as it would online;
* answers ``prompt is too long: N tokens > M maximum`` above the model's context window
  (:data:`mini_agent.core.models.MODELS`) or ``context_window_tokens`` when given;
* by default does what the API does for every request: prompt caching through
  :class:`~mini_agent.core.prompt_cache.PromptCacheSimulator` (explicit breakpoints and the
  top-level automatic ``cache_control``; ``max_tokens: 0`` only warms the cache), and the
  ``context_management`` edits a request asks for with their beta flag
  (``clear_tool_uses_20250919``; ``compact_20260112``, whose ``compaction`` block leads the
  reply and whose cost is reported in ``usage.iterations``; a beta request, one with an
  ``anthropic-beta`` flag or on ``?beta=true``, gets its one sampling iteration there, as
  recorded beta replies do; ASSUMPTION: other requests get no ``iterations``);
  ``count_tokens`` applies the same edits and
  reports ``context_management.original_input_tokens``;
* serves ``POST /v1/messages`` as JSON, or as SSE when ``"stream": true`` (the beta path
  ``/v1/messages?beta=true`` too), and ``POST /v1/messages/count_tokens``;
* fills the input side of ``usage`` through a pluggable ``usage_model`` (pass your own
  simulator to inspect its log or advance a clock), and the rest as the API does
  (``cache_creation`` by TTL, ``output_tokens_details``, ``server_tool_use``,
  ``service_tier``, ``inference_geo``, ``speed``: :mod:`mini_agent.offline.usage_fields`),
  then presents the blocks as the API does (a ``tool_use``'s ``caller``, thinking left empty
  for ``display: "omitted"``: :mod:`mini_agent.offline.reply_blocks`),
  and, when ``request_transforms`` are given, applies those in
  place of the API's own context management (the plug-in style of episodes 04 and 05);
* makes the brain's reply obey what the request forces (:mod:`mini_agent.offline.forced_output`):
  a tool call and no text for ``tool_choice`` ``any`` / ``tool``, JSON valid against
  ``output_config.format``'s schema;
* ends the brain's reply after its first tool call when ``tool_choice`` disables parallel
  tool use (and leaves its calls out for ``tool_choice: none``), and at the first of the
  request's ``stop_sequences`` in its text
  (``stop_reason: "stop_sequence"``, the match in ``stop_sequence``), enforces ``max_tokens``
  on it (cutting text or a tool_use's JSON mid-way, with ``stop_reason: "max_tokens"``) and
  injects faults on chosen requests.

The brain is any object with ``respond(request: dict) -> {"content": [...], "stop_reason":
str}``; see :mod:`mini_agent.offline.brains` and :mod:`mini_agent.offline.demo_brain`.

Source: Messages API reference and streaming docs (docs.anthropic.com, "Streaming Messages":
event order message_start, content_block_start/delta/stop, message_delta, message_stop);
errors docs (error JSON ``{"type": "error", "error": {"type", "message"}}``, 529 overloaded).
"""

from __future__ import annotations

import json
import threading
from typing import Any, Sequence

import anthropic
import httpx2

from mini_agent.core.clock import Clock
from mini_agent.core.context_edits import clear_tool_uses_transform
from mini_agent.core.models import UnknownModelError, model_spec
from mini_agent.core.prompt_cache import PromptCacheSimulator
from mini_agent.core.request_rules import (API_VERSION, BETA_FIELDS, MESSAGES_FIELDS,
                                           place_automatic_cache_control)
from mini_agent.core.server_compaction import (apply_compaction_blocks, compact_request,
                                               compaction_block, compaction_edit)
from mini_agent.core.tokens import approx_body_tokens, approx_tokens
from mini_agent.offline.forced_output import (force_output_format, force_tool_choice,
                                              forced_tool_id)
from mini_agent.offline.max_tokens import (apply_stop_sequences, enforce_max_tokens,
                                           one_tool_use)
from mini_agent.offline.plug_ins import (Brain, DefaultUsage, FaultPlan,  # noqa: F401 (re-exported)
                                         RequestTransform, UsageModel, _WallClock, api_error)
from mini_agent.offline.reply_blocks import presented_blocks
from mini_agent.offline.request_check import (MAX_BODY_DEPTH, body_depth, not_served,
                                              request_refusal)
from mini_agent.offline.sse import EventStream, sse_events
from mini_agent.offline.usage_fields import response_usage, thinking_tokens

__all__ = ["ALLOWED_REQUEST_KEYS", "Brain", "DefaultUsage", "FaultPlan", "OfflineTransport",
           "UsageModel", "api_error", "compaction_client", "not_served", "offline_async_client",
           "offline_client", "sse_events"]

DEFAULT_CONTEXT_WINDOW_TOKENS = 200_000
"""Context window for a model id the kit's table does not know (tokens)."""

OFFLINE_HOST = "offline.invalid"
"""The host of the offline client's base URL (``.invalid`` never resolves): an SDK error whose
request went there came from the offline API, not from Anthropic's."""

OFFLINE_API_KEY = "offline-no-key"
"""Placeholder key the offline client sends; it never leaves the process."""

ALLOWED_REQUEST_KEYS = MESSAGES_FIELDS | BETA_FIELDS
"""Top-level fields a ``/v1/messages`` body may carry in version 2026-10-21 (beta included)."""



class OfflineTransport(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """An httpx2 transport that answers Messages API requests from a brain.

    Args: brain: the reply policy (see :class:`Brain`); context_window_tokens: requests whose
    input estimate exceeds it get the API's "prompt is too long" 400 (default: the model's
    window, 200,000 for a model the kit does not know); usage_model: input-side usage
    (default: a fresh :class:`PromptCacheSimulator`, the API's caching; ``DefaultUsage()``
    turns caching off); request_transforms: None (default) applies the
    ``context_management`` edits a request asks for as the API does; a sequence of callables
    ``request -> (request, extra)`` is applied instead, in order, ``extra`` merged into the
    response; faults: a :class:`FaultPlan`; clock: time source for the usage model (seconds).
    Attributes: requests: every ``/v1/messages`` body received (after transforms), in order;
    request_count: number of ``/v1/messages`` HTTP requests so far (retries included).
    """

    def __init__(self, brain: Brain, *, context_window_tokens: int | None = None,
                 usage_model: UsageModel | None = None,
                 request_transforms: Sequence[RequestTransform] | None = None,
                 faults: FaultPlan | None = None, clock: Clock | None = None) -> None:
        self.brain = brain
        self.context_window_tokens = context_window_tokens
        self.usage_model = usage_model if usage_model is not None else PromptCacheSimulator()
        self.request_transforms = None if request_transforms is None else \
            list(request_transforms)
        self.faults = faults or FaultPlan()
        self.clock = clock or _WallClock()
        self.requests: list[dict[str, Any]] = []
        self.request_count = 0
        self._lock = threading.Lock()

    # -- httpx2 entry points -------------------------------------------------------------
    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Serve one request synchronously (``httpx2.BaseTransport``).

        Args:
            request: the SDK's HTTP request.

        Returns:
            The API's answer: a message (JSON or SSE), a count, or an error.
        """
        request.read()
        return self._route(request, is_async=False)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Serve one request for an async client (``httpx2.AsyncBaseTransport``).

        Args:
            request: the SDK's HTTP request.

        Returns:
            The API's answer: a message (JSON or SSE), a count, or an error.
        """
        await request.aread()
        return self._route(request, is_async=True)

    # -- routing ------------------------------------------------------------------------
    def _route(self, request: httpx2.Request, *, is_async: bool) -> httpx2.Response:
        path = request.url.path
        if request.method != "POST":
            return api_error(404, "not_found_error", f"Not found: {request.method} {path}")
        try:
            body = json.loads(request.content or b"{}")
        except json.JSONDecodeError as exc:
            return api_error(400, "invalid_request_error", f"Invalid JSON body: {exc}")
        except RecursionError:
            return api_error(400, "invalid_request_error", "Invalid JSON body: nested too deeply")
        if not isinstance(body, dict):
            return api_error(400, "invalid_request_error", "Request body must be a JSON object")
        if body_depth(request.content or b"{}") > MAX_BODY_DEPTH:   # the same for every caller
            return api_error(400, "invalid_request_error", "Request body nested too deeply: "
                             f"more than {MAX_BODY_DEPTH} levels of arrays and objects")
        version = request.headers.get("anthropic-version", API_VERSION)
        betas = tuple(flag.strip() for flag in request.headers.get("anthropic-beta", "")
                      .split(",") if flag.strip())
        try:   # a body parsed but nested deeper than the checks and the brain can walk
            if path == "/v1/messages/count_tokens":
                return self._count_tokens(body, version=version, betas=betas)
            if path == "/v1/messages":
                return self._messages(body, is_async=is_async, version=version, betas=betas,
                                      beta=bool(betas) or
                                      request.url.params.get("beta") == "true")
        except RecursionError:
            return api_error(400, "invalid_request_error", "Request body nested too deeply")
        return api_error(404, "not_found_error", f"Not found: {path}")

    def _check(self, body: dict[str, Any], *, count_tokens: bool, version: str,
               betas: tuple[str, ...]) -> str | None:
        """Return the API's error message for a malformed body, or None."""
        return request_refusal(body, count_tokens=count_tokens, version=version, betas=betas)

    def _window_tokens(self, model: str) -> int:
        if self.context_window_tokens is not None:
            return self.context_window_tokens
        try:
            return model_spec(model).context_window_tokens
        except UnknownModelError:
            return DEFAULT_CONTEXT_WINDOW_TOKENS

    def _count_tokens(self, body: dict[str, Any], *, version: str = API_VERSION,
                      betas: tuple[str, ...] = ()) -> httpx2.Response:
        error = self._check(body, count_tokens=True, version=version, betas=betas)
        if error:
            return api_error(400, "invalid_request_error", error)
        if not_served(body["model"]):
            return api_error(404, "not_found_error", f"model: {body['model']}")
        if not body.get("context_management"):
            return httpx2.Response(200, json={"input_tokens": approx_body_tokens(body)})
        # the edits a request asks for apply here too (earlier compaction blocks included;
        # ASSUMPTION: a new compaction is not simulated by count_tokens)
        original = approx_body_tokens(body)
        try:
            body, _ = clear_tool_uses_transform(body)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            return api_error(400, "invalid_request_error", f"context_management.edits: {exc}")
        body = {**body, "messages": apply_compaction_blocks(body["messages"])}
        return httpx2.Response(200, json={
            "input_tokens": approx_body_tokens(body),
            "context_management": {"original_input_tokens": original}})

    def _api_context_management(self, body: dict[str, Any]
                                ) -> tuple[dict[str, Any], dict[str, Any], dict | None]:
        """The API's own edits: ``(body seen by the model, response fields, compaction)``."""
        if not body.get("context_management"):
            return body, {}, None
        body, extras = clear_tool_uses_transform(body)
        compaction = None
        edit = compaction_edit(body)
        if edit is not None:
            body, compaction = compact_request(body, edit)
        return body, extras, compaction

    def _messages(self, body: dict[str, Any], *, is_async: bool, version: str = API_VERSION,
                  betas: tuple[str, ...] = (), beta: bool = False) -> httpx2.Response:
        with self._lock:
            self.request_count += 1
            number = self.request_count
        if number in self.faults.overloaded_at:
            return api_error(529, "overloaded_error", "Overloaded")
        error = self._check(body, count_tokens=False, version=version, betas=betas)
        if error:
            return api_error(400, "invalid_request_error", error)
        if not_served(body["model"]):
            return api_error(404, "not_found_error", f"model: {body['model']}")
        body = place_automatic_cache_control(body)
        compaction = None
        if self.request_transforms is None:
            try:
                body, extras, compaction = self._api_context_management(body)
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                # an edit setting the shape check let through: a 400 like the API's, never
                # an exception inside the SDK client
                return api_error(400, "invalid_request_error",
                                 f"context_management.edits: {exc}")
        else:
            extras = {}
            for transform in self.request_transforms:
                body, extra = transform(body)
                extras.update(extra)
        input_estimate = approx_body_tokens(body)
        window = self._window_tokens(body["model"])
        if input_estimate > window:
            return api_error(400, "invalid_request_error",
                             f"prompt is too long: {input_estimate} tokens > {window} maximum")
        self.requests.append(body)
        counted = self.usage_model.usage(body, now=self.clock.now())
        content, stop_reason, stop_sequence, partial_json = self._reply(body, number,
                                                                        compaction)
        sampled = content[1:] if compaction is not None else content
        usage = response_usage(
            counted, body, thinking=thinking_tokens(sampled),
            output_tokens=approx_tokens({"role": "assistant", "content": sampled})
            if sampled else 0)
        sampling = {"type": "message", **{k: usage.get(k, 0) for k in (
            "input_tokens", "output_tokens", "cache_creation_input_tokens",
            "cache_read_input_tokens", "cache_creation")}}
        if compaction is not None:   # its tokens are not in the top-level usage fields
            usage["iterations"] = [{"type": "compaction", **compaction["usage"]}, sampling]
        elif beta and "iterations" not in usage:
            usage["iterations"] = [sampling]
        message = {"id": f"msg_offline_{number:04d}", "type": "message", "role": "assistant",
                   "model": body["model"], "content": presented_blocks(content, body),
                   "stop_reason": stop_reason,
                   "stop_sequence": stop_sequence,
                   "usage": usage, **extras}
        headers = {"request-id": f"req_offline_{number:04d}"}
        if not body.get("stream"):
            return httpx2.Response(200, json=message, headers=headers)
        events = list(sse_events(message, partial_json=partial_json, seed=number))
        headers["content-type"] = "text/event-stream"
        stream = EventStream(events, self.faults.stream_delay_seconds,
                              error_type=self.faults.stream_error_at.get(number),
                              drop=number in self.faults.stream_drop_at)
        return httpx2.Response(200, headers=headers, stream=stream)

    def _reply(self, body: dict[str, Any], number: int, compaction: dict | None
               ) -> tuple[list[dict], str, str | None, dict[int, str]]:
        """The assistant content: the compaction block (if any), then the brain's reply ended
        at a stop sequence and cut to ``max_tokens``; ``max_tokens: 0`` only warms the cache
        (empty content). Returns ``(content, stop_reason, stop_sequence, partial_json)``."""
        head = [compaction_block(compaction)] if compaction is not None else []
        if compaction is not None and compaction["pause"]:
            return head, "compaction", None, {}
        if body["max_tokens"] == 0:
            return head, "max_tokens", None, {}
        reply = self.brain.respond(body)
        forced, said = force_tool_choice(reply["content"], reply.get("stop_reason", "end_turn"),
                                         body, tool_id=forced_tool_id(number))
        content, matched = apply_stop_sequences(force_output_format(
            one_tool_use(forced, body.get("tool_choice")), body), body.get("stop_sequences"))
        if said == "tool_use" and not any(b.get("type") == "tool_use" for b in content):
            said = "end_turn"   # tool_choice none left the calls out
        content, stop_reason, partial_json = enforce_max_tokens(
            content, "stop_sequence" if matched else said, body["max_tokens"],
            self.faults.max_tokens_at.get(number))
        return (head + content, stop_reason, matched if stop_reason == "stop_sequence" else None,
                {i + len(head): text for i, text in partial_json.items()})


# ------------------------------------------------------------------ client factories

def _build(client_cls: Any, http_cls: Any, brain: Brain | None, max_retries: int,
           transport_kwargs: dict[str, Any]) -> Any:
    from mini_agent.offline.brains import EchoBrain
    transport = OfflineTransport(brain or EchoBrain(), **transport_kwargs)
    client = client_cls(api_key=OFFLINE_API_KEY, max_retries=max_retries,
                        base_url=f"http://{OFFLINE_HOST}",
                        http_client=http_cls(transport=transport))
    client.offline_transport = transport
    return client


def offline_client(brain: Brain | None = None, *, max_retries: int = 2,
                   **transport_kwargs: Any) -> anthropic.Anthropic:
    """Return a real ``anthropic.Anthropic`` client served by an :class:`OfflineTransport`.

    No network, no API key needed. The transport is reachable as ``client.offline_transport``
    (requests seen, counters).

    Args:
        brain: the reply policy (default: :class:`~mini_agent.offline.brains.EchoBrain`).
        max_retries: the SDK's retry count (it retries a 529 "Overloaded" by itself; a
            stream that broke after it started is the loop's to retry).
        transport_kwargs: passed to :class:`OfflineTransport` (``faults``, ``usage_model``...).

    Returns:
        The client.
    """
    return _build(anthropic.Anthropic, httpx2.Client, brain, max_retries, transport_kwargs)


def offline_async_client(brain: Brain | None = None, *, max_retries: int = 2,
                         **transport_kwargs: Any) -> anthropic.AsyncAnthropic:
    """Return a real ``anthropic.AsyncAnthropic`` client over an :class:`OfflineTransport`.

    Args:
        brain: the reply policy (default: :class:`~mini_agent.offline.brains.EchoBrain`).
        max_retries: the SDK's retry count.
        transport_kwargs: passed to :class:`OfflineTransport`.

    Returns:
        The client; ``client.offline_transport`` is the transport.
    """
    return _build(anthropic.AsyncAnthropic, httpx2.AsyncClient, brain, max_retries,
                  transport_kwargs)


def compaction_client(edit: Any, brain: Any, **opts: Any) -> anthropic.Anthropic:
    """Return an offline client whose API applies server-side compaction with ``edit``.

    Args:
        edit: a :class:`mini_agent.core.server_compaction.ServerCompaction`.
        brain: the brain that answers once the history is compacted.
        **opts: passed to :func:`offline_client` (``request_transforms`` are appended).

    Returns:
        ``offline_client(edit.wrap(brain), request_transforms=[edit, ...], **opts)``.
    """
    transforms = [edit, *opts.pop("request_transforms", ())]
    return offline_client(edit.wrap(brain), request_transforms=transforms, **opts)
