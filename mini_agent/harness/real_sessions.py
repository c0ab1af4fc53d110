"""Where real sessions come from: ``../shared/data`` if it is there, else a generated one.

The real public transcripts live outside the repository, in ``../shared/data`` (a folder kept
beside the clone; see the README). A plain clone, Binder or a JupyterHub does not have it, so
nothing may depend on it: every notebook section, benchmark and test that reads a real session
goes through :func:`real_or_generated`, which falls back to a kit-generated long session
(:func:`mini_agent.core.sample_sessions.sample_transcript`, Claude Code's format, its usage the
kit's own count) and says so, with the line that points the same cell at one's own Claude Code
sessions in ``~/.claude/projects``.

This is the one module that reads ``MINI_AGENT_SHARED_DATA`` (a folder; set it to use another
copy of the data, or to a missing folder to run as if there were none). IO: reads the
environment, the file system and one transcript file.

Source:
    the repository README (the shared data folder beside the clone); Claude Code's session
    transcripts (JSONL files in ``~/.claude/projects``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mini_agent.core.sample_sessions import sample_transcript
from mini_agent.core.transcripts import Transcript
from mini_agent.harness.transcript_files import load

SHARED_DATA_ENV_VAR = "MINI_AGENT_SHARED_DATA"
PACKAGE_PARENT = Path(__file__).resolve().parents[2]
"""The folder above the installed package: the clone, for an editable install."""
CLAUDE_PROJECTS = Path("~/.claude/projects")
"""Where Claude Code keeps its session transcripts (one folder per project, JSONL files)."""
GENERATED_STEPS = 60
"""Tool exchanges of the generated fallback session (61 requests, about 40,000 tokens)."""


def repo_root(start: str | Path | None = None) -> Path:
    """Find the kit repository in use.

    It is the nearest folder at or above ``start`` holding both ``notebooks/`` and
    ``exercises/``, else the folder above the installed package.

    Args:
        start: where to begin the walk up (default: the current directory; a notebook runs
            in ``notebooks/``).
    Returns:
        An absolute path (it may not be a repository for a non-editable install run elsewhere).
    """
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "notebooks").is_dir() and (folder / "exercises").is_dir():
            return folder
    return PACKAGE_PARENT


def shared_data_dir(start: str | Path | None = None) -> Path:
    """Locate the folder of real transcripts; it may not exist.

    Args:
        start: where :func:`repo_root` begins its walk up (default: the current directory).

    Returns:
        ``$MINI_AGENT_SHARED_DATA`` (``~`` expanded) when set and not blank, else
        ``shared/data`` beside the repository.
    """
    configured = os.environ.get(SHARED_DATA_ENV_VAR, "").strip()
    if configured:
        return Path(configured).expanduser()
    return repo_root(start).parent / "shared" / "data"


def own_sessions(limit: int = 5) -> list[Path]:
    """List your newest Claude Code sessions (``~/.claude/projects/*/*.jsonl``).

    Args:
        limit: how many files at most (default 5).

    Returns:
        The paths, newest modification time first; ``[]`` when the folder does not exist.
    """
    folder = CLAUDE_PROJECTS.expanduser()
    if not folder.is_dir():
        return []
    files = sorted(folder.glob("*/*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    return files[:limit]


@dataclass(frozen=True)
class Session:
    """A session to study and where it came from.

    Attributes:
        transcript: the loaded :class:`~mini_agent.core.transcripts.Transcript`.
        path: the file read (None for a generated session).
        generated: True when the kit generated it because the file was not there.
        note: one paragraph to print: what was loaded, and for a generated session why and
            how to use a real one.
    """

    transcript: Transcript
    path: Path | None
    generated: bool
    note: str

    @property
    def title(self) -> str:
        """A chart title: "A real Claude Code session" or "A kit-generated session"."""
        return "A kit-generated session" if self.generated else "A real Claude Code session"


def real_or_generated(name: str | Path, *, steps: int = GENERATED_STEPS,
                      **load_options: str) -> Session:
    """Load a real session, or generate a long one when the file is not there.

    Args:
        name: a path relative to the shared data folder
            (``"claude-code/entire-sonnet45-lint-fix.jsonl"``), or an absolute path to any
            transcript file (``"~/.claude/projects/<project>/<session>.jsonl"``; ``~`` is
            expanded). A relative path is always taken from the shared data folder.
        steps: tool exchanges of the generated session (default ``GENERATED_STEPS`` = 60).
        load_options: passed to :func:`mini_agent.harness.transcript_files.load`
            (``text_actions="tools"``...).
    Returns:
        A :class:`Session`; its ``note`` says which it is.
    Raises:
        TranscriptError: the file exists but cannot be read as a transcript.
    """
    given = Path(name).expanduser()
    path = given if given.is_absolute() else shared_data_dir() / given
    if path.is_file():
        return Session(load(path, **load_options), path, False,
                       f"Real session: {path}")
    own = own_sessions(1)
    example = own[0] if own else CLAUDE_PROJECTS / "<project>" / "<session>.jsonl"
    where = (f"{SHARED_DATA_ENV_VAR} points at a folder without it"
             if os.environ.get(SHARED_DATA_ENV_VAR, "").strip() else
             f"no shared data folder beside the repository; set {SHARED_DATA_ENV_VAR} to point "
             f"at one")
    note = (f"{path} is not here ({where}), so this is a KIT-GENERATED session of {steps} "
            f"tool exchanges, not a recording: its usage is the kit's own count.\n"
            f"To study one of your own Claude Code sessions instead, run this cell with\n"
            f"    real_or_generated(\"{example}\")")
    return Session(sample_transcript(steps), None, True, note)
