"""The Agent: the one loop, with a view policy, hooks and a write-ahead session composed around it.

``Agent`` keeps the FULL history (the record) and, for each request, sends a VIEW built by its
``view_policy`` (default: :class:`~mini_agent.core.masking.ThresholdMasking`, seed 000: "store full,
send masked"). Facts about messages stay beside them: ``agent.times[i]`` is the clock time at
which ``agent.history[i]`` was appended (the loop appends both). The turn itself runs on
:func:`mini_agent.harness.loop.run_loop`; the Agent hands it the history, the times, a
:class:`~mini_agent.harness.model.Model` (request settings, ``prepare_request`` steps such as
cache breakpoints), the view policy and ``on_context_overflow``, and reads its events back:
nothing in the loop calls into the Agent.

Data flow of one ``arun(text)``: SessionStart (first run) -> UserPromptSubmit (their
``additionalContext``, in that order, joins the prompt as text blocks after it) -> the loop
appends the user message, which the session logs (fsynced) BEFORE the API call -> turns of
the loop (each assistant message logged when complete, each tool result logged as it
arrives, never the masked view: :class:`~mini_agent.harness.session.SessionRecorder`) -> Stop,
fired by the loop, whose block sends the model on (:mod:`mini_agent.harness.stop_hook`).
A 400 "prompt is too long" calls ``on_context_overflow(history, ctx)`` once and retries with
the view it returns; a second failure raises :class:`ContextOverflowError`.

``run(text)`` is the sync wrapper (it works inside Jupyter's running event loop: the coroutine
runs on the agent's own event-loop thread). ``stats()`` / ``stats_line()`` is ``/stats``;
``history_text()`` is ``/history``; ``requests`` holds one record per API request for widgets.
IO: network (SDK), tools, session file. Taught in ``notebooks/01_agent_loop.ipynb`` and
``03_observation_masking.ipynb``.
Source: 000_86e3ff2076a5ae37.txt (turn, /stats, /history),
002_4516104fd432e704.txt (loop, hooks, session).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import threading
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Mapping, Sequence

from mini_agent.core.continuation import Continuing
from mini_agent.core.hook_output import hook_notices
from mini_agent.core.masking import ThresholdMasking
from mini_agent.core.messages import Message
from mini_agent.core.streaming import TextDelta
from mini_agent.harness.clock import Clock, SystemClock
from mini_agent.harness.config import DEFAULT_MAX_TOKENS, model_name
from mini_agent.harness.loop import (DEFAULT_MAX_TURNS, LoopEnd, LoopEvent, MessageAppended,
                                     ToolResult, TurnEnd, TurnStart, run_loop)
from mini_agent.harness.loop_events import RunResult  # noqa: F401 - public from here too
from mini_agent.harness.agent_inspection import AgentInspection
from mini_agent.harness.hooks import HookFields
from mini_agent.harness.model import (DEFAULT_STREAM_RETRIES, ContextOverflowError,  # noqa: F401
                                      StreamFaultError, sdk_model)
from mini_agent.harness.resume_tools import load_session
from mini_agent.harness.result_text import encodable_text
from mini_agent.harness.session import SessionRecorder
from mini_agent.harness.stop_hook import DEFAULT_MAX_STOP_HOOK_BLOCKS

BUSY_TEXT = "this agent is running a prompt already"
"""How the RuntimeError of a second run at once begins."""
LOOP_THREAD_NAME = "mini-agent-loop"
"""The name of the thread that runs the event loop of :meth:`Agent.run`."""

DEFAULT_SYSTEM = ("You are a careful coding agent working in a small repository. Use the tools "
                  "to explore before you edit, keep edits minimal, and run the tests to check "
                  "your work. Answer briefly when you are done.")


async def _maybe_await(value: Any) -> Any:
    """Await ``value`` if it is awaitable (callbacks such as ``on_request`` may be async)."""
    return await value if inspect.isawaitable(value) else value


class Agent(AgentInspection):
    """A coding agent over the Messages API (see the module docstring for the data flow).

    Args:
        client: ``anthropic.AsyncAnthropic`` (or sync ``anthropic.Anthropic``), online or
            from ``mini_agent.offline``.
        model: default ``config.model_name()``.
        system: the system prompt (str or blocks).
        tools: ``{name: Tool}``.
        view_policy: ``(history, ctx) -> view`` (default ThresholdMasking();
            ``mini_agent.core.view.full_view`` sends everything).
        hooks: a ``HookManager``.
        session: a ``SessionWriter`` (write-ahead log) or None.
        clock: time source (seconds) for ``times`` and session timestamps.
        max_turns: model requests per ``run``.
        max_tokens: output cap per request (tokens).
        prepare_request: ``request -> request`` callables applied in order before validation.
        on_context_overflow: ``(history, ctx) -> view`` tried once on "prompt is too long".
        on_request: ``record -> None`` (sync or async) after each request (widgets).
        stream: use the streaming API (True) or plain requests.
        auto_continue: continue through ``max_tokens`` (seed 000).
        max_stream_retries: requests sent again, in a row, when a reply's stream breaks
            mid-way (default 2; see :func:`~mini_agent.harness.loop.run_loop`).
        max_stop_hook_blocks: Stop-hook blocks that send the model on per ``run`` (default 8);
            one more ends the run with ``"stop_hook_limit"``.
        workspace: the folder the tools work in, logged as ``"workspace"`` in the
            session_start meta entry so a resume can find it again.
    Attributes:
        history, times, requests (one :meth:`TurnEnd.record` per request: ``{"turn",
        "raw_tokens", "view_tokens", "usage", "stop_reason", "messages", "overflow_retry"}``),
        last_view (the messages of the last request).
    """

    def __init__(self, client: Any, *, model: str | None = None, system: Any = DEFAULT_SYSTEM,
                 tools: Mapping[str, Any] | None = None, view_policy: Callable | None = None,
                 hooks: Any = None, session: Any = None, clock: Clock | None = None,
                 max_turns: int = DEFAULT_MAX_TURNS, max_tokens: int = DEFAULT_MAX_TOKENS,
                 prepare_request: Sequence[Callable[[dict], dict]] = (),
                 on_context_overflow: Callable | None = None, on_request: Callable | None = None,
                 stream: bool = True, auto_continue: bool = True,
                 max_stream_retries: int = DEFAULT_STREAM_RETRIES,
                 max_stop_hook_blocks: int = DEFAULT_MAX_STOP_HOOK_BLOCKS,
                 workspace: str | Path | None = None) -> None:
        self.client = client
        self.model = model or model_name()
        self.system = system
        self.tools = dict(tools or {})
        self.view_policy = view_policy if view_policy is not None else ThresholdMasking()
        self.hooks = hooks
        self.session = session
        self.clock = clock or SystemClock()
        self.max_turns = max_turns
        self.max_tokens = max_tokens
        self.prepare_request = list(prepare_request)
        self.on_context_overflow = on_context_overflow
        self.on_request = on_request
        self.stream = stream
        self.auto_continue = auto_continue
        self.max_stream_retries = max_stream_retries
        self.max_stop_hook_blocks = max_stop_hook_blocks
        self.workspace = workspace
        self.history: list[Message] = []
        self.times: list[float] = []
        self.requests: list[dict[str, Any]] = []
        self.last_view: list[Message] = []
        self._started = False
        self._resumed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_lock = threading.Lock()
        self._running = False

    # ------------------------------------------------------------------ running
    async def astream(self, text: str) -> AsyncIterator[LoopEvent]:
        """Run one user prompt and yield every loop event live, and what the hooks say.

        A UserPromptSubmit hook that blocks ends it at once with ``LoopEnd("prompt_blocked", 0)``
        (nothing sent, nothing stored). Closed early (``aclose()``), cancelled or interrupted, it
        closes the loop at once: tools not yet started never start, running ones are stopped
        (run_bash, grep) or finish, and every call is answered in history and session.

        Args:
            text: the user's prompt (not empty, not only whitespace).

        Yields:
            Loop events (:mod:`mini_agent.harness.loop_events`) and hook notices; the last
            event of the loop is its ``LoopEnd``.

        Raises:
            ValueError: an empty prompt.
            RuntimeError: a run of this agent is in progress (one history, one run at a
                time: two at once would interleave their messages); nothing is touched.
            ContextOverflowError, StreamFaultError and the SDK's errors propagate from the loop.
        """
        if not text or not text.strip():
            raise ValueError("the prompt is empty (the API rejects empty text blocks)")
        if self._running:
            raise RuntimeError(f"{BUSY_TEXT}; wait for it to end (one run at a time)")
        self._running = True
        try:
            async with contextlib.aclosing(self._stream(text)) as events:
                async for event in events:
                    yield event
        finally:
            self._running = False

    async def _stream(self, text: str) -> AsyncIterator[LoopEvent]:
        """The body of :meth:`astream`, once the run is known to be the only one."""
        first_run, self._started = not self._started, True
        recorder = SessionRecorder(self.session, self.clock) if self.session else None
        if recorder and first_run and not self._resumed:
            recorder.log({"type": "meta", "event": "session_start", "model": self.model,
                          "cwd": os.getcwd(),
                          **({"workspace": str(self.workspace)} if self.workspace else {})})
        hooks = (HookFields(self.hooks, {"session_id": getattr(self.session, "session_id", None),
                                         "cwd": os.getcwd()})
                 if self.hooks is not None else None)
        blocks = [{"type": "text", "text": encodable_text(text)}]  # U+FFFD for a lone surrogate
        if hooks is not None:
            contexts = []
            if first_run:
                started = await hooks.fire("SessionStart", {
                    "source": "resume" if self._resumed else "startup"})
                for notice in hook_notices("SessionStart", started):
                    yield notice
                contexts.append(started.additional_context)   # reaches the model once
            submitted = await hooks.fire("UserPromptSubmit", {"prompt": text})
            for notice in hook_notices("UserPromptSubmit", submitted):
                yield notice
            if submitted.blocked:
                yield LoopEnd("prompt_blocked", 0)
                return
            for context in (*contexts, submitted.additional_context):
                if isinstance(context, str) and context.strip():  # the API refuses blank text
                    blocks.append({"type": "text", "text": encodable_text(context)})
        model = sdk_model(self.client, model=self.model, max_tokens=self.max_tokens,
                          system=self.system, tools=self.tools, stream=self.stream,
                          prepare_request=self.prepare_request)
        events = run_loop(
            model, self.history, times=self.times, clock=self.clock,
            prompt=blocks, tools=self.tools, view=self.view_policy,
            on_context_overflow=self.on_context_overflow, hooks=hooks,
            max_turns=self.max_turns, auto_continue=self.auto_continue,
            max_stream_retries=self.max_stream_retries,
            max_stop_hook_blocks=self.max_stop_hook_blocks, first_turn=len(self.requests) + 1)
        logged = len(self.history)   # messages the session holds (or that need no entry)
        try:
            async for event in events:
                if isinstance(event, ToolResult):
                    for notice in event.outcome.hook_notices:
                        yield notice
                elif isinstance(event, TurnEnd):
                    self.requests.append(event.record())
                    self.last_view = event.request.get("messages", [])
                    await _maybe_await(self.on_request and self.on_request(self.requests[-1]))
                if recorder:
                    recorder.record(event)
                if isinstance(event, MessageAppended):
                    logged = len(self.history)
                yield event
        finally:
            # interrupted (aclose, cancel, Ctrl-C) or failed: close the loop NOW, so it settles
            # its tools and answers every call, then log what it appended without an event
            try:
                await events.aclose()   # a second cancel is raised only once it settled
            finally:
                if recorder:
                    for message in self.history[logged:]:
                        recorder.record(MessageAppended(message))

    async def arun(self, text: str, *, on_event: Callable | None = None) -> RunResult:
        """Run one user prompt to the end; ``on_event(event)`` (sync or async) sees each event.

        An ``on_event`` that raises, or a cancellation while it is awaited, ends the run
        settled: the loop is closed (its tools settled, every tool_use answered in the
        history and the session) before the error reaches the caller.

        Args:
            text: the user's prompt.
            on_event: ``event -> None`` called with each event, or None.

        Returns:
            A :class:`RunResult`.

        Raises:
            ValueError: an empty prompt (and the errors of :meth:`astream` and ``on_event``).
        """
        events: list = []
        step_text: list[str] = []
        end = LoopEnd("completed", 0)
        async with contextlib.aclosing(self.astream(text)) as stream:  # settled before errors
            async for event in stream:
                if isinstance(event, TurnStart) and not (events
                                                         and isinstance(events[-1], Continuing)):
                    step_text = []  # a new step; a continued reply keeps its text
                events.append(event)
                if isinstance(event, TextDelta):
                    step_text.append(event.text)
                elif isinstance(event, LoopEnd):
                    end = event
                await _maybe_await(on_event and on_event(event))
        return RunResult("".join(step_text).strip(), end.exit_status, end.turns, events)

    def run(self, text: str, *, on_event: Callable | None = None) -> RunResult:
        """Run one user prompt to the end from sync code: :meth:`arun` on the agent's thread.

        The coroutine runs on the agent's own event-loop thread, so this also works where a
        loop is already running (Jupyter) and keeps one loop for the client's connections
        across calls. Ctrl-C (``KeyboardInterrupt``) cancels the run and waits until it has
        settled (tools not started stay unstarted, running run_bash and grep are killed, every
        call is answered in the history and the session) before it is raised again; more
        Ctrl-C presses while it settles are absorbed, so the next run starts on a valid history.

        Args:
            text: the user's prompt.
            on_event: ``event -> None`` (sync or async) called with each event.

        Returns:
            A :class:`RunResult`.

        Raises:
            KeyboardInterrupt: Ctrl-C, once the run has settled. Otherwise as :meth:`astream`.
            RuntimeError: a run of this agent is in progress, or ``run`` is called from one
                of its callbacks (it would wait for itself forever).
        """
        settled = threading.Event()

        async def main() -> RunResult:
            try:
                return await self.arun(text, on_event=on_event)
            finally:
                settled.set()
        if self._running or threading.current_thread().name == LOOP_THREAD_NAME:
            raise RuntimeError(f"{BUSY_TEXT}; run() cannot wait for it from its own callbacks")
        future = asyncio.run_coroutine_threadsafe(main(), self._background_loop())
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()   # cancels the task on the agent's loop; its finally settles
            while True:       # a second Ctrl-C must not leave the run half-settled
                try:
                    settled.wait()
                    break
                except KeyboardInterrupt:
                    continue
            raise

    def _background_loop(self) -> asyncio.AbstractEventLoop:
        with self._loop_lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=LOOP_THREAD_NAME,
                                          daemon=True)
                thread.start()
                self._loop, self._loop_thread = loop, thread
            return self._loop

    def close(self) -> None:
        """Stop the background event loop :meth:`run` started, and its worker threads.

        Each :meth:`run` goes through one event loop on a thread of its own, kept for the next
        call; ``close`` ends it (the default executor's threads too), so an agent made for one
        job (a subagent) leaves no thread behind. A later :meth:`run` starts a new loop.
        Nothing happens when :meth:`run` was never called or a run is in progress.

        Raises:
            RuntimeError: called from the agent's own loop (a callback of its run), which
                cannot wait for itself to stop.
        """
        with self._loop_lock:
            loop, thread = self._loop, getattr(self, "_loop_thread", None)
            if loop is None or self._running:
                return
            if threading.current_thread() is thread:
                raise RuntimeError("close() cannot stop the agent's loop from that loop")
            self._loop = None
        asyncio.run_coroutine_threadsafe(loop.shutdown_default_executor(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join()
        loop.close()

    # ------------------------------------------------------------------ sessions
    def resume(self, session_id: str, *, directory: str | Path | None = None) -> Any:
        """Load a logged session into this agent (history and times) and keep logging to it.

        Interrupted tool calls are checked against the workspace before anything is redone
        (:func:`~mini_agent.harness.resume_tools.settle_resumed_calls`).
        Args:
            session_id: the file stem (``mini-agent sessions`` lists them).
            directory: where it lives (default: this agent's session directory, else
                ``./sessions``).
        Returns:
            the ResumeReport (``problems`` from the reader are added to its notes).
        Raises:
            FileNotFoundError: an unknown id.
        """
        if directory is None:
            directory = self.session.path.parent if self.session is not None else "sessions"
        history, times, report, self.session = load_session(
            directory, session_id, tools=self.tools, clock=self.clock, writer=self.session)
        self.history, self.times = history, times
        self._resumed = True
        self._started = False
        return report
