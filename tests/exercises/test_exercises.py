"""Every exercise in one place: checks pass on solutions/, stubs score 0, no drift (in CI).

Exercises are discovered by globbing ``tests/exercises/checks_NN_*.py``, so a new episode's
checks are picked up without editing this file.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mini_agent.grading import (
    REPO_ROOT, STUB_HEADER, collect_checks, find_file, grade, load_module, make_exercises,
    make_stub, run_checks)

CHECKS_DIR = Path(__file__).resolve().parent
CHECK_FILES = sorted(CHECKS_DIR.glob("checks_[0-9][0-9]_*.py"))
EXERCISES = [p.stem.split("_")[1] for p in CHECK_FILES]


def test_there_are_exercises():
    assert "03" in EXERCISES


@pytest.mark.parametrize("exercise", EXERCISES)
def test_every_check_passes_on_the_solution(exercise):
    card = grade(exercise, implementation="solutions")
    failed = [f"{c.name}: {c.detail}" for c in card.checks if not c.passed]
    assert not failed, "\n".join(failed)
    assert card.checks and card.score == card.total > 0


@pytest.mark.parametrize("exercise", EXERCISES)
def test_untouched_stub_scores_zero(exercise, tmp_path):
    solution = find_file("solutions", exercise)
    stub = tmp_path / solution.name
    stub.write_text(STUB_HEADER.format(name=solution.name, exercise=exercise)
                    + make_stub(solution.read_text(encoding="utf-8"), exercise), encoding="utf-8")
    checks = load_module(find_file("tests/exercises", f"checks_{exercise}"))
    card = run_checks(exercise, checks, load_module(stub), implementation="stub")
    assert card.total > 0
    passed = [c.name for c in card.checks if c.passed]
    assert card.score == 0 and not passed, f"checks passing on an empty stub: {passed}"
    assert all("not implemented" in c.detail for c in card.checks)


@pytest.mark.parametrize("exercise", EXERCISES)
def test_every_check_has_points_and_a_hint(exercise):
    checks = collect_checks(load_module(find_file("tests/exercises", f"checks_{exercise}")))
    assert checks
    for fn in checks:
        assert fn.grading["points"] >= 1 and fn.grading["hint"].strip(), fn.__name__


def test_every_solution_has_checks():
    solutions = sorted(p.name[:2] for p in (REPO_ROOT / "solutions").glob("[0-9][0-9]_*.py"))
    assert set(solutions) <= set(EXERCISES), "a solution without checks_NN_*.py"


@pytest.mark.skipif(not os.environ.get("CI"),
                    reason="exercises/ vs solutions/ drift is checked only when CI is set "
                           "(.ci/run also runs `mini-agent make-exercises --check`); outside "
                           "CI, edits in exercises/ are your work")
def test_exercises_are_in_sync_with_solutions():
    assert make_exercises(check=True) == [], (
        "exercises/ drifted from solutions/: after changing solutions/, run "
        "`mini-agent make-exercises --force` (it overwrites exercises/ and discards any edits "
        "in them) and commit")
