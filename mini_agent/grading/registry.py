"""The graded checks: how a check is declared, and where each exercise's checks are found.

A check is a plain function ``check_*(impl)`` marked with :func:`check` (points, a hint, and
optionally its own time limit), asserting on ``impl``, the implementation under test (a
learner's exercise file, a reference solution, or the ``mini_agent`` package itself). The
checks of exercise NN live in ``mini_agent/grading/checks/checks_NN_topic.py``: they ship inside
the package, so any install (editable or not) can grade.

This module only finds and describes checks; running them is :mod:`.runner`'s job.

Source: the kit's grading design (``docs/grading.md``); no seed covers grading.
"""

from __future__ import annotations

import importlib
import re
from importlib import resources
from types import ModuleType
from typing import Callable

CHECKS_PACKAGE = "mini_agent.grading.checks"
DEFAULT_TIME_LIMIT_SECONDS = 10.0
"""How long one check may run before it fails as a probable endless loop (seconds)."""


def check(*, points: int = 1, hint: str = "", time_limit_seconds: float | None = None,
          guards_input: bool = False) -> Callable[[Callable], Callable]:
    """Mark a function ``check_*(impl)`` as a graded check.

    Args:
        points: what the check is worth (at least 1).
        hint: advice shown to the learner when the check fails (advice, not the answer).
        time_limit_seconds: this check's own time limit; None uses the grader's default
            (:data:`DEFAULT_TIME_LIMIT_SECONDS` unless the caller of ``grade`` sets another).
        guards_input: the check is there to catch the code changing its input (default
            False): when several checks fail because the code changed its input, the
            scorecard says so once with this check's hint (copy before changing) instead of
            their own hints (:meth:`~.scorecard.Scorecard.changes`).
    Returns:
        A decorator that stores ``{"points", "hint", "time_limit_seconds", "guards_input"}``
        as ``fn.grading`` and returns ``fn`` itself.
    Raises:
        ValueError: points < 1 or a time limit that is not positive.
    """
    if points <= 0:
        raise ValueError("a check is worth at least one point")
    if time_limit_seconds is not None and time_limit_seconds <= 0:
        raise ValueError(f"time_limit_seconds must be positive, got {time_limit_seconds}")

    def mark(fn: Callable) -> Callable:
        fn.grading = {"points": points, "hint": hint,  # type: ignore[attr-defined]
                      "time_limit_seconds": time_limit_seconds, "guards_input": guards_input}
        return fn
    return mark


def check_files() -> dict[str, str]:
    """List every exercise that has checks.

    Read from the installed package (``importlib.resources``), never from a working copy.

    Returns:
        ``{"03": "checks_03_masking", ...}``, sorted by exercise id.
    """
    names = sorted(entry.name[:-3] for entry in resources.files(CHECKS_PACKAGE).iterdir()
                   if re.fullmatch(r"checks_\d\d_\w+\.py", entry.name))
    return {name[7:9]: name for name in names}


def exercise_ids() -> list[str]:
    """List the exercise ids that have checks.

    Returns:
        The two-digit ids, sorted: ``["01", ..., "11"]``.
    """
    return list(check_files())


def normalize_exercise(exercise: str | int) -> str:
    """Return the two-digit id of an exercise, however the learner wrote it.

    Args:
        exercise: the id as the learner typed it: ``3``, ``"03"``, ``"03_masking"`` or
            ``"03_masking.py"``.

    Returns:
        "03".

    Raises:
        FileNotFoundError: no checks for that number, or a topic that does not match them;
            the message lists the valid ids.

    >>> normalize_exercise("3"), normalize_exercise("03_masking")
    ('03', '03')
    """
    text = str(exercise).strip()
    files = check_files()
    m = re.fullmatch(r"(\d{1,2})(_\w+?)?(\.py)?", text)
    number = m[1].zfill(2) if m else None
    name = files.get(number or "")
    if name and (not m[2] or name == f"checks_{number}{m[2]}"):  # type: ignore[index]
        return number  # type: ignore[return-value]
    valid = ", ".join(files) or "none"
    why = (f" (exercise {number} is {name[7:]})" if name else
           f" (no checks for exercise {number})" if number else "")
    raise FileNotFoundError(f"unknown exercise {text!r}{why}; valid ids: {valid}")


def checks_module(exercise: str | int) -> ModuleType:
    """Import the checks module of an exercise.

    Args:
        exercise: ``3``, ``"03"`` or ``"03_masking"`` (see :func:`normalize_exercise`).

    Returns:
        The module ``mini_agent.grading.checks.checks_NN_topic``.

    Raises:
        FileNotFoundError: an unknown exercise (see :func:`normalize_exercise`).
    """
    number = normalize_exercise(exercise)
    return importlib.import_module(f"{CHECKS_PACKAGE}.{check_files()[number]}")


def collect_checks(module: ModuleType) -> list[Callable]:
    """Collect the graded checks of a checks module.

    Args:
        module: a ``checks_NN_topic`` module.

    Returns:
        Its :func:`check`-marked ``check_*`` functions in definition order.
    """
    found = [v for k, v in vars(module).items()
             if k.startswith("check_") and callable(v) and hasattr(v, "grading")]
    return sorted(found, key=lambda fn: fn.__code__.co_firstlineno)


def time_limit(fn: Callable, default_seconds: float) -> float:
    """Return the time limit of one check.

    Args:
        fn: a :func:`check`-marked function.
        default_seconds: the grader's default, used when the check declares none (seconds).

    Returns:
        The check's own limit, else ``default_seconds`` (seconds, as a float).
    """
    own = fn.grading.get("time_limit_seconds")  # type: ignore[attr-defined]
    return float(own if own is not None else default_seconds)
