"""ALTERNATIVE (correct, written differently): bisect over the thresholds, time.gmtime for
the clock, an index per tool_use id, eviction through sorted (seq, position) pairs.

Exercise 08: the four-stage context lifecycle (notebooks/08_context_lifecycle.ipynb).
"""

from __future__ import annotations

import bisect
import time


def tier_for_age(age, *, hot_exchanges=3, warm_a_exchanges=8, warm_b_exchanges=20):
    if age < 0:
        raise ValueError(f"age must be >= 0, got {age}")
    tiers = ("hot", "warm_a", "warm_b", "cold")
    return tiers[bisect.bisect_right([hot_exchanges, warm_a_exchanges, warm_b_exchanges], age)]


def _blocks(message):
    content = message["content"]
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content


def _text(content):
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in content if part.get("type") == "text")


def timeline_line(exchange, *, segment, time_seconds):
    clock = time.strftime("%H:%M", time.gmtime(time_seconds))
    assistant = [b for m in exchange if m["role"] == "assistant" for b in _blocks(m)]
    texts = [b["text"] for b in assistant if b["type"] == "text"]
    reasoning = texts[0].partition("\n")[0] if texts else ""
    uses = [b for b in assistant if b["type"] == "tool_use"]
    if not uses:
        return f"[{clock}] reply ({segment}): {reasoning}"
    use = uses[0]
    results = {b["tool_use_id"]: b for m in exchange for b in _blocks(m)
               if b["type"] == "tool_result"}
    shown = ""
    for key in ("path", "pattern", "command"):
        if key in use["input"]:
            shown = use["input"][key]
            break
    result = results.get(use["id"])
    lines = (_text(result["content"]) if result else "").count("\n") + 1
    return f"[{clock}] {use['name']} ({segment}): {shown} {lines} lines; {reasoning}"


def eviction_order(segments):
    pairs = sorted((s["seq"], i) for i, s in enumerate(segments))
    return [segments[i]["id"] for _, i in pairs]
