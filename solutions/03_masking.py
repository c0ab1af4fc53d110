"""Exercise 03: observation masking (notebooks/03_observation_masking.ipynb).

Build the three pieces of seed 000 yourself, in order. Seed 000 is the article "Mini Claude
Code, Episode 04: make the agent forget on purpose" (episode 04 of that article's own series;
in this kit it is notebook 03; docs/sources.md summarises it):

* 03.1 ``approx_tokens(messages)``: the characters / 4 budget estimate;
* 03.2 ``mask_old_observations(messages, keep=4)``: keep the newest ``keep`` tool results
  verbatim, replace the content of older ones with a one-line placeholder;
* 03.3 ``should_mask(messages, threshold_tokens=8000)``: the trigger.

Messages are plain Anthropic ``MessageParam`` dicts, oldest first::

    {"role": "user" | "assistant", "content": str | list[block]}
    {"type": "text", "text": str}
    {"type": "tool_use", "id": str, "name": str, "input": dict}
    {"type": "tool_result", "tool_use_id": str, "content": str | list[block],
     "is_error": bool (optional)}

Grade with ``mini-agent grade 03`` (or the grade cell of the notebook). The kit's own version
is ``mini_agent.core.masking``; read it after you pass, not before.
"""

from __future__ import annotations

import json
import math

PLACEHOLDER = "[observation masked — {lines} lines omitted]"
"""The placeholder text; ``PLACEHOLDER.format(lines=7)`` (the dash is an em dash, U+2014)."""


def approx_tokens(messages: list[dict]) -> int:
    """Estimate the tokens of a history: ``ceil(chars / 4)``.

    Count these characters: a string ``content``: its length; a text block: ``len(text)``;
    a tool_use block: ``len(json.dumps(input)) + len(name) + 20``; a tool_result block: the
    length of its content when it is a string, else the lengths of its text parts (image
    parts count 0 here). Other blocks count 0.
    Returns: int tokens. Example: ``approx_tokens([{"role": "user", "content": "hello"}]) == 2``.
    Source: approxTokens in seed 000 (see docs/sources.md).
    """
    # BEGIN SOLUTION
    chars = 0
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            chars += len(content)
            continue
        for block in content:
            if block["type"] == "text":
                chars += len(block["text"])
            elif block["type"] == "tool_use":
                chars += len(json.dumps(block["input"])) + len(block["name"]) + 20
            elif block["type"] == "tool_result":
                result = block.get("content", "")
                if isinstance(result, str):
                    chars += len(result)
                else:
                    chars += sum(len(part["text"]) for part in result if part["type"] == "text")
    return math.ceil(chars / 4)
    # END SOLUTION


def mask_old_observations(messages: list[dict], keep: int = 4) -> list[dict]:
    """Return a NEW history where all but the newest ``keep`` tool results are masked.

    A masked tool_result keeps every key (``tool_use_id``, ``is_error``...) and gets
    ``"content": PLACEHOLDER.format(lines=N)``, where N is the number of lines of its text
    (``text.count("\\n") + 1``; for list content, the text parts joined with ``""``).
    Assistant messages and user text are never changed. The input list, its messages and
    their blocks must not be mutated.
    Raises: ValueError if keep < 0.
    Source: maskOldObservations in seed 000 (see docs/sources.md).
    """
    # BEGIN SOLUTION
    if keep < 0:
        raise ValueError(f"keep must be >= 0, got {keep}")
    positions = []  # (message index, block index), newest first
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if message["role"] != "user" or isinstance(message["content"], str):
            continue
        for j in range(len(message["content"]) - 1, -1, -1):
            if message["content"][j]["type"] == "tool_result":
                positions.append((i, j))
    result = [dict(m) for m in messages]
    for i, j in positions[keep:]:
        block = messages[i]["content"][j]
        content = block.get("content", "")
        if not isinstance(content, str):
            content = "".join(p["text"] for p in content if p["type"] == "text")
        if result[i]["content"] is messages[i]["content"]:
            result[i]["content"] = list(messages[i]["content"])
        result[i]["content"][j] = {**block,
                                   "content": PLACEHOLDER.format(lines=content.count("\n") + 1)}
    return result
    # END SOLUTION


def should_mask(messages: list[dict], threshold_tokens: int = 8_000) -> bool:
    """Return True when the history is big enough to mask: ``approx_tokens > threshold_tokens``.

    Source: ``approxTokens(history) > MASK_THRESHOLD_TOKENS`` in seed 000 (see
    docs/sources.md).
    """
    # BEGIN SOLUTION
    return approx_tokens(messages) > threshold_tokens
    # END SOLUTION
