"""The file tools' bodies: read_file, list_dir, grep, glob, edit_file, over a Workspace.

Each is ``fn(workspace, input) -> str`` and raises :class:`~mini_agent.harness.workspace.ToolError`
with an actionable message when the call cannot be done. Observations are deterministic:
paths relative to the workspace, listings sorted, nothing reports a time. edit_file keeps
the previous version as ``<path>.bak`` (renamed into place, never written through a link
there) and writes CRLF files back as CRLF. read_file and grep, which must stay bounded in
time and memory on hostile files, live in :mod:`mini_agent.harness.read_tool` and
:mod:`mini_agent.harness.grep_tool` and are re-exported here.
:mod:`mini_agent.harness.tools` wraps them into :class:`~mini_agent.harness.tools.Tool` objects.

IO: files. Taught in ``notebooks/01_agent_loop.ipynb`` and ``02_parallel_tools.ipynb``.

Source:
    000_86e3ff2076a5ae37.txt (read_file, list_dir and edits that leave ``.bak`` files,
    episodes 01-03); 002_4516104fd432e704.txt (the Read/Grep/Glob split).
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

from mini_agent.core.edit_reconcile import edit_outcome
from mini_agent.harness import listing
from mini_agent.harness.grep_tool import grep  # re-exported: the file tools in one place
from mini_agent.harness.read_tool import DEFAULT_READ_LIMIT_LINES, read_file  # re-exported
from mini_agent.harness.workspace import ToolError, Workspace, regular_file

MAX_EDIT_BYTES = 16 << 20
"""edit_file loads the whole file (it must write it back whole); a larger file than this
(16 MiB) is refused with a hint to use run_bash, so a 2 GB log never sits in memory."""

def list_dir(ws: Workspace, input: dict[str, Any]) -> str:
    """List a directory's entries by name, folders with a trailing ``/``, ignored ones hidden.

    The directory is streamed (:func:`~mini_agent.harness.listing.directory_entries`): a
    folder of a million entries costs the time to read it, never the memory to hold it.

    Args:
        ws: the workspace.
        input: ``{"path"?: str}``, default ``"."`` (the root).

    Returns:
        One entry a line, sorted, the first :data:`~mini_agent.harness.listing.LIST_MAX_ENTRIES`
        (1,000) by name then ``[... and N more entries not shown ...]``, capped;
        ``(path is empty)`` when nothing is shown.

    Raises:
        ToolError: the path is outside the workspace, missing, or a file.
    """
    path = input.get("path", ".")
    target = ws.resolve(path)
    if not target.exists():
        raise ToolError(f"directory not found: {path}")
    if not target.is_dir():
        raise ToolError(f"{path} is a file, not a directory; use read_file to read it")
    shown, more = listing.first_sorted(listing.directory_entries(ws, target),
                                       listing.LIST_MAX_ENTRIES, key=lambda e: e.rstrip("/"))
    if not shown:
        return f"({ws.relative(target)} is empty)"
    rel = ws.relative(target)
    return _lines_with_count(ws, shown, more, "entries", "by name. Use glob with a pattern "
                             f"(e.g. '{'' if rel == '.' else rel + '/'}*.py') or grep to find "
                             "what you need")


def glob(ws: Workspace, input: dict[str, Any]) -> str:
    """Find paths matching a glob pattern relative to the root (``**`` recurses).

    The tree is walked once and streamed (:func:`~mini_agent.harness.listing.glob_paths`):
    only the first :data:`~mini_agent.harness.listing.GLOB_MAX_PATHS` matches in sort order
    are held, the others counted.

    Args:
        ws: the workspace.
        input: ``{"pattern": str}``, e.g. ``"**/*.py"``.

    Returns:
        The matching relative paths, sorted, folders with a trailing ``/``, ignored entries
        and links pointing out left out, the first 1,000 then ``[... and N more paths not
        shown ...]``, capped; ``No files match 'pattern'`` when none.

    Raises:
        ToolError: the pattern is absolute, contains ``..``, or is empty.
    """
    pattern = input["pattern"]
    if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
        raise ToolError(f"glob pattern {pattern!r} must be relative to the workspace and "
                        "must not contain '..'")
    if not pattern:
        raise ToolError("glob pattern must not be empty; e.g. '**/*.py'")
    # "**/**" matches what "**" does: collapse a run of them
    pattern = re.sub(r"(?<![^/])\*\*(?:/\*\*)+(?=/|$)", "**", pattern)
    shown, more = listing.first_sorted(listing.glob_paths(ws, pattern),
                                       listing.GLOB_MAX_PATHS, key=str)
    if not shown:
        return f"No files match {pattern!r}"
    return _lines_with_count(ws, shown, more, "paths", "in sorted order. Narrow the pattern "
                             "(a folder, an extension)")


_COUNT_NOTE_RESERVE_CHARS = 300


def _lines_with_count(ws: Workspace, lines: list[str], more: int, noun: str,
                      hint: str) -> str:
    """Join whole lines within the output cap, then say how many were not shown and why."""
    budget = ws.max_output_chars - min(_COUNT_NOTE_RESERVE_CHARS, ws.max_output_chars // 2)
    kept, used = 0, 0
    for line in lines:
        if kept and used + len(line) + 1 > budget:
            break
        kept, used = kept + 1, used + len(line) + 1
    text = "\n".join(lines[:kept])
    hidden = more + len(lines) - kept
    if not hidden:
        return ws.cap(text)
    return (f"{ws.cap(text)}\n[... and {hidden:,} more {noun} not shown: the first "
            f"{kept:,} are shown, {hint}]")


def edit_file(ws: Workspace, input: dict[str, Any]) -> str:
    """Replace the one occurrence of ``old_string`` in a file, or create a new file.

    The previous bytes are kept as ``<path>.bak``. Only the matched text changes: every
    other byte (mixed line ends, a lone CR, a BOM) stays as it was. In a file holding CRLF
    line ends, ``old_string`` copied from read_file (lines without their CR) matches its CRLF
    lines, and ``new_string``'s lines are written with CRLF. An empty ``old_string`` on a
    path that does not exist creates the file (and its folders; no backup).

    Args:
        ws: the workspace.
        input: ``{"path": str, "old_string": str, "new_string": str}``.

    Returns:
        ``Created path (N lines)``, or ``Edited path: replaced 1 occurrence at line L (backup:
        path.bak)`` followed by the edited lines with two lines of context, numbered.

    Raises:
        ToolError: the two strings are identical, ``old_string`` is empty on an existing
            file (its own message), is not found or occurs more than once, ``new_string``
            holds a lone surrogate UTF-8 cannot encode (nothing written), or the path
            is outside, a directory, not UTF-8 or larger than ``MAX_EDIT_BYTES`` (16 MiB;
            nothing is read or changed).
    """
    path, old, new = input["path"], input["old_string"], input["new_string"]
    target = ws.resolve(path)
    rel = ws.relative(target)
    if old == "" and not target.exists():
        data = _utf8(new)  # before anything is created: a failed create leaves no empty file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return f"Created {rel} ({len(new.splitlines())} lines)"
    size = regular_file(ws, path).stat().st_size
    if size > MAX_EDIT_BYTES:
        raise ToolError(f"{rel} is {size:,} bytes; edit_file edits files up to "
                        f"{MAX_EDIT_BYTES:,} bytes (it loads them whole). Use run_bash for a "
                        "larger one (e.g. sed -i), or split it")
    raw = target.read_bytes()
    try:
        text = raw.decode("utf-8")  # no newline translation: every byte not edited stays
    except UnicodeDecodeError:
        raise ToolError(f"{path} is not a UTF-8 text file") from None
    if old == new:
        raise ToolError("old_string and new_string are identical; nothing to change")
    if old == "":
        raise ToolError(f"old_string is empty but {rel} already exists; an empty old_string "
                        "only creates a new file. To edit, copy the exact text to replace")
    # read_file shows lines without their \r: in a CRLF file, match and write CRLF lines
    tries = ([(_crlf(old), _crlf(new))] if "\r\n" in text else []) + [(old, new)]
    for old, new in tries:
        if count := text.count(old):
            break
    if count == 0:
        raise ToolError(f"old_string not found in {rel}. Re-read the file with read_file and "
                        "copy the exact text, including indentation")
    if count > 1:
        raise ToolError(f"old_string occurs {count} times in {rel}; include more surrounding "
                        "lines so it matches exactly once")
    start = text.index(old)
    updated = text[:start] + new + text[start + len(old):]
    data = _utf8(updated)  # before the backup: a refused edit changes nothing
    _write_backup(target, raw, f"{rel}.bak")
    target.write_bytes(data)
    first = text.count("\n", 0, start) + 1
    lines = [line.removesuffix("\r") for line in updated.removesuffix("\n").split("\n")]
    last = first + new.count("\n")
    lo, hi = max(first - 2, 1), min(last + 2, len(lines))
    snippet = "\n".join(f"{n:>6}\t{lines[n - 1]}" for n in range(lo, hi + 1))
    return ws.cap(f"Edited {rel}: replaced 1 occurrence at line {first} "
                  f"(backup: {rel}.bak)\n{snippet}")


def _utf8(text: str) -> bytes:
    """Encode what edit_file writes as UTF-8.

    Args:
        text: the new file's text, or the edited file's whole text.

    Returns:
        Its UTF-8 bytes.

    Raises:
        ToolError: ``text`` holds a lone surrogate (``\\ud800`` in the call's JSON), which
            UTF-8 cannot encode; nothing has been written yet.
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(f"new_string holds U+{ord(text[exc.start]):04X}, a lone surrogate that "
                        "UTF-8 cannot encode; nothing was changed. Write the character itself "
                        "or drop it") from None


def _crlf(text: str) -> str:
    """Give ``text`` with every line end as CRLF."""
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def _write_backup(target: Path, raw: bytes, shown: str) -> None:
    """Keep ``raw`` as ``<target>.bak``: written to a temporary file, then renamed over it.

    The rename replaces the ``.bak`` entry itself, so a ``.bak`` that is a symbolic or hard
    link to a file outside the workspace is never written through.

    Raises:
        ToolError: the backup cannot be made (its name is a directory, the folder is not
            writable); the edited file is untouched.
    """
    bak = target.with_name(target.name + ".bak")
    if bak.is_dir() and not bak.is_symlink():
        raise ToolError(f"cannot keep the backup {shown}: it is a directory; move it away, "
                        "then edit again")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".bak-tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.chmod(tmp, target.stat().st_mode & 0o777)  # the backup keeps the file's mode
        os.replace(tmp, bak)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise ToolError(f"cannot keep the backup {shown}: {exc.strerror or exc}; nothing "
                        "was changed") from None


def edit_applied(ws: Workspace, input: dict[str, Any]) -> str:
    """Tell whether an interrupted edit_file call is visible in its file now.

    Args:
        ws: the workspace.
        input: the edit_file call's input (``path``, ``old_string``, ``new_string``).

    Returns:
        ``"applied"``, ``"not_applied"`` or ``"unknown"`` (see
        :func:`~mini_agent.core.edit_reconcile.edit_outcome`); ``"unknown"`` also when the
        input is malformed, the file cannot be read, is not a regular file or is larger
        than ``MAX_EDIT_BYTES``.
    """
    try:
        target = ws.resolve(input["path"])
        if target.exists() and not target.is_file():
            return "unknown"  # a directory, or a FIFO whose read would wait for ever
        if target.exists() and target.stat().st_size > MAX_EDIT_BYTES:
            return "unknown"  # too large for edit_file to have edited
        text = target.read_text(encoding="utf-8") if target.exists() else None
        return edit_outcome(input["old_string"], input["new_string"], text)
    except (ToolError, OSError, KeyError, TypeError, UnicodeDecodeError):
        return "unknown"

