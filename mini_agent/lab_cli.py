"""The ``mini-agent lab`` subcommand: run a chapter lab from the terminal.

    mini-agent lab checkpoint [--items 60] [--kills 3] [--seed S] [--json] [--naive] [--keep]

``checkpoint`` runs :func:`mini_agent.harness.checkpoint_lab.run_lab`: a ledger job killed with
SIGKILL at seeded points and resumed each time; it passes when no item was applied twice or
lost and the final state equals an uninterrupted run. Exit code 0 on a pass, 1 otherwise,
2 for a usage error. Kept apart from :mod:`mini_agent.cli` so each face stays small.

Source: 004_b74ef821c58ee4ec.txt (lab 1: 50+ items, three forced kills, one right after an
external write; done when nothing is processed twice and the result equals an uninterrupted
run).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO


def add_lab_parser(sub: Any) -> None:
    """Register ``lab`` (with its ``checkpoint`` lab) on the CLI's subparsers.

    Args:
        sub: the CLI's ``add_subparsers()`` object; ``checkpoint`` takes ``--items`` (default
            60), ``--kills`` (default 3), ``--seed`` (default 0), ``--json``, ``--naive`` and
            ``--keep``.
    """
    lab = sub.add_parser("lab", help="run a chapter lab (checkpoint: kill and resume a job)",
                         description="run a chapter lab")
    labs = lab.add_subparsers(dest="lab", metavar="LAB", required=True,
                              help="the lab to run (checkpoint)")
    checkpoint = labs.add_parser(
        "checkpoint", help="a job killed with SIGKILL at seeded points, resumed each time",
        description="post a ledger job to a local system of record, SIGKILL the worker at "
                    "seeded points (one right after an external write) and resume it; pass "
                    "when nothing was applied twice or lost and the final state equals an "
                    "uninterrupted run")
    checkpoint.add_argument("--items", type=int, default=60, metavar="N",
                            help="items in the job (default: %(default)s)")
    checkpoint.add_argument("--kills", type=int, default=3, metavar="K",
                            help="SIGKILLs at seeded points (default: %(default)s)")
    checkpoint.add_argument("--seed", type=int, default=0, metavar="S",
                            help="picks payloads and kill points (default: %(default)s)")
    checkpoint.add_argument("--json", action="store_true", help="print one JSON object")
    checkpoint.add_argument("--naive", action="store_true",
                            help="resume the naive way (no reconciliation, random keys)")
    checkpoint.add_argument("--keep", action="store_true",
                            help="keep the work folder (ledger, progress files, results)")


def cmd_lab(args: argparse.Namespace, out: TextIO) -> int:
    """Run the chosen lab and print its report.

    Args:
        args: the parsed command line (``items``, ``kills``, ``seed``, ``naive``, ``keep``,
            ``json``).
        out: where the report goes (one JSON object with ``--json``).

    Returns:
        0 on a pass, 1 on a fail or a lab that could not run, 2 on bad input (its message on
        stderr).
    """
    from mini_agent.harness.checkpoint_lab import LabError, run_lab

    try:
        report = run_lab(items=args.items, kills=args.kills, seed=args.seed, naive=args.naive,
                         keep=args.keep)
    except ValueError as exc:
        print(f"mini-agent lab checkpoint: {exc}", file=sys.stderr)
        return 2
    except LabError as exc:
        print(f"mini-agent lab checkpoint: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report), file=out)
    else:
        points = ", ".join(f"{p['item']} {p['phase']}" for p in report["kill_points"])
        print(f"items: {report['items']}   kills: {report['kills']} ({points})\n"
              f"applied twice: {report['applied_twice']}   lost: {report['lost']}   "
              f"equal to an uninterrupted run: {report['equal_to_uninterrupted']}\n"
              f"reconciled by key: {report['reconciled']['found']} found, "
              f"{report['reconciled']['redone']} redone   server survived the kills: "
              f"{report['server_survived_kills']}\n"
              f"{'PASS' if report['passed'] else 'FAIL'} in {report['seconds']} s", file=out)
    return 0 if report["passed"] else 1
