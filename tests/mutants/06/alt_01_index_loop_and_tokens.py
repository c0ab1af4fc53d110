"""ALTERNATIVE (correct, written differently): a while loop with dict.update on a fresh dict,
asyncio.iscoroutine on the result, and block_rm_rf on whitespace-split words.

Exercise 06: lifecycle hooks (notebooks/06_hooks.ipynb).
"""

from __future__ import annotations

import asyncio

EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")


class HookManager:
    def __init__(self):
        self.handlers = {}

    def on(self, event, handler):
        self.handlers.setdefault(event, []).append(handler)

    async def fire(self, event, payload):
        handlers = self.handlers.get(event, ())
        merged = {}
        current = payload
        i = 0
        while i < len(handlers):
            result = handlers[i](current)
            if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
                result = await result
            if result is not None:
                if result.get("decision") == "block":
                    return result
                merged.update(result)
                if event == "PreToolUse" and "updatedInput" in result \
                        and result["updatedInput"] is not None:
                    current = dict(current)
                    current["tool_input"] = result["updatedInput"]
            i += 1
        return merged


SHELL_TOOLS = {"run_bash", "Bash"}


def block_rm_rf(payload):
    if payload.get("tool_name") not in SHELL_TOOLS:
        return {}
    words = str((payload.get("tool_input") or {}).get("command", "")).split()
    for k in range(len(words) - 2):
        target = words[k + 2]
        if words[k] == "rm" and words[k + 1] in ("-rf", "-fr") and \
                (target == "/" or target.startswith("/*")):
            return {"decision": "block",
                    "reason": "refusing to delete the root directory recursively"}
    return {}
