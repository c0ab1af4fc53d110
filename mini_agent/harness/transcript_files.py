"""Read a transcript file from disk and parse it (the parsing itself is pure, in core).

``load(path)`` reads the file and hands its text to
:func:`mini_agent.core.transcripts.parse_text`. IO: one file read.
Taught in ``notebooks/03_observation_masking.ipynb`` and ``notebooks/11_evaluating_policies.ipynb``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from mini_agent.core.transcripts import Transcript, TranscriptError, parse_text

__all__ = ["load"]


def load(path: str | Path, *, compaction: Literal["restart", "full"] = "restart",
         thinking: Literal["keep", "drop"] = "keep",
         text_actions: Literal["keep", "tools"] = "keep") -> Transcript:
    """Read a transcript file (any supported format) into a :class:`Transcript`.

    Args: path: the file; compaction: Claude Code only, ``"restart"`` starts the history at
    the last compaction summary, ``"full"`` loads what came before it too; thinking:
    ``"drop"`` removes every thinking block (reported); text_actions: ``"tools"`` turns
    text-format actions (mini-swe-agent's fenced command, SWE-agent's ``action`` field) into a
    ``tool_use`` named ``"bash"`` answered by a ``tool_result`` holding the next observation
    (reported), ``"keep"`` leaves them as plain text.
    Raises: TranscriptError (missing file, unknown format, unrepairable history).
    """
    path = Path(path)
    if path.is_dir():
        raise TranscriptError(f"{path} is a directory; pass one transcript file")
    if not path.is_file():
        raise TranscriptError(f"no such file: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise TranscriptError(f"cannot read {path}: {err}") from err
    return parse_text(text, name=path.name, path=path, compaction=compaction,
                      thinking=thinking, text_actions=text_actions)
