"""What ``/stats``, ``/history`` and the widgets read of an Agent: view, counts, history text.

:class:`AgentInspection` is a mixin of :class:`~mini_agent.harness.agent.Agent` (kept apart
from the running code, which it never calls): it reads ``history``, ``times``, ``requests``,
``clock``, ``view_policy`` and ``_resumed`` and changes nothing. Pure apart from reading the
clock. Taught in ``notebooks/01_agent_loop.ipynb`` and ``03_observation_masking.ipynb``.

Source: 000_86e3ff2076a5ae37.txt (/stats, /history).
"""

from __future__ import annotations

import json
from typing import Any

from mini_agent.core.messages import Message, tool_results
from mini_agent.core.tokens import approx_tokens
from mini_agent.harness.loop import view_context


class AgentInspection:
    """The read-only views of an Agent's state (``/stats``, ``/history``, the next view).

    Attributes:
        history, times, requests, clock, view_policy: the Agent's (see
        :class:`~mini_agent.harness.agent.Agent`).
    """

    history: list[Message]
    times: list[float]
    requests: list[dict[str, Any]]
    clock: Any
    view_policy: Any
    _resumed: bool

    def view(self) -> list[Message]:
        """Build the view the next request would send (the policy applied to the full history).

        Returns:
            The messages the view policy returns now (the history itself is not changed).
        """
        ctx = view_context(self.times, len(self.history), now=self.clock.now(),
                           turn=len(self.requests) + 1)
        return self.view_policy(list(self.history), ctx)

    def stats(self) -> dict[str, int]:
        """Count what ``/stats`` shows.

        turns = model requests made; messages = messages in the history (the seed's
        "turns"); tokens are approx tokens of the full history and of the current view;
        masked_count = tool results whose content the view changed.

        Returns:
            ``{"turns", "messages", "raw_tokens", "view_tokens", "masked_count"}``.

        Source: 000_86e3ff2076a5ae37.txt ("/stats").
        """
        view = self.view()
        masked = 0
        if len(view) == len(self.history):
            for full, sent in zip(self.history, view):
                masked += sum(1 for a, b in zip(tool_results(full), tool_results(sent))
                              if a.get("content") != b.get("content"))
        return {"turns": len(self.requests), "messages": len(self.history),
                "raw_tokens": approx_tokens(self.history), "view_tokens": approx_tokens(view),
                "masked_count": masked}

    def stats_line(self) -> str:
        """Format :meth:`stats` on one line, as ``/stats`` prints it.

        Returns:
            ``turns: 13   messages: 26   raw: ~9077 tok   view: ~2026 tok   masked: 14``;
            after :meth:`resume` the count reads ``turns: 2 since resume`` (the session log
            holds messages, not the requests that produced them).
        """
        s = self.stats()
        since = " since resume" if self._resumed else ""
        return (f"turns: {s['turns']}{since}   messages: {s['messages']}   "
                f"raw: ~{s['raw_tokens']} tok   view: ~{s['view_tokens']} tok   "
                f"masked: {s['masked_count']}")

    def history_text(self, limit_chars: int = 2000) -> str:
        """Format the FULL history as indented JSON, as ``/history`` prints it.

        Args:
            limit_chars: the most characters shown (default 2000); the rest is counted.

        Returns:
            The JSON text, cut with ``... [N more characters]`` when longer.
        """
        text = json.dumps(self.history, indent=2, ensure_ascii=False)
        if len(text) > limit_chars:
            return text[:limit_chars] + f"\n... [{len(text) - limit_chars} more characters]"
        return text


__all__ = ["AgentInspection"]
