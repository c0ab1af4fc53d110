"""Which files of the folders given to ``mini-agent evaluate`` are transcripts.

A folder is scanned recursively for the names transcripts have (:data:`SUFFIXES`); a
well-formed ``.json`` of no transcript shape (a ``config.json`` lying in a project folder) is
told apart from a corrupt transcript by the loader's own shape test, so the explorer can skip
the first and report the second. So is a Claude Code ``.jsonl`` that holds no conversation
(only ``summary``, ``file-history-snapshot`` and such entries: Claude Code writes them beside
its sessions in ``~/.claude/projects``): skipped, where a damaged session is reported.

IO: lists folders, reads files.

Source: the file names of Claude Code sessions (``*.jsonl``), mini-swe-agent (``*.traj.json``)
and SWE-agent (``*.traj``) trajectories, as ``core/transcripts`` reads them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from mini_agent.core.transcripts import SKIPPED_ENTRY_TYPES


SUFFIXES = (".jsonl", ".traj.json", ".traj", ".json")
"""File names the explorer picks up inside a folder."""


def transcript_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand folders (recursively) into transcript files, sorted; keep files as given.

    Args:
        paths: files and folders; a folder contributes every file under it whose name ends
            with one of :data:`SUFFIXES` (``manifest.json`` excepted).

    Returns:
        The files, in the order given (each folder's files sorted).

    Raises:
        FileNotFoundError: naming the first path that does not exist, or the first folder
            that holds no transcript file (an empty ``~/.claude/projects`` says so, not
            nothing).
    """
    return [path for path, _ in expand_paths(paths)]


def expand_paths(paths: Iterable[str | Path]) -> list[tuple[Path, Path | None]]:
    """Expand folders like :func:`transcript_files`, remembering where each file came from.

    Args:
        paths: files and folders (see :func:`transcript_files`).

    Returns:
        ``(file, folder)`` pairs in the order of :func:`transcript_files`: ``folder`` is the
        folder given whose scan found the file, None for a file named as such.

    Raises:
        FileNotFoundError: as :func:`transcript_files`.
    """
    out: list[tuple[Path, Path | None]] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file()
                           and p.name.endswith(SUFFIXES) and p.name != "manifest.json")
            if not found:
                raise FileNotFoundError(
                    f"no transcript files ({', '.join('*' + s for s in SUFFIXES)}) under {path}")
            out += [(p, path) for p in found]
        elif path.exists():
            out.append((path, None))
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    return out


def is_foreign_json(path: str | Path) -> bool:
    """Say whether a file is well-formed JSON of no transcript shape (a ``config.json``).

    Only a plain ``.json`` name qualifies (``.traj.json``, ``.traj`` and ``.jsonl`` name
    transcripts, so a bad one is an error); the shape test is the loader's own
    (:func:`mini_agent.core.transcripts.has_transcript_shape`), so what it loads is never skipped. A file
    that is not valid JSON is corrupt, not foreign: False.

    Args:
        path: a file a folder scan found.

    Returns:
        True when the file parses as JSON and the loader knows no format of that shape.
    """
    from mini_agent.core.transcripts import has_transcript_shape
    name = Path(path).name
    if not name.endswith(".json") or name.endswith(".traj.json"):
        return False
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8").removeprefix("\ufeff"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return False
    return not has_transcript_shape(doc, name)


CONVERSATIONLESS_TYPES = frozenset(SKIPPED_ENTRY_TYPES) | {"summary"}
"""Claude Code entry types that carry no message: the loader's skipped entries and the
``summary`` lines Claude Code writes; a file made only of them is no session."""


def is_conversationless_jsonl(path: str | Path) -> bool:
    """Say whether a ``.jsonl`` is Claude Code's but holds no conversation (nothing to replay).

    Every line must be a JSON object whose ``type`` is one of
    :data:`CONVERSATIONLESS_TYPES` (a ``summary`` file, a file of snapshots), and there must
    be at least one. An empty file, a line that is not JSON, a user or assistant entry, an
    unknown type or one that is not a string: False, so a damaged or unknown file is still
    reported.

    Args:
        path: a file a folder scan found.

    Returns:
        True for a ``.jsonl`` made only of entries that carry no message.
    """
    if not Path(path).name.endswith(".jsonl"):
        return False
    try:
        lines = Path(path).read_text(encoding="utf-8").removeprefix("\ufeff").splitlines()
        entries = [json.loads(line) for line in lines if line.strip()]
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return False
    return bool(entries) and all(isinstance(e, dict) and isinstance(e.get("type"), str)
                                 and e["type"] in CONVERSATIONLESS_TYPES for e in entries)
