"""The Agent: full history + a view policy + tools + hooks + a write-ahead session, on the one loop.

``Agent`` keeps the FULL history (the record) and, for each request, sends a VIEW built by its
``view_policy`` (default: :class:`~mini_agent.core.masking.ThresholdMasking`, seed 000: "store full,
send masked"). Facts about messages stay beside them: ``agent.times[i]`` is the clock time at
which ``agent.history[i]`` was appended. Each request is the view, then every
``prepare_request`` callable (caching adds ``cache_control`` there), then
``validate_messages``, then the SDK (streamed by default). The turn itself runs on
:func:`mini_agent.harness.loop.run_loop` (tools start while the model streams; ``auto_continue``
through ``max_tokens``).

Data flow of one ``arun(text)``: SessionStart (first run) -> UserPromptSubmit -> the user
message appended and fsynced to the session BEFORE the API call -> turns of the loop (each
assistant message logged when complete, each tool result logged as it arrives, never the
masked view) -> Stop. A 400 "prompt is too long" calls ``on_context_overflow(history, ctx)``
once and retries with the view it returns; a second failure raises
:class:`ContextOverflowError`.

``run(text)`` is the sync wrapper (it works inside Jupyter's running event loop: the coroutine
runs on the agent's own event-loop thread). ``stats()`` / ``stats_line()`` is ``/stats``;
``history_text()`` is ``/history``; ``requests`` holds one record per API request for widgets.
IO: network (SDK), tools, session file. Taught in ``notebooks/01_agent_loop.ipynb`` and
``03_observation_masking.ipynb``. Source: 000_86e3ff2076a5ae37.txt (turn, /stats, /history),
002_4516104fd432e704.txt (loop, hooks, session).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import threading
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Mapping, Sequence

import anthropic

from mini_agent.harness.clock import Clock, SystemClock
from mini_agent.harness.config import DEFAULT_MAX_TOKENS, model_name
from mini_agent.harness.loop import (DEFAULT_MAX_TURNS, HookNotice, LoopEnd, LoopEvent, TextChunk, TurnStart,
                                     maybe_await, run_loop, stream_chunks)
from mini_agent.core.messages import MessageParam, content_blocks, tool_results, validate_messages
from mini_agent.core.streaming import StreamDone
from mini_agent.core.tokens import approx_tokens
from mini_agent.core.view import ViewContext

DEFAULT_SYSTEM = ("You are a careful coding agent working in a small repository. Use the tools "
                  "to explore before you edit, keep edits minimal, and run the tests to check "
                  "your work. Answer briefly when you are done.")

PROMPT_TOO_LONG = "prompt is too long"
"""The API's 400 message prefix when a request exceeds the context window."""


class ContextOverflowError(RuntimeError):
    """The request exceeded the context window and no (or no sufficient) recovery exists.

    Attributes: raw_tokens, view_tokens: approx tokens of the history and of the last view
    sent; api_message: the API's error text.
    """

    def __init__(self, message: str, *, raw_tokens: int, view_tokens: int,
                 api_message: str) -> None:
        super().__init__(message)
        self.raw_tokens = raw_tokens
        self.view_tokens = view_tokens
        self.api_message = api_message


@dataclasses.dataclass
class RunResult:
    """What one ``run``/``arun`` produced: ``text`` (the last turn's assistant text),
    ``stop_reason`` ("completed" | "max_turns_reached" | "prompt_blocked" | "hook_stopped"), ``turns``
    (requests made), ``events`` (every loop event, in order)."""

    text: str
    stop_reason: str
    turns: int
    events: list = dataclasses.field(default_factory=list, repr=False)

    def __str__(self) -> str:
        return self.text


def _default_view_policy() -> Callable:
    from mini_agent.core.masking import ThresholdMasking
    return ThresholdMasking()


def _is_too_long(exc: Exception) -> bool:
    return isinstance(exc, anthropic.BadRequestError) and PROMPT_TOO_LONG in str(exc)


class ObservedHooks:
    """Wraps a ``HookManager`` so the Agent hears what hooks say to the user.

    Every ``fire`` gets ``session_id`` and ``cwd`` in its payload (as Claude Code sends
    them); a result's ``system_message`` and ``errors`` are queued as :class:`HookNotice`
    events; ``"continue": false`` (``result.stop``) is remembered in ``stop_reason``.
    Everything else is the wrapped manager's (``on``, ``from_settings``...).
    Source: Claude Code hooks reference (common input fields, JSON output ``continue``,
    ``stopReason``, ``systemMessage``).
    """

    def __init__(self, hooks: Any, *, session_id: Callable[[], str | None], cwd: str) -> None:
        self.hooks = hooks
        self.session_id = session_id
        self.cwd = cwd
        self.notices: list[HookNotice] = []
        self.stop_reason: str | None = None

    async def fire(self, event: str, payload: dict[str, Any]) -> Any:
        """Fire through the wrapped manager, adding the common fields and noting the output."""
        result = await self.hooks.fire(event, {"session_id": self.session_id(),
                                               "cwd": self.cwd, **payload})
        message = getattr(result, "system_message", None)
        errors = tuple(str(e) for e in getattr(result, "errors", None) or ())
        if message or errors:
            self.notices.append(HookNotice(event, message, errors))
        if getattr(result, "stop", False):
            self.stop_reason = getattr(result, "stop_reason", None) or f"a {event} hook stopped the run"
        return result

    def take_notices(self) -> list[HookNotice]:
        """Return and clear the queued notices."""
        notices, self.notices = self.notices, []
        return notices

    def __getattr__(self, name: str) -> Any:
        return getattr(self.hooks, name)


class Agent:
    """A coding agent over the Messages API (see the module docstring for the data flow).

    Args: client: ``anthropic.AsyncAnthropic`` (or sync ``anthropic.Anthropic``), online or
    from ``mini_agent.offline``; model: default ``config.model_name()``; system: the system
    prompt (str or blocks); tools: ``{name: Tool}``; view_policy: ``(history, ctx) -> view``
    (default ThresholdMasking(); ``mini_agent.core.view.full_view`` sends everything); hooks: a
    ``HookManager``; session: a ``SessionWriter`` (write-ahead log) or None; clock: time source
    (seconds) for ``times`` and session timestamps; max_turns: requests per ``run``;
    max_tokens: output cap per request (tokens); prepare_request: callables
    ``request_kwargs -> request_kwargs`` applied in order before validation;
    on_context_overflow: ``(history, ctx) -> view`` tried once on "prompt is too long";
    on_request: ``record -> None`` (sync or async) after each request (widgets);
    stream: use the streaming API (True) or plain requests; auto_continue: continue through
    ``max_tokens`` (seed 000); workspace: the folder the tools work in, logged as
    ``"workspace"`` in the session_start meta entry so a resume can find it again.
    Attributes: history, times, requests (``{"turn", "raw_tokens", "view_tokens", "usage",
    "stop_reason", "messages", "overflow_retry"}`` per request), last_view.
    """

    def __init__(self, client: Any, *, model: str | None = None, system: Any = DEFAULT_SYSTEM,
                 tools: Mapping[str, Any] | None = None, view_policy: Callable | None = None,
                 hooks: Any = None, session: Any = None, clock: Clock | None = None,
                 max_turns: int = DEFAULT_MAX_TURNS, max_tokens: int = DEFAULT_MAX_TOKENS,
                 prepare_request: Sequence[Callable[[dict], dict]] = (),
                 on_context_overflow: Callable | None = None, on_request: Callable | None = None,
                 stream: bool = True, auto_continue: bool = True,
                 workspace: str | Path | None = None) -> None:
        self.client = client
        self.model = model or model_name()
        self.system = system
        self.tools = dict(tools or {})
        self.view_policy = view_policy if view_policy is not None else _default_view_policy()
        self.hooks = (ObservedHooks(hooks, cwd=os.getcwd(),
                                    session_id=lambda: getattr(self.session, "session_id", None))
                      if hooks is not None else None)
        self.session = session
        self.clock = clock or SystemClock()
        self.max_turns = max_turns
        self.max_tokens = max_tokens
        self.prepare_request = list(prepare_request)
        self.on_context_overflow = on_context_overflow
        self.on_request = on_request
        self.stream = stream
        self.auto_continue = auto_continue
        self.workspace = workspace
        self.history: list[MessageParam] = []
        self.times: list[float] = []
        self.requests: list[dict[str, Any]] = []
        self.last_view: list[MessageParam] = []
        self._started = False
        self._resumed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_lock = threading.Lock()

    # ------------------------------------------------------------------ requests
    def _context(self, messages: list[MessageParam]) -> ViewContext:
        now = self.clock.now()
        times = list(self.times[:len(messages)])
        times += [now] * (len(messages) - len(times))  # continuation messages: "now"
        return ViewContext(times=tuple(times), now=now, turn=len(self.requests) + 1)

    def build_request(self, view: list[MessageParam], *, max_tokens_scale: int = 1) -> dict:
        """Return validated ``messages.create`` kwargs for ``view`` (prepare_request applied).

        Raises: MessageValidationError if the result breaks an API rule.
        """
        request: dict[str, Any] = {"model": self.model,
                                   "max_tokens": self.max_tokens * max_tokens_scale,
                                   "messages": list(view)}
        if self.system:
            request["system"] = self.system
        if self.tools:
            request["tools"] = [t.definition() for t in self.tools.values()]
        for prepare in self.prepare_request:
            request = prepare(request)
        validate_messages(request["messages"], system=request.get("system"),
                          tools=request.get("tools"))
        return request

    async def _call_model(self, messages: list[MessageParam], *,
                          max_tokens_scale: int = 1) -> AsyncIterator[Any]:
        ctx = self._context(messages)
        view = self.view_policy(messages, ctx)
        retried = False
        while True:
            request = self.build_request(view, max_tokens_scale=max_tokens_scale)
            self.last_view = request["messages"]
            chunks = stream_chunks(self.client, request, stream=self.stream)
            try:
                first = await chunks.__anext__()
            except StopAsyncIteration:
                return
            except anthropic.BadRequestError as exc:
                if not _is_too_long(exc):
                    raise
                raw, sent = approx_tokens(messages), approx_tokens(view)
                if retried or self.on_context_overflow is None:
                    how = ("after on_context_overflow's view" if retried
                           else "and no on_context_overflow is set")
                    raise ContextOverflowError(
                        f"the request does not fit the context window {how}: ~{raw} raw "
                        f"tokens, ~{sent} sent ({exc.message})", raw_tokens=raw,
                        view_tokens=sent, api_message=exc.message) from exc
                view = self.on_context_overflow(messages, ctx)
                retried = True
                continue
            break
        record = {"turn": len(self.requests) + 1, "raw_tokens": approx_tokens(messages),
                  "view_tokens": approx_tokens(request["messages"]), "usage": {},
                  "stop_reason": None, "messages": len(request["messages"]),
                  "overflow_retry": retried}
        chunk = first
        while True:
            if isinstance(chunk, StreamDone):
                record["usage"], record["stop_reason"] = dict(chunk.usage), chunk.stop_reason
                self.requests.append(record)
                await maybe_await(self.on_request and self.on_request(record))
            yield chunk
            try:
                chunk = await chunks.__anext__()
            except StopAsyncIteration:
                return

    # ------------------------------------------------------------------ history bookkeeping
    def _log(self, entry: dict[str, Any]) -> None:
        if self.session is not None:
            self.session.append({**entry, "timestamp": self.clock.now()})

    def _on_message(self, message: MessageParam) -> None:
        self.times.append(self.clock.now())
        if message["role"] == "assistant":
            self._log({"type": "message", "message": message})
            return
        # tool results were logged one by one as they arrived; log only a note after them
        extra = [b for b in content_blocks(message) if b.get("type") != "tool_result"]
        if extra:
            self._log({"type": "message", "message": {"role": "user", "content": extra}})

    def _on_tool_result(self, block: dict) -> None:
        self._log({"type": "tool_result", "block": block})

    def _append_user(self, blocks: list[dict]) -> None:
        message: MessageParam = {"role": "user", "content": blocks}
        if self.history and self.history[-1]["role"] == "user":
            # the previous run ended on a user turn (tool results, no reply): extend it
            self.history[-1] = {"role": "user",
                                "content": content_blocks(self.history[-1]) + blocks}
            self.times[-1] = self.clock.now()
        else:
            self.history.append(message)
            self.times.append(self.clock.now())
        self._log({"type": "message", "message": message})  # write-ahead: before the API call

    # ------------------------------------------------------------------ running
    async def astream(self, text: str) -> AsyncIterator[LoopEvent]:
        """Run one user prompt; yield every loop event live; the last is LoopEnd.

        A UserPromptSubmit hook that blocks ends it at once with
        ``LoopEnd("prompt_blocked", 0)`` (nothing sent, nothing stored).
        Raises: ValueError for an empty prompt; ContextOverflowError; the SDK's errors.
        """
        if not text or not text.strip():
            raise ValueError("the prompt is empty (the API rejects empty text blocks)")
        if not self._started and not self._resumed:
            self._log({"type": "meta", "event": "session_start", "model": self.model,
                       "cwd": os.getcwd(),
                       **({"workspace": str(self.workspace)} if self.workspace else {})})
        if self.hooks is not None and not self._started:
            await self.hooks.fire("SessionStart", {
                "source": "resume" if self._resumed else "startup"})
        self._started = True
        blocks = [{"type": "text", "text": text}]
        if self.hooks is not None:
            self.hooks.stop_reason = None
            submitted = await self.hooks.fire("UserPromptSubmit", {"prompt": text})
            for notice in self.hooks.take_notices():
                yield notice
            if submitted.blocked or self.hooks.stop_reason:
                yield LoopEnd("prompt_blocked" if submitted.blocked else "hook_stopped", 0)
                return
            if submitted.additional_context:
                blocks.append({"type": "text", "text": submitted.additional_context})
        self._append_user(blocks)
        end = LoopEnd("completed", 0)
        should_stop = (lambda: self.hooks.stop_reason) if self.hooks is not None else None
        try:
            async for event in run_loop(
                    self._call_model, self.history, tools=self.tools, hooks=self.hooks,
                    max_turns=self.max_turns, auto_continue=self.auto_continue,
                    on_message=self._on_message, on_tool_result=self._on_tool_result,
                    should_stop=should_stop):
                if self.hooks is not None:
                    for notice in self.hooks.take_notices():
                        yield notice
                if isinstance(event, LoopEnd):
                    end = event
                yield event
        finally:
            now = self.clock.now()
            self.times += [now] * (len(self.history) - len(self.times))
        if self.hooks is not None:
            await self.hooks.fire("Stop", {"stop_reason": end.stop_reason})
            for notice in self.hooks.take_notices():
                yield notice

    async def arun(self, text: str, *, on_event: Callable | None = None) -> RunResult:
        """Run one user prompt to the end; ``on_event(event)`` (sync or async) sees each event.

        Returns a :class:`RunResult`. Raises: as :meth:`astream`.
        """
        events: list = []
        turn_text: list[str] = []
        end = LoopEnd("completed", 0)
        async for event in self.astream(text):
            events.append(event)
            if isinstance(event, TurnStart):
                turn_text = []
            elif isinstance(event, TextChunk):
                turn_text.append(event.text)
            elif isinstance(event, LoopEnd):
                end = event
            await maybe_await(on_event and on_event(event))
        return RunResult("".join(turn_text).strip(), end.stop_reason, end.turns, events)

    def run(self, text: str, *, on_event: Callable | None = None) -> RunResult:
        """Synchronous :meth:`arun`. Runs on the agent's own event-loop thread, so it also
        works where a loop is already running (Jupyter) and keeps one loop for the client's
        connections across calls. Raises: as :meth:`astream`."""
        return asyncio.run_coroutine_threadsafe(self.arun(text, on_event=on_event),
                                                self._background_loop()).result()

    def _background_loop(self) -> asyncio.AbstractEventLoop:
        with self._loop_lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="mini-agent-loop",
                                 daemon=True).start()
                self._loop = loop
            return self._loop

    # ------------------------------------------------------------------ inspection
    def view(self) -> list[MessageParam]:
        """The view the next request would send (the policy applied to the full history)."""
        return self.view_policy(list(self.history), self._context(self.history))

    def stats(self) -> dict[str, int]:
        """``/stats``: ``{"turns", "raw_tokens", "view_tokens", "masked_count"}``.

        turns = messages in the history (as the seed counts); tokens are approx tokens of the
        full history and of the current view; masked_count = tool results whose content the
        view changed. Source: 000_86e3ff2076a5ae37.txt ("/stats").
        """
        view = self.view()
        masked = 0
        if len(view) == len(self.history):
            for full, sent in zip(self.history, view):
                masked += sum(1 for a, b in zip(tool_results(full), tool_results(sent))
                              if a.get("content") != b.get("content"))
        return {"turns": len(self.history), "raw_tokens": approx_tokens(self.history),
                "view_tokens": approx_tokens(view), "masked_count": masked}

    def stats_line(self) -> str:
        """``turns: 34   raw: ~11800 tok   view: ~2400 tok   masked: 12`` (the /stats line)."""
        s = self.stats()
        return (f"turns: {s['turns']}   raw: ~{s['raw_tokens']} tok   "
                f"view: ~{s['view_tokens']} tok   masked: {s['masked_count']}")

    def history_text(self, limit_chars: int = 2000) -> str:
        """``/history``: the FULL history as indented JSON, cut to ``limit_chars`` characters."""
        text = json.dumps(self.history, indent=2, ensure_ascii=False)
        if len(text) > limit_chars:
            return text[:limit_chars] + f"\n... [{len(text) - limit_chars} more characters]"
        return text

    # ------------------------------------------------------------------ sessions
    def resume(self, session_id: str, *, directory: str | Path | None = None) -> Any:
        """Load a logged session into this agent (history and times) and keep logging to it.

        Args: session_id: the file stem (``mini-agent sessions`` lists them); directory:
        where it lives (default: this agent's session directory, else ``./sessions``).
        Returns the session module's ResumeReport (``problems`` from the reader are added to
        its notes). Raises: FileNotFoundError for an unknown id.
        """
        from mini_agent.harness.session import SessionWriter, rebuild_history, resume_session, session_path
        if directory is None:
            directory = self.session.path.parent if self.session is not None else "sessions"
        path = session_path(directory, session_id)
        if not path.exists():
            raise FileNotFoundError(f"no session {session_id!r} in {directory}")
        entries, problems = resume_session(path)
        history, times, report = rebuild_history(entries)
        report.notes.extend(str(p) for p in problems)
        if self.session is None or getattr(self.session, "session_id", None) != session_id:
            self.session = SessionWriter(directory, session_id, clock=self.clock)
        if report.interrupted:
            history = self._settle_interrupted(history, entries, report)
        self.history, self.times = list(history), list(times)
        self._resumed = True
        self._started = False
        return report

    def _settle_interrupted(self, history: list, entries: list[dict], report: Any) -> list:
        """Check each interrupted call against the workspace before anything is redone (an
        edit that landed is not run again; read-only calls and edits that did not land run
        now; the rest stay errors) and log the answers of the last turn's calls."""
        from mini_agent.harness.resume_tools import reconcile_interrupted_calls
        history, outcomes = reconcile_interrupted_calls(history, report.interrupted, self.tools)
        last = entries[-1] if entries else {}
        open_turn = (last.get("type") == "message"
                     and last.get("message", {}).get("role") == "assistant")
        last_ids = {b.get("tool_use_id") for b in history[-1]["content"]
                    if isinstance(b, dict)} if open_turn else set()
        for item in outcomes:
            if item["tool_use_id"] in last_ids:
                self.session.append({"type": "tool_result", "block": item["block"]})
            report.notes.append(f"interrupted tool call {item['tool_use_id']} ({item['name']}): "
                                f"{item['outcome']}")
        report.interrupted = [(i["tool_use_id"], i["name"]) for i in outcomes
                              if i["outcome"] == "unknown"]
        return history
