"""The bodies of ``mini-agent grade`` and ``mini-agent make-exercises``.

``mini-agent grade NN`` exits 0 at full marks, 1 below them (an import error, a timeout, a
failed check), 2 for a usage error (an unknown exercise, no folder to grade, a missing file,
a worker that cannot start). With ``--json`` it prints exactly one JSON document on stdout,
whatever happens: a scorecard, all scorecards (``--all``), or ``{"error": ...}``.

IO: stdout, stderr.

Source: the kit's grading design (``docs/grading.md``: exit codes, one JSON document for an
LMS); no seed covers grading.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

from mini_agent.grading.grader import grade, grade_all
from mini_agent.grading.registry import DEFAULT_TIME_LIMIT_SECONDS, normalize_exercise
from mini_agent.grading.scorecard import installed_version
from mini_agent.grading.stubs import make_exercises
from mini_agent.grading.supervisor import WorkerError

EXIT_FULL_MARKS, EXIT_BELOW_FULL_MARKS, EXIT_USAGE = 0, 1, 2


def error_document(message: str, *, exercise: str | None = None) -> dict[str, Any]:
    """Build the one JSON document ``--json`` prints when grading could not start.

    Args:
        message: why grading could not start (also printed on stderr).
        exercise: the two-digit id when known, else None.

    Returns:
        A scorecard-shaped dict: ``path`` None, ``score`` and ``total`` 0, no checks, the
        message in ``error``.
    """
    return {"exercise": exercise, "path": None, "kit_version": installed_version(),
            "score": 0, "total": 0, "error": message, "checks": []}


def main_grade(exercise: str | None, *, all_exercises: bool = False, as_json: bool = False,
               implementation: str = "exercises", root: str | Path | None = None,
               time_limit_seconds: float = DEFAULT_TIME_LIMIT_SECONDS,
               out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Grade one exercise (or all with ``all_exercises``) and print the scorecard.

    Args:
        exercise: "3", "03" or "03_masking"; None with ``all_exercises``.
        all_exercises: grade every exercise in one call.
        as_json: print one JSON document instead of text.
        implementation: "exercises" (default), "solutions" or "package".
        root: the folder to grade (default: found from the current directory).
        time_limit_seconds: each check's default limit (seconds; default 10, must be positive).
        out: where the scorecard goes (default: stdout).
        err: where a usage error goes (default: stderr).

    Returns:
        0 at full marks, 1 below them, 2 for a usage error (its message on stderr, and in
        the JSON document with ``as_json``).
    """
    out, err = out or sys.stdout, err or sys.stderr
    wrong = ("give one exercise id (3, 03 or 03_masking) or --all"
             if all_exercises == (exercise is not None) else
             f"the time limit must be positive, got {time_limit_seconds:g} s"
             if time_limit_seconds <= 0 else "")
    if wrong:
        return usage_error(wrong, as_json=as_json, exercise=exercise, out=out, err=err)
    try:
        if all_exercises:
            result: Any = grade_all(implementation=implementation, root=root,
                                    time_limit_seconds=time_limit_seconds)
        else:
            result = grade(exercise, implementation=implementation,  # type: ignore[arg-type]
                           root=root, time_limit_seconds=time_limit_seconds)
    except (FileNotFoundError, ValueError, WorkerError) as exc:
        return usage_error(str(exc), as_json=as_json, exercise=exercise, out=out, err=err)
    print(json.dumps(result.to_dict(), indent=1) if as_json else result.to_text(), file=out)
    return EXIT_FULL_MARKS if result.full_marks else EXIT_BELOW_FULL_MARKS


def usage_error(message: str, *, as_json: bool, exercise: str | None = None,
                out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Report a usage error on stderr, and as the JSON document with ``as_json``.

    Args:
        message: what was wrong, printed after ``mini-agent grade: ``.
        as_json: also print :func:`error_document` on ``out``.
        exercise: the exercise as given, or None; the JSON carries its two-digit id when it
            is valid, else the text as given.
        out: where the JSON document goes (default: stdout).
        err: where the message goes (default: stderr).

    Returns:
        2, the usage-error exit code.
    """
    print(f"mini-agent grade: {message}", file=err or sys.stderr)
    if as_json:
        print(json.dumps(error_document(message, exercise=_id(exercise)), indent=1),
              file=out or sys.stdout)
    return EXIT_USAGE


def _id(exercise: str | None) -> str | None:
    try:
        return normalize_exercise(exercise) if exercise is not None else None
    except FileNotFoundError:
        return exercise


def main_make_exercises(*, check: bool = False, force: bool = False,
                        root: str | Path | None = None, out: TextIO | None = None,
                        err: TextIO | None = None) -> int:
    """Create missing exercise files; overwrite edited ones only with ``force``.

    Args:
        check: only compare: list the files of ``exercises/`` that differ from what
            ``solutions/`` would generate, write nothing.
        force: overwrite edited exercise files too (discards the learner's edits).
        root: the folder holding ``solutions/`` (default: found from the current directory).
        out: where the report goes (default: stdout).
        err: where an error goes (default: stderr).

    Returns:
        0 (edited files kept untouched is the normal case); with ``check``, 1 when
        exercises/ differs from what solutions/ would generate; 2 without ``solutions/``
        (a learner's copy: nothing to generate, never "in sync").
    """
    out, err = out or sys.stdout, err or sys.stderr
    try:
        if check:
            changed = make_exercises(root=root, check=True)
            for path in changed:
                print(f"out of date: {path}", file=out)
            if not changed:
                print("exercises/ is in sync with solutions/", file=out)
            return 1 if changed else 0
        written = make_exercises(root=root, force=force)
        kept = make_exercises(root=root, check=True)
    except (FileNotFoundError, ValueError) as exc:
        print(f"mini-agent make-exercises: {exc}", file=err)
        return EXIT_USAGE
    for path in written:
        print(f"wrote {path}", file=out)
    for path in kept:
        print(f"kept {path}: it differs from the stub solutions/ would generate "
              "(your edits?)", file=out)
    if kept:
        print("nothing edited was overwritten; `mini-agent make-exercises --force` overwrites "
              "these files and DISCARDS your edits in them", file=out)
    elif not written:
        print("exercises/ is in sync with solutions/", file=out)
    return 0
