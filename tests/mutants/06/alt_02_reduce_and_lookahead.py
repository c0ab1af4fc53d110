"""ALTERNATIVE (correct, written differently): outputs collected one by one into a list and
folded at the end, and a compiled pattern with a lookahead for what follows the root.

Exercise 06: lifecycle hooks (notebooks/06_hooks.ipynb).
"""

from __future__ import annotations

import inspect
import re
from functools import reduce

EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")

ROOT_DELETE = re.compile(r"(?:^|\s)rm\s+-(?:rf|fr)\s+/(?=\s|\*|$)")


class HookManager:
    def __init__(self):
        self.handlers = {}

    def on(self, event, handler):
        self.handlers.setdefault(event, []).append(handler)

    async def fire(self, event, payload):
        outputs = []
        seen = dict(payload)
        for handler in list(self.handlers.get(event, [])):
            out = handler(seen)
            out = (await out) if inspect.isawaitable(out) else out
            out = dict(out or {})
            if out.get("decision") == "block":
                return out
            outputs.append(out)
            if event == "PreToolUse" and out.get("updatedInput") is not None:
                seen = {**seen, "tool_input": out["updatedInput"]}
        return reduce(lambda acc, out: {**acc, **out}, outputs, {})


def block_rm_rf(payload):
    if payload.get("tool_name") in ("run_bash", "Bash"):
        command = payload.get("tool_input", {}).get("command") or ""
        if ROOT_DELETE.search(command):
            return {"decision": "block", "reason": f"blocked: {command}"}
    return {}
