"""Hooks inside a subagent: its end fires ``SubagentStop``, its tool calls the main agent's tool hooks.

Claude Code fires ``SubagentStop`` (not ``Stop``) when a subagent finishes, with the Stop
fields plus the subagent's own: ``agent_id``, ``agent_type`` (what a ``SubagentStop``
matcher matches), ``agent_transcript_path``; and the main session's ``session_id`` and
``transcript_path``. A block (``decision: "block"`` or exit code 2) keeps the subagent
working: its reason goes to the subagent as a ``"Stop hook feedback:"`` user message, the next
``SubagentStop`` carries ``"stop_hook_active": true``, and the same cap as Stop applies
(8 blocks, then the subagent ends with ``"stop_hook_limit"``). The kit gets these semantics by
handing the subagent's loop a :class:`SubagentHooks`: the loop fires ``Stop`` as always and
this wrapper fires ``SubagentStop`` in its place.

Other events: ``PreToolUse``/``PostToolUse`` of the subagent's tool calls go to the same
hooks (with ``agent_id`` and ``agent_type`` added), so a guard written for the main agent
also guards its subagents, as in Claude Code. ``SessionStart`` and ``UserPromptSubmit``
belong to the user's session and prompt; the subagent's brief is neither, so they are not
fired (an empty :class:`~mini_agent.core.hook_output.HookResult` answers).

The subagent's own transcript: when the caller passes the main session's ``transcript_path``
(``<dir>/<session_id>.jsonl``), :func:`~mini_agent.harness.subagents.run_subagent` logs the
subagent's conversation where Claude Code keeps it, ``<dir>/<session_id>/subagents/
agent-<agent_id>.jsonl`` (a session file of :mod:`mini_agent.harness.session`), and that is
``agent_transcript_path``; without it (or when that file cannot be made) both are None.

IO: the hooks it fires. Taught in ``notebooks/06_hooks.ipynb``.

Source:
    Claude Code hooks reference (docs.anthropic.com/en/docs/claude-code/hooks: SubagentStop
    input: ``stop_hook_active``, ``agent_id``, ``agent_type``, ``agent_transcript_path``,
    ``last_assistant_message``; matcher on the agent type; Stop/SubagentStop decision
    control).
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any, Mapping

from mini_agent.core.hook_output import HookResult

DEFAULT_AGENT_TYPE = "general-purpose"
"""The ``agent_type`` of the kit's subagents (Claude Code's name for its all-round subagent)."""

TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
"""Events of a subagent's tool calls, fired on the main agent's hooks as they are."""


def new_agent_id() -> str:
    """Make an id for one subagent run, as Claude Code's ``agent_id`` (hexadecimal).

    Returns:
        16 lowercase hex digits, new each call.
    """
    return uuid.uuid4().hex[:16]


@dataclasses.dataclass(frozen=True)
class SubagentHooks:
    """Hand a subagent's loop the main agent's hooks, its Stop fired as ``SubagentStop``.

    Attributes:
        hooks: the main agent's :class:`~mini_agent.harness.hooks.HookManager` (anything
            with an async ``fire(event, payload)``).
        agent_id: this subagent run's id (:func:`new_agent_id`).
        agent_type: what a ``SubagentStop`` matcher matches (default
            :data:`DEFAULT_AGENT_TYPE`).
        fields: the main session's common fields (``session_id``, ``transcript_path``...);
            they win over the subagent's own None values.
        transcript: the subagent's own transcript file (``agent_transcript_path``), or None.
    """

    hooks: Any
    agent_id: str = dataclasses.field(default_factory=new_agent_id)
    agent_type: str = DEFAULT_AGENT_TYPE
    fields: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    transcript: str | None = None

    def own_fields(self) -> dict[str, Any]:
        """List the fields every event of this subagent carries.

        Returns:
            ``{"session_id": None, "transcript_path": None, **fields, "agent_id",
            "agent_type"}``.
        """
        return {"session_id": None, "transcript_path": None, **self.fields,
                "agent_id": self.agent_id, "agent_type": self.agent_type}

    async def fire(self, event: str, payload: dict) -> HookResult:
        """Fire what the subagent's ``event`` is for the main agent's hooks.

        Args:
            event: the event the subagent's loop or Agent fires.
            payload: its payload; the subagent's own ``session_id`` (None, it keeps no
                session) gives way to the main session's.

        Returns:
            ``Stop``: what ``SubagentStop`` answers (payload plus ``agent_transcript_path``);
            the tool events: what they answer; ``SessionStart`` and ``UserPromptSubmit``: an
            empty result (not fired).
        """
        if event == "Stop":
            return await self.hooks.fire("SubagentStop", {
                **payload, **self.own_fields(), "agent_transcript_path": self.transcript})
        if event in TOOL_EVENTS:
            return await self.hooks.fire(event, {**payload, **self.own_fields()})
        return HookResult()
