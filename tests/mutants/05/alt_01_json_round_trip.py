"""ALTERNATIVE (correct, written differently): markers dropped by a JSON round trip, integer
threshold arithmetic, a tuple as the detector's memory, breakpoints on rebuilt dicts.

Exercise 05: fingerprint requests, detect cache breaks, place breakpoints
(notebooks/05_prompt_caching.ipynb).
"""

from __future__ import annotations

import hashlib
import json

DYNAMIC_BOUNDARY = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__"
MAX_BREAKPOINTS = 4


def _without_markers(obj):
    """A new structure equal to ``obj`` minus every cache_control key."""
    return json.loads(json.dumps(obj), object_hook=lambda d: {
        k: v for k, v in d.items() if k != "cache_control"})


def tools_fingerprint(tools):
    canonical = json.dumps(sorted(_without_markers(list(tools)), key=lambda t: t["name"]),
                           sort_keys=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def system_fingerprint(system):
    static, _, _ = system.partition(DYNAMIC_BOUNDARY)
    return hashlib.sha256(static.encode("utf-8")).hexdigest()


class CacheBreakDetector:
    MIN_DROP_TOKENS = 2_000
    MIN_DROP_RATIO = 0.05

    def __init__(self):
        self.last = None      # (read, system fingerprint, tools fingerprint)
        self.pending = None   # (system fingerprint, tools fingerprint)

    def record_request(self, system, tools):
        self.pending = (system_fingerprint(system), tools_fingerprint(tools))

    def check_response(self, usage):
        if not self.pending:
            return None
        (system, tools), self.pending = self.pending, None
        read = usage.get("cache_read_input_tokens", 0)
        previous, self.last = self.last, (read, system, tools)
        if previous is None:
            return None
        drop = previous[0] - read
        # drop / previous > 5%  <=>  20 * drop > previous (exact, no floats)
        if drop <= self.MIN_DROP_TOKENS or 20 * drop <= previous[0]:
            return None
        causes = [name for name, before, now in (("tools_changed", previous[2], tools),
                                                  ("system_prompt_changed", previous[1], system))
                  if before != now]
        return {"dropped_tokens": drop, "causes": causes or ["unknown"]}


def _markable(block):
    if block.get("type") in ("thinking", "redacted_thinking"):
        return False
    return block.get("type") != "text" or bool(block.get("text", "").strip())


def place_breakpoints(request):
    marked_system = [i for i, block in enumerate(request.get("system") or [])
                     if "cache_control" in block]
    out = _without_markers(request)
    marker = {"type": "ephemeral"}
    if out.get("tools"):
        out["tools"][-1] = {**out["tools"][-1], "cache_control": dict(marker)}
    if out.get("system"):
        end = marked_system[-1] if marked_system else len(out["system"]) - 1
        own = dict(request["system"][end].get("cache_control") or marker)
        at = next((i for i in range(end, -1, -1) if _markable(out["system"][i])), None)
        if at is not None:
            out["system"][at] = {**out["system"][at], "cache_control": own}
    messages = out.get("messages") or []
    if messages:
        content = messages[-1]["content"]
        if isinstance(content, str):
            if content.strip():
                messages[-1]["content"] = [{"type": "text", "text": content,
                                            "cache_control": dict(marker)}]
        else:
            for i in range(len(content) - 1, -1, -1):
                if _markable(content[i]):
                    content[i] = {**content[i], "cache_control": dict(marker)}
                    break
    return out
