"""The shared intermediate form of every transcript reader: a message under construction.

Each reader (:mod:`.claude_code`, :mod:`.chat`, and this kit's own session log in
:mod:`mini_agent.core.transcripts`) turns a file into a list of :class:`MessageDraft`: a role,
content blocks, and the line or message numbers they came from, so that every repair in
:mod:`.repair` can say where it changed the file. Also holds :class:`TranscriptError`,
the one error every reader raises, and the small formatters of those positions.

Does not read files, detect formats or repair anything. Part of
``notebooks/03_observation_masking.ipynb`` (loading real transcripts).

Source:
    the kit's own intermediate form; positions as the file formats number them (JSONL lines
    1-based, chat list indexes).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from typing import Any

from mini_agent.core.messages import Block


class TranscriptError(ValueError):
    """A file is missing, not a transcript, or cannot be turned into a valid history."""


@dataclasses.dataclass
class MessageDraft:
    """A message under construction: blocks plus where they came from and the API usage.

    ``time``: Unix seconds the file records for this message (the latest part's, once parts
    are merged), or None when it records none.
    """

    role: str
    blocks: list[Block]
    unit: str  # "line" (JSONL, 1-based) or "messages" (index into a chat list)
    positions: list[int]
    usage: dict | None = None
    msg_id: str | None = None
    time: float | None = None

    def copied(self) -> MessageDraft:
        """Copy the draft with new ``blocks`` and ``positions`` lists (the blocks are shared).

        Returns:
            ``dataclasses.replace(self, blocks=list(self.blocks),
            positions=list(self.positions))``, built directly (``replace`` costs several
            microseconds per call; ``tests/test_transcripts.py`` checks the two agree).
        """
        return MessageDraft(self.role, list(self.blocks), self.unit, list(self.positions),
                            self.usage, self.msg_id, self.time)

    @property
    def where(self) -> str:
        """``"line 5"``, ``"lines 5-8, 11"``, ``"messages[3]"`` or ``"messages[3-4]"``."""
        if not self.positions:
            return self.unit
        ranges = format_ranges(self.positions)
        if self.unit == "messages":
            return f"messages[{ranges}]"
        return f"line{'s' if len(self.positions) > 1 else ''} {ranges}"


def format_ranges(numbers: list[int]) -> str:
    """Format numbers as ranges: ``[5, 6, 7, 9]`` -> ``"5-7, 9"``.

    Args:
        numbers: line or message numbers, in any order, duplicates allowed.

    Returns:
        Sorted ranges without duplicates, comma-separated.
    """
    out: list[str] = []
    for x in sorted(set(numbers)):
        if out and x == end + 1:
            end = x
            out[-1] = f"{start}-{end}"
        else:
            start = end = x
            out.append(str(x))
    return ", ".join(out)


def content_blocks(content: Any) -> list[Block]:
    """Copy a message's content as a list of blocks.

    Args:
        content: a string or a list of blocks.

    Returns:
        A new list of shallow-copied blocks; a string becomes one text block, anything else [].
    """
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [dict(b) if isinstance(b, dict) else {"type": "text", "text": str(b)}
                for b in content]
    return []


def owned_blocks(content: Any) -> list[Block]:
    """:func:`content_blocks` for content the caller hands over: its block dicts are taken.

    The loader parses each file's entries itself and drops them once the drafts are built,
    so nothing else holds the block dicts and a copy of each (``dict(b)``) would only cost
    time. The result equals ``content_blocks(content)`` (``tests/test_transcripts.py``
    compares the two); a plain dict block is the same object instead of a copy.

    Args:
        content: a string or a list of blocks, no longer used by the caller.

    Returns:
        A new list of the blocks (a string becomes one text block, anything else []).
    """
    if type(content) is list:
        return [b if type(b) is dict else dict(b) if isinstance(b, dict)
                else {"type": "text", "text": str(b)} for b in content]
    return content_blocks(content)


def seconds(value: Any) -> float | None:
    """Read a recorded time as Unix seconds.

    Args:
        value: a finite number (an integer beyond 2**53 is not a time), or an ISO 8601 string
            (without a zone: UTC).

    Returns:
        The time in seconds, or None for anything else: ``seconds("1970-01-01T00:01:00.5Z") ==
        60.5``.
    """
    if isinstance(value, str):  # the usual time, an ISO string: asked first
        try:
            when = _from_iso(value)
        except ValueError:
            return None
        if when.tzinfo is None:  # no zone: UTC
            when = when.replace(tzinfo=_UTC)
        return when.timestamp()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, int) and not isinstance(value, bool):
        # JSON integers have no bound: 10**400 overflows a float, so it is "no time"
        return float(value) if abs(value) <= 2 ** 53 else None
    return None


_from_iso = dt.datetime.fromisoformat
_UTC = dt.timezone.utc


def format_span(numbers: list[Any], limit: int = 8) -> str:
    """List numbers for a repair message, long lists cut: ``[3, 5, 9]`` -> ``"3, 5, 9"``.

    Args:
        numbers: the numbers, in the order given.
        limit: how many are shown before ``... (N in all)`` (default 8).

    Returns:
        The comma-separated list.
    """
    shown = ", ".join(str(x) for x in numbers[:limit])
    return shown + (f", ... ({len(numbers)} in all)" if len(numbers) > limit else "")
