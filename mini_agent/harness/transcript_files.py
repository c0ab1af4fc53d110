"""Read a transcript file from disk and parse it (the parsing itself is pure, in core).

``load(path)`` reads the file (:func:`read_text`) and hands its text to
:func:`mini_agent.core.transcripts.parse_text`. IO: one file read.
Taught in ``notebooks/03_observation_masking.ipynb`` and ``notebooks/11_evaluating_policies.ipynb``.

Source:
    real transcripts described in ``../shared/data/README.md``: Claude Code session JSONL,
    mini-swe-agent and SWE-agent trajectories (the formats ``core/transcripts`` tells apart).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Literal

from mini_agent.core.transcripts import Transcript, TranscriptError, parse_text

__all__ = ["load", "read_text"]

_MISSING_ERRNOS = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)
"""The stat errors ``pathlib`` reads as "no such file" (``is_dir()`` and ``is_file()`` False)."""


def load(path: str | Path, *, compaction: Literal["restart", "full"] = "restart",
         thinking: Literal["keep", "drop"] = "keep",
         text_actions: Literal["keep", "tools"] = "keep") -> Transcript:
    """Read a transcript file (any supported format) into a :class:`Transcript`.

    Args:
        path: the transcript file, read as UTF-8.
        compaction: Claude Code only: ``"restart"`` (default) starts the history at the last
            compaction summary, ``"full"`` loads what came before it too.
        thinking: ``"keep"`` (default), or ``"drop"`` to remove every thinking block
            (reported).
        text_actions: ``"tools"`` turns text-format actions (mini-swe-agent's fenced command,
            SWE-agent's ``action`` field) into a ``tool_use`` named ``"bash"`` answered by a
            ``tool_result`` holding the next observation (reported); ``"keep"`` (default)
            leaves them as plain text.

    Returns:
        The parsed :class:`Transcript`, its ``path`` set.

    Raises:
        TranscriptError: a directory or missing file, a file that cannot be read as UTF-8,
            an unknown format, or an unrepairable history.
    """
    path = Path(path)
    # one stat answers what ``path.is_dir()`` then ``path.is_file()`` would (each a stat of
    # its own; both are False for a missing path and raise any other stat error)
    try:
        mode = os.stat(path).st_mode
    except OSError as err:
        if err.errno not in _MISSING_ERRNOS:
            raise
        mode = 0
    except ValueError:   # an embedded null byte: pathlib's answer is False too
        mode = 0
    if stat.S_ISDIR(mode):
        raise TranscriptError(f"{path} is a directory; pass one transcript file")
    if not stat.S_ISREG(mode):
        raise TranscriptError(f"no such file: {path}")
    try:
        text = read_text(path)
    except UnicodeDecodeError as err:
        raise TranscriptError(
            f"cannot read {path}: not UTF-8 text (byte 0x{err.object[err.start]:02x} at offset "
            f"{err.start}); a transcript is a UTF-8 text file (JSON or JSON lines)") from err
    except OSError as err:
        raise TranscriptError(f"cannot read {path}: {err}") from err
    return parse_text(text, name=path.name, path=path, compaction=compaction,
                      thinking=thinking, text_actions=text_actions)


def read_text(path: Path) -> str:
    """Read a file as ``open(path, encoding="utf-8").read()`` reads it, with less machinery.

    The bytes are read and decoded in one call each; then a carriage return and line feed,
    or a lone carriage return, becomes a line feed: what text mode's universal newlines do
    when the whole file is read at once (``tests/test_transcript_files.py`` compares the
    two, errors included). About 20,000 instructions less per file than a text-mode file.

    Args:
        path: the file.

    Returns:
        The file's text, newlines translated.

    Raises:
        UnicodeDecodeError: the bytes are not UTF-8 (its offsets count from the file's start).
        OSError: the file cannot be read.
    """
    with open(path, "rb") as handle:
        text = handle.read().decode("utf-8")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text
