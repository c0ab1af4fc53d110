# Generated from solutions/03_masking.py by `mini-agent make-exercises`.
# Replace each `raise NotImplementedError(...)` with your code, then run
# `mini-agent grade 03`. `mini-agent make-exercises` keeps your edits;
# only `--force` resets this file to the stubs.
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
    {"type": "thinking", "thinking": str, "signature": str}
    {"type": "image", "source": {"type": "base64", "media_type": str, "data": str}}
    {"type": "tool_use", "id": str, "name": str, "input": dict}
    {"type": "tool_result", "tool_use_id": str, "content": str | list[text or image block],
     "is_error": bool (optional)}

One assistant message may hold several ``tool_use`` blocks; their results then come together
in the next user message, one ``tool_result`` block each.

Grade with ``mini-agent grade 03`` (or the grade cell of the notebook). The kit's own version
is ``mini_agent.core.masking``; read it after you pass, not before.
"""

from __future__ import annotations

import json
import math

from mini_agent import image_tokens

PLACEHOLDER = "[observation masked — {lines} lines omitted]"
"""The placeholder text; ``PLACEHOLDER.format(lines=7)`` (the dash is an em dash, U+2014)."""


def approx_tokens(messages: list[dict]) -> int:
    """Estimate the tokens of a history: ``ceil(chars / 4)``, plus the tokens of its images.

    Count these characters: a string ``content``: its length; a text block: ``len(text)``;
    a thinking block: ``len(thinking)``; a redacted_thinking block: ``len(data)``; a tool_use
    block: ``len(json.dumps(input, ensure_ascii=False)) + len(name) + 20`` (the JSON as the
    seed's ``JSON.stringify`` writes it: ``"設計"`` counts 4, not the 14 of its ``\\u``
    escapes); a tool_result block: its content when it is a string, else its parts, each
    counted as the blocks above. Other blocks count 0 characters. An image block, in a
    message or in a tool_result's list content, adds ``image_tokens(block)`` tokens (given:
    its pixel size / 750), after the rounding of the characters.
    Returns: int tokens. Example: ``approx_tokens([{"role": "user", "content": "hello"}]) == 2``.
    Source: approxTokens of the masking article ("Mini Claude Code, Episode 04", seed 000;
    see docs/sources.md in the kit); images as in the kit's ``mini_agent.core.tokens``.
    """
    raise NotImplementedError("Exercise 03.1")


def mask_old_observations(messages: list[dict], keep: int = 4) -> list[dict]:
    """Return a NEW history where all but the newest ``keep`` tool results are masked.

    Tool results are counted one by one, wherever they are (several may share one user
    message): the newest ``keep`` of them, counting from the end of the history, stay
    verbatim. A masked tool_result keeps every key (``tool_use_id``, ``is_error``...) and gets
    ``"content": PLACEHOLDER.format(lines=N)``, where N is the number of lines of its text
    (``text.count("\\n") + 1``, only ``"\\n"`` ends a line; for list content, the text parts
    joined with ``""``). Assistant messages, user text (string content or text blocks) and
    the order of blocks are never changed. Returns a new list of the same length; the input
    list, its messages and their blocks must not be mutated.
    (The kit's own version also leaves alone a result that is already a placeholder or is
    shorter than one; you need not.)
    Raises: ValueError if keep < 0.
    Source: maskOldObservations of the masking article ("Mini Claude Code, Episode 04",
    seed 000; see docs/sources.md in the kit).
    """
    raise NotImplementedError("Exercise 03.2")


def should_mask(messages: list[dict], threshold_tokens: int = 8_000) -> bool:
    """Return True when the history is big enough to mask: ``approx_tokens > threshold_tokens``.

    Source: ``approxTokens(history) > MASK_THRESHOLD_TOKENS`` in the masking article ("Mini
    Claude Code, Episode 04", seed 000; see docs/sources.md in the kit).
    """
    raise NotImplementedError("Exercise 03.3")
