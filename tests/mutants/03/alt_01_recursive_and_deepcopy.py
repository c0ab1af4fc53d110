"""ALTERNATIVE (correct, written differently): a recursive block counter, a deep copy masked from the front.

Exercise 03: observation masking (notebooks/03_observation_masking.ipynb).
"""

from __future__ import annotations

import copy
import json
import math

from mini_agent import image_tokens

PLACEHOLDER = "[observation masked — {lines} lines omitted]"


def _chars_and_images(block):
    kind = block.get("type")
    if kind == "text":
        return len(block["text"]), 0
    if kind == "thinking":
        return len(block["thinking"]), 0
    if kind == "redacted_thinking":
        return len(block["data"]), 0
    if kind == "tool_use":
        return len(block["name"]) + len(json.dumps(block["input"], ensure_ascii=False)) + 20, 0
    if kind == "image":
        return 0, image_tokens(block)
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, str):
            return len(content), 0
        parts = [_chars_and_images(part) for part in content]
        return sum(c for c, _ in parts), sum(i for _, i in parts)
    return 0, 0


def approx_tokens(messages):
    chars = images = 0
    for message in messages:
        if isinstance(message["content"], str):
            chars += len(message["content"])
            continue
        for block in message["content"]:
            c, i = _chars_and_images(block)
            chars += c
            images += i
    return -(-chars // 4) + images


def mask_old_observations(messages, keep=4):
    if keep < 0:
        raise ValueError("keep must not be negative")
    view = copy.deepcopy(messages)
    results = [block for message in view if message["role"] == "user"
               and not isinstance(message["content"], str)
               for block in message["content"] if block["type"] == "tool_result"]
    for block in results[:max(len(results) - keep, 0)]:
        content = block.get("content", "")
        if isinstance(content, list):
            content = "".join(part["text"] for part in content if part["type"] == "text")
        block["content"] = PLACEHOLDER.format(lines=len(content.split("\n")))
    return view


def should_mask(messages, threshold_tokens=8_000):
    return not approx_tokens(messages) <= threshold_tokens
