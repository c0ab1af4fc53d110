"""What a masked tool result becomes: the one-line placeholder, and whether masking pays.

Masking (:mod:`mini_agent.core.masking`) replaces an old tool result's content with
``[observation masked — N lines omitted]``. This module holds that text
(:func:`placeholder`), how to recognise it (:func:`is_masked`), how many characters
masking one result saves, and the masked copy of a block, made once per block object inside
a :func:`~mini_agent.core.tokens.token_memo` so equal placeholders are not rebuilt at every
request. :mod:`mini_agent.core.masking` re-exports the public names. Pure: no IO, inputs
never mutated. Taught in ``notebooks/03_observation_masking.ipynb``.
Source: 000_86e3ff2076a5ae37.txt (maskOldObservations: ``[observation masked — ${lines}
lines omitted]``, ``original.split("\n").length``).
"""

from __future__ import annotations

import re

from mini_agent.core.message_parts import tool_result_text
from mini_agent.core.tokens import CHARS_PER_TOKEN, _block_chars, remember

PLACEHOLDER_TEMPLATE = "[observation masked — {lines} lines omitted]"
"""The text that replaces a masked tool result's content (seed 000; the dash is U+2014)."""

_PLACEHOLDER_RE = re.compile(r"\[observation masked — \d+ lines omitted\]")


def placeholder(text: str) -> str:
    """Return the placeholder for an observation whose text is ``text``.

    The line count follows the seed (``original.split("\\n").length``): newlines + 1, so
    ``""`` is 1 line and ``"a\\nb\\n"`` is 3.

    Args:
        text: the observation's text.

    Returns:
        ``[observation masked — N lines omitted]``.

    >>> placeholder("line 1\\nline 2")
    '[observation masked — 2 lines omitted]'
    """
    return PLACEHOLDER_TEMPLATE.format(lines=text.count("\n") + 1)


def is_masked(block: dict) -> bool:
    """Tell whether a ``tool_result`` block's content is already a placeholder.

    Args:
        block: a ``tool_result`` block.

    Returns:
        True when its content is a string in the :func:`placeholder` shape.
    """
    content = block.get("content")
    return isinstance(content, str) and _PLACEHOLDER_RE.fullmatch(content) is not None


def _saved_chars(block: dict) -> int:
    """Char-equivalents masking ``block`` would save (image tokens count 4 chars each).

    Positive only when masking shrinks the estimate; a result shorter than its placeholder
    gives a negative number and is left verbatim.
    """
    if is_masked(block):
        return 0
    chars, images = _block_chars(block)
    return chars + CHARS_PER_TOKEN * images - len(placeholder(tool_result_text(block)))


def masked_block(block: dict, memo: dict | None) -> dict | None:
    """Return the masked copy of a ``tool_result`` block, or None when masking would not pay.

    Inside a token memo the answer is kept per block object (``("masked", id)`` key, block
    held), so a result masked at every request is measured and copied once per session, and
    every view shares the one copy.

    Args:
        block: a ``tool_result`` block; never mutated.
        memo: :func:`~mini_agent.core.tokens.session_memo` (None: compute, keep nothing).

    Returns:
        ``{**block, "content": placeholder(tool_result_text(block))}``, or None when the
        block is already a placeholder or not longer than one (``_saved_chars <= 0``).
    """
    if memo is not None:
        hit = memo.get(("masked", id(block)))
        if hit is not None and hit[0] is block:
            return hit[1]
    masked = None
    content = block.get("content")
    if isinstance(content, str) and block.get("type") == "tool_result":
        # the same test for a string content, inlined: a placeholder opens with "[" (so
        # the pattern is tried on those only), the text is the content and _block_chars is
        # its length
        if content[:1] != "[" or _PLACEHOLDER_RE.fullmatch(content) is None:
            text = PLACEHOLDER_TEMPLATE.format(lines=content.count("\n") + 1)
            if len(content) - len(text) > 0:
                masked = {**block, "content": text}
    elif not is_masked(block):  # _saved_chars(block) > 0, with the placeholder made once
        text = placeholder(tool_result_text(block))
        chars, images = _block_chars(block)
        if chars + CHARS_PER_TOKEN * images - len(text) > 0:
            masked = {**block, "content": text}
    if memo is not None:
        remember(memo, ("masked", id(block)), (block, masked))
    return masked
