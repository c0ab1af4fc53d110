"""ALTERNATIVE (correct, written differently): a loop over (threshold, tier) pairs, the clock
from integer arithmetic on seconds, the exchange walked once, eviction through a heap.

Exercise 08: the four-stage context lifecycle (notebooks/08_context_lifecycle.ipynb).
"""

from __future__ import annotations

import heapq
import math


def tier_for_age(age, *, hot_exchanges=3, warm_a_exchanges=8, warm_b_exchanges=20):
    if age < 0:
        raise ValueError("a negative age")
    for limit, name in ((hot_exchanges, "hot"), (warm_a_exchanges, "warm_a"),
                        (warm_b_exchanges, "warm_b")):
        if age < limit:
            return name
    return "cold"


def timeline_line(exchange, *, segment, time_seconds):
    seconds = math.floor(time_seconds)
    clock = f"{seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}"
    reasoning = None
    first_use = None
    results = {}
    for message in exchange:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            if message["role"] == "assistant" and block["type"] == "text" and reasoning is None:
                reasoning = block["text"].split("\n", 1)[0]
            elif message["role"] == "assistant" and block["type"] == "tool_use" \
                    and first_use is None:
                first_use = block
            elif block["type"] == "tool_result":
                results.setdefault(block["tool_use_id"], block["content"])
    reasoning = reasoning or ""
    if first_use is None:
        return f"[{clock}] reply ({segment}): {reasoning}"
    inp = first_use["input"]
    shown = inp.get("path", inp.get("pattern", inp.get("command", "")))
    content = results.get(first_use["id"], "")
    newlines = content.count("\n") if isinstance(content, str) else sum(
        part["text"].count("\n") for part in content if part["type"] == "text")
    return f"[{clock}] {first_use['name']} ({segment}): {shown} {newlines + 1} lines; {reasoning}"


def eviction_order(segments):
    heap = [(s["seq"], s["id"]) for s in segments]
    heapq.heapify(heap)
    return [heapq.heappop(heap)[1] for _ in range(len(heap))]
