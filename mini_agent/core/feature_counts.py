"""Characters of each content kind in a history, counted in one pass per session.

:mod:`.calibration` measures a request by the characters of each content kind it sends
(prose, code, JSON, tool output, CJK), its content blocks and its image tokens. This module
holds that count: :func:`count_block` is the rule for one block (the reference), and
:func:`counted_requests` adds up a whole history's requests in one pass, with the usual
blocks (ASCII text and thinking, tool uses, tool results of string content) counted in
local variables instead of through a dict per block. Pure: no IO, inputs never mutated.

Source: the kit's evaluation chapter (code and JSON run at fewer characters per token than
prose); ``core/calibration.py`` fits the per-kind rates.
"""

from __future__ import annotations

import re
from typing import Sequence

from mini_agent.core.messages import Message, content_blocks, tool_result_text
from mini_agent.core.output_kind import output_kind
from mini_agent.core.tokens import image_tokens, tool_input_json

COUNTS = ("prose", "code", "json", "tool_output", "cjk", "blocks", "image_tokens")
"""The keys of one message's or request's counts, in order."""

CJK_RE = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]")
FENCE_RE = re.compile(r"```.*?(?:```|\Z)", re.S)


def split_text(text: str, kind: str, out: dict[str, int]) -> None:
    """Add ``text``'s characters to ``out``: CJK apart, fenced code apart in prose.

    Args:
        text: the text of one block.
        kind: ``"prose"`` (fenced code counts as code), or the kind every other character
            counts as (``"json"``, ``"code"``, ``"tool_output"``).
        out: the counts (:data:`COUNTS`), updated in place.
    """
    cjk = 0 if text.isascii() else len(CJK_RE.findall(text))  # CJK is never ASCII
    out["cjk"] += cjk
    if kind == "prose":
        code = sum(len(m) for m in FENCE_RE.findall(text)) if "```" in text else 0
        out["code"] += code
        out["prose"] += len(text) - code - cjk  # fenced CJK is rare; never below zero overall
    else:
        out[kind] += len(text) - cjk


def count_block(block: dict, out: dict[str, int]) -> None:
    """Add one content block's counts into ``out`` (the rule :func:`counted_requests` follows).

    Args:
        block: one content block; never mutated.
        out: the counts (:data:`COUNTS`), updated in place.
    """
    out["blocks"] += 1
    kind = block.get("type")
    if kind == "text":
        split_text(block.get("text", ""), "prose", out)
    elif kind == "thinking":
        split_text(block.get("thinking", ""), "prose", out)
    elif kind == "tool_use":
        split_text(block.get("name", "") + tool_input_json(block), "json", out)
    elif kind == "tool_result":
        text = tool_result_text(block)
        split_text(text, output_kind(text), out)
        for part in block.get("content") if isinstance(block.get("content"), list) else []:
            if part.get("type") == "image":
                out["image_tokens"] += image_tokens(part)
    elif kind == "image":
        out["image_tokens"] += image_tokens(block)


def count_message(message: Message, out: dict[str, int]) -> None:
    """Add every block of ``message`` into ``out`` (:func:`count_block` each).

    Args:
        message: one message (str content or a list of blocks); never mutated.
        out: the counts (:data:`COUNTS`), updated in place.
    """
    for block in content_blocks(message):
        count_block(block, out)


def counted_requests(messages: Sequence[Message], points: Sequence[int]
                     ) -> list[dict[str, int]]:
    """The counts of each request ``messages[:i]``, ``i`` in ``points``, in one pass.

    Must equal :func:`requests_by_message` (``tests/test_feature_counts.py`` compares the
    two): a block that is not the usual kind (non-ASCII text, list content, an image, a
    value of another type) is counted by :func:`count_block` into a side dict; the usual
    ones add their lengths to local counters (an ASCII text holds no CJK character).

    Args:
        messages: the whole history; never mutated.
        points: the history length of each request, ascending.

    Returns:
        One dict per point, keys :data:`COUNTS` in order.
    """
    out = []
    side = dict.fromkeys(COUNTS, 0)
    prose = code = json_chars = output = blocks = 0
    done = 0
    unusual = False  # whether ``side`` has counted a block (or a message) yet
    for i in points:
        for message in messages[done:i]:
            content = message.get("content")
            if type(content) is str:
                content = ({"type": "text", "text": content},)
            elif type(content) is not list:
                count_message(message, side)
                unusual = True
                continue
            for block in content:
                kind = block.get("type")
                if kind == "tool_result":
                    text = block.get("content", "")
                    if type(text) is str and text.isascii():
                        blocks += 1
                        kind = output_kind(text)
                        if kind == "code":
                            code += len(text)
                        elif kind == "json":
                            json_chars += len(text)
                        else:
                            output += len(text)
                        continue
                elif kind == "text" or kind == "thinking":
                    text = block.get(kind, "")
                    if type(text) is str and text.isascii():
                        blocks += 1
                        if "```" in text:
                            fenced = sum(len(m) for m in FENCE_RE.findall(text))
                            code += fenced
                            prose += len(text) - fenced
                        else:
                            prose += len(text)
                        continue
                elif kind == "tool_use":
                    name = block.get("name", "")
                    if type(name) is str:
                        text = tool_input_json(block)
                        if name.isascii() and text.isascii():
                            blocks += 1
                            json_chars += len(name) + len(text)
                            continue
                count_block(block, side)
                unusual = True
        done = max(done, i)
        if unusual:
            out.append({"prose": prose + side["prose"], "code": code + side["code"],
                        "json": json_chars + side["json"],
                        "tool_output": output + side["tool_output"], "cjk": side["cjk"],
                        "blocks": blocks + side["blocks"], "image_tokens": side["image_tokens"]})
        else:  # ``side`` still all zeros: the same sums
            out.append({"prose": prose, "code": code, "json": json_chars, "tool_output": output,
                        "cjk": 0, "blocks": blocks, "image_tokens": 0})
    return out


def requests_by_message(messages: Sequence[Message], points: Sequence[int]
                        ) -> list[dict[str, int]]:
    """The reference form of :func:`counted_requests`: :func:`count_message` per message.

    Args:
        messages: the whole history; never mutated.
        points: the history length of each request, ascending.

    Returns:
        One dict per point, keys :data:`COUNTS` in order.
    """
    out, total, done = [], dict.fromkeys(COUNTS, 0), 0
    for i in points:
        for message in messages[done:i]:
            count_message(message, total)
        done = max(done, i)
        out.append(dict(total))
    return out
