"""Subagents: a fresh window with a scoped brief, returning a bounded summary and references.

:func:`run_subagent` starts a new :class:`~mini_agent.harness.agent.Agent` (its own empty history,
so nothing of the caller's window is in it and none of its exploration comes back), gives it
the brief and its own tool set (read-only tools by default, plus ``write_artefact``, which can
write only into the artefact folder), and returns a :class:`SubagentResult`: a summary bounded
to ``max_summary_tokens`` (the chapter's 1,000-2,000 tokens; an over-long one is cut, and its
full text kept in an artefact) and the artefacts it wrote, as paths the caller can read.
Never the subagent's raw history.

:func:`subagent_tool` gives the main agent a ``subagent`` tool (definition + handler);
:func:`compare_main_window` measures the main window's tokens with and without delegating
(the kit's token counter over both main histories).

IO: runs an agent over the SDK, writes artefact files. Taught in
``notebooks/09_memory_and_subagents.ipynb``.

Source:
    000_86e3ff2076a5ae37.txt (next episode: subagents); 004_b74ef821c58ee4ec.txt (1,000-2,000
    token summaries, references to artefacts stored outside, not raw tables copied through
    the lead).
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
from pathlib import Path
from typing import Any, Callable, Sequence

from mini_agent.harness.agent import Agent
from mini_agent.core.tokens import approx_tokens
from mini_agent.harness.stop_hook import DEFAULT_MAX_STOP_HOOK_BLOCKS
from mini_agent.harness.session import SessionWriter
from mini_agent.harness.subagent_hooks import DEFAULT_AGENT_TYPE, SubagentHooks, new_agent_id
from mini_agent.harness.tools import Tool, ToolError, Workspace, build_tools
from mini_agent.core.view import full_view

DEFAULT_MAX_SUMMARY_TOKENS = 2_000
"""Upper bound on a subagent's summary in approx tokens (chapter 3: 1,000-2,000)."""

READ_ONLY_TOOLS = ("read_file", "list_dir", "grep", "glob")
"""The tools a subagent gets by default: none of them changes anything."""

ARTEFACT_DIR = ".artefacts"
"""Default folder (inside the workspace) for the files subagents write."""

SUBAGENT_SYSTEM = (
    "You are a subagent with a fresh context window and one brief. Explore with your tools, "
    "write detailed findings (tables, code, long lists) to files with write_artefact, and end "
    "with a short summary (well under {max_tokens} tokens) that names those files. Never paste "
    "raw file contents into the summary.")

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$")


@dataclasses.dataclass
class SubagentResult:
    """What a subagent hands back.

    Attributes:
        summary: bounded text (approx tokens <= the bound).
        summary_tokens: its approx tokens.
        artefacts: paths (relative to the workspace) of files it wrote, each existing.
        truncated: the summary was cut to the bound.
        exit_status: how the subagent's loop ended.
        turns: model requests the subagent made.
        window_tokens: approx tokens of the subagent's own final history (its window, which
            the caller never sees).
        history: that history, for inspection only.
        agent_id: the run's id, as its hooks saw it (``""`` when no hooks were given).
    """

    summary: str
    summary_tokens: int
    artefacts: list[str]
    truncated: bool
    exit_status: str
    turns: int
    window_tokens: int
    history: list = dataclasses.field(repr=False, default_factory=list)
    agent_id: str = ""

    def for_main(self) -> str:
        """Render what the main agent gets as the tool result.

        Returns:
            The summary, then an ``Artefacts`` list of the paths (``- (none)`` when empty)
            with a hint to read them with read_file.
        """
        refs = "\n".join(f"- {p}" for p in self.artefacts) or "- (none)"
        return (f"{self.summary}\n\nArtefacts (read them with read_file when you need the "
                f"details):\n{refs}")


def artefact_tool(workspace: Workspace, folder: str = ARTEFACT_DIR, *,
                  written: list[Path] | None = None) -> Tool:
    """Build the ``write_artefact(name, content)`` tool: one file into ``<workspace>/<folder>/``.

    Names are plain file names (letters, digits, ``_ . -``, no ``/``, at most 100
    characters); an existing file is replaced. A bad name makes the tool raise ``ToolError``
    (an ``is_error`` result for the model), and so does an artefact folder or file that is a
    symbolic link leading outside the workspace, or a file that is not a regular one (a
    FIFO would block the write forever).

    Args:
        workspace: the workspace whose root holds the folder.
        folder: the artefact folder inside the workspace (default ``ARTEFACT_DIR`` =
            ``".artefacts"``); created on the first write.
        written: if given, each file the tool writes is appended to it (how a subagent
            knows its own files while others write into the same folder).

    Returns:
        A "write" :class:`~mini_agent.harness.tools.Tool`; its result is ``wrote
        <folder>/<name> (<N> bytes)``.
    """
    def run(input: dict[str, Any]) -> str:
        name = input["name"]
        if not _NAME.match(name) or name in (".", ".."):
            raise ToolError(f"artefact name {name!r} must be a plain file name such as "
                            "findings.md (letters, digits, '_', '.', '-'; no '/')")
        target = workspace.root / folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        root = Path(workspace.root).resolve()
        if not target.parent.resolve().is_relative_to(root):
            raise ToolError(f"the artefact folder {folder} leads outside the workspace (a "
                            "symbolic link); nothing was written")
        data = input["content"].encode("utf-8")
        _write_plain_file(target, data)
        if written is not None and target not in written:
            written.append(target)
        return f"wrote {folder}/{name} ({len(data):,} bytes)"
    return Tool("write_artefact", "Write findings to a file in the artefact folder and get "
                "its path back; use it for anything long (tables, lists, code).",
                {"type": "object", "properties": {
                    "name": {"type": "string", "description": "file name, e.g. findings.md"},
                    "content": {"type": "string"}}, "required": ["name", "content"]},
                "write", run)


def _write_plain_file(target: Path, data: bytes) -> None:
    """Replace ``target``'s bytes, refusing a symbolic link (it could point outside the
    workspace) and anything but a regular file (a FIFO would block the write forever).

    Raises:
        ToolError: ``target`` is a symbolic link, a FIFO, a directory or another special
            file.
    """
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        raise ToolError(f"artefact {target.name} cannot be written: it is a symbolic link or "
                        f"a special file ({exc.strerror})") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ToolError(f"artefact {target.name} is not a regular file; nothing was "
                            "written")
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def bound_summary(text: str, max_tokens: int) -> tuple[str, bool]:
    """Cut ``text`` so its approx tokens stay <= ``max_tokens``. Pure.

    Args:
        text: the summary.
        max_tokens: the bound in approx tokens.

    Returns:
        ``(text, cut)``: the text unchanged and False when it fits; else its head, stripped,
        ending with ``[summary cut at N tokens]``, and True.

    Raises:
        ValueError: ``max_tokens`` < 16 (no room for the marker).
    """
    if max_tokens < 16:
        raise ValueError("max_tokens must be >= 16")
    if approx_tokens(text) <= max_tokens:
        return text, False
    marker = f"\n[summary cut at {max_tokens} tokens]"
    keep = max(0, max_tokens * 4 - len(marker) - 4)
    while keep and approx_tokens(text[:keep] + marker) > max_tokens:
        keep -= 1
    return text[:keep].rstrip() + marker, True


def run_subagent(brief: str, *, client: Any, workspace: str | os.PathLike[str],
                 tools: Sequence[str] = READ_ONLY_TOOLS, artefact_dir: str = ARTEFACT_DIR,
                 max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS, max_turns: int = 12,
                 model: str | None = None, hooks: Any = None,
                 agent_type: str = DEFAULT_AGENT_TYPE, hook_fields: dict | None = None,
                 max_stop_hook_blocks: int = DEFAULT_MAX_STOP_HOOK_BLOCKS) -> SubagentResult:
    """Run ``brief`` in a fresh agent and return its bounded summary and artefact paths.

    Args:
        brief: the scoped task, self-contained (the subagent sees nothing else).
        client: an ``anthropic`` client (online, or ``mini_agent.offline``'s).
        workspace: the folder its tools work in.
        tools: names from the kit's tools it may use (default ``READ_ONLY_TOOLS``);
            ``write_artefact`` is always added.
        artefact_dir: folder inside the workspace for ``write_artefact``.
        max_summary_tokens: upper bound on the summary in approx tokens (default 2,000).
        max_turns: requests the subagent may make (default 12).
        model: model name (default: the kit's).
        hooks: the main agent's ``HookManager``, or None (no hooks). When given, the subagent
            fires ``SubagentStop`` where a main agent fires ``Stop`` (a block sends it on with
            the reason, at most ``max_stop_hook_blocks`` times) and its tool calls fire
            ``PreToolUse``/``PostToolUse``: :mod:`mini_agent.harness.subagent_hooks`.
        agent_type: the ``agent_type`` its hooks see, which a ``SubagentStop`` matcher matches
            (default ``"general-purpose"``).
        hook_fields: the main session's fields for its hooks (``session_id``,
            ``transcript_path``, a str or path), or None. With hooks and a ``transcript_path``
            (``<dir>/<id>.jsonl``), the subagent's conversation is logged to
            ``<dir>/<id>/subagents/agent-<agent_id>.jsonl`` (Claude Code's place), its hooks'
            ``agent_transcript_path``; a folder that cannot be made (or a path with a NUL
            byte) leaves it None.
        max_stop_hook_blocks: ``SubagentStop`` blocks that send it on (default 8, as Stop);
            one more ends it with ``"stop_hook_limit"``.

    Returns:
        A :class:`SubagentResult`. A summary over the bound is cut, and its full text saved as
        ``<artefact_dir>/summary_full.md`` (listed in ``artefacts``).

    Raises:
        ValueError: an empty brief or an unknown tool name.
        ToolError: ``workspace`` is not a directory.
    """
    if not brief or not brief.strip():
        raise ValueError("the brief is empty: give the subagent a self-contained task")
    ws = Workspace(workspace)
    available = build_tools(ws)
    unknown = sorted(set(tools) - set(available))
    if unknown:
        raise ValueError(f"unknown tool(s) {unknown}; choose from {sorted(available)}")
    own = {name: available[name] for name in tools}
    mine: list[Path] = []     # this run's files only: parallel subagents share the folder
    own["write_artefact"] = artefact_tool(ws, artefact_dir, written=mine)
    folder = ws.root / artefact_dir
    agent_id, log, fields = new_agent_id(), None, dict(hook_fields or {})
    if isinstance(fields.get("transcript_path"), os.PathLike):   # hooks get JSON: a str
        fields["transcript_path"] = os.fspath(fields["transcript_path"])
    main_log = fields.get("transcript_path") if hooks is not None else None
    if isinstance(main_log, str) and main_log.endswith(".jsonl"):
        try:   # Claude Code's place: <dir>/<session id>/subagents/agent-<agent id>.jsonl
            log = SessionWriter(Path(main_log[:-6]) / "subagents", f"agent-{agent_id}")
        except (OSError, ValueError):   # no folder there, or a NUL byte in the path
            log = None   # the subagent runs unlogged, as without a path
    wrapped = (SubagentHooks(hooks, agent_id=agent_id, agent_type=agent_type, fields=fields,
                             transcript=str(log.path) if log else None)
               if hooks is not None else None)
    agent = Agent(client, model=model, tools=own, view_policy=full_view, max_turns=max_turns,
                  system=SUBAGENT_SYSTEM.format(max_tokens=max_summary_tokens), hooks=wrapped,
                  max_stop_hook_blocks=max_stop_hook_blocks, session=log)
    try:
        run = agent.run(brief)
    finally:
        agent.close()   # the subagent's loop and worker threads end with it
        if log is not None:
            log.close()
    summary, truncated = bound_summary(run.text or "(the subagent gave no summary)",
                                       max_summary_tokens)
    if truncated:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "summary_full.md").write_text(run.text, encoding="utf-8")
        mine.append(folder / "summary_full.md")
    written = sorted(set(p for p in mine if p.is_file()))
    return SubagentResult(summary, approx_tokens(summary),
                          [p.relative_to(ws.root).as_posix() for p in written], truncated,
                          run.exit_status, run.turns, approx_tokens(agent.history),
                          agent.history, wrapped.agent_id if wrapped else "")


def subagent_tool(*, client: Any, workspace: str | os.PathLike[str],
                  on_result: Callable[[SubagentResult], None] | None = None,
                  **options: Any) -> Tool:
    """Build the ``subagent`` tool for a main agent: ``{"brief": str}`` -> summary + references.

    Args:
        client: the client subagents use (offline: one whose brain explores).
        workspace: the subagents' folder.
        on_result: called with each :class:`SubagentResult` (measurement, widgets).
        options: passed to :func:`run_subagent` (``tools``, ``max_summary_tokens``...).

    Returns:
        A :class:`~mini_agent.harness.tools.Tool` declared "read-only" whose result is
        :meth:`SubagentResult.for_main`.
    """
    def run(input: dict[str, Any]) -> str:
        result = run_subagent(input["brief"], client=client, workspace=workspace, **options)
        if on_result is not None:
            on_result(result)
        return result.for_main()
    return Tool("subagent", "Hand a self-contained exploration task to a subagent with a fresh "
                "context window. It returns a short summary and the paths of files holding "
                "its detailed findings.",
                {"type": "object", "properties": {"brief": {
                    "type": "string", "description": "the task, complete in itself"}},
                 "required": ["brief"]}, "read-only", run)


def compare_main_window(brief: str, *, workspace: str | os.PathLike[str], direct_client: Any,
                        main_client: Any, subagent_client: Any) -> dict[str, Any]:
    """Measure the main window with and without delegating ``brief`` to a subagent.

    ``direct``: the main agent explores itself (read-only tools + write_artefact);
    ``delegated``: it has only the ``subagent`` tool. Both histories are counted with
    :func:`mini_agent.core.tokens.approx_tokens`; ``*_input_tokens`` sums ``input_tokens +
    cache_read_input_tokens + cache_creation_input_tokens`` over all requests of each main
    agent (what the main window was billed).

    Args:
        brief: the task both main agents get.
        workspace: the folder the tools work in.
        direct_client: the client of the main agent that explores itself.
        main_client: the client of the main agent that delegates.
        subagent_client: the client its subagents use.

    Returns:
        ``{"direct_window_tokens", "delegated_window_tokens", "saved_tokens" (direct minus
        delegated), "direct_input_tokens", "delegated_input_tokens", "subagent_window_tokens",
        "summary_tokens", "artefacts", "direct_answer", "delegated_answer"}``; the subagent
        figures are summed over every subagent call.
    """
    ws = Workspace(workspace)
    tools = {n: t for n, t in build_tools(ws).items() if n in READ_ONLY_TOOLS}
    tools["write_artefact"] = artefact_tool(ws)
    direct = Agent(direct_client, tools=tools, view_policy=full_view)
    direct_run = direct.run(brief)
    results: list[SubagentResult] = []
    delegating = Agent(main_client, view_policy=full_view, tools={
        "subagent": subagent_tool(client=subagent_client, workspace=ws.root,
                                  on_result=results.append)})
    delegated_run = delegating.run(brief)

    def billed(agent: Agent) -> int:
        return sum(r["usage"].get("input_tokens", 0) + r["usage"].get(
            "cache_read_input_tokens", 0) + r["usage"].get("cache_creation_input_tokens", 0)
            for r in agent.requests)
    d, g = approx_tokens(direct.history), approx_tokens(delegating.history)
    return {"direct_window_tokens": d, "delegated_window_tokens": g, "saved_tokens": d - g,
            "direct_input_tokens": billed(direct), "delegated_input_tokens": billed(delegating),
            "subagent_window_tokens": sum(r.window_tokens for r in results),
            "summary_tokens": sum(r.summary_tokens for r in results),
            "artefacts": [a for r in results for a in r.artefacts],
            "direct_answer": direct_run.text, "delegated_answer": delegated_run.text}
