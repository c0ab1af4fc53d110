"""The ``mini-agent`` command: a REPL and the kit's subcommands.

    mini-agent                       REPL (/stats, /history, /quit)
    mini-agent --settings FILE [demo]  the same, with the command hooks of a settings JSON
    mini-agent --resume ID           continue a logged session in the REPL
    mini-agent demo                  fix the demo project's two planted bugs, live, then /stats
    mini-agent analyze PATH [--keep N] [--json]   what masking would save on a real transcript
    mini-agent evaluate PATH... [--sample N] [--policies P,...] [--model M] [--json]
               [--csv FILE] [--workers N] [--scheduler ADDRESS]   every context policy
    mini-agent grade NN|--all [--json] [--root DIR]   grade exercises/NN_*.py of this folder
    mini-agent make-exercises [--check] [--force]  (maintainers) exercises/ from solutions/
    mini-agent sessions              list logged sessions
    mini-agent record-outputs [NB...]             record notebooks' checked outputs
    mini-agent lab checkpoint [--items N] [--kills K] [--seed S] [--json]   kill-and-resume lab

Without ``ANTHROPIC_API_KEY`` everything runs offline (the offline Claude,
:mod:`mini_agent.offline`, with the DemoBrain) and one line says so; with a key the same code
talks to the real API (``anthropic.AsyncAnthropic()``, model from ``config.model_name()``).
Every agent run goes through :class:`mini_agent.harness.agent.Agent` and its loop.

The agent's parts (the console, the loop, the ``anthropic`` SDK) are imported by the commands
that run an agent: ``grade``, ``evaluate`` and the others start without the SDK (seconds of
CPU on a shared classroom server).

IO: terminal, files.

Source: 000_86e3ff2076a5ae37.txt (the REPL and its ``/stats`` and ``/history`` commands;
``/history`` shows the first 2,000 characters).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Sequence, TextIO

from mini_agent.harness import config
from mini_agent.cli_parser import SESSIONS_DIR, UsageError, build_parser  # noqa: F401



def _mode_line() -> str:
    if config.is_online():
        return f"online: the real Anthropic API, model {config.model_name()}"
    return "offline: no ANTHROPIC_API_KEY, the offline Claude answers (set a key to go online)"


def _say_hooks(args: argparse.Namespace, hooks: Any, out: TextIO) -> None:
    if hooks is not None:
        print(f"hooks: the command hooks of {args.settings} (--settings; run in {Path.cwd()})",
              file=out)


def copy_demo_project(parent: Path | None = None) -> Path:
    """Copy the bundled demo project (``mini_agent.demo``) to ``<parent>/project``.

    Args:
        parent: the folder to copy into; None makes a new temporary folder.

    Returns:
        The workspace path (the copy).
    """
    from mini_agent.demo import copy_demo_workspace
    return copy_demo_workspace(Path(parent) / "project" if parent else None)


def make_client(workspace: Path) -> Any:
    """Make the client the agent talks to.

    Args:
        workspace: the folder the agent works in (the offline DemoBrain answers about it).

    Returns:
        ``anthropic.AsyncAnthropic()`` when online (``ANTHROPIC_API_KEY`` set); else the offline
        async client with the DemoBrain.
    """
    if config.is_online():
        import anthropic
        return anthropic.AsyncAnthropic()
    from mini_agent.offline import offline_async_client
    from mini_agent.offline.demo_brain import DemoBrain
    return offline_async_client(DemoBrain())


def demo_task() -> str:
    """Return the prompt of the demo run.

    Returns:
        ``mini_agent.demo.DEMO_TASK``.
    """
    from mini_agent.demo import DEMO_TASK
    return DEMO_TASK


def build_agent(workspace: Path, *, session: Any = None, **kwargs: Any) -> Any:
    """Build an :class:`~mini_agent.harness.agent.Agent` with the workspace's tools and client.

    Args:
        workspace: the folder the tools read, edit and run commands in.
        session: a SessionWriter to log to, or None (no session log).
        kwargs: passed to ``Agent`` (``max_turns``...).

    Returns:
        The agent, on the model of ``config.model_name()``.
    """
    from mini_agent.harness.agent import Agent
    from mini_agent.harness.tools import build_tools
    return Agent(make_client(workspace), model=config.model_name(),
                 tools=build_tools(workspace), session=session, workspace=workspace, **kwargs)


# ------------------------------------------------------------------ subcommands

def cmd_demo(args: argparse.Namespace, out: TextIO, *, hooks: Any = None) -> int:
    """Run the demo task in a fresh copy of the demo project; print transcript and stats.

    Args:
        args: the parsed command line (``workspace``, ``keep_workspace``, ``max_turns``).
        out: where the transcript goes.
        hooks: the HookManager of ``--settings``, or None (no hooks).

    Returns:
        0 when the run ended; 1 on an API error (its line on stderr).
    """
    from mini_agent.console import anthropic_errors, api_error_line, event_printer
    print(_mode_line(), file=out)
    _say_hooks(args, hooks, out)
    workspace = copy_demo_project(Path(args.workspace) if args.workspace else None)
    agent = build_agent(workspace, max_turns=args.max_turns, hooks=hooks)
    print(f"task: {demo_task()}", file=out)
    show = event_printer(out)
    try:
        result = asyncio.run(agent.arun(demo_task(), on_event=show))
    except anthropic_errors() as error:
        show.end_line()
        print(api_error_line(error), file=sys.stderr)
        return 1
    else:
        print(f"stats: {agent.stats_line()}", file=out)
        print(f"requests: {len(agent.requests)}   stop: {result.exit_status}", file=out)
        return 0
    finally:
        if args.keep_workspace:
            print(f"workspace kept at {workspace}", file=out)
        else:  # only what this run created: the copy, and its temp parent when there was one
            shutil.rmtree(workspace if args.workspace else workspace.parent, ignore_errors=True)


def cmd_repl(args: argparse.Namespace, out: TextIO, read: Callable[[str], str], *,
             hooks: Any = None) -> int:
    """Run the interactive REPL, in the workspace that fits.

    The workspace is ``--workspace``, else the one a resumed session recorded, else the current
    folder online, else (offline) a temporary copy of the demo project, removed at the end.

    Args:
        args: the parsed command line (``workspace``, ``resume``, ``sessions_dir``).
        out: where the transcript goes.
        read: reads one line after a prompt.
        hooks: the HookManager of ``--settings``, or None (no hooks).

    Returns:
        The REPL's exit code: 0, or 2 when a session cannot be resumed.
    """
    from mini_agent.harness.session import recorded_workspace
    print(_mode_line(), file=out)
    _say_hooks(args, hooks, out)
    scratch = None
    tools_note = "the agent can edit files and run commands there"
    recorded = (recorded_workspace(args.sessions_dir, args.resume)
                if args.resume and not args.workspace else None)
    if args.workspace:
        workspace = Path(args.workspace).resolve()
        note = f"given with --workspace; {tools_note}"
    elif recorded is not None and recorded.is_dir():
        workspace = recorded
        note = f"where session {args.resume} worked; {tools_note}"
    elif config.is_online():
        workspace = Path.cwd()
        note = f"the current folder; {tools_note}"
    else:
        workspace = scratch = copy_demo_project()
        note = f"a fresh copy of the demo project; try: {demo_task()}"
    lines = [f"workspace: {workspace} ({note})"]
    if args.resume and not args.workspace and workspace != recorded:
        why = (f"its workspace {recorded} no longer exists" if recorded is not None
               else "it recorded no workspace")
        if scratch is not None:
            lines.append(f"warning: the workspace is a fresh copy of the demo project; earlier "
                         f"edits of session {args.resume} are not in it ({why})")
        elif recorded is not None:
            lines.append(f"warning: session {args.resume} worked in {recorded}, which no "
                         "longer exists; working in the current folder instead")
    try:
        return _start_repl(args, workspace, out=out, read=read,
                           workspace_lines=lines, hooks=hooks)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch.parent, ignore_errors=True)


def _start_repl(args: argparse.Namespace, workspace: Path, *, out: TextIO,
                read: Callable[[str], str], workspace_lines: Sequence[str],
                hooks: Any = None) -> int:
    """Build the agent, resume or open a session, say where it works, run the REPL; 2 when it
    cannot start."""
    from mini_agent.console import repl
    from mini_agent.harness.session import SessionWriter
    agent = build_agent(workspace, hooks=hooks)
    if args.resume:
        try:
            report = agent.resume(args.resume, directory=args.sessions_dir)
        except (OSError, ValueError) as exc:  # missing, a directory, unreadable, invalid
            print(f"mini-agent: cannot resume: {exc}", file=sys.stderr)
            return 2
        print(f"resumed {args.resume}: {len(agent.history)} messages; {report}", file=out)
    else:
        agent.session = SessionWriter(args.sessions_dir, clock=agent.clock)
        print(f"session {agent.session.session_id} (resume with --resume)", file=out)
    for line in workspace_lines:
        print(line, file=out)
    print("commands: /stats, /history, /quit", file=out)
    return repl(agent, out=out, read=read)


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None,
         read: Callable[[str], str] = input) -> int:
    """Run ``mini-agent`` with a command line.

    Args:
        argv: the arguments after the program name (default ``sys.argv[1:]``).
        out: where output goes (default stdout).
        read: reads one line in the REPL (default ``input``).

    Returns:
        The exit code: 0 ok; 1 when the subcommand reports a failure (below full marks, a
        drift, an API error); 2 for a usage error (with ``grade --json`` also one JSON document);
        141 when the reader of stdout went away (``mini-agent analyze X | head``), quietly;
        130 after Ctrl-C in ``grade`` or ``evaluate`` (one line on stderr, no traceback).
    """
    try:
        code = _main(argv, out=out, read=read)
        if out is None:
            sys.stdout.flush()   # a closed pipe shows here, not in the interpreter's exit
        return code
    except BrokenPipeError:
        # the reader (head, less) closed the pipe: stop quietly, as `cat` does on SIGPIPE
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


def no_sessions_text(directory: str | Path) -> str:
    """Say that a sessions folder holds no session log, and what writes one there.

    Args:
        directory: the sessions folder (``--sessions-dir``, default ``./sessions``).

    Returns:
        ``"no sessions in /abs/sessions (the interactive `mini-agent` logs each conversation
        there; the demo does not)"``, "(no such folder yet; ...)" when it does not exist.
    """
    folder = Path(directory).expanduser().resolve()
    missing = "" if folder.is_dir() else "no such folder yet; "
    return (f"no sessions in {folder} ({missing}the interactive `mini-agent` logs each "
            "conversation there; the demo does not)")


EXIT_INTERRUPTED = 130
"""The exit code after Ctrl-C (128 + SIGINT), as a shell reports a command it interrupted."""


def interrupted(message: str, out: TextIO, *, as_json: bool = False) -> int:
    """Report a Ctrl-C in one line on stderr instead of a traceback.

    Args:
        message: what stopped ("grading interrupted; no worker left running").
        out: where ``grade --json`` prints its one JSON document.
        as_json: also print that document (``{"error": message, ...}``) on ``out``.

    Returns:
        :data:`EXIT_INTERRUPTED` (130).
    """
    print(message, file=sys.stderr)
    if as_json:
        from mini_agent.grading.command import error_document
        print(json.dumps(error_document(message), indent=1), file=out)
    return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None, *, out: TextIO | None,
          read: Callable[[str], str]) -> int:
    out = out or sys.stdout
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
    except UsageError as exc:
        print(exc, file=sys.stderr)
        if "grade" in argv and "--json" in argv:  # one JSON document, errors included
            from mini_agent.grading.command import error_document
            print(json.dumps(error_document(str(exc)), indent=1), file=out)
        return 2
    hooks = None
    if args.settings:
        if args.command not in (None, "demo"):
            print(f"mini-agent: error: --settings applies to the REPL and demo, not "
                  f"{args.command}", file=sys.stderr)
            return 2
        from mini_agent.cli_settings import SettingsFileError, load_settings_hooks
        try:
            hooks = load_settings_hooks(args.settings)
        except SettingsFileError as exc:
            print(exc, file=sys.stderr)
            return 2
    if args.command == "demo":
        return cmd_demo(args, out, hooks=hooks)
    if args.command == "analyze":
        from mini_agent.harness.analyze import main_analyze
        return main_analyze(args.path, keep=args.keep, as_json=args.json)
    if args.command == "evaluate":
        from mini_agent.harness.evaluate_runner import main_evaluate
        policies = [p.strip() for p in args.policies.split(",") if p.strip()] \
            if args.policies else None
        try:
            return main_evaluate(args.paths, policies=policies, model=args.model,
                                 as_json=args.json, csv_path=args.csv, workers=args.workers,
                                 scheduler=args.scheduler, samples=args.sample)
        except KeyboardInterrupt:
            return interrupted("evaluation interrupted", out)
    if args.command == "grade":
        from mini_agent.grading import main_grade
        try:
            return main_grade(args.exercise, all_exercises=args.all, as_json=args.json,
                              implementation=args.implementation, root=args.root,
                              time_limit_seconds=args.time_limit, out=out)
        except KeyboardInterrupt:  # the supervisor killed the worker before this
            return interrupted("grading interrupted; no worker left running", out,
                               as_json=args.json)
    if args.command == "make-exercises":
        from mini_agent.grading import main_make_exercises
        return main_make_exercises(check=args.check, force=args.force, root=args.root, out=out)
    if args.command == "record-outputs":
        from mini_agent.notebook_outputs import main_record
        return main_record(args.notebooks)
    if args.command == "lab":
        from mini_agent.lab_cli import cmd_lab
        return cmd_lab(args, out)
    if args.command == "sessions":
        from mini_agent.harness.session import list_sessions, main_sessions
        if not list_sessions(args.sessions_dir):
            print(no_sessions_text(args.sessions_dir), file=out)
            return 0
        return main_sessions(args.sessions_dir)
    return cmd_repl(args, out, read, hooks=hooks)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
