"""ALTERNATIVE (correct, written differently): a set of positions to mask, messages rebuilt by comprehension.

Exercise 03: observation masking (notebooks/03_observation_masking.ipynb).
"""

from __future__ import annotations

import json
import math

from mini_agent import image_tokens

PLACEHOLDER = "[observation masked — {lines} lines omitted]"


def _parts(messages):
    """Every block to count, a tool_result's list parts flattened in."""
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            yield {"type": "text", "text": content}
            continue
        for block in content:
            yield block
            if block["type"] == "tool_result" and isinstance(block.get("content"), list):
                yield from block["content"]


SIZES = {
    "text": lambda b: len(b["text"]),
    "thinking": lambda b: len(b["thinking"]),
    "redacted_thinking": lambda b: len(b["data"]),
    "tool_use": lambda b: len(json.dumps(b["input"], ensure_ascii=False)) + len(b["name"]) + 20,
    # list content is counted through its parts, which _parts yields too
    "tool_result": lambda b: len(c) if isinstance(c := b.get("content", ""), str) else 0,
}


def approx_tokens(messages):
    blocks = list(_parts(messages))
    chars = sum(SIZES[b["type"]](b) for b in blocks if b["type"] in SIZES)
    images = sum(image_tokens(b) for b in blocks if b["type"] == "image")
    return math.ceil(chars / 4) + images


def _lines(content):
    text = content if isinstance(content, str) else "".join(
        p.get("text", "") for p in content if p.get("type") == "text")
    return text.count("\n") + 1


def mask_old_observations(messages, keep=4):
    if keep < 0:
        raise ValueError(f"keep={keep}")
    where = [(i, j) for i, m in enumerate(messages)
             if m["role"] == "user" and isinstance(m["content"], list)
             for j, b in enumerate(m["content"]) if b["type"] == "tool_result"]
    doomed = set(where[:len(where) - keep]) if keep < len(where) else set()

    def block_at(i, j, block):
        if (i, j) not in doomed:
            return block
        return dict(block, content=PLACEHOLDER.format(lines=_lines(block.get("content", ""))))

    touched = {i for i, _ in doomed}
    return [{**m, "content": [block_at(i, j, b) for j, b in enumerate(m["content"])]}
            if i in touched else m for i, m in enumerate(messages)]


def should_mask(messages, threshold_tokens=8_000):
    return approx_tokens(messages) - threshold_tokens > 0
