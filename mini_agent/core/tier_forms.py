"""What one exchange becomes in each cooling tier of the lifecycle: Warm-A, Warm-B, Cold.

What this module does: builds, for one exchange (an assistant message and what answers it),
its Warm-A form (tool results masked, reasoning kept), its Warm-B form (the one timeline
line) and its Cold form (the cold index entry), each with its approx tokens, and names
segments (``seg-047``). What it does not do: pick tiers or assemble the view
(``core/lifecycle.py``), or remember the forms between requests (``core/exchange_memo.py``
keeps them per exchange). Pure; inputs never mutated. Taught in
``notebooks/08_context_lifecycle.ipynb``.

Source: 003_85ccd58041fa7231.txt (four tiers, timeline line, cold index of ``id + label``);
Warm-A is ``masking.mask_old_observations`` (seed 000).
"""

from __future__ import annotations

import math

from mini_agent.core.mask_placeholder import masked_block
from mini_agent.core.messages import Message
from mini_agent.core.timeline import _fold, cold_label, fold_exchange  # noqa: F401
from mini_agent.core.tokens import (CHARS_PER_TOKEN, _block_chars, _message_chars, approx_tokens,
                                   session_memo)

__all__ = ["COLD", "COLD_INDEX_HEADER", "HOT", "TIERS", "TIMELINE_HEADER", "WARM_A", "WARM_B",
           "cold_form", "segment_id", "warm_a_counted", "warm_a_form", "warm_b_form"]

HOT, WARM_A, WARM_B, COLD = "hot", "warm_a", "warm_b", "cold"
TIERS = (HOT, WARM_A, WARM_B, COLD)
TIMELINE_HEADER = "[Timeline of earlier exchanges, oldest first]"
COLD_INDEX_HEADER = ("[Cold segments: out of this view, stored verbatim; call "
                     "recall_segment with an id to reheat one]")


def segment_id(number: int) -> str:
    """Name the segment of a 1-based exchange number.

    Args:
        number: the exchange's position, 1 for the oldest.

    Returns:
        ``seg-NNN``, zero-padded to three digits: ``segment_id(47) == "seg-047"``.
    """
    return f"seg-{number:03d}"


def warm_a_form(part: list[Message]) -> tuple[list[Message], int, tuple[int, int]]:
    """Return an exchange as Warm-A holds it: every tool result masked, reasoning kept.

    Equal to ``masked = mask_old_observations(part, keep=0)`` with the counts
    ``exchange_memo.chars_of(masked)`` (``tests/test_tier_forms.py`` compares the two), made in
    one pass: the masked exchange's counts are the original's (remembered inside a token
    memo) minus, per masked result, its block's counts plus its placeholder's length (a
    message's counts are the sum of its blocks').

    Args:
        part: the exchange's messages; never mutated.

    Returns:
        ``(masked messages, their approx tokens, (chars, image tokens))``; unchanged messages
        are ``part``'s own objects, masked results the token memo's shared copies.
    """
    chars = images = 0
    for message in part:
        c, im = _message_chars(message)
        chars, images = chars + c, images + im
    return warm_a_counted(part, chars, images)


def warm_a_counted(part: list[Message], chars: int, images: int
                   ) -> tuple[list[Message], int, tuple[int, int]]:
    """:func:`warm_a_form` of an exchange whose counts are known: ``warm_a_form(part)``.

    For a caller that already holds ``(chars, images) == exchange_memo.chars_of(part)`` (the
    session scan's prefix sums): the messages are not counted again
    (``tests/test_tier_forms.py`` compares the two).

    Args:
        part: the exchange's messages; never mutated.
        chars: the characters of ``part``, as ``approx_tokens`` counts them.
        images: its image tokens.

    Returns:
        The same as :func:`warm_a_form`.
    """
    memo = session_memo()
    masked = []
    for message in part:
        content = message.get("content")
        if message.get("role") == "user" and content and not isinstance(content, str):
            copy = None
            for j, block in enumerate(content):
                if block.get("type") != "tool_result":
                    continue
                replacement = masked_block(block, memo)
                if replacement is None:  # already a placeholder, or shorter than one
                    continue
                if copy is None:
                    copy = list(content)
                copy[j] = replacement
                block_chars, block_images = _block_chars(block)
                chars += len(replacement["content"]) - block_chars
                images -= block_images
            if copy is not None:
                message = {**message, "content": copy}
        masked.append(message)
    return masked, math.ceil(chars / CHARS_PER_TOKEN) + images, (chars, images)


def warm_b_form(part: list[Message], k: int, time_seconds: float) -> tuple[str, int]:
    """Return an exchange as Warm-B holds it: its one timeline line.

    Args:
        part: the exchange's messages; never mutated.
        k: the exchange's 0-based position (segment ``seg-{k + 1:03d}``).
        time_seconds: when the exchange started, Unix seconds (printed as UTC ``HH:MM``).

    Returns:
        ``(fold_exchange line, its approx tokens)``.
    """
    # ``fold_exchange``'s line, computed: whoever keeps this form per exchange (the
    # lifecycle's exchange memo) has no use for the token memo's copy of the line
    line = _fold(part, segment_id(k + 1), time_seconds)
    return line, math.ceil(len(line) / CHARS_PER_TOKEN)  # approx_tokens(line)


def cold_form(part: list[Message], k: int) -> tuple[str, str, str, int]:
    """Return an exchange as the cold index names it.

    Args:
        part: the exchange's messages; never mutated.
        k: the exchange's 0-based position (segment ``seg-{k + 1:03d}``).

    Returns:
        ``(segment id, cold_label, "<segment>: <label>" index entry, its approx tokens)``.
    """
    segment, label = segment_id(k + 1), cold_label(part)
    entry = f"{segment}: {label}"
    return segment, label, entry, approx_tokens(entry)
