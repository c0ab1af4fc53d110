"""A Python hook handler that guards tool calls: block a recursive forced delete of ``/``.

What this module does: :func:`block_rm_rf`, a ``PreToolUse`` handler for
:meth:`~mini_agent.harness.hooks.HookManager.on` in the seed's flat output shape. What it does
not do: run commands or read settings (``harness/hooks.py``); the kit's command hook
``hook_examples/block_destructive.py`` blocks a wider set (``~``, ``mkfs``, ``dd``, force
pushes...). Pure. Taught in ``notebooks/06_hooks.ipynb``; exercise 06.2.
Source: the usage example in section 5 of 002_4516104fd432e704.txt.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["SHELL_TOOLS", "block_rm_rf"]

SHELL_TOOLS = ("run_bash", "Bash")
"""Tools whose ``tool_input["command"]`` is a shell command: the kit's and Claude Code's."""

_RM_RF_ROOT = re.compile(r"\brm\s+-(rf|fr)\s+/(\s|\*|$)")


def block_rm_rf(payload: dict[str, Any]) -> dict[str, Any]:
    """PreToolUse handler: block ``rm -rf /`` (or ``rm -fr /``) in a shell tool's command.

    Args:
        payload: ``{"tool_name": "run_bash", "tool_input": {"command": "rm -rf /"}, ...}``;
            never mutated.
    Returns:
        ``{"decision": "block", "reason": <why>}`` when the tool is ``run_bash`` or ``Bash`` and
        the command holds ``rm``, ``-rf`` or ``-fr`` and ``/`` (any whitespace between them)
        with ``/`` followed by the end, whitespace or ``*``; else ``{}`` (``rm -rf /tmp/x`` is
        allowed, and so is any other tool).

    >>> block_rm_rf({"tool_name": "Bash", "tool_input": {"command": "sudo rm -fr /*"}})["decision"]
    'block'
    >>> block_rm_rf({"tool_name": "run_bash", "tool_input": {"command": "rm -rf /tmp/build"}})
    {}
    """
    if payload.get("tool_name") not in SHELL_TOOLS:
        return {}
    command = (payload.get("tool_input") or {}).get("command", "")
    if isinstance(command, str) and _RM_RF_ROOT.search(command):
        return {"decision": "block",
                "reason": f"`{command}` would delete the whole file system; name the folder "
                          "to delete instead"}
    return {}
