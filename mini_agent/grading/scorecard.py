"""Scorecards: the outcome of grading, as data, plain text (a terminal) and JSON (an LMS).

Shapes (``to_dict``, printed by ``mini-agent grade NN --json``)::

    {"exercise": "03", "implementation": "exercises", "path": "/abs/exercises/03_masking.py",
     "kit_version": "0.1.0", "score": 17, "total": 20, "error": "",
     "checks": [{"name": "check_masks_oldest_keeps_newest", "points": 3, "max_points": 3,
                 "passed": true, "hint": "", "detail": "", "seconds": 0.002}, ...]}

and for ``mini-agent grade --all --json``::

    {"root": "/abs", "implementation": "exercises", "kit_version": "0.1.0", "score": 90,
     "total": 107, "exercises": [<one scorecard as above>, ...]}

Pure data: no IO here. Shown as a widget by :func:`mini_agent.ui.widgets.scorecard_widget`.

Source: the kit's grading design (``docs/grading.md``: the JSON an LMS collects, the fields
of each check); no seed covers grading.
"""

from __future__ import annotations

import dataclasses
from typing import Any


def installed_version() -> str:
    """Read the installed mini-agent version.

    Returns:
        ``mini_agent.__version__``, e.g. "0.1.0".
    """
    import mini_agent
    return mini_agent.__version__


@dataclasses.dataclass
class CheckResult:
    """One check's outcome.

    Args:
        name: the check function's name.
        points: points earned (0 when failed).
        max_points: points the check is worth.
        passed: whether it passed.
        hint: the check's advice, shown only when it failed ("" when passed).
        detail: why it failed (the assertion's message, an exception, a timeout).
        seconds: how long the check ran (wall clock, seconds).
    """

    name: str
    points: int
    max_points: int
    passed: bool
    hint: str = ""
    detail: str = ""
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON shape of one check.

        Returns:
            ``{"name", "points", "max_points", "passed", "hint", "detail", "seconds"}`` (see the
            module docstring), ``seconds`` rounded to milliseconds.
        """
        return {"name": self.name, "points": self.points, "max_points": self.max_points,
                "passed": self.passed, "hint": self.hint, "detail": self.detail,
                "seconds": round(self.seconds, 3)}


@dataclasses.dataclass
class Scorecard:
    """A graded exercise.

    Args:
        exercise: "03".
        implementation: what was graded: "exercises", "solutions", "package" (or a label).
        checks: one result per check, in the checks' order.
        path: absolute path of the file graded ("" when an object was graded in memory).
        kit_version: the mini-agent version that graded it.
        error: why no check could run (the file does not import), reported once; "" if none.
    """

    exercise: str
    implementation: str
    checks: list[CheckResult]
    path: str = ""
    kit_version: str = dataclasses.field(default_factory=installed_version)
    error: str = ""

    @property
    def score(self) -> int:
        """Points earned."""
        return sum(c.points for c in self.checks)

    @property
    def total(self) -> int:
        """Points available."""
        return sum(c.max_points for c in self.checks)

    @property
    def full_marks(self) -> bool:
        """True when every check passed (and there was at least one)."""
        return bool(self.checks) and self.score == self.total and not self.error

    def header(self) -> str:
        """Return the first line of the text scorecard.

        Returns:
            ``"Exercise 03: /abs/exercises/03_masking.py (mini-agent 0.1.0)"``: the exercise, the
            file graded (the implementation's label when no file was read) and the kit version.
        """
        return (f"Exercise {self.exercise}: {self.path or self.implementation} "
                f"(mini-agent {self.kit_version})")

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON shape of a scorecard.

        Returns:
            The dict of the module docstring, one :meth:`CheckResult.to_dict` per check.
        """
        return {"exercise": self.exercise, "implementation": self.implementation,
                "path": self.path, "kit_version": self.kit_version, "score": self.score,
                "total": self.total, "error": self.error,
                "checks": [c.to_dict() for c in self.checks]}

    def to_text(self) -> str:
        """Return a plain-text scorecard.

        Returns:
            The header, one line per check with the hint and what came back under each failure,
            then the score. An import error is shown once, above the checks, and their hints left
            out.
        """
        lines = [self.header()]
        if self.error:
            lines += [f"  {line}" for line in self.error.splitlines()]
            lines.append("  no check could run: fix the file, then grade again")
        for c in self.checks:
            mark = "PASS" if c.passed else "FAIL"
            lines.append(f"  [{mark}] {c.name:<44} {c.points}/{c.max_points}")
            if not c.passed and not self.error:
                lines.append(f"         hint: {c.hint}")
                if c.detail:
                    lines.append(f"         got:  {c.detail}")
        lines.append(f"  score: {self.score}/{self.total}")
        return "\n".join(lines)


@dataclasses.dataclass
class Scorecards:
    """Every exercise of one folder, graded in one call (``mini-agent grade --all``).

    Args:
        root: absolute path of the folder graded.
        implementation: "exercises", "solutions" or "package".
        cards: one scorecard per exercise, in exercise order.
        kit_version: the mini-agent version that graded them.
    """

    root: str
    implementation: str
    cards: list[Scorecard]
    kit_version: str = dataclasses.field(default_factory=installed_version)

    @property
    def score(self) -> int:
        """Points earned over all exercises."""
        return sum(card.score for card in self.cards)

    @property
    def total(self) -> int:
        """Points available over all exercises."""
        return sum(card.total for card in self.cards)

    @property
    def full_marks(self) -> bool:
        """True when every exercise has full marks."""
        return bool(self.cards) and all(card.full_marks for card in self.cards)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON shape of all exercises.

        Returns:
            The ``--all`` dict of the module docstring, one :meth:`Scorecard.to_dict` per exercise.
        """
        return {"root": self.root, "implementation": self.implementation,
                "kit_version": self.kit_version, "score": self.score, "total": self.total,
                "exercises": [card.to_dict() for card in self.cards]}

    def to_text(self) -> str:
        """Return every scorecard as text, then a summary.

        Returns:
            The scorecards separated by blank lines, then one line per exercise (marked "does not
            import" when it did not) and the total.
        """
        parts = [card.to_text() for card in self.cards]
        summary = [f"All exercises in {self.root} (mini-agent {self.kit_version})"]
        summary += [f"  {card.exercise}: {card.score}/{card.total}"
                    + (" (does not import)" if card.error else "") for card in self.cards]
        summary.append(f"  total: {self.score}/{self.total}")
        return "\n\n".join(parts + ["\n".join(summary)])
