"""ALTERNATIVE (correct, written differently): two passes, fragments grouped per index with a comprehension.

Exercise 01: assemble streamed tool_use blocks (notebooks/01_agent_loop.ipynb).
"""

from __future__ import annotations

import json
from collections import defaultdict


def parse_tool_input(fragments):
    text = "".join(fragments)
    value = json.loads(text) if text else {}
    if isinstance(value, dict):
        return value
    raise ValueError(f"expected a JSON object, got {text[:20]!r}")


def assemble_tool_uses(events):
    starts = [e for e in events if e.get("type") == "content_block_start"]
    stops = [e["index"] for e in events if e.get("type") == "content_block_stop"]
    reasons = [e["delta"].get("stop_reason") for e in events
               if e.get("type") == "message_delta" and "delta" in e]
    cut_reply = not reasons or reasons[-1] in ("max_tokens", None)
    last_index = starts[-1]["index"] if starts else None
    tools = {e["index"]: e["content_block"] for e in starts
             if e["content_block"].get("type") == "tool_use"}
    fragments = defaultdict(list)
    for e in events:
        if (e.get("type") == "content_block_delta" and e["index"] in tools
                and e["delta"].get("type") == "input_json_delta"):
            fragments[e["index"]].append(e["delta"]["partial_json"])
    result = []
    for index in stops:
        if index not in tools:
            continue
        text = "".join(fragments[index])
        if text == "" and cut_reply and index == last_index:
            continue
        try:
            tool_input = parse_tool_input([text])
        except ValueError:
            continue
        block = tools[index]
        result.append({"type": "tool_use", "id": block["id"], "name": block["name"],
                       "input": tool_input})
    return result
