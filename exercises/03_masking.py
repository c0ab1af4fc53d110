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
    raise NotImplementedError("Exercise 03.1")


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
    raise NotImplementedError("Exercise 03.2")


def should_mask(messages: list[dict], threshold_tokens: int = 8_000) -> bool:
    """Return True when the history is big enough to mask: ``approx_tokens > threshold_tokens``.

    Source: ``approxTokens(history) > MASK_THRESHOLD_TOKENS`` in seed 000 (see
    docs/sources.md).
    """
    raise NotImplementedError("Exercise 03.3")
