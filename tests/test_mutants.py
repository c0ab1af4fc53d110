"""The mutation suite: every plausible wrong answer under ``mutants/NN/`` scores below full
marks, every correct alternative scores full marks; the kill rate is printed.

Files: ``mutant_*.py`` (wrong on purpose; the docstring's first line names the mistake and the
input that exposes it) and ``alt_*.py`` (correct, written differently). Also: the checks of an
exercise whose functions are the package's own pass on the package module.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_agent.grading import checks_module, load_module, run_checks
from mini_agent.grading.runner import DETAIL_CHARS

MUTANTS = Path(__file__).resolve().parent / "mutants"
FILES = sorted(MUTANTS.glob("[0-9][0-9]/*.py"))
PACKAGE_MODULES = {
    "01": "mini_agent",
    "02": "mini_agent",
    "03": "mini_agent",
    "04": "mini_agent",
    "05": "mini_agent",
    "06": "mini_agent",
    "07": "mini_agent",
    "08": "mini_agent",
    "09": "mini_agent.core.memory_paths",
    "10": "mini_agent.harness.checkpoint",
    "11": "mini_agent.core.retention",
}
"""Exercises whose functions are the package's own: checks run against the package too."""
REPORTING = {"01", "02", "03", "04", "05", "06", "07", "08"}
"""Exercises whose every failing check says its input, the expected value and what came back."""


def _card(path: Path):
    exercise = path.parent.name
    return run_checks(exercise, checks_module(exercise), load_module(path),
                      implementation=path.stem)


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("mutant_")],
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_mutant_is_caught(path):
    card = _card(path)
    assert card.score < card.total, f"{path.name} scored full marks: the checks miss it"


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("alt_")],
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_alternative_gets_full_marks(path):
    card = _card(path)
    failed = [f"{c.name}: {c.detail}" for c in card.checks if not c.passed]
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("exercise", sorted({p.parent.name for p in FILES}))
def test_each_exercise_has_ten_mutants_two_alternatives_and_prints_its_kill_rate(exercise):
    mutants = [p for p in FILES if p.parent.name == exercise and p.name.startswith("mutant_")]
    alts = [p for p in FILES if p.parent.name == exercise and p.name.startswith("alt_")]
    assert len(mutants) >= 10 and len(alts) >= 2
    caught = sum(1 for p in mutants if (c := _card(p)).score < c.total)
    print(f"exercise {exercise}: {caught}/{len(mutants)} mutants caught")
    assert caught == len(mutants)


@pytest.mark.parametrize("exercise", sorted(PACKAGE_MODULES))
def test_checks_pass_on_the_package(exercise):
    import importlib
    card = run_checks(exercise, checks_module(exercise),
                      importlib.import_module(PACKAGE_MODULES[exercise]), implementation="package")
    failed = [f"{c.name}: {c.detail}" for c in card.checks if not c.passed]
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("mutant_")
                                  and p.parent.name in REPORTING],
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_failing_check_says_what_it_expected_and_what_came_back(path):
    card = _card(path)
    for c in card.checks:
        if not c.passed:
            assert "expected" in c.detail and ", got " in c.detail, (c.name, c.detail)
            assert c.detail.index("expected") > 0, ("the input comes first", c.name, c.detail)
            assert len(c.detail) < DETAIL_CHARS, ("cut short", c.name, c.detail)
