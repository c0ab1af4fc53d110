"""Where real sessions come from: ``../shared/data`` if it is there, else a generated one.

The real public transcripts live outside the repository, in ``../shared/data`` (a folder kept
beside the clone; see the README). A plain clone, Binder or a JupyterHub does not have it, so
nothing may depend on it: every notebook section, benchmark and test that reads a real session
goes through :func:`real_or_generated`, which falls back to a kit-generated long session
(:func:`mini_agent.core.sample_sessions.sample_transcript`, Claude Code's format, its usage the
kit's own count) and says so, with the line that points the same cell at one's own Claude Code
sessions in ``~/.claude/projects``.

This is the one module that reads ``MINI_AGENT_SHARED_DATA`` (a folder; set it to use another
copy of the data, or to a missing folder to run as if there were none); a non-editable install
run outside a clone has no folder beside it to look in, and the note of a missing file says so
and names the variable. IO: reads the environment, the file system and one transcript file.

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


def is_clone(folder: Path) -> bool:
    """Tell whether a folder looks like a copy of the kit repository.

    Args:
        folder: the folder to look at.

    Returns:
        True when it holds both ``notebooks/`` and ``exercises/``.
    """
    return (folder / "notebooks").is_dir() and (folder / "exercises").is_dir()


def find_clone(start: str | Path | None = None) -> Path | None:
    """Find the clone of the kit in use, if there is one.

    Args:
        start: where to begin the walk up (default: the current directory; a notebook runs
            in ``notebooks/``).

    Returns:
        The nearest folder at or above ``start`` that :func:`is_clone`, else the folder above
        the installed package when it is one (an editable install), else None (a
        non-editable install run outside any clone: the folder above the package is then
        ``site-packages``).
    """
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents, PACKAGE_PARENT):
        if is_clone(folder):
            return folder
    return None


def repo_root(start: str | Path | None = None) -> Path:
    """Find the kit repository in use.

    It is :func:`find_clone`'s folder, else the folder above the installed package.

    Args:
        start: where to begin the walk up (default: the current directory; a notebook runs
            in ``notebooks/``).
    Returns:
        An absolute path (it may not be a repository for a non-editable install run elsewhere).
    """
    return find_clone(start) or PACKAGE_PARENT


def shared_data_dir(start: str | Path | None = None) -> Path:
    """Locate the folder of real transcripts; it may not exist.

    Args:
        start: where :func:`repo_root` begins its walk up (default: the current directory).

    Returns:
        ``$MINI_AGENT_SHARED_DATA`` (``~`` expanded) when set and not blank, else
        ``shared/data`` beside the repository (for a non-editable install run outside a
        clone, beside ``site-packages``: a folder that never holds the data, see
        :func:`missing_data_reason`).
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
    where = "" if given.is_absolute() else missing_data_reason()
    note = (f"{path} is not here{where}, so this is a KIT-GENERATED session of {steps} "
            f"tool exchanges, not a recording: its usage is the kit's own count.\n"
            f"To study one of your own Claude Code sessions instead, run this cell with\n"
            f"    real_or_generated(\"{example}\")")
    return Session(sample_transcript(steps), None, True, note)


def missing_data_reason(start: str | Path | None = None) -> str:
    """Say where the shared data folder was looked for and how to point the kit at it.

    Args:
        start: where :func:`find_clone` begins its walk up (default: the current directory).

    Returns:
        A parenthesised clause for the note of a missing file, one of three: the variable
        is set (`` (MINI_AGENT_SHARED_DATA points at a folder without it: /data)``); a clone
        was found (the ``shared/data`` folder beside it was looked in; put the data there or
        set the variable); or none was (a non-editable install run outside a clone: the kit
        looked beside its installed package, where no data is kept, and only the variable
        can point it at the data). Each names :data:`SHARED_DATA_ENV_VAR`.
    """
    configured = os.environ.get(SHARED_DATA_ENV_VAR, "").strip()
    if configured:
        return (f" ({SHARED_DATA_ENV_VAR} points at a folder without it: "
                f"{Path(configured).expanduser()}; set it to the folder that holds the data)")
    clone = find_clone(start)
    if clone is not None:
        return (f" (looked in the shared data folder beside the clone {clone}; put the data "
                f"there, or set {SHARED_DATA_ENV_VAR} to the folder that holds it)")
    here = Path(start or Path.cwd()).resolve()
    return (f" (mini-agent is installed in {PACKAGE_PARENT} and no clone of the kit is at or "
            f"above {here}, so that path beside the installed package is only a default, where "
            f"no data is kept; set {SHARED_DATA_ENV_VAR} to the folder that holds the data)")
