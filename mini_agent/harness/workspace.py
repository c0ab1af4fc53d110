"""The folder the agent's tools are confined to: path checks, the ignore list, the output cap.

:class:`Workspace` resolves every path the model gives against its root and refuses what
leaves it (``..``, absolute paths elsewhere, symlinks pointing out); it hides ignored entries
(``.git``, ``*.bak``, caches: the ``.bak`` files edit_file leaves would otherwise pollute
list_dir, grep and glob, the pitfall of seed 000_86e3ff2076a5ae37.txt); it scrubs its own
absolute path from command output and cuts any observation to ``max_output_chars`` with a
marker such as ``[... truncated: 12,345 more characters]``. :class:`ToolError` is a failure
meant for the model. The tools themselves are in :mod:`mini_agent.harness.file_tools` and
:mod:`mini_agent.harness.bash_tool`; :mod:`mini_agent.harness.tools` puts them together.

IO: the file system (paths only; reading and writing is the tools'). Taught in
``notebooks/01_agent_loop.ipynb``.

Source:
    000_86e3ff2076a5ae37.txt (the tools of episodes 01-03; ``.bak`` files polluting list_dir:
    the workspace ignore list); 004_b74ef821c58ee4ec.txt (context pollution rules).
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import threading
import time
from pathlib import Path

DEFAULT_IGNORE: tuple[str, ...] = (
    ".git", "*.bak", "__pycache__", "*.pyc", ".pytest_cache", ".mypy_cache", ".ruff_cache",
    ".hypothesis", ".ipynb_checkpoints", ".venv", "node_modules", ".DS_Store",
)
"""Glob patterns matched against every path component; a match hides the entry from
list_dir, grep and glob (read_file and edit_file still reach it by name)."""

DEFAULT_MAX_OUTPUT_CHARS = 16_000
"""Cap on one observation in characters (about 4,000 approx tokens)."""

DEFAULT_BASH_TIMEOUT_SECONDS = 30.0
"""Default ``run_bash`` timeout (seconds)."""


class ToolError(Exception):
    """A tool failure meant for the model: the message says what went wrong and what to do."""



class Workspace:
    """A directory the tools are confined to, with an ignore list and an output cap.

    Args:
        root: the workspace directory (must exist); symlinks in it are resolved.
        ignore: glob patterns matched against each path component (default DEFAULT_IGNORE).
        max_output_chars: cap per observation in characters (default 16,000).
        bash_timeout_seconds: default run_bash timeout in seconds (default 30).

    Raises:
        ToolError: ``root`` is not a directory.
        ValueError: ``max_output_chars`` < 1.
    """

    def __init__(self, root: str | os.PathLike[str], *, ignore: tuple[str, ...] = DEFAULT_IGNORE,
                 max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
                 bash_timeout_seconds: float = DEFAULT_BASH_TIMEOUT_SECONDS) -> None:
        given = Path(root).expanduser().absolute()
        if not given.is_dir():
            raise ToolError(f"workspace {root!s} is not a directory")
        if max_output_chars < 1:
            raise ValueError("max_output_chars must be >= 1")
        self.root = given.resolve()
        self._spellings = sorted({str(given), str(self.root)}, key=len, reverse=True)
        self.ignore = tuple(ignore)
        # one compiled test of a name against every pattern (fnmatch's own translation)
        self._ignore_regex = (re.compile("|".join(fnmatch.translate(os.path.normcase(p))
                                                  for p in self.ignore)) if self.ignore else None)
        self.max_output_chars = max_output_chars
        self.bash_timeout_seconds = bash_timeout_seconds

    def resolve(self, path: str) -> Path:
        """Resolve a path the model gave against the root, refusing what leaves it.

        Args:
            path: relative to the root, or absolute inside it.

        Returns:
            The resolved absolute path (symlinks followed), inside the root.

        Raises:
            ToolError: ``path`` is not a non-empty string, contains a NUL byte, cannot be
                resolved (a symlink loop), or resolves outside the workspace (``..``, an
                absolute path elsewhere, or a symlink pointing out).
        """
        if not isinstance(path, str) or not path.strip():
            raise ToolError("path must be a non-empty string relative to the workspace root")
        if "\0" in path:
            raise ToolError(f"path {path!r} contains a NUL byte; pass a plain relative path")
        try:
            target = (self.root / path).resolve()
        except (RuntimeError, OSError) as exc:  # a symlink loop (RuntimeError before 3.13)
            raise ToolError(f"path {path!r} cannot be resolved: {exc}") from None
        if target != self.root and not target.is_relative_to(self.root):
            raise ToolError(f"path {path!r} is outside the workspace; use a path relative to "
                            "the workspace root (e.g. 'src/app.py')")
        return target

    def relative(self, path: Path) -> str:
        """Express a path inside the workspace relative to its root.

        Args:
            path: an absolute path inside the root.

        Returns:
            The path relative to the root in POSIX form (``"."`` for the root itself).
        """
        rel = Path(path).relative_to(self.root).as_posix()
        return rel or "."

    def is_ignored(self, path: Path) -> bool:
        """Tell whether the ignore list hides a path.

        Args:
            path: an absolute path inside the root.

        Returns:
            True if any component of ``path`` relative to the root matches a pattern of
            ``ignore``.
        """
        return any(map(self.name_ignored, Path(path).relative_to(self.root).parts))

    def name_ignored(self, name: str) -> bool:
        """Tell whether one path component matches a pattern of ``ignore``.

        Within a folder that is not ignored, an entry is ignored exactly when its own name
        matches, so a listing tests names alone: one compiled regex per name costs about a
        twentieth of :meth:`is_ignored` on the whole path (which a folder of 200,000 entries
        pays 200,000 times).

        Args:
            name: one file or folder name.

        Returns:
            True when ``name`` matches a pattern (``fnmatch`` rules, case folded as the OS
            folds it).
        """
        return (self._ignore_regex is not None
                and self._ignore_regex.match(os.path.normcase(name)) is not None)

    def scrub(self, text: str) -> str:
        """Remove the workspace's absolute path from ``text`` so observations stay portable.

        ``<root>/`` is dropped (leaving a relative path) and a bare ``<root>`` becomes
        ``"."``, for both the given and the resolved spelling of the root.

        Args:
            text: command output.

        Returns:
            The text without the root's absolute path.
        """
        for spelling in self._spellings:
            text = text.replace(spelling + os.sep, "").replace(spelling, ".")
        return text

    def cap(self, text: str) -> str:
        """Cut an observation to the output cap.

        Args:
            text: the observation.

        Returns:
            ``text`` unchanged when it has at most ``max_output_chars`` characters, else its
            first ``max_output_chars`` characters and a ``[... truncated: N more characters]``
            line.
        """
        if len(text) <= self.max_output_chars:
            return text
        rest = len(text) - self.max_output_chars
        return f"{text[:self.max_output_chars]}\n[... truncated: {rest:,} more characters]"

    def walk_files(self, start: Path, *, deadline: float | None = None,
                   stop: threading.Event | None = None) -> list[Path]:
        """List the files a search visits.

        Args:
            start: a file (returned alone, even if ignored) or a directory, walked
                recursively without descending into ignored folders.
            deadline: a ``time.monotonic()`` value after which the listing stops (None, the
                default: no limit), so a tree of a million entries cannot hold the caller
                past its time limit.
            stop: an event that stops the listing when set (None: none), checked as often
                as ``deadline``: the tool call's cancel event, so an interrupt stops it.

        Returns:
            The non-ignored regular files inside the root (no FIFO, socket or device: reading
            one could block), sorted by their relative path.

        Raises:
            ListingStopped: ``deadline`` passed, or ``stop`` was set, before the listing
                ended; ``listed`` holds how many files were found by then, ``interrupted``
                tells the two apart.
        """
        if start.is_file():
            return [start]
        found: list[Path] = []

        def check() -> None:
            if stop is not None and stop.is_set():
                raise ListingStopped(len(found), interrupted=True)
            if deadline is not None and time.monotonic() > deadline:
                raise ListingStopped(len(found))
        for dirpath, dirnames, filenames in os.walk(start):
            here = Path(dirpath)
            dirnames[:] = sorted(d for d in dirnames if not self.is_ignored(here / d))
            for k, name in enumerate(sorted(filenames)):
                if k % 64 == 0:
                    check()
                f = here / name
                if not self.is_ignored(f) and inside(f, self.root) and f.is_file():
                    found.append(f)
            check()
        return sorted(found, key=lambda p: self.relative(p))


class ListingStopped(Exception):
    """:meth:`Workspace.walk_files` passed its deadline, or was told to stop, before it ended.

    Args:
        listed: the files found by then.
        interrupted: True when its ``stop`` event was set (an interrupt), False when the
            deadline passed.
    """

    def __init__(self, listed: int, interrupted: bool = False) -> None:
        why = "when told to stop" if interrupted else "at its deadline"
        super().__init__(f"listing stopped {why} after {listed:,} files")
        self.listed = listed
        self.interrupted = interrupted


def inside(path: Path, root: Path) -> bool:
    """Tell whether a path resolves inside a folder.

    Args:
        path: the path to check; symlinks are followed.
        root: the folder, already resolved.

    Returns:
        True if ``path`` resolves inside ``root``; False for a symlink loop or a link that
        cannot be resolved.
    """
    try:
        return path.resolve().is_relative_to(root)
    except (RuntimeError, OSError):
        return False


def _kind(path: Path) -> str:
    """Name what a non-regular, non-directory file is: "a FIFO", "a socket" or "a device"."""
    mode = path.stat().st_mode
    return ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device")


def regular_file(workspace: Workspace, path: str) -> Path:
    """Resolve a path the model gave to a regular file of the workspace.

    Args:
        workspace: the workspace the path is confined to.
        path: the path the model gave.

    Returns:
        The absolute path.

    Raises:
        ToolError: the path is outside, a directory, missing, or not a regular file (a FIFO,
            a socket, a device: opening one could wait for ever).
    """
    target = workspace.resolve(path)
    if target.is_dir():
        raise ToolError(f"{path} is a directory; use list_dir to see its entries")
    if not target.exists():
        raise ToolError(f"file not found: {path}. Use list_dir or glob to find the right path")
    if not target.is_file():  # opening a FIFO would wait for a writer for ever
        raise ToolError(f"{path} is not a regular file ({_kind(target)}); only text files can "
                        "be read or edited")
    return target

