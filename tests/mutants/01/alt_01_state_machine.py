"""ALTERNATIVE (correct, written differently): a small state machine class fed one event at a time.

Exercise 01: assemble streamed tool_use blocks (notebooks/01_agent_loop.ipynb).
"""

from __future__ import annotations

import json


def parse_tool_input(fragments):
    text = ""
    for fragment in fragments:
        text += fragment
    if not text:
        return {}
    try:
        value = json.JSONDecoder().decode(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"incomplete tool input: {exc}") from exc
    if type(value) is not dict:
        raise ValueError("tool input is not a JSON object")
    return value


class _Assembler:
    def __init__(self):
        self.open = {}        # index -> (id, name, fragments)
        self.finished = []    # (index, id, name, fragments) in stop order
        self.last_index = None
        self.stop_reason = None

    def feed(self, event):
        kind = event.get("type")
        if kind == "content_block_start":
            self.last_index = event["index"]
            block = event["content_block"]
            if block.get("type") == "tool_use":
                self.open[event["index"]] = (block["id"], block["name"], [])
        elif kind == "content_block_delta":
            delta = event.get("delta", {})
            entry = self.open.get(event["index"])
            if entry is not None and delta.get("type") == "input_json_delta":
                entry[2].append(delta.get("partial_json", ""))
        elif kind == "content_block_stop":
            entry = self.open.pop(event["index"], None)
            if entry is not None:
                self.finished.append((event["index"], *entry))
        elif kind == "message_delta":
            self.stop_reason = event.get("delta", {}).get("stop_reason")

    def blocks(self):
        out = []
        for index, tool_id, name, fragments in self.finished:
            empty = "".join(fragments) == ""
            if empty and self.stop_reason in ("max_tokens", None) and index == self.last_index:
                continue
            try:
                tool_input = parse_tool_input(fragments)
            except ValueError:
                continue
            out.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        return out


def assemble_tool_uses(events):
    assembler = _Assembler()
    for event in events:
        assembler.feed(event)
    return assembler.blocks()
