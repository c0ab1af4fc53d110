"""The ``mini-agent`` command line: its subcommands, options and help texts.

:func:`build_parser` describes every subcommand :mod:`mini_agent.cli` runs (the list is in
that module's docstring); a usage error raises :class:`UsageError` so ``grade --json`` can
still print its one JSON document.

Source: Python ``argparse``.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from mini_agent.grading.grader import IMPLEMENTATIONS
from mini_agent.grading.registry import DEFAULT_TIME_LIMIT_SECONDS

SESSIONS_DIR = "sessions"
"""Where the REPL logs sessions, relative to the current folder."""


class UsageError(Exception):
    """A command line argparse refused; :func:`main` reports it and returns 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, except that a usage error raises :class:`UsageError` instead of exiting, so
    ``grade --json`` can still print its one JSON document."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        raise UsageError(f"{self.prog}: error: {message}")


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser (subcommands as in the module docstring).

    Returns:
        The parser; a usage error raises :class:`UsageError` instead of exiting.
    """
    from mini_agent import cli
    summary = cli.__doc__.splitlines()[0].replace("``", "")  # plain text in a terminal
    parser = _Parser(
        prog="mini-agent", description=f"{summary} Without a COMMAND: the REPL (/stats, "
                                       "/history, /quit).")
    parser.add_argument("--resume", metavar="ID",
                        help="continue a logged session in the REPL (ids: mini-agent sessions)")
    parser.add_argument("--workspace", metavar="DIR",
                        help="directory the REPL's tools work in (default: a copy of the demo "
                             "project offline, the current folder online)")
    sessions_dir_help = f"where session logs live (default: ./{SESSIONS_DIR})"
    parser.add_argument("--sessions-dir", metavar="DIR", default=SESSIONS_DIR,
                        help=sessions_dir_help)
    settings_help = ("run the command hooks of this Claude-Code-shaped settings JSON "
                     "(PreToolUse, Stop...; they run in the current folder). Never read by "
                     "itself: not even .claude/settings.json, so a demo runs no stray hook")
    parser.add_argument("--settings", metavar="FILE", help=settings_help)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, help: str, details: str = "") -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help + details)

    demo = command("demo", "run the bundled demo task end to end, transcript live, then /stats")
    demo.add_argument("--max-turns", type=int, default=40, metavar="N",
                      help="stop after N model requests (default: %(default)s)")
    demo.add_argument("--keep-workspace", action="store_true",
                      help="keep the copy of the demo project (its path is printed)")
    demo.add_argument("--workspace", metavar="DIR",
                      help="copy the demo project under this directory (default: a temp dir)")
    demo.add_argument("--settings", metavar="FILE", default=argparse.SUPPRESS,
                      help=settings_help)
    analyze = command("analyze", "what masking would save on a real transcript")
    analyze.add_argument("path", help="a Claude Code session .jsonl, a mini-swe-agent "
                                      ".traj.json, a SWE-agent .traj or a messages .json")
    analyze.add_argument("--keep", type=int, default=4, metavar="N",
                         help="newest tool results kept verbatim (default: %(default)s)")
    analyze.add_argument("--json", action="store_true", help="print JSON instead of a table")
    evaluate = command("evaluate", "replay sessions under each context policy: tokens, USD "
                                   "with caching, hit rate, facts kept, cost over the bound "
                                   "(exit 0 when every file was evaluated, 1 when a file "
                                   "failed, 2 for a usage error; a .json in a folder that is "
                                   "not a transcript is skipped, named on stderr)",
                       ". The bound is the hindsight bound (the cheapest masking schedule, "
                       "found knowing the whole session): a policy's 'vs best' is its USD over "
                       "the bound's, so 1.00x is as cheap as masking gets.")
    evaluate.add_argument("paths", nargs="*", metavar="PATH",
                          help="transcript files or folders (e.g. ~/.claude/projects); a "
                               "folder gives every *.jsonl, *.traj.json, *.traj and *.json "
                               "under it: Claude Code sessions, mini-swe-agent and SWE-agent "
                               "trajectories, messages JSON")
    evaluate.add_argument("--sample", type=int, default=0, metavar="N",
                          help="also evaluate N kit-generated sessions (labelled, not "
                               "recordings): try it without sessions of your own")
    evaluate.add_argument("--policies", metavar="P,...",
                          help="comma-separated policy names (default: raw, mask-10, "
                               "chunked-8, payback, breakeven, micro_compact, compact, "
                               "lifecycle, server_clear, server_compact, summary); any N "
                               "works: mask-N keeps the newest N tool results verbatim and "
                               "masks the rest on every request, chunked-N keeps the newest 4 "
                               "and masks the older ones N at a time (fewer cache breaks)")
    evaluate.add_argument("--model", metavar="M", help="price every session as this model id "
                                                       "(default: each session's own; an "
                                                       "unknown id lists the known ones)")
    evaluate.add_argument("--json", action="store_true", help="print a JSON list, one object "
                                                              "per session")
    evaluate.add_argument("--csv", metavar="FILE", help="also write one row per session and "
                                                        "policy to FILE (- prints them instead "
                                                        "of the tables)")
    evaluate.add_argument("--workers", type=int, default=1, metavar="N",
                          help="processes on this machine (default: %(default)s)")
    evaluate.add_argument("--scheduler", metavar="ADDRESS",
                          help="run on a Dask cluster (tcp://host:8786)")
    grade = command("grade", "grade exercises/NN_*.py of the folder you work in and print a "
                             "scorecard (exit 0 at full marks, 1 below, 2 for a usage error)")
    grade.add_argument("exercise", nargs="?", help="exercise id: 3, 03 or 03_masking")
    grade.add_argument("--all", action="store_true", help="grade every exercise in one call")
    grade.add_argument("--json", action="store_true",
                       help="print one JSON document (a scorecard, all of them, or an error)")
    grade.add_argument("--root", metavar="DIR",
                       help="the folder holding exercises/ (default: the current folder or "
                            "the nearest one above it that has exercises/)")
    grade.add_argument("--time-limit", type=float, metavar="SECONDS",
                       default=DEFAULT_TIME_LIMIT_SECONDS,
                       help="time limit of each check (default: %(default)g s)")
    grade.add_argument("--implementation", choices=IMPLEMENTATIONS, default="exercises",
                       help="what to grade: your exercises/ (default), the reference "
                            "solutions/, or the kit's own package")
    make = command("make-exercises", "(maintainers) create missing exercises/ stubs from "
                                     "solutions/; edited files are kept unless --force")
    make.add_argument("--check", action="store_true", help="only report drift (exit 1)")
    make.add_argument("--force", action="store_true",
                      help="also overwrite exercise files that differ (discards your edits)")
    make.add_argument("--root", metavar="DIR",
                      help="the folder holding solutions/ (default: found from here)")
    sessions = command("sessions", "list logged sessions")
    sessions.add_argument("--sessions-dir", metavar="DIR", default=argparse.SUPPRESS,
                          help=sessions_dir_help)
    record = command("record-outputs",
                     "execute notebooks and record their checked cells' outputs")
    record.add_argument("notebooks", nargs="*", metavar="NOTEBOOK",
                        help="notebook paths (default: every notebook in notebooks/)")
    from mini_agent.lab_cli import add_lab_parser
    add_lab_parser(sub)
    return parser
