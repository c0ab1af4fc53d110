"""A deterministic brain that explores a project as a subagent would, and one that delegates.

:class:`ExplorerBrain` answers a brief such as "map the invoicing project" with real tools:
it globs the Python files, reads every module of the package in one parallel turn, greps the
tests for the modules they import, writes the full map (functions with line numbers, the
tests that cover each module) to an artefact with ``write_artefact``, and ends with a short
summary that names the artefact. Everything it writes comes from the tool results in the
request, so a different project gives a different map.

When the request offers a ``subagent`` tool, the same brain *delegates* instead: it sends the
user's brief to the subagent once and answers from the summary it gets back. That is how
``notebooks/09_memory_and_subagents.ipynb`` compares a main window that explored by itself
with one that delegated.

Stateless: the next step is read from the request's own tool calls and results.
Does not: understand code; it lists definitions by their ``def``/``class`` lines.
Source: 000_86e3ff2076a5ae37.txt (next episode: a fresh window, a scoped brief, a short summary
back); 004_b74ef821c58ee4ec.txt (subagents return 1,000-2,000 token summaries or references).
"""

from __future__ import annotations

import json
import re
from typing import Any

from mini_agent.core.messages import content_blocks
from mini_agent.offline.brain_kit import Reply, act, assign_tool_ids, say, tool_calls, use

ARTEFACT_NAME = "project_map.md"
"""The file the explorer writes its findings to."""

PACKAGE_DIR = "invoicing/"

def _prompt(messages: list[dict[str, Any]]) -> str:
    for m in messages:
        if m.get("role") == "user":
            texts = [b.get("text", "") for b in content_blocks(m) if b.get("type") == "text"]
            if any(texts):
                return "\n".join(texts)
    return ""


def _definitions(read_result: str) -> list[tuple[int, str, str]]:
    """Top-level public ``(line, "def"|"class", name)`` of a read_file observation."""
    found = []
    for row in read_result.splitlines():
        m = re.match(r"^\s*(\d+)\t(def|class) ([A-Za-z]\w*)", row)
        if m:
            found.append((int(m[1]), m[2], m[3]))
    return found


def _docline(read_result: str) -> str:
    m = re.search(r"^\s*1\t\"\"\"(.+?)(\"\"\")?$", read_result, re.MULTILINE)
    return m[1].strip() if m else ""


def _line_count(read_result: str) -> int:
    numbers = [int(m) for m in re.findall(r"^\s*(\d+)\t", read_result, re.MULTILINE)]
    return max(numbers, default=0)


def build_map(modules: dict[str, str], importers: dict[str, list[str]]) -> tuple[str, list[str]]:
    """Build the project map and its short summary from read results and test imports.

    Args:
        modules: ``{path: read_file observation}`` for the package's modules; paths start
            with ``PACKAGE_DIR`` (``"invoicing/"``) and end with ``.py``.
        importers: ``{module name: [test file]}``: the tests that import each module.

    Returns:
        ``(artefact markdown, summary lines)``: a table (module, lines, purpose from the
        module docstring's first line, tested by) followed by each module's top-level
        definitions with line numbers; and one summary line per module, sorted by path.
    """
    doc = ["# Project map", "", "| module | lines | purpose | tested by |", "|---|---|---|---|"]
    detail, summary = [], []
    for path in sorted(modules):
        text = modules[path]
        name = path[len(PACKAGE_DIR):-3]
        tests = importers.get(name, [])
        defs = _definitions(text)
        doc.append(f"| {path} | {_line_count(text)} | {_docline(text)} | "
                   f"{', '.join(tests) or 'no test imports it'} |")
        detail += ["", f"## {path}", ""] + [f"- line {n}: {kind} `{ident}`"
                                            for n, kind, ident in defs]
        public = [ident for _, kind, ident in defs if kind == "def"]
        summary.append(f"- {path} ({_line_count(text)} lines): {_docline(text)} "
                       f"Top-level functions: {', '.join(public) or 'none'}. "
                       f"Tested by {len(tests)} test file(s).")
    return "\n".join(doc + detail) + "\n", summary


class ExplorerBrain:
    """Explores a project for a brief (or delegates it to a ``subagent`` tool if offered).

    ``respond(request) -> {"content", "stop_reason"}``; tool ids are hashes of the history,
    so runs are reproducible.
    """

    def respond(self, request: dict[str, Any]) -> Reply:
        """Decide the next assistant turn for this request.

        Args:
            request: the ``/v1/messages`` body (``messages``, ``tools``).

        Returns:
            A :data:`~mini_agent.offline.brain_kit.Reply` with tool ids assigned: the next
            exploring step (glob, then the reads and a grep in one turn, then
            write_artefact), the final summary, a delegation to ``subagent`` when offered,
            or an ``end_turn`` naming the tools it lacks.
        """
        messages = list(request.get("messages") or [])
        tools = {t.get("name") for t in request.get("tools") or []}
        reply = self._decide(messages, tools)
        seed = json.dumps([[b.get("name"), b.get("input"), b.get("text")] for m in messages
                           for b in content_blocks(m)], sort_keys=True)
        return assign_tool_ids(reply, seed)

    def _decide(self, messages: list[dict[str, Any]], tools: set[str]) -> Reply:
        calls = tool_calls(messages)
        if "subagent" in tools:
            done = [c for c in calls if c.name == "subagent"]
            if not done:
                return act("This exploration would fill my window with raw file contents; "
                           "I will hand it to a subagent with a scoped brief.",
                           use("subagent", brief=_prompt(messages)))
            return say("The subagent explored the project. Its findings:\n\n"
                       + (done[-1].result or "(no result)"))
        needed = {"glob", "read_file", "grep", "write_artefact"}
        if not needed <= tools:
            return say(f"I need the tools {', '.join(sorted(needed - tools))} to explore.")
        by_name: dict[str, list] = {}
        for call in calls:
            by_name.setdefault(call.name, []).append((call.input, call.result))
        if "glob" not in by_name:
            return act("I will list the project's Python files first.",
                       use("glob", pattern="**/*.py"))
        files = (by_name["glob"][-1][1] or "").splitlines()
        modules = [f for f in files if f.startswith(PACKAGE_DIR) and f.endswith(".py")
                   and not f.endswith("__init__.py")]
        if "read_file" not in by_name:
            return act(f"Reading the {len(modules)} modules of the package, and finding which "
                       "tests import them.",
                       *[use("read_file", path=f) for f in modules],
                       use("grep", pattern=r"^from invoicing\.(\w+) import", path="tests"))
        reads = {i["path"]: r or "" for i, r in by_name["read_file"]}
        importers: dict[str, list[str]] = {}
        for row in (by_name["grep"][-1][1] or "").splitlines():
            m = re.match(r"^([^:]+):\d+:from invoicing\.(\w+) import", row)
            if m and m[1] not in importers.setdefault(m[2], []):
                importers[m[2]].append(m[1])
        document, summary = build_map(reads, importers)
        if "write_artefact" not in by_name:
            return act("Writing the full map to an artefact, so the summary can stay short.",
                       use("write_artefact", name=ARTEFACT_NAME, content=document))
        written = by_name["write_artefact"][-1][1] or ""
        total = sum(_line_count(t) for t in reads.values())
        return say(f"Explored {len(reads)} modules ({total} lines) and the tests that import "
                   "them.\n" + "\n".join(summary)
                   + f"\nFull map with line numbers: {written.split(' (')[0].removeprefix('wrote ')}")
