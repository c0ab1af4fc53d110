"""The agent's tools: read_file, list_dir, grep, glob, run_bash, edit_file, confined to a workspace.

Each tool is a :class:`Tool`: a name, a description and a JSON schema the model sees
(``Tool.definition()``), a ``safety`` class the executor uses ("read-only" tools may run in
parallel, "write" tools run alone), and a sync ``run(input) -> str``. A tool reports failure by
raising (:class:`ToolError` for failures meant for the model); :func:`run_tool` turns every
failure, and an unknown tool name, into ``(message, True)``, which the loop sends back as a
``tool_result`` with ``is_error: true``: errors meant for the model are data.

Observations are deterministic: paths are reported relative to the workspace, the absolute
workspace path is scrubbed from command output, listings are sorted, and nothing reports a
time. The workspace ignore list (``.git``, ``*.bak``, caches) keeps the ``.bak`` files that
edit_file leaves from polluting list_dir, grep and glob (the pitfall of seed
000_86e3ff2076a5ae37.txt). Output beyond ``max_output_chars`` is cut with a marker such as
``[... truncated: 12,345 more characters]``.

Does not: sandbox processes (run_bash runs a real shell in the workspace, so it is a "write"
tool), or stream output. Taught in ``notebooks/01_agent_loop.ipynb`` and
``notebooks/02_parallel_tools.ipynb``; the Read/Grep/Glob/Bash split follows
002_4516104fd432e704.txt.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from mini_agent.core.edit_reconcile import edit_outcome

DEFAULT_IGNORE: tuple[str, ...] = (
    ".git", "*.bak", "__pycache__", "*.pyc", ".pytest_cache", ".mypy_cache", ".ruff_cache",
    ".hypothesis", ".ipynb_checkpoints", ".venv", "node_modules", ".DS_Store",
)
"""Glob patterns matched against every path component; a match hides the entry from
list_dir, grep and glob (read_file and edit_file still reach it by name)."""

DEFAULT_MAX_OUTPUT_CHARS = 16_000
"""Cap on one observation in characters (about 4,000 approx tokens)."""

DEFAULT_BASH_TIMEOUT_SECONDS = 30.0
DEFAULT_READ_LIMIT_LINES = 2_000
SAFETY_LEVELS = ("read-only", "write")


class ToolError(Exception):
    """A tool failure meant for the model: the message says what went wrong and what to do."""


@dataclasses.dataclass(frozen=True)
class Tool:
    """One tool the model may call.

    Attributes: name: the API tool name; description: what the model reads; input_schema:
    JSON schema of ``input`` (``{"type": "object", "properties": {...}, "required": [...]}``);
    safety: "read-only" (may run in parallel) or "write" (runs alone); run: ``run(input: dict)
    -> str``, raising :class:`ToolError` (or anything) on failure; latency_seconds: an
    artificial sleep :func:`run_tool` makes before running (offline demos and benchmarks use it
    to make parallel execution visible; 0 in normal use); check_applied: for a write tool,
    ``check_applied(input) -> "applied" | "not_applied" | "unknown"``: whether a call that a
    crash interrupted already took effect (a resume asks this before redoing anything).
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    safety: str
    run: Callable[[dict[str, Any]], str]
    latency_seconds: float = 0.0
    check_applied: Callable[[dict[str, Any]], str] | None = None

    def __post_init__(self) -> None:
        if self.safety not in SAFETY_LEVELS:
            raise ValueError(f"Tool {self.name!r}: safety must be one of {SAFETY_LEVELS}, "
                             f"got {self.safety!r}")
        if self.latency_seconds < 0:
            raise ValueError(f"Tool {self.name!r}: latency_seconds must be >= 0")

    def definition(self) -> dict[str, Any]:
        """Return the API tool dict ``{"name", "description", "input_schema"}``."""
        return {"name": self.name, "description": self.description,
                "input_schema": self.input_schema}

    def with_latency(self, seconds: float) -> "Tool":
        """Return a copy whose :func:`run_tool` calls first sleep ``seconds``."""
        return dataclasses.replace(self, latency_seconds=seconds)


class Workspace:
    """A directory the tools are confined to, with an ignore list and an output cap.

    Args: root: the workspace directory (must exist); ignore: glob patterns matched against
    each path component (see DEFAULT_IGNORE); max_output_chars: cap per observation in
    characters; bash_timeout_seconds: default run_bash timeout.
    Raises: ToolError if root is not a directory.
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
        self.max_output_chars = max_output_chars
        self.bash_timeout_seconds = bash_timeout_seconds

    def resolve(self, path: str) -> Path:
        """Return the absolute path of ``path`` (relative to the root, or absolute inside it).

        Raises: ToolError if it resolves outside the workspace (``..``, an absolute path
        elsewhere, or a symlink pointing out).
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
        """Return ``path`` relative to the root in POSIX form ("." for the root itself)."""
        rel = Path(path).relative_to(self.root).as_posix()
        return rel or "."

    def is_ignored(self, path: Path) -> bool:
        """True if any component of ``path`` (relative to the root) matches the ignore list."""
        parts = Path(path).relative_to(self.root).parts
        return any(fnmatch.fnmatch(part, pattern) for part in parts for pattern in self.ignore)

    def scrub(self, text: str) -> str:
        """Replace the absolute workspace path in ``text`` by "." (observations stay portable)."""
        for spelling in self._spellings:
            text = text.replace(spelling + os.sep, "").replace(spelling, ".")
        return text

    def cap(self, text: str) -> str:
        """Cut ``text`` to ``max_output_chars`` and append ``[... truncated: N more characters]``."""
        if len(text) <= self.max_output_chars:
            return text
        rest = len(text) - self.max_output_chars
        return f"{text[:self.max_output_chars]}\n[... truncated: {rest:,} more characters]"

    def walk_files(self, start: Path) -> list[Path]:
        """Return the non-ignored files under ``start`` (a file or directory), sorted."""
        if start.is_file():
            return [start]
        found = []
        for dirpath, dirnames, filenames in os.walk(start):
            here = Path(dirpath)
            dirnames[:] = sorted(d for d in dirnames if not self.is_ignored(here / d))
            found.extend(here / f for f in sorted(filenames) if not self.is_ignored(here / f)
                         and _inside(here / f, self.root))
        return sorted(found, key=lambda p: self.relative(p))


def _inside(path: Path, root: Path) -> bool:
    """True if ``path`` resolves inside ``root``; a symlink loop or broken link is outside."""
    try:
        return path.resolve().is_relative_to(root)
    except (RuntimeError, OSError):
        return False


def _read_text(workspace: Workspace, path: str) -> tuple[Path, str]:
    target = workspace.resolve(path)
    if target.is_dir():
        raise ToolError(f"{path} is a directory; use list_dir to see its entries")
    if not target.exists():
        raise ToolError(f"file not found: {path}. Use list_dir or glob to find the right path")
    try:
        return target, target.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{path} is not a UTF-8 text file") from None


def _read_file(ws: Workspace, input: dict[str, Any]) -> str:
    target, text = _read_text(ws, input["path"])
    offset = int(input.get("offset", 1))
    limit = int(input.get("limit", DEFAULT_READ_LIMIT_LINES))
    if offset < 1 or limit < 1:
        raise ToolError("offset and limit must be >= 1 (offset is a 1-based line number)")
    lines = text.splitlines()
    if not lines:
        return f"({ws.relative(target)} is empty)"
    if offset > len(lines):
        raise ToolError(f"offset {offset} is past the end of {ws.relative(target)} "
                        f"({len(lines)} lines)")
    chosen = lines[offset - 1:offset - 1 + limit]
    body = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(chosen, start=offset))
    last = offset + len(chosen) - 1
    if offset > 1 or last < len(lines):
        more = f"; pass offset={last + 1} to read more" if last < len(lines) else ""
        body += f"\n[lines {offset}-{last} of {len(lines)}{more}]"
    return ws.cap(body)


def _list_dir(ws: Workspace, input: dict[str, Any]) -> str:
    path = input.get("path", ".")
    target = ws.resolve(path)
    if not target.exists():
        raise ToolError(f"directory not found: {path}")
    if not target.is_dir():
        raise ToolError(f"{path} is a file, not a directory; use read_file to read it")
    entries = sorted(target.iterdir(), key=lambda p: p.name)
    shown = [p.name + ("/" if p.is_dir() else "") for p in entries if not ws.is_ignored(p)]
    return ws.cap("\n".join(shown) if shown else f"({ws.relative(target)} is empty)")


def _grep(ws: Workspace, input: dict[str, Any]) -> str:
    pattern = input["pattern"]
    flags = re.IGNORECASE if input.get("ignore_case") else 0
    try:
        regex = re.compile(pattern, flags)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from None
    path = input.get("path", ".")
    start = ws.resolve(path)
    if not start.exists():
        raise ToolError(f"path not found: {path}")
    name_glob = input.get("glob")
    hits = []
    for file in ws.walk_files(start):
        if name_glob and not (fnmatch.fnmatch(file.name, name_glob)
                              or fnmatch.fnmatch(ws.relative(file), name_glob)):
            continue
        try:
            text = file.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary or unreadable files are skipped, like grep -I
        for n, line in enumerate(text.splitlines(), start=1):
            if regex.search(line):
                hits.append(f"{ws.relative(file)}:{n}:{line}")
    if not hits:
        return f"No matches for /{pattern}/ in {path}"
    return ws.cap("\n".join(hits))


def _glob(ws: Workspace, input: dict[str, Any]) -> str:
    pattern = input["pattern"]
    if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
        raise ToolError(f"glob pattern {pattern!r} must be relative to the workspace and "
                        "must not contain '..'")
    matches = set()
    if not pattern:
        raise ToolError("glob pattern must not be empty; e.g. '**/*.py'")
    for found in ws.root.glob(pattern):
        if not _inside(found, ws.root) or ws.is_ignored(found.absolute()):
            continue
        matches.add(ws.relative(found.absolute()) + ("/" if found.is_dir() else ""))
    if not matches:
        return f"No files match {pattern!r}"
    return ws.cap("\n".join(sorted(matches)))


BASH_PIPE_GRACE_SECONDS = 0.5
"""How long run_bash waits for output after the shell exits; a background process that keeps
stdout open past this is not waited for (its later output is not shown)."""


class _Drain(threading.Thread):
    """Read a pipe to its end, keeping the first ``keep_bytes`` and counting the rest."""

    def __init__(self, fd: int, keep_bytes: int) -> None:
        super().__init__(daemon=True)
        self.fd, self.keep_bytes = fd, keep_bytes
        self.head = bytearray()
        self.dropped_bytes = 0
        self.lock = threading.Lock()

    def run(self) -> None:
        while chunk := os.read(self.fd, 65_536):
            with self.lock:
                room = max(self.keep_bytes - len(self.head), 0)
                self.head += chunk[:room]
                self.dropped_bytes += len(chunk) - min(room, len(chunk))

    def text(self, ws: Workspace) -> tuple[str, int]:
        with self.lock:
            return ws.scrub(bytes(self.head).decode("utf-8", errors="replace")), self.dropped_bytes


def _cap_output(ws: Workspace, text: str, dropped_bytes: int) -> str:
    """:meth:`Workspace.cap` that also counts output never kept (bytes, shown as characters)."""
    if not dropped_bytes:
        return ws.cap(text)
    rest = max(len(text) - ws.max_output_chars, 0) + dropped_bytes
    return f"{text[:ws.max_output_chars]}\n[... truncated: {rest:,} more characters]"


def _run_bash(ws: Workspace, input: dict[str, Any]) -> str:
    """Run the command; output is bounded in memory, the exit code line is never cut off.

    A command past its timeout has its process group killed; a background process that keeps
    stdout open after the shell exits does not make the call wait (see
    BASH_PIPE_GRACE_SECONDS).
    """
    command = input["command"]
    timeout_seconds = float(input.get("timeout_seconds", ws.bash_timeout_seconds))
    if not 0 < timeout_seconds < float("inf"):
        raise ToolError(f"timeout_seconds must be a positive number of seconds, "
                        f"got {input.get('timeout_seconds')!r}")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", NO_COLOR="1",
               TERM="dumb", PATH=os.pathsep.join([os.path.dirname(sys.executable),
                                                  os.environ.get("PATH", "")]))
    proc = subprocess.Popen(["bash", "-c", command], cwd=ws.root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    assert proc.stdout is not None
    drain = _Drain(proc.stdout.fileno(), 4 * ws.max_output_chars + 4)
    drain.start()
    try:
        proc.wait(timeout=timeout_seconds)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    drain.join(BASH_PIPE_GRACE_SECONDS)
    text, dropped = drain.text(ws)
    if not drain.is_alive():
        proc.stdout.close()
    if timed_out:
        text = _cap_output(ws, text, dropped)
        raise ToolError(f"{text}\n[command timed out after {timeout_seconds:g} seconds and was "
                        "killed; make it faster or pass a larger timeout_seconds]".lstrip())
    text = _cap_output(ws, text if dropped else text.rstrip("\n"), dropped)
    return f"{text}\n[exit code: {proc.returncode}]".lstrip("\n")


def _edit_file(ws: Workspace, input: dict[str, Any]) -> str:
    path, old, new = input["path"], input["old_string"], input["new_string"]
    target = ws.resolve(path)
    rel = ws.relative(target)
    if old == "" and not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(new, encoding="utf-8")
        return f"Created {rel} ({len(new.splitlines())} lines)"
    _, text = _read_text(ws, path)
    raw = target.read_bytes()
    crlf = b"\r\n" in raw  # read_text turned CRLF into LF; write them back as they were
    if old == new:
        raise ToolError("old_string and new_string are identical; nothing to change")
    count = text.count(old) if old else 0
    if count == 0:
        raise ToolError(f"old_string not found in {rel}. Re-read the file with read_file and "
                        "copy the exact text, including indentation")
    if count > 1:
        raise ToolError(f"old_string occurs {count} times in {rel}; include more surrounding "
                        "lines so it matches exactly once")
    start = text.index(old)
    updated = text[:start] + new + text[start + len(old):]
    target.with_name(target.name + ".bak").write_bytes(raw)
    target.write_text(updated, encoding="utf-8", newline="\r\n" if crlf else None)
    first = text.count("\n", 0, start) + 1
    lines = updated.splitlines()
    last = first + max(new.count("\n") + 1, 1) - 1
    lo, hi = max(first - 2, 1), min(last + 2, len(lines))
    snippet = "\n".join(f"{n:>6}\t{lines[n - 1]}" for n in range(lo, hi + 1))
    return ws.cap(f"Edited {rel}: replaced 1 occurrence at line {first} "
                  f"(backup: {rel}.bak)\n{snippet}")


def _edit_applied(ws: Workspace, input: dict[str, Any]) -> str:
    """Whether an interrupted edit_file call is visible in its file now (see edit_outcome)."""
    try:
        target = ws.resolve(input["path"])
        text = target.read_text(encoding="utf-8") if target.exists() else None
        return edit_outcome(input["old_string"], input["new_string"], text)
    except (ToolError, OSError, KeyError, TypeError, UnicodeDecodeError):
        return "unknown"


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


def build_tools(workspace: str | os.PathLike[str] | Workspace) -> dict[str, Tool]:
    """Build the six tools confined to ``workspace``; returns ``{name: Tool}`` in a fixed order.

    Args: workspace: a directory path or a configured :class:`Workspace`.
    Raises: ToolError if the directory does not exist.
    """
    ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    path_prop = {"type": "string", "description": "path relative to the workspace root"}
    tools = [
        Tool("read_file", "Read a UTF-8 text file; lines are numbered from 1. Use offset and "
             "limit (in lines) for large files.",
             _schema({"path": path_prop,
                      "offset": {"type": "integer", "description": "first line (1-based)"},
                      "limit": {"type": "integer", "description": "number of lines"}},
                     ["path"]),
             "read-only", lambda i: _read_file(ws, i)),
        Tool("list_dir", "List a directory (directories end with '/'); ignored files such as "
             ".git and *.bak are hidden.",
             _schema({"path": {**path_prop, "default": "."}}, []),
             "read-only", lambda i: _list_dir(ws, i)),
        Tool("grep", "Search files for a Python regular expression; prints path:line:text. "
             "Optionally restrict to a directory (path) and a file-name glob (glob).",
             _schema({"pattern": {"type": "string"}, "path": {**path_prop, "default": "."},
                      "glob": {"type": "string", "description": "e.g. '*.py'"},
                      "ignore_case": {"type": "boolean"}}, ["pattern"]),
             "read-only", lambda i: _grep(ws, i)),
        Tool("glob", "Find files by glob pattern relative to the workspace root, e.g. "
             "'**/*.py'.", _schema({"pattern": {"type": "string"}}, ["pattern"]),
             "read-only", lambda i: _glob(ws, i)),
        Tool("run_bash", "Run a bash command in the workspace root; prints stdout and stderr "
             "and the exit code.",
             _schema({"command": {"type": "string"},
                      "timeout_seconds": {"type": "number", "description": "default 30"}},
                     ["command"]),
             "write", lambda i: _run_bash(ws, i)),
        Tool("edit_file", "Replace one exact occurrence of old_string with new_string in a "
             "file (old_string must be unique; include surrounding lines if needed). Keeps "
             "the previous version as <path>.bak. An empty old_string creates a new file.",
             _schema({"path": path_prop, "old_string": {"type": "string"},
                      "new_string": {"type": "string"}}, ["path", "old_string", "new_string"]),
             "write", lambda i: _edit_file(ws, i),
             check_applied=lambda i: _edit_applied(ws, i)),
    ]
    return {tool.name: tool for tool in tools}


_JSON_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool,
               "object": dict, "array": list}


def check_input(tool: Tool, input: Any) -> None:
    """Raise ToolError if ``input`` lacks a required key or has a value of the wrong JSON type."""
    if not isinstance(input, dict):
        raise ToolError(f"{tool.name}: input must be a JSON object, got {type(input).__name__}")
    schema = tool.input_schema
    missing = [k for k in schema.get("required", []) if k not in input]
    if missing:
        raise ToolError(f"{tool.name}: missing required input {', '.join(map(repr, missing))}")
    for key, value in input.items():
        want = schema.get("properties", {}).get(key, {}).get("type")
        kind = _JSON_TYPES.get(want)
        if kind and (not isinstance(value, kind) or (want != "boolean"
                                                      and isinstance(value, bool))):
            raise ToolError(f"{tool.name}: input {key!r} must be of type {want}")


def run_tool(tools: dict[str, Tool], name: str, input: Any) -> tuple[str, bool]:
    """Run one tool call and return ``(content, is_error)``; never raises for tool failures.

    Sleeps the tool's ``latency_seconds`` first. An unknown name, invalid input, a
    :class:`ToolError` or any other exception becomes ``(actionable message, True)``.
    """
    tool = tools.get(name)
    if tool is None:
        return (f"Unknown tool {name!r}. Available tools: {', '.join(sorted(tools))}.", True)
    try:
        check_input(tool, input)
        if tool.latency_seconds:
            time.sleep(tool.latency_seconds)
        return _encodable(tool.run(input)), False
    except ToolError as exc:
        return _encodable(str(exc) or f"{name} failed"), True
    except Exception as exc:  # any crash in a tool is data for the model, not a dead loop
        return _encodable(f"{name} failed: {type(exc).__name__}: {exc}"), True


def _encodable(text: str) -> str:
    """Make ``text`` valid UTF-8: a non-UTF-8 file name (surrogate escapes) shows as U+FFFD.

    >>> _encodable("caf\\udce9.txt") == "caf\\ufffd.txt"
    True
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        data = text.encode("utf-8", "surrogateescape") if _only_escapes(text) \
            else text.encode("utf-8", "replace")
        return data.decode("utf-8", "replace")


def _only_escapes(text: str) -> bool:
    return all("\udc80" <= c <= "\udcff" for c in text if "\ud800" <= c <= "\udfff")
