"""The events of the agent loop: what :func:`~mini_agent.harness.loop.run_loop` yields, in order.

:class:`TurnStart`, the stream chunks (:class:`~mini_agent.core.streaming.TextDelta`,
:class:`~mini_agent.core.streaming.ToolUseReady`,
:class:`~mini_agent.core.streaming.ToolUseTruncated`),
:class:`ToolResult`, :class:`TurnEnd`, :class:`~mini_agent.core.continuation.Continuing`,
:class:`StreamRetry`, :class:`MessageAppended`, :class:`StopBlocked`, and last
:class:`LoopEnd`; and :class:`RunResult`, what the Agent's ``run`` gathers of them. Plain
dataclasses: the Agent, the session recorder and the CLI read them; nothing here does IO.
Taught in ``notebooks/01_agent_loop.ipynb``.
Source: 002_4516104fd432e704.txt section 1 (the loop's events).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mini_agent.core.continuation import Continuing
from mini_agent.core.hook_output import HookNotice
from mini_agent.core.messages import Block, Message
from mini_agent.core.streaming import TextDelta, ToolUseReady, ToolUseTruncated
from mini_agent.harness.executor import ToolOutcome
from mini_agent.harness.stop_hook import DEFAULT_MAX_STOP_HOOK_BLOCKS


@dataclasses.dataclass(frozen=True)
class TurnStart:
    """A model request begins; ``turn`` numbers the requests (from ``first_turn``)."""

    turn: int


@dataclasses.dataclass(frozen=True)
class TurnEnd:
    """A model request's reply ended.

    Attributes:
        turn: the request's number.
        stop_reason: the API's stop_reason of this reply (None if the stream broke off).
        usage: its token counts (``input_tokens``, ``output_tokens``,
            ``cache_creation_input_tokens``, ``cache_read_input_tokens``).
        raw_tokens: approx tokens of the history (and continuation messages) it was built from.
        view_tokens: approx tokens of the messages it sent.
        message_count: messages it sent.
        overflow_retry: it is the retry with ``on_context_overflow``'s view.
        request: the ``messages.create`` kwargs sent (not compared).
    """

    turn: int
    stop_reason: str | None
    usage: dict[str, int]
    raw_tokens: int = 0
    view_tokens: int = 0
    message_count: int = 0
    overflow_retry: bool = False
    request: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def record(self) -> dict[str, Any]:
        """Return the per-request record widgets read.

        Returns:
            ``{"turn", "raw_tokens", "view_tokens", "usage", "stop_reason", "messages",
            "overflow_retry"}`` (``messages`` is a count; ``stop_reason`` None when the
            stream broke).
        """
        return {"turn": self.turn, "raw_tokens": self.raw_tokens,
                "view_tokens": self.view_tokens, "usage": dict(self.usage),
                "stop_reason": self.stop_reason, "messages": self.message_count,
                "overflow_retry": self.overflow_retry}


@dataclasses.dataclass(frozen=True)
class ToolResult:
    """A tool's result, in tool_use order; ``outcome.block`` is the tool_result block."""

    outcome: ToolOutcome

    @property
    def block(self) -> Block:
        """The ``tool_result`` block sent back to the model."""
        return self.outcome.block


@dataclasses.dataclass(frozen=True)
class StreamRetry:
    """The reply's stream broke mid-way (after this turn's :class:`TurnEnd`).

    Attributes:
        turn: the request whose stream broke.
        attempt: breaks in a row so far (1 for the first).
        kind: ``"overloaded_error"``, ``"api_error"`` or ``"connection"``.
        error: the SDK's error text.
        kept_tool_use_ids: the complete tool calls kept in the history with their results
            (empty: the piece was dropped and the same request is sent again).
        retrying: False when this was the last break allowed (the loop then raises
            :class:`~mini_agent.harness.model.StreamFaultError` once the history is valid).
    """

    turn: int
    attempt: int
    kind: str
    error: str
    kept_tool_use_ids: tuple[str, ...]
    retrying: bool


@dataclasses.dataclass(frozen=True)
class MessageAppended:
    """The loop appended ``message`` to the history (a user message that follows a user
    message is merged into it: ``message`` is then only the new part)."""

    message: Message


@dataclasses.dataclass(frozen=True)
class StopBlocked:
    """A Stop hook blocked the end of the loop (``decision: "block"`` or exit code 2).

    Attributes:
        reason: the hook's reason, the text the model gets after ``"Stop hook feedback:"``.
        blocks: Stop-hook blocks in this run so far, this one included (1 for the first).
        continuing: True when the reason was appended as a user message and another
            request follows; False when the loop ends anyway: the guard
            (``max_stop_hook_blocks``) was passed (``"stop_hook_limit"``), ``max_turns``
            leaves no request, or the run was ending for another reason.
        limit: the guard, ``max_stop_hook_blocks`` of this run (default 8, Claude Code's
            cap): ``blocks > limit`` means this block ended the loop with
            ``"stop_hook_limit"``.
    """

    reason: str
    blocks: int
    continuing: bool
    limit: int = DEFAULT_MAX_STOP_HOOK_BLOCKS

    @property
    def capped(self) -> bool:
        """True when this block passed the guard and so ended the loop (``"stop_hook_limit"``)."""
        return not self.continuing and self.blocks > self.limit


@dataclasses.dataclass(frozen=True)
class LoopEnd:
    """The loop's result: ``exit_status`` is ``"completed"``, ``"max_turns_reached"``,
    ``"hook_stopped"`` or ``"stop_hook_limit"`` (a Stop hook still blocked after
    ``max_stop_hook_blocks`` continuations; the Agent adds ``"prompt_blocked"``);
    ``turns``: requests made."""

    exit_status: str
    turns: int


@dataclasses.dataclass
class RunResult:
    """What one ``run``/``arun`` produced.

    Attributes:
        text: the last step's assistant text (continued pieces joined).
        exit_status: how the loop ended: "completed" | "max_turns_reached" | "prompt_blocked"
            | "hook_stopped" | "stop_hook_limit".
        turns: model requests made.
        events: every event, in order.
    """

    text: str
    exit_status: str
    turns: int
    events: list = dataclasses.field(default_factory=list, repr=False)

    def __str__(self) -> str:
        """Show the text, so ``print(agent.run(...))`` prints the answer.

        Returns:
            ``text``.
        """
        return self.text


LoopEvent = (TurnStart | TextDelta | ToolUseReady | ToolUseTruncated | ToolResult | TurnEnd
             | Continuing | StreamRetry | MessageAppended | StopBlocked | LoopEnd | HookNotice)
