"""The contract between the full history and the view sent to the model.

The agent keeps the FULL history (the record: the session log, "show me what the agent read")
and sends a VIEW built by a policy each request (seed 000: "store full, send masked").
A view policy is any callable ``policy(history, ctx) -> list[Message]`` that returns a
new list and never mutates ``history``. Facts the policies need about each message (when it
arrived) live in :class:`ViewContext`, beside the messages, never inside them: the API rejects
unknown keys in content blocks.

Source:
    000_86e3ff2076a5ae37.txt ("store full, send masked").
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Protocol, Sequence

from mini_agent.core.messages import Message


@dataclasses.dataclass(frozen=True)
class ViewContext:
    """Per-request facts a view policy may use.

    Attributes:
        times: Unix seconds at which each history message was appended, parallel to the history
            (``len(times) == len(history)``).
        now: the agent clock's time in seconds.
        turn: 1-based request number within the agent's life (a turn is one model request).
    """

    times: tuple[float, ...] = ()
    now: float = 0.0
    turn: int = 1

    def times_for(self, history: Sequence[Message]) -> tuple[float, ...]:
        """Return the arrival times to use for ``history``.

        Args:
            history: the history the policy was given.

        Returns:
            ``times`` when parallel to ``history``, else ``now`` for every message (seconds):
            ``ViewContext(now=5.0).times_for([{"role": "user", "content": "hi"}]) == (5.0,)``.
        """
        return self.times if len(self.times) == len(history) else (self.now,) * len(history)


def check_times(messages: Sequence[Message], times: Sequence[float]) -> None:
    """Refuse ``times`` that are not parallel to ``messages`` (one time per message).

    Args:
        messages: a history or view.
        times: Unix seconds at which each message was appended.
    Raises:
        ValueError: ``len(times) != len(messages)``; the message gives both lengths.
    """
    if len(times) != len(messages):
        raise ValueError(f"times must be parallel to messages: {len(times)} times for "
                         f"{len(messages)} messages")


class ViewPolicy(Protocol):
    """``(history, ctx) -> view``: a new list; the input is never mutated, and neither is a
    message once a view returned it (the replays summarise each message object once)."""

    def __call__(self, history: list[Message], ctx: ViewContext) -> list[Message]:
        ...  # pragma: no cover - protocol


def full_view(history: list[Message], ctx: ViewContext) -> list[Message]:
    """The identity policy: send the whole history.

    Args:
        history: the full history.
        ctx: the request's facts (unused).

    Returns:
        A shallow copy of the list.
    """
    return list(history)


def chain(*policies: ViewPolicy) -> Callable[[list[Message], ViewContext], list[Message]]:
    """Compose policies left to right: ``chain(a, b)(h, ctx) == b(a(h, ctx), ctx)``.

    Only valid for policies that keep the message count (masking, micro-compaction); a
    policy that drops messages makes ``ctx.times`` misaligned for the next one.

    Args:
        policies: the view policies, applied in order.

    Returns:
        One policy ``(history, ctx) -> view`` that returns a new list.
    """
    def run(history: list[Message], ctx: ViewContext) -> list[Message]:
        view = history
        for policy in policies:
            view = policy(view, ctx)
        return list(view)
    return run
