"""What failed a check when the graded code raised: the exception, its file and line.

Also how a learner's message or detail is laid out on the text scorecard (at most
:data:`TEXT_LINES` lines). Pure data: no IO here.

Source: the kit's grading design (``docs/grading.md``: the ``raised`` field of a check); no
seed covers grading.
"""

from __future__ import annotations

import dataclasses
from pathlib import PurePath
from typing import Any


TEXT_LINES = 6
"""Most lines of one exception message or failure detail the text scorecard shows."""

def text_lines(text: str, indent: str) -> str:
    """Lay out a message that may hold line breaks under its first line, blank lines dropped.

    An exception message is the learner's: ``"\\n" * 5000`` must not push the checks off
    the screen, and a second line must stay inside the check's block.

    Args:
        text: the message or detail.
        indent: what starts each line after the first (the first line's column).

    Returns:
        Its non-blank lines, at most :data:`TEXT_LINES` (then ``"..."``), joined with
        ``"\\n" + indent``.
    """
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    if len(lines) > TEXT_LINES:
        lines = lines[:TEXT_LINES] + ["..."]
    return ("\n" + indent).join(lines)


@dataclasses.dataclass(frozen=True)
class Raised:
    """Where an exception that failed a check came from: the crash, not a wrong value.

    Args:
        exception: the exception's class name ("TypeError").
        message: its message, cut to the scorecard's detail length ("" when it has none).
        file: absolute path of the graded file whose line raised it (the innermost frame of
            its traceback in that file); "" when no frame of the traceback is in it (the
            check itself, or the kit, raised it on what the code returned).
        line: that line (1-based), or None with ``file`` "".
        code: the text of that line, stripped ("" when unknown).
    """

    exception: str
    message: str = ""
    file: str = ""
    line: int | None = None
    code: str = ""

    @property
    def place(self) -> str:
        """Where it was raised, short.

        Returns:
            ``"03_masking.py, line 58"``, or "" when no line of the graded file is known.
        """
        return f"{PurePath(self.file).name}, line {self.line}" if self.file else ""

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON shape of the exception.

        Returns:
            ``{"exception", "message", "file", "line", "code"}`` (see the module docstring).
        """
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "Raised | None":
        """Rebuild from :meth:`to_dict` (what the grading worker sends).

        Args:
            data: the dict, or None when the check did not fail with an exception.

        Returns:
            The Raised, or None.
        """
        return None if data is None else cls(**data)
