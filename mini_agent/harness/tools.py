"""The agent's tools: read_file, list_dir, grep, glob, run_bash, edit_file, confined to a workspace.

Each tool is a :class:`Tool`: a name, a description and a JSON schema the model sees
(``Tool.definition()``), a ``safety`` class the executor uses ("read-only" tools may run in
parallel, "write" tools run alone), and a sync ``run(input) -> str``. A tool reports failure by
raising (:class:`~mini_agent.harness.workspace.ToolError` for failures meant for the model);
the executor (:mod:`mini_agent.harness.executor`, the one path every tool call takes) turns
every failure, an unknown tool name and input that does not fit the schema
(:func:`check_input`) into a ``tool_result`` with ``is_error: true``: errors meant for the
model are data.

:func:`build_tools` puts together the six tools of a :class:`~mini_agent.harness.workspace.Workspace`:
the file tools (:mod:`mini_agent.harness.file_tools`) and run_bash
(:mod:`mini_agent.harness.bash_tool`). Does not: sandbox processes (run_bash runs a real shell
in the workspace, so it is a "write" tool), or stream output. Taught in
``notebooks/01_agent_loop.ipynb`` and ``notebooks/02_parallel_tools.ipynb``.

Source:
    section 2 of 002_4516104fd432e704.txt (the Read/Grep/Glob/Bash split; ``safety``
    read-only or write; Bash counts as write); 000_86e3ff2076a5ae37.txt (read_file, list_dir,
    run_bash, edits that leave ``.bak`` files).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable

from mini_agent.core.wire_rules import TOOL_NAME_PATTERN
from mini_agent.harness import bash_tool, file_tools, grep_tool
from mini_agent.harness.workspace import ToolError, Workspace

SAFETY_LEVELS = ("read-only", "write")



@dataclasses.dataclass(frozen=True)
class Tool:
    """One tool the model may call.

    Attributes:
        name: the API tool name.
        description: what the model reads.
        input_schema: JSON schema of ``input`` (``{"type": "object", "properties": {...},
            "required": [...]}``).
        safety: "read-only" (may run in parallel) or "write" (runs alone).
        run: ``run(input: dict) -> str``, raising :class:`ToolError` (or anything) on failure.
        latency_seconds: an artificial sleep in seconds the executor makes before running
            (offline demos and benchmarks use it to make parallel execution visible; default
            0).
        check_applied: for a write tool, ``check_applied(input) -> "applied" |
            "not_applied" | "unknown"``: whether a call that a crash interrupted already took
            effect (a resume asks this before redoing anything); None when unknown.

    Raises:
        ValueError: ``name`` does not match :data:`TOOL_NAME_PATTERN`, ``safety`` is not one
            of ``SAFETY_LEVELS``, or ``latency_seconds`` < 0.
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    safety: str
    run: Callable[[dict[str, Any]], str]
    latency_seconds: float = 0.0
    check_applied: Callable[[dict[str, Any]], str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not TOOL_NAME_PATTERN.fullmatch(self.name):
            raise ValueError(f"Tool {self.name!r}: the API takes names of 1 to 128 letters, "
                             "digits, '_' or '-' (e.g. 'read_file'); every request carrying "
                             "this tool would be refused")
        if self.safety not in SAFETY_LEVELS:
            raise ValueError(f"Tool {self.name!r}: safety must be one of {SAFETY_LEVELS}, "
                             f"got {self.safety!r}")
        if self.latency_seconds < 0:
            raise ValueError(f"Tool {self.name!r}: latency_seconds must be >= 0")

    def definition(self) -> dict[str, Any]:
        """Give the tool's definition as the API takes it.

        Returns:
            ``{"name": str, "description": str, "input_schema": dict}``.
        """
        return {"name": self.name, "description": self.description,
                "input_schema": self.input_schema}

    def with_latency(self, seconds: float) -> "Tool":
        """Copy the tool with an artificial latency.

        Args:
            seconds: how long each call first sleeps (the executor awaits it); >= 0.

        Returns:
            A new :class:`Tool`; this one is unchanged.

        Raises:
            ValueError: ``seconds`` < 0.
        """
        return dataclasses.replace(self, latency_seconds=seconds)


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


_PATH_KIND_ERRORS = (FileExistsError, NotADirectoryError, IsADirectoryError)


def _on_disk(ws: Workspace, name: str, body: Any) -> Any:
    """Wrap a file tool's body so that an ``OSError`` is a ToolError naming relative paths.

    The error's text says what the system said (``File exists``, ``Permission denied``)
    and which paths, with the workspace's absolute path scrubbed (observations stay
    portable and do not show the host's folders).
    """
    def run(input: dict[str, Any]) -> str:
        try:
            return body(ws, input)
        except OSError as exc:
            paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
            hint = (" (a file stands where a folder is needed, or a folder where a file is)"
                    if isinstance(exc, _PATH_KIND_ERRORS) else "")
            raise ToolError(ws.scrub(f"{name} could not complete: "
                                     f"{exc.strerror or type(exc).__name__}: "
                                     f"{' -> '.join(paths) or '?'}{hint}")) from None
    return run


def build_tools(workspace: str | os.PathLike[str] | Workspace) -> dict[str, Tool]:
    """Build the six tools confined to a workspace.

    Args:
        workspace: a directory path or a configured :class:`Workspace`.

    Returns:
        ``{name: Tool}`` in a fixed order: read_file, list_dir, grep, glob (read-only),
        run_bash, edit_file (write).

    Raises:
        ToolError: the directory does not exist.
    """
    ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    path_prop = {"type": "string", "description": "path relative to the workspace root"}
    tools = [
        Tool("read_file", "Read a UTF-8 text file; lines are numbered from 1. Use offset and "
             "limit (in lines) for large files: a footer says which lines were shown and the "
             "offset to pass next. Lines over 2000 characters are cut; binary files are "
             "refused.",
             _schema({"path": path_prop,
                      "offset": {"type": "integer", "description": "first line (1-based)"},
                      "limit": {"type": "integer", "description": "number of lines"}},
                     ["path"]),
             "read-only", _on_disk(ws, "read_file", file_tools.read_file)),
        Tool("list_dir", "List a directory (directories end with '/'); ignored files such as "
             ".git and *.bak are hidden.",
             _schema({"path": {**path_prop, "default": "."}}, []),
             "read-only", _on_disk(ws, "list_dir", file_tools.list_dir)),
        Tool("grep", "Search files for a Python regular expression; prints path:line:text. "
             "Optionally restrict to a directory (path) and a file-name glob (glob). Binary "
             "files are skipped. The search is stopped at a time limit (timeout_seconds, "
             f"default {grep_tool.DEFAULT_GREP_TIMEOUT_SECONDS:g}): avoid nested quantifiers "
             "such as (a+)+, which can take exponential time.",
             _schema({"pattern": {"type": "string"}, "path": {**path_prop, "default": "."},
                      "glob": {"type": "string", "description": "e.g. '*.py'"},
                      "ignore_case": {"type": "boolean"},
                      "timeout_seconds": {"type": "number", "description": "default "
                                          f"{grep_tool.DEFAULT_GREP_TIMEOUT_SECONDS:g}"}},
                     ["pattern"]),
             "read-only", _on_disk(ws, "grep", grep_tool.grep)),
        Tool("glob", "Find files by glob pattern relative to the workspace root, e.g. "
             "'**/*.py'.", _schema({"pattern": {"type": "string"}}, ["pattern"]),
             "read-only", _on_disk(ws, "glob", file_tools.glob)),
        Tool("run_bash", "Run a bash command in the workspace root; prints stdout and stderr "
             "and the exit code.",
             _schema({"command": {"type": "string"},
                      "timeout_seconds": {"type": "number", "description": "default 30"}},
                     ["command"]),
             "write", lambda i: bash_tool.run_bash(ws, i)),
        Tool("edit_file", "Replace one exact occurrence of old_string with new_string in a "
             "file (old_string must be unique; include surrounding lines if needed). Keeps "
             "the previous version as <path>.bak. An empty old_string creates a new file.",
             _schema({"path": path_prop, "old_string": {"type": "string"},
                      "new_string": {"type": "string"}}, ["path", "old_string", "new_string"]),
             "write", _on_disk(ws, "edit_file", file_tools.edit_file),
             check_applied=lambda i: file_tools.edit_applied(ws, i)),
    ]
    return {tool.name: tool for tool in tools}


_JSON_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool,
               "object": dict, "array": list}


def check_input(tool: Tool, input: Any) -> None:
    """Check a tool call's input against the tool's schema (required keys, JSON types).

    Keys the schema does not list are not checked; a bool never passes as a number.

    Args:
        tool: the tool called.
        input: the call's ``input`` as the model sent it.

    Raises:
        ToolError: ``input`` is not an object, lacks a required key, or has a value of the
            wrong JSON type.
    """
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

