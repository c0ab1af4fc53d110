"""Grade the learner's exercises and keep ``exercises/`` generated from ``solutions/``.

The pattern (nbgrader markers, minitorch stubs, minbpe's tests over every implementation):

* ``solutions/NN_topic.py`` is the source of truth. Answer bodies sit between
  ``# BEGIN SOLUTION`` and ``# END SOLUTION`` lines.
* :func:`make_exercises` writes ``exercises/NN_topic.py`` from it: each marked region becomes
  ``raise NotImplementedError("Exercise NN.k")`` at the marker's indentation, so the stub
  keeps the signature and docstring. ``--check`` fails when the two have drifted.
* ``tests/exercises/checks_NN_topic.py`` holds the checks: plain functions ``check_*(impl)``
  decorated with :func:`check` (points and a hint), each asserting on ``impl``, the module
  under test. CI runs them on ``solutions/`` (all pass) and on the untouched stubs (score 0).
* :func:`grade` runs one exercise's checks against ``exercises/`` (or ``solutions/``) and
  returns a :class:`Scorecard` (text, JSON for an LMS, a widget in notebooks).

IO: reads and writes files under the repository root. Taught in ``notebooks/00_start_here``.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib.util
import json
import re
import sys
import traceback
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from .executor import call_outside_event_loop

BEGIN = "# BEGIN SOLUTION"
END = "# END SOLUTION"
REPO_ROOT = Path(__file__).resolve().parent.parent
"""The repository root (the kit is installed editable: ``pip install -e .``)."""


def check(*, points: int = 1, hint: str = "") -> Callable[[Callable], Callable]:
    """Mark a function ``check_*(impl)`` as a graded check worth ``points``, with a ``hint``.

    The hint is shown to the learner when the check fails; write it as advice, not the answer.
    """
    if points <= 0:
        raise ValueError("a check is worth at least one point")

    def mark(fn: Callable) -> Callable:
        fn.grading = {"points": points, "hint": hint}  # type: ignore[attr-defined]
        return fn
    return mark


@dataclasses.dataclass
class CheckResult:
    """One check's outcome: ``name``, ``points`` (earned, 0 if failed), ``max_points``,
    ``passed``, ``hint`` (empty when passed) and ``detail`` (the failure's message)."""

    name: str
    points: int
    max_points: int
    passed: bool
    hint: str = ""
    detail: str = ""


@dataclasses.dataclass
class Scorecard:
    """A graded exercise: ``exercise`` ("03"), the implementation graded, and its checks."""

    exercise: str
    implementation: str
    checks: list[CheckResult]

    @property
    def score(self) -> int:
        """Points earned."""
        return sum(c.points for c in self.checks)

    @property
    def total(self) -> int:
        """Points available."""
        return sum(c.max_points for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"exercise", "score", "total", "checks": [{"name", "points", "passed",
        "hint"}]}`` (the LMS shape printed by ``mini-agent grade NN --json``)."""
        return {"exercise": self.exercise, "score": self.score, "total": self.total,
                "checks": [{"name": c.name, "points": c.points, "passed": c.passed,
                            "hint": c.hint} for c in self.checks]}

    def to_text(self) -> str:
        """Return a plain-text scorecard: one line per check, hints under failures, a total."""
        lines = [f"Exercise {self.exercise} ({self.implementation})"]
        for c in self.checks:
            mark = "PASS" if c.passed else "FAIL"
            lines.append(f"  [{mark}] {c.name:<44} {c.points}/{c.max_points}")
            if not c.passed:
                lines.append(f"         hint: {c.hint}")
                if c.detail:
                    lines.append(f"         got:  {c.detail}")
        lines.append(f"  score: {self.score}/{self.total}")
        return "\n".join(lines)


def find_file(folder: str, exercise: str, *, root: Path | None = None) -> Path:
    """Return ``<root>/<folder>/<exercise>_*.py``. Raises FileNotFoundError if none matches."""
    root = root or REPO_ROOT
    matches = sorted((root / folder).glob(f"{exercise}_*.py"))
    if not matches:
        raise FileNotFoundError(f"no {folder}/{exercise}_*.py under {root}")
    return matches[0]


def exercise_ids(*, root: Path | None = None) -> list[str]:
    """The exercise numbers that have checks: ``["01", ..., "08"]`` from
    ``tests/exercises/checks_NN_*.py``, sorted."""
    root = root or REPO_ROOT
    return sorted({p.name[7:9] for p in (root / "tests" / "exercises").glob(
        "checks_[0-9][0-9]_*.py")})


def normalize_exercise(exercise: str | int, *, root: Path | None = None) -> str:
    """Return the two-digit id of an exercise written as ``3``, ``"03"``, ``"03_masking"`` or
    ``"03_masking.py"``.

    Raises: FileNotFoundError (no ``checks_NN_*.py``, or a topic that does not match it), with
    the valid ids in the message.

    >>> normalize_exercise("3"), normalize_exercise("03_masking")
    ('03', '03')
    """
    root = root or REPO_ROOT
    text = str(exercise).strip()
    m = re.fullmatch(r"(\d{1,2})(_\w+?)?(\.py)?", text)
    number = m[1].zfill(2) if m else None
    checks = sorted((root / "tests" / "exercises").glob(f"checks_{number}_*.py")) if m else []
    topic = m and m[2]
    if checks and (not topic or any(p.stem == f"checks_{number}{topic}" for p in checks)):
        return number  # type: ignore[return-value]
    valid = ", ".join(exercise_ids(root=root)) or "none"
    why = (f" (exercise {number} is {checks[0].stem[7:]})" if checks else
           f" (no tests/exercises/checks_{number}_*.py)" if number else "")
    raise FileNotFoundError(f"unknown exercise {text!r}{why}; valid ids: {valid}")


def load_module(path: Path, name: str | None = None) -> ModuleType:
    """Import a Python file by path as a fresh module (never cached in ``sys.modules``)."""
    name = name or f"_mini_agent_graded_{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling need the module registered
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


def collect_checks(checks_module: ModuleType) -> list[Callable]:
    """Return the module's ``@check``-marked functions in definition order."""
    found = [v for k, v in vars(checks_module).items()
             if k.startswith("check_") and callable(v) and hasattr(v, "grading")]
    return sorted(found, key=lambda fn: fn.__code__.co_firstlineno)


def run_checks(exercise: str, checks_module: ModuleType, impl: ModuleType, *,
               implementation: str = "") -> Scorecard:
    """Run every check on ``impl``; an exception (assert, NotImplementedError...) fails it.

    Checks of async code call ``asyncio.run``, which refuses to start inside a running loop;
    so where a loop already runs in this thread (a notebook cell), the checks run in a worker
    thread and this call waits for them. The score is the same as in a terminal.
    """
    return call_outside_event_loop(_run_checks, exercise, checks_module, impl,
                                   implementation=implementation)


def _run_checks(exercise: str, checks_module: ModuleType, impl: ModuleType, *,
                implementation: str) -> Scorecard:
    results = []
    for fn in collect_checks(checks_module):
        meta = fn.grading
        try:
            with warnings.catch_warnings():
                # a stub that raises before awaiting leaves the check's coroutines unawaited;
                # that is the stub's state, not something the learner should see as noise
                warnings.filterwarnings("ignore", "coroutine .* was never awaited",
                                        RuntimeWarning)
                try:
                    fn(impl)
                except NotImplementedError:
                    gc.collect()  # finalise those coroutines while the filter is on
                    raise
        except NotImplementedError as exc:
            results.append(CheckResult(fn.__name__, 0, meta["points"], False, meta["hint"],
                                       f"not implemented yet ({exc})"))
        except Exception as exc:  # noqa: BLE001 - any failure of the learner's code is a fail
            detail = str(exc) or type(exc).__name__
            if not isinstance(exc, AssertionError):
                detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            results.append(CheckResult(fn.__name__, 0, meta["points"], False, meta["hint"],
                                       detail[:300]))
        else:
            results.append(CheckResult(fn.__name__, meta["points"], meta["points"], True))
    return Scorecard(exercise, implementation, results)


def grade(exercise: str, *, implementation: str = "exercises",
          root: Path | None = None) -> Scorecard:
    """Grade ``<implementation>/<exercise>_*.py`` with ``tests/exercises/checks_<exercise>_*.py``.

    Args: exercise: "03", also 3, "3" or "03_masking"; implementation: "exercises" (the
    learner's) or "solutions"; root: repository root (default: the one this package lives in).
    Returns: a Scorecard. Raises: FileNotFoundError for an unknown exercise (the message lists
    the valid ids) or a missing implementation file.
    An implementation that fails to import scores 0 on every check, with the error as detail.
    """
    root = root or REPO_ROOT
    exercise = normalize_exercise(exercise, root=root)
    checks_module = load_module(find_file("tests/exercises", f"checks_{exercise}", root=root))
    try:
        path = find_file(implementation, exercise, root=root)
    except FileNotFoundError as exc:
        if implementation != "exercises":
            raise
        raise FileNotFoundError(f"{exc}; `mini-agent make-exercises` creates the missing "
                                "exercise files") from None
    try:
        impl = load_module(path)
    except Exception as exc:  # noqa: BLE001 - a syntax error in the learner's file
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return Scorecard(exercise, str(path.relative_to(root)), [
            CheckResult(fn.__name__, 0, fn.grading["points"], False, fn.grading["hint"],
                        f"could not import {path.name}: {detail}")
            for fn in collect_checks(checks_module)])
    return run_checks(exercise, checks_module, impl,
                      implementation=str(path.relative_to(root)))


# --------------------------------------------------------------------------- stub generation

_MARKER = re.compile(r"^(?P<indent>[ \t]*)# (?P<kind>BEGIN|END) SOLUTION\s*$")


def make_stub(source: str, exercise: str) -> str:
    """Return the exercise stub for a solution file's text.

    Each ``# BEGIN SOLUTION`` ... ``# END SOLUTION`` region (markers included) becomes
    ``raise NotImplementedError("Exercise NN.k")`` at the BEGIN marker's indentation, k
    counting regions from 1. Raises ValueError for unbalanced or nested markers (with line).

    >>> make_stub("def f():\\n    # BEGIN SOLUTION\\n    return 1\\n    # END SOLUTION\\n", "03")
    'def f():\\n    raise NotImplementedError("Exercise 03.1")\\n'
    """
    out: list[str] = []
    inside = False
    k = 0
    for lineno, line in enumerate(source.splitlines(keepends=True), 1):
        m = _MARKER.match(line.rstrip("\n"))
        if m and m["kind"] == "BEGIN":
            if inside:
                raise ValueError(f"line {lineno}: nested {BEGIN}")
            inside = True
            k += 1
            out.append(f'{m["indent"]}raise NotImplementedError("Exercise {exercise}.{k}")\n')
        elif m and m["kind"] == "END":
            if not inside:
                raise ValueError(f"line {lineno}: {END} without {BEGIN}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{BEGIN} without {END} at end of file")
    return "".join(out)


STUB_HEADER = ("# Generated from solutions/{name} by `mini-agent make-exercises`.\n"
               "# Replace each `raise NotImplementedError(...)` with your code, then run\n"
               "# `mini-agent grade {exercise}`. `mini-agent make-exercises` keeps your edits;\n"
               "# only `--force` resets this file to the stubs.\n")


def make_exercises(*, root: Path | None = None, check: bool = False,
                   force: bool = False) -> list[str]:
    """Write (or with ``check=True`` only compare) ``exercises/NN_*.py`` from ``solutions/``.

    A missing exercise file is created. An existing one whose text differs (the learner's
    work) is left alone unless ``force=True``, which overwrites it and discards those edits;
    ``make_exercises(check=True)`` afterwards lists the files that were left alone.
    Returns the list of exercise paths (relative) that were written, or, with ``check``, that
    differ from what would be written (empty means in sync).
    """
    root = root or REPO_ROOT
    changed = []
    for sol in sorted((root / "solutions").glob("[0-9][0-9]_*.py")):
        exercise = sol.name[:2]
        text = STUB_HEADER.format(name=sol.name, exercise=exercise) + make_stub(
            sol.read_text(encoding="utf-8"), exercise)
        target = root / "exercises" / sol.name
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == text or (not check and current is not None and not force):
            continue
        changed.append(str(target.relative_to(root)))
        if not check:
            target.parent.mkdir(exist_ok=True)
            target.write_text(text, encoding="utf-8")
    return changed


def main_grade(exercise: str, *, as_json: bool = False, implementation: str = "exercises") -> int:
    """CLI body of ``mini-agent grade NN`` (NN: ``3``, ``03`` or ``03_masking``): print the
    scorecard; exit code 0 (always, a low score is not an error) or 2 for an unknown exercise,
    with the valid ids on stderr."""
    try:
        card = grade(exercise, implementation=implementation)
    except FileNotFoundError as exc:
        print(f"mini-agent grade: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(card.to_dict()) if as_json else card.to_text())
    return 0
