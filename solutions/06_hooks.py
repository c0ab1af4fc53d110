"""Exercise 06: lifecycle hooks (notebooks/06_hooks.ipynb).

Build the heart of seed 002's ``HookManager`` yourself (see docs/sources.md):

* 06.1 ``HookManager.fire(event, payload)``: run the handlers registered for ``event`` one
  after another, in registration order; the first output with ``"decision": "block"`` is
  returned at once (later handlers do not run); other outputs merge, later wins;
* 06.2 ``block_rm_rf(payload)``: a PreToolUse handler that blocks ``rm -rf /``.

Handler outputs are dicts in the seed's flat shape::

    {"decision": "block" | "approve", "reason": str, "systemMessage": str,
     "updatedInput": dict, "additionalContext": str}

Grade with ``mini-agent grade 06``; the same checks pass on the kit's own version
(``from mini_agent import HookManager, block_rm_rf``), which also runs command hooks, reads
settings.json, checks every field against Claude Code's contract and returns a ``HookResult``
that reads as the flat dict: read it after you pass.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Callable

EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")


class HookManager:
    """Handlers per event. ``on`` is given; ``fire`` is the exercise."""

    def __init__(self) -> None:
        self.handlers: dict[str, list[Callable[[dict], Any]]] = {}

    def on(self, event: str, handler: Callable[[dict], Any]) -> None:
        """Register ``handler(payload) -> dict | None`` (a plain or an ``async`` function)."""
        self.handlers.setdefault(event, []).append(handler)

    async def fire(self, event: str, payload: dict) -> dict:
        """Run ``event``'s handlers serially and return their merged output.

        Rules:
          * handlers run one after another, in registration order, each awaited before the
            next starts (an async handler's result may be a coroutine: await it; a ``None``
            output counts as ``{}``);
          * the first output whose ``"decision"`` is ``"block"`` is returned as it is, at
            once: later handlers do not run and nothing else is merged into it;
          * otherwise outputs merge key by key, a later handler's value wins
            (``{**merged, **output}``);
          * for ``PreToolUse``, a handler sees the ``"updatedInput"`` of earlier ones: it gets
            a payload whose ``"tool_input"`` is that dict (build a new payload dict; never
            mutate the caller's);
          * an event with no handlers returns ``{}``.
        Example: handlers returning ``{"systemMessage": "a"}`` then ``{"systemMessage": "b",
        "additionalContext": "c"}`` give ``{"systemMessage": "b", "additionalContext": "c"}``.
        Source: HookManager.fire in section 5 (hooks) of the agent-implementation
        deep-dive ("Learning Claude Code know-how from sample code", seed 002; see
        docs/sources.md in the kit).
        """
        # BEGIN SOLUTION
        merged: dict = {}
        for handler in self.handlers.get(event, []):
            output = handler(payload)
            if inspect.isawaitable(output):
                output = await output
            output = output or {}
            if output.get("decision") == "block":
                return output
            merged = {**merged, **output}
            if event == "PreToolUse" and output.get("updatedInput") is not None:
                payload = {**payload, "tool_input": output["updatedInput"]}
        return merged
        # END SOLUTION


def block_rm_rf(payload: dict) -> dict:
    """PreToolUse handler: block a recursive forced delete of the root directory.

    ``payload`` looks like ``{"tool_name": "run_bash", "tool_input": {"command": "rm -rf /"}}``.
    Block (return ``{"decision": "block", "reason": <why, non-empty>}``) when the tool is
    ``run_bash`` or ``Bash`` and the command contains ``rm -rf /`` or ``rm -fr /`` (any amount
    of whitespace between the parts) with ``/`` followed by the end, a space or ``*``
    (``rm -rf /tmp/x`` is allowed). Otherwise return ``{}``. Any other tool: ``{}``.
    Source: the usage example in section 5 (hooks) of the agent-implementation deep-dive
    ("Learning Claude Code know-how from sample code", seed 002; see docs/sources.md in the
    kit).
    """
    # BEGIN SOLUTION
    if payload.get("tool_name") not in ("run_bash", "Bash"):
        return {}
    command = (payload.get("tool_input") or {}).get("command", "")
    if re.search(r"\brm\s+-(rf|fr)\s+/(\s|\*|$)", command):
        return {"decision": "block", "reason": f"`{command}` would delete the whole file system"}
    return {}
    # END SOLUTION
