"""What the terminal shows of a run: loop events as lines, an SDK error as one line.

``repl(agent)`` reads prompts and runs them (``/stats``, ``/history``, ``/quit``; Ctrl-C stops
a run and says what it left with ``interrupted_line``). ``event_printer(out)`` turns the loop's
events into the transcript ``mini-agent demo`` and ``repl`` print (also used by notebook 01), a
broken stream's retry (``stream_retry_line``) and a Stop hook's block (``stop_blocked_line``)
included; ``api_error_line`` says in one line what failed online and how to go
offline instead.

IO: writes to the given text stream (and errors to stderr); reads prompts with ``read``.

Source: the anthropic SDK's error classes (``APIError`` is the base of
``APIConnectionError``, ``AuthenticationError`` and every ``APIStatusError``); the transcript's
line shapes are the kit's own.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, TextIO

from mini_agent.core.continuation import Continuing
from mini_agent.core.messages import content_blocks, tool_result_text
from mini_agent.core.streaming import TextDelta, ToolUseReady, ToolUseTruncated
from mini_agent.harness.executor import INTERRUPTED_TEXT
from mini_agent.harness.loop import LoopEnd, ToolResult, TurnStart
from mini_agent.harness.loop_events import StopBlocked, StreamRetry

__all__ = ["anthropic_errors", "api_error_line", "event_printer", "interrupted_line", "repl",
           "stop_blocked_line", "stream_retry_line"]


def anthropic_errors() -> tuple[type[BaseException], ...]:
    """List the SDK's errors the CLI reports in one line.

    Returns:
        ``(anthropic.APIError,)``, the base of APIConnectionError, AuthenticationError and every
        other APIStatusError.
    """
    import anthropic
    return (anthropic.APIError,)


def api_error_line(error: BaseException) -> str:
    """Say in one line what failed for an SDK error, and how to go offline instead.

    Args:
        error: the SDK error: ``anthropic.AuthenticationError`` (401) -> the key was rejected;
            ``APIConnectionError`` (timeouts included) -> the API could not be reached; any
            404 ``not_found_error`` ``"model: X"`` -> the model is not served (retired, or
            unknown to the kit's table) and ``MINI_AGENT_MODEL`` chose it; any other
            ``APIStatusError`` -> its status, error type and message; any other
            ``APIError`` -> its message.

    Returns:
        ``"mini-agent: <what failed>; <what to do>, or unset ANTHROPIC_API_KEY to run offline"``;
        for an unserved model ``"...; set MINI_AGENT_MODEL to a served model or unset it to
        use the default, <DEFAULT_MODEL>"`` (going offline would not help: the offline API
        answers the same 404). When the error came from the offline API (its request went to
        :data:`~mini_agent.offline.transport.OFFLINE_HOST`) the line names the offline API and
        gives no key advice: ``"mini-agent: the offline API answered 400 ...; the real API
        refuses such a request too"`` (a 4xx) or ``"...; try again"``.

    >>> import anthropic, httpx2
    >>> error = anthropic.APIConnectionError(request=httpx2.Request("POST", "https://x"))
    >>> print(*api_error_line(error).split("; "), sep="\\n")
    mini-agent: cannot reach the Anthropic API (Connection error.)
    check the network, or unset ANTHROPIC_API_KEY to run offline
    """
    import anthropic
    if isinstance(error, anthropic.APIConnectionError):
        what = f"cannot reach the Anthropic API ({error.message})"
        fix = "check the network"
    elif isinstance(error, anthropic.APIStatusError):
        body = error.body if isinstance(error.body, dict) else {}
        detail = body.get("error") if isinstance(body.get("error"), dict) else {}
        kind = detail.get("type") or type(error).__name__
        message = detail.get("message") or error.message
        unserved = _unserved_model(error.status_code, kind, message, where=(
            "the offline API" if _from_offline(error) else "the Anthropic API"))
        if unserved is not None:
            return unserved
        if isinstance(error, anthropic.AuthenticationError):
            what = f"the Anthropic API rejected the key ({error.status_code} {kind}: {message})"
            fix = "fix ANTHROPIC_API_KEY"
        elif _from_offline(error):
            what = f"the offline API answered {error.status_code} {kind}: {message}"
            fix = ("the real API refuses such a request too" if 400 <= error.status_code < 500
                   and error.status_code != 429 else "try again")
            return f"mini-agent: {' '.join(what.split())}; {fix}"
        else:
            what = f"the Anthropic API answered {error.status_code} {kind}: {message}"
            fix = "try again later"
    else:
        what = f"the Anthropic API request failed ({getattr(error, 'message', error)})"
        fix = "try again"
    return f"mini-agent: {' '.join(what.split())}; {fix}, or unset ANTHROPIC_API_KEY to run offline"


def _from_offline(error: BaseException) -> bool:
    """Whether an SDK error's request went to the offline API (its base URL's host)."""
    from mini_agent.offline.transport import OFFLINE_HOST
    request = getattr(error, "request", None)
    return getattr(getattr(request, "url", None), "host", None) == OFFLINE_HOST


def _unserved_model(status: int, kind: str, message: str, *,
                    where: str = "the Anthropic API") -> str | None:
    """The line for a 404 ``model: X`` (a retired or unknown model id), else None.

    Args:
        status: the HTTP status.
        kind: the error's type (``not_found_error``).
        message: the error's message (``"model: claude-opus-4"``).
        where: which API answered ("the Anthropic API" or "the offline API").

    Returns:
        The one line, or None for any other error.
    """
    from mini_agent.core.models import DEFAULT_MODEL, UnknownModelError, model_spec
    if status != 404 or kind != "not_found_error" or not message.startswith("model: "):
        return None
    model = message[len("model: "):].strip()
    try:
        why = "retired" if model_spec(model).retired else "listed as served by the kit"
    except UnknownModelError:
        why = "not a model the kit knows"
    return (f"mini-agent: {where} does not serve the model {model} ({why}; "
            f"{status} {kind}: {message}); set MINI_AGENT_MODEL to a served model or unset "
            f"it to use the default, {DEFAULT_MODEL}")


def stream_retry_line(event: StreamRetry) -> str:
    """Say in one line that a reply's stream broke and what the loop does next.

    Args:
        event: the loop's :class:`~mini_agent.harness.loop_events.StreamRetry`.

    Returns:
        ``"[stream broke] turn T, attempt A: KIND (error); ..."`` ending with what follows:
        the same request sent again, the complete tool calls kept (they run, then the loop
        goes on), or no retry left (the run stops with ``StreamFaultError``).

    >>> print(stream_retry_line(StreamRetry(3, 1, "overloaded_error", "Overloaded", (), True)))
    [stream broke] turn 3, attempt 1: overloaded_error (Overloaded); sending the request again
    """
    kept = len(event.kept_tool_use_ids)
    if not event.retrying:
        then = "no retry left, the run stops"
    elif kept:
        then = f"keeping {kept} complete tool call{'' if kept == 1 else 's'} and going on"
    else:
        then = "sending the request again"
    return (f"[stream broke] turn {event.turn}, attempt {event.attempt}: {event.kind} "
            f"({_short(event.error, 80)}); {then}")


def stop_blocked_line(event: StopBlocked) -> str:
    """Say in one line that a Stop hook kept the loop from ending, and what the loop does next.

    Args:
        event: the loop's :class:`~mini_agent.harness.loop_events.StopBlocked`.

    Returns:
        ``"[Stop hook blocked B/CAP] reason; ..."`` (the reason on one line, cut at 100
        characters) ending with what follows: the model goes on with the reason; the cap of
        CAP blocks ends the loop (``stop_hook_limit``); or the loop ends anyway (no request
        left under ``max_turns``, or it was ending for another reason: the ``LoopEnd`` line
        after it says which).

    >>> print(stop_blocked_line(StopBlocked("run the tests first", 2, True)))
    [Stop hook blocked 2/8] run the tests first; the model goes on with the reason
    >>> print(stop_blocked_line(StopBlocked("not yet", 9, False)))
    [Stop hook blocked 9/8] not yet; the cap of 8 blocks is reached, the loop ends
    """
    if event.continuing:
        then = "the model goes on with the reason"
    elif event.capped:
        then = f"the cap of {event.limit} block{'' if event.limit == 1 else 's'} is reached, " \
            "the loop ends"
    else:
        then = "the loop ends anyway"
    reason = _short(event.reason or "(no reason given)")
    return f"[Stop hook blocked {event.blocks}/{event.limit}] {reason}; {then}"


def _short(value: Any, limit: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def event_printer(out: TextIO) -> Callable[[Any], None]:
    """Make an ``on_event`` callback that prints a live transcript of loop events.

    Text deltas stream as they come; each request starts with ``--- turn N ---``. Tool results
    print in completion order, so each line names the tool and the id of the tool_use it
    answers: ``[tool_result] read_file toolu_01 ok (68 lines) ...``.

    Args:
        out: the text stream the transcript is written to.

    Returns:
        The callback; its ``end_line()`` ends a text line left open (before an error line).
    """
    state = {"in_text": False}

    def end_text() -> None:
        if state["in_text"]:
            out.write("\n")
            state["in_text"] = False

    def show(event: Any) -> None:
        if isinstance(event, TextDelta):
            out.write(event.text)
            state["in_text"] = True
        else:
            end_text()
            if isinstance(event, TurnStart):
                out.write(f"--- turn {event.turn} ---\n")
            elif isinstance(event, ToolUseReady):
                block = event.block
                out.write(f"[tool_use] {block['name']} {block['id']} {_short(block['input'])}\n")
            elif isinstance(event, ToolResult):  # in completion order: name and id say which
                outcome = event.outcome
                content = event.block.get("content", "")
                text = content if isinstance(content, str) else json.dumps(content)
                lines = len(text.splitlines())
                mark = "error" if outcome.is_error else "ok"
                out.write(f"[tool_result] {outcome.name} {outcome.tool_use_id} {mark} "
                          f"({lines} line{'' if lines == 1 else 's'}) {_short(text, 80)}\n")
            elif isinstance(event, ToolUseTruncated):
                out.write(f"[dropped] {event.name}: cut by max_tokens, not run\n")
            elif isinstance(event, StreamRetry):
                out.write(stream_retry_line(event) + "\n")
            elif isinstance(event, Continuing):
                out.write(f"[max_tokens] attempt {event.attempt}: {event.action}\n")
            elif isinstance(event, StopBlocked):
                out.write(stop_blocked_line(event) + "\n")
            elif isinstance(event, LoopEnd):  # a turn is one model request
                plural = "" if event.turns == 1 else "s"
                out.write(f"[{event.exit_status} after {event.turns} model request{plural}]\n")
        out.flush()
    show.end_line = end_text  # type: ignore[attr-defined]  # before an error line
    return show


def repl(agent: Any, *, out: TextIO, read: Callable[[str], str] = input) -> int:
    """Read prompts until ``/quit`` or EOF; ``/stats`` and ``/history`` inspect the agent.

    An API error is reported on stderr and the session goes on at the next prompt. Ctrl-C
    during a run stops the run (the Agent settles its tools and logs every answer first),
    prints one line saying how many tool calls were answered as interrupted, and goes back
    to the prompt; Ctrl-C at the prompt exits.

    Args:
        agent: the agent the prompts go to.
        out: where the transcript goes.
        read: reads one line after a prompt (default ``input``).

    Returns:
        0 (``/quit``, ``/exit``, EOF or Ctrl-C at the prompt).
    """
    show = event_printer(out)
    while True:
        try:
            line = read("> ").strip()
        except (EOFError, KeyboardInterrupt):
            print(file=out)
            return 0
        if not line:
            continue
        if line in ("/quit", "/exit"):
            return 0
        if line == "/stats":
            print(agent.stats_line(), file=out)
            continue
        if line == "/history":
            print(agent.history_text(limit_chars=2000) if agent.history else
                  "the history is empty: no messages yet (type a prompt)", file=out)
            continue
        if line.startswith("/"):
            print("commands: /stats, /history, /quit", file=out)
            continue
        size = len(agent.history)
        try:
            agent.run(line, on_event=show)
        except anthropic_errors() as error:  # report, keep the session, back to the prompt
            show.end_line()
            print(api_error_line(error), file=sys.stderr)
        except KeyboardInterrupt:  # the run has settled; back to the prompt
            show.end_line()
            print(interrupted_line(agent, since=size), file=out)


def interrupted_line(agent: Any, *, since: int = 0) -> str:
    """Say in one line what a Ctrl-C during a run left behind.

    Args:
        agent: the interrupted agent (its ``history`` and ``session`` are read).
        since: the history's length before the run; only messages from there are counted.

    Returns:
        ``"interrupted: N tool calls answered as interrupted; the session is saved"`` (``the
        history is kept`` when the agent logs no session); N counts the ``is_error`` results
        with :data:`~mini_agent.harness.executor.INTERRUPTED_TEXT` (tools that never started).
    """
    n = sum(1 for message in agent.history[since:] if message.get("role") == "user"
            for block in content_blocks(message) if block.get("type") == "tool_result"
            and block.get("is_error") and tool_result_text(block) == INTERRUPTED_TEXT)
    kept = "the session is saved" if getattr(agent, "session", None) else "the history is kept"
    return f"interrupted: {n} tool call{'' if n == 1 else 's'} answered as interrupted; {kept}"
