"""ALTERNATIVE (correct, written differently): a recursive copy per part, exact fractions for
the ratio, named attributes for the previous response, causes gathered in a set.

Exercise 05: fingerprint requests, detect cache breaks, place breakpoints
(notebooks/05_prompt_caching.ipynb).
"""

from __future__ import annotations

import copy
import hashlib
import json
from fractions import Fraction

DYNAMIC_BOUNDARY = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__"
MAX_BREAKPOINTS = 4


def _strip(obj):
    if isinstance(obj, dict):
        return {key: _strip(value) for key, value in obj.items() if key != "cache_control"}
    if isinstance(obj, list):
        return [_strip(value) for value in obj]
    return obj


def tools_fingerprint(tools):
    by_name = {}
    for tool in tools:
        by_name.setdefault(tool["name"], []).append(_strip(tool))
    ordered = [tool for name in sorted(by_name) for tool in by_name[name]]
    digest = hashlib.sha256()
    digest.update(json.dumps(ordered, sort_keys=True, indent=1).encode("utf-8"))
    return digest.hexdigest()


def system_fingerprint(system):
    static = system.split(DYNAMIC_BOUNDARY, 1)[0]
    return hashlib.sha256(static.encode("utf-8")).hexdigest()


class CacheBreakDetector:
    MIN_DROP_TOKENS = 2_000
    MIN_DROP_RATIO = 0.05

    def __init__(self):
        self.last = None
        self.pending = None
        self.previous_read = None
        self.previous_system = self.previous_tools = None

    def record_request(self, system, tools):
        self.pending = {"system": system_fingerprint(system), "tools": tools_fingerprint(tools)}

    def check_response(self, usage):
        request, self.pending = self.pending, None
        if request is None:
            return None
        read = usage.get("cache_read_input_tokens", 0)
        report = None
        if self.previous_read:
            drop = self.previous_read - read
            if drop > self.MIN_DROP_TOKENS and \
                    Fraction(drop, self.previous_read) > Fraction(self.MIN_DROP_RATIO):
                causes = set()
                if request["system"] != self.previous_system:
                    causes.add("system_prompt_changed")
                if request["tools"] != self.previous_tools:
                    causes.add("tools_changed")
                report = {"dropped_tokens": drop, "causes": sorted(causes) or ["unknown"]}
        self.previous_read = read
        self.previous_system, self.previous_tools = request["system"], request["tools"]
        self.last = {**request, "read": read}
        return report


def place_breakpoints(request):
    out = {key: copy.deepcopy(_strip(value)) if key in ("tools", "messages")
           else copy.deepcopy(value) for key, value in request.items()}
    tools, system = out.get("tools") or [], out.get("system") or []
    if tools:
        tools[-1]["cache_control"] = {"type": "ephemeral"}
    static_end = max((i for i, b in enumerate(system) if "cache_control" in b),
                     default=len(system) - 1)
    for block in system:
        block.pop("cache_control", None)
    static = [b for b in system[:static_end + 1]
              if b.get("type") != "text" or b.get("text", "").strip()]
    if static:
        static[-1]["cache_control"] = {"type": "ephemeral"}
    if out.get("messages"):
        last = out["messages"][-1]
        blocks = last["content"]
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}] if blocks.strip() else []
            if blocks:
                last["content"] = blocks
        candidates = [b for b in blocks
                      if b.get("type") not in ("thinking", "redacted_thinking")
                      and (b.get("type") != "text" or b.get("text", "").strip())]
        if candidates:
            candidates[-1]["cache_control"] = {"type": "ephemeral"}
    return out
