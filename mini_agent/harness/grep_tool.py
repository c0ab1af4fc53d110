"""The grep tool's body: a regex search of the workspace's files, bounded in time and memory.

The search runs in a child process (:mod:`mini_agent.harness.grep_worker`) that is killed at
the time limit (:data:`DEFAULT_GREP_TIMEOUT_SECONDS`, 10 s, or the call's
``timeout_seconds``): Python's ``re`` holds the GIL while it matches, so a pattern that
backtracks catastrophically, ``(a+)+$`` on a line of 30 ``a`` and a ``b``, would otherwise hang
the tool, the executor's other tools and a notebook kernel for ever. The child is also killed
and reaped when the call is interrupted: the executor's cancel event
(:func:`~mini_agent.harness.threads.cancel_event`, set on close, cancel or Ctrl-C; checked
every :data:`GREP_POLL_SECONDS`) or a ``KeyboardInterrupt`` in a direct call. The same event
stops the listing of the files to search (checked every 64 files), so an interrupt during
the walk of a huge tree does not wait for it to end. The child costs about
25 ms per call (``python -I -S`` imports no site packages); a search that finishes in time
returns exactly what an in-process one would. Files are read line by line (each line at
most :data:`GREP_LINE_BYTES` bytes searched), so a 2 GB log never sits in memory; hits past
the output cap are counted, not sent, and the result says how many were left out.

IO: processes, files. Taught in ``notebooks/01_agent_loop.ipynb`` and
``02_parallel_tools.ipynb``.

Source:
    002_4516104fd432e704.txt (the Grep tool of the Read/Grep/Glob split); Python's ``re``
    documentation (a backtracking engine that holds the GIL while matching).
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mini_agent.harness import grep_worker
from mini_agent.harness.threads import cancel_event
from mini_agent.harness.workspace import ListingStopped, ToolError, Workspace

DEFAULT_GREP_TIMEOUT_SECONDS = 10.0
"""Time limit of one grep call in seconds, the child's start included, when the call gives
no ``timeout_seconds``."""

MAX_GREP_TIMEOUT_SECONDS = 86_400.0
"""The largest ``timeout_seconds`` a grep call may give (a day): a larger one is refused
rather than overflowing the clock of the wait for the search process."""

GREP_LINE_BYTES = 1 << 20
"""The most bytes of one line that grep searches (1 MiB); the rest of a longer line is
skipped and the result counts such lines."""

GREP_HIT_CHARS = 500
"""A hit line longer than this many characters is shown as this many characters around the
match, with its length and the match's column."""

GREP_POLL_SECONDS = 0.05
"""How often grep checks its cancel event while the search child runs (the latency of an
interrupt)."""

_NOTES_RESERVE_CHARS = 400
_WORKER = Path(grep_worker.__file__)


def grep(ws: Workspace, input: dict[str, Any]) -> str:
    """Search file contents line by line with a Python regular expression, within a time limit.

    Binary files (a NUL byte in the first 8 KiB) are skipped, like ``grep -I``; ignored
    entries are not searched; lines end at ``\\n`` (a CRLF's ``\\r`` is dropped) and bytes
    that are not UTF-8 are searched as U+FFFD.

    Args:
        ws: the workspace; ``max_output_chars`` caps the hits shown.
        input: ``{"pattern": str, "path"?: str, "glob"?: str, "ignore_case"?: bool,
            "timeout_seconds"?: float}``: the search starts at ``path`` (default ``"."``, a
            file or folder); ``glob`` keeps files whose name or relative path matches it;
            ``timeout_seconds`` is the time limit (default
            :data:`DEFAULT_GREP_TIMEOUT_SECONDS`, 10 s), listing the files included.

    Returns:
        ``path:line:text`` hits in file order, then notes in brackets: hits left out by the
        output cap (how many, how many characters), binary files skipped, lines searched
        only in their first 1 MiB, files holding bytes that are not UTF-8; ``No matches for
        /pattern/ in path`` (with the same notes) when there are none.

    Raises:
        ToolError: the pattern is not a valid regular expression (a repetition count too
            large or groups nested too deeply included), ``timeout_seconds`` is not a
            positive number up to :data:`MAX_GREP_TIMEOUT_SECONDS` (a day), the path is
            outside the workspace or missing, the listing or the search passed its time
            limit (the message names the limit, the file being searched and the hits found
            so far), the call was interrupted while listing or searching (the hits found
            so far, then ``[grep interrupted ...]``), or the search process failed.
    """
    pattern = input["pattern"]
    flags = re.IGNORECASE if input.get("ignore_case") else 0
    try:
        re.compile(pattern, flags)
    except (re.error, OverflowError) as exc:  # a{4294967296}: "repetition number too large"
        raise ToolError(f"invalid regular expression {pattern!r:.200}: {exc}") from None
    except RecursionError:
        raise ToolError(f"invalid regular expression {pattern!r:.200}: nested too deeply for "
                        "Python's re (thousands of groups inside groups)") from None
    timeout_seconds = float(input.get("timeout_seconds", DEFAULT_GREP_TIMEOUT_SECONDS))
    if not 0 < timeout_seconds < math.inf:
        raise ToolError(f"timeout_seconds must be a positive number of seconds, "
                        f"got {input.get('timeout_seconds')!r}")
    if timeout_seconds > MAX_GREP_TIMEOUT_SECONDS:  # 1e12 would overflow the wait's clock
        raise ToolError(f"timeout_seconds must be at most {MAX_GREP_TIMEOUT_SECONDS:,g} seconds "
                        f"(a day), got {input.get('timeout_seconds')!r}")
    path = input.get("path", ".")
    start = ws.resolve(path)
    if not start.exists():
        raise ToolError(f"path not found: {path}")
    name_glob = input.get("glob")
    started = time.monotonic()  # listing the files counts against the limit too
    try:
        listed = ws.walk_files(start, deadline=started + timeout_seconds, stop=cancel_event())
    except ListingStopped as stop:  # a tree of a million entries: stopped at the limit
        if stop.interrupted:
            raise ToolError(f"[grep interrupted (the run was closed, cancelled or got Ctrl-C) "
                            f"while listing the files to search ({stop.listed:,} found so "
                            "far); no search was started; 0 hit(s) found before]") from None
        raise ToolError(f"[grep stopped at its time limit of {timeout_seconds:g} seconds while "
                        f"listing the files to search ({stop.listed:,} found so far); 0 hit(s) "
                        "found before. Narrow path to a smaller folder, or pass a larger "
                        "timeout_seconds]") from None
    files = [f for f in listed
             if not name_glob or fnmatch.fnmatch(f.name, name_glob)
             or fnmatch.fnmatch(ws.relative(f), name_glob)]
    shown = [ws.relative(f) for f in files]
    request = {"pattern": pattern, "ignore_case": bool(flags), "line_bytes": GREP_LINE_BYTES,
               "hit_chars": GREP_HIT_CHARS,
               "max_chars": ws.max_output_chars - min(_NOTES_RESERVE_CHARS,
                                                      ws.max_output_chars // 2),
               "files": [[str(f), s] for f, s in zip(files, shown)]}
    left_seconds = timeout_seconds - (time.monotonic() - started)
    records, stopped, error = (_run_worker(request, left_seconds) if left_seconds > 0
                               else ([], "timeout", ""))
    timed_out = stopped == "timeout"
    hits = [f"{shown[r[1]]}:{r[2]}:{r[3]}" for r in records if r[0] == "h"]
    if stopped == "interrupted":
        so_far = ws.cap("\n".join(hits)) + "\n" if hits else ""
        raise ToolError(f"{so_far}[grep interrupted (the run was closed, cancelled or got "
                        f"Ctrl-C); its search process was killed; {len(hits)} hit(s) found "
                        "before]")
    if timed_out:
        at = max((r[1] for r in records if r[0] == "f"), default=None)
        where = (f" while searching {shown[at]} (file {at + 1} of {len(files)})"
                 if at is not None else
                 f" while listing the {len(files):,} files to search" if left_seconds <= 0
                 else "")
        so_far = ws.cap("\n".join(hits)) + "\n" if hits else ""
        raise ToolError(
            f"{so_far}[grep stopped at its time limit of {timeout_seconds:g} seconds{where}; "
            f"{len(hits)} hit(s) found before. On long lines a pattern with nested "
            "quantifiers such as (a+)+ can take exponential time, adjacent ones such as .*.* "
            "polynomial time: simplify the pattern, narrow path or glob, or pass a larger "
            "timeout_seconds]")
    stats = next((r[1] for r in records if r[0] == "s"), None)
    if stats is None:
        raise ToolError(f"grep's search process failed: {error or 'no result'}")
    notes = _notes(stats)
    if not hits:
        return "\n".join([f"No matches for /{pattern}/ in {path}", *notes])
    return "\n".join(hits + notes)  # hits within the cap less room for the notes


def _notes(stats: dict[str, int]) -> list[str]:
    """Say in brackets what the search left out or could not read as it was."""
    notes = []
    if stats["hidden_hits"]:
        notes.append(f"[... {stats['hidden_hits']:,} more matching lines not shown "
                     f"({stats['hidden_chars']:,} characters; {stats['hits']:,} in all): "
                     "narrow the pattern, path or glob]")
    if stats["binary_files"]:
        notes.append(f"[{stats['binary_files']:,} binary file(s) skipped]")
    if stats["unreadable_files"]:
        notes.append(f"[{stats['unreadable_files']:,} file(s) could not be read]")
    if stats["long_lines"]:
        notes.append(f"[{stats['long_lines']:,} line(s) longer than {GREP_LINE_BYTES:,} bytes "
                     "were searched only in their first "
                     f"{GREP_LINE_BYTES:,} bytes]")
    if stats["not_utf8_files"]:
        notes.append(f"[{stats['not_utf8_files']:,} file(s) hold bytes that are not UTF-8; "
                     "they were searched as U+FFFD]")
    return notes


def _run_worker(request: dict[str, Any], timeout_seconds: float
                ) -> tuple[list[list[Any]], str | None, str]:
    """Run the search child with a time limit, watching the call's cancel event.

    Returns:
        ``(records, stopped, stderr's last line)``: the JSON records the child wrote
        before it ended or was killed; ``stopped`` is None, ``"timeout"`` or
        ``"interrupted"`` (the cancel event was set).

    Raises:
        BaseException: whatever interrupts the wait (``KeyboardInterrupt``), after the child
            is killed and reaped.
    """
    cancel = cancel_event()
    with tempfile.TemporaryFile() as given:  # a retried communicate cannot go on feeding a pipe
        given.write(json.dumps(request).encode("ascii"))
        given.seek(0)
        proc = subprocess.Popen([sys.executable, "-I", "-S", str(_WORKER)], stdin=given,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stopped = None
    deadline = time.monotonic() + timeout_seconds
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or cancel.is_set():
                stopped = "interrupted" if cancel.is_set() else "timeout"
                proc.kill()
                out, err = proc.communicate()
                break
            try:  # a retried communicate loses no output
                out, err = proc.communicate(timeout=min(left, GREP_POLL_SECONDS))
                break
            except subprocess.TimeoutExpired:
                continue
    except BaseException:  # KeyboardInterrupt, SystemExit: no search left running, no zombie
        proc.kill()
        proc.wait()
        raise
    records = []
    for line in out.decode("ascii", "replace").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            break  # the last line of a killed child may be cut
    lines = err.decode("utf-8", "replace").strip().splitlines()
    return records, stopped, lines[-1] if lines else ""
