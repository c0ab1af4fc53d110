"""Grade the learner's exercises; keep ``exercises/`` generated from ``solutions/``.

The pattern (nbgrader markers, minitorch stubs, minbpe's tests over every implementation):

* ``solutions/NN_topic.py`` is the source of truth; :func:`make_exercises` writes
  ``exercises/NN_topic.py`` from it, each answer replaced by ``raise NotImplementedError``
  (:mod:`.stubs`, a maintainer's command).
* ``mini_agent/grading/checks/checks_NN_topic.py`` holds the checks, shipped with the package:
  plain functions ``check_*(impl)`` marked with :func:`check` (:mod:`.registry`).
* :func:`grade` grades the ``exercises/`` of the folder the learner works in (or
  ``solutions/``, or the package itself), each check in a worker process under a time limit
  (:mod:`.grader`, :mod:`.supervisor`, :mod:`.worker`), and returns a :class:`Scorecard`
  (text, JSON for an LMS, a widget in notebooks); :func:`grade_all` grades every exercise.

Taught in ``notebooks/00_start_here``.
"""

from __future__ import annotations

from pathlib import Path

from mini_agent.grading.command import main_grade, main_make_exercises
from mini_agent.grading.grader import IMPLEMENTATIONS, find_file, find_root, grade, grade_all
from mini_agent.grading.registry import (
                                         DEFAULT_TIME_LIMIT_SECONDS, check, checks_module, collect_checks, exercise_ids,
                                         normalize_exercise)
from mini_agent.grading.runner import load_module, run_check, run_checks
from mini_agent.grading.scorecard import CheckResult, Raised, Scorecard, Scorecards
from mini_agent.grading.stubs import BEGIN, END, STUB_HEADER, make_exercises, make_stub
from mini_agent.grading.supervisor import WorkerError

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
"""The folder above the installed package (the clone, when installed editable). Grading never
uses it: it grades the folder the learner works in."""

__all__ = [
    "BEGIN", "DEFAULT_TIME_LIMIT_SECONDS", "END", "IMPLEMENTATIONS", "REPO_ROOT", "STUB_HEADER",
    "CheckResult", "Raised", "Scorecard", "Scorecards", "WorkerError", "check", "checks_module",
    "collect_checks", "exercise_ids", "find_file", "find_root", "grade", "grade_all",
    "load_module", "main_grade", "main_make_exercises", "make_exercises", "make_stub",
    "normalize_exercise", "run_check", "run_checks",
]
