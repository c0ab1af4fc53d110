"""Scorecards: the outcome of grading, as data, plain text (a terminal) and JSON (an LMS).

Shapes (``to_dict``, printed by ``mini-agent grade NN --json``)::

    {"exercise": "03", "implementation": "exercises", "path": "/abs/exercises/03_masking.py",
     "kit_version": "0.1.0", "score": 17, "total": 20, "error": "",
     "checks": [{"name": "check_masks_oldest_keeps_newest", "points": 3, "max_points": 3,
                 "passed": true, "hint": "", "detail": "", "seconds": 0.002,
                 "raised": null, "changed": ""}, ...]}

where a check that failed because the code raised an exception carries, instead of null,
``"raised": {"exception": "TypeError", "message": "string indices must be integers...",
"file": "/abs/exercises/03_masking.py", "line": 58, "code": "first = messages[0]..."}``
(``file`` "" and ``line`` null when no frame of its traceback is in the graded file),
a check that failed because the code changed an argument it was given names it:
``"changed": "messages"``,

and for ``mini-agent grade --all --json``::

    {"root": "/abs", "implementation": "exercises", "kit_version": "0.1.0", "score": 90,
     "total": 107, "exercises": [<one scorecard as above>, ...]}

Pure data: no IO here. ``str(card)`` (so ``print(card)``) is the text scorecard,
:meth:`Scorecard.to_text`; shown as a widget by :func:`mini_agent.ui.widgets.scorecard_widget`.

Source: the kit's grading design (``docs/grading.md``: the JSON an LMS collects, the fields
of each check); no seed covers grading.
"""

from __future__ import annotations

import dataclasses
from pathlib import PurePath
from typing import Any

from mini_agent.grading.raised import TEXT_LINES, Raised, text_lines  # noqa: F401 (re-exported)


INPUT_HINT = ("Copy before changing: build new lists and dicts from what you were given "
              "instead of assigning into it (the caller still holds it).")
"""What the scorecard advises when the code changed its input and no failed check of the
exercise is there to catch that (``guards_input``) to lend its own hint."""


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
        raised: the exception the code raised that failed the check, and where; None when
            the check passed, or failed on a wrong value, a timeout or an untouched stub.
        changed: the argument the code changed that failed the check (``"messages"``), ""
            when the check passed or failed on something else.
        guards_input: the check is there to catch the code changing its input (its hint says
            to copy before changing; ``check(guards_input=True)``). Default False.
    """

    name: str
    points: int
    max_points: int
    passed: bool
    hint: str = ""
    detail: str = ""
    seconds: float = 0.0
    raised: Raised | None = None
    changed: str = ""
    guards_input: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON shape of one check.

        Returns:
            ``{"name", "points", "max_points", "passed", "hint", "detail", "seconds",
            "raised", "changed"}`` (see the module docstring), ``seconds`` rounded to
            milliseconds, ``raised`` null or the exception and its file and line,
            ``changed`` the argument the code changed or "".
        """
        return {"name": self.name, "points": self.points, "max_points": self.max_points,
                "passed": self.passed, "hint": self.hint, "detail": self.detail,
                "seconds": round(self.seconds, 3),
                "raised": self.raised.to_dict() if self.raised else None,
                "changed": self.changed}


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

    def crashes(self) -> dict[tuple[str, str, int | None], list[CheckResult]]:
        """Group the failed checks that raised the same exception at the same line.

        Returns:
            ``(exception, file, line)`` -> the checks it failed, in check order, for each
            place that failed two checks or more (a place in the graded file only).
        """
        return self._repeated(lambda c: (c.raised.exception, c.raised.file, c.raised.line)
                              if c.raised is not None and c.raised.file else None)

    def changes(self) -> dict[str, list[CheckResult]]:
        """Group the failed checks that the code's change to one of its arguments failed.

        Returns:
            The argument's name (``"messages"``) -> the checks it failed, in check order, for
            each argument whose change failed two checks or more.
        """
        return self._repeated(lambda c: c.changed or None)

    def _repeated(self, key_of) -> dict[Any, list[CheckResult]]:
        """The failed checks grouped by ``key_of(check)`` (None: in no group), keeping the
        groups of two checks or more, each in check order: one cause, said once."""
        groups: dict[Any, list[CheckResult]] = {}
        for c in self.checks:
            key = None if c.passed else key_of(c)
            if key is not None:
                groups.setdefault(key, []).append(c)
        return {key: found for key, found in groups.items() if len(found) > 1}

    @staticmethod
    def change_hint(found: list[CheckResult]) -> str:
        """Choose the advice for checks that failed because the code changed its input.

        Args:
            found: the checks of one group of :meth:`changes`.

        Returns:
            The hint of the first of them there to catch that change (``guards_input``:
            "Build new lists and new dicts..."), else :data:`INPUT_HINT`.
        """
        return next((c.hint for c in found if c.guards_input and c.hint), INPUT_HINT)

    def to_text(self) -> str:
        """Return a plain-text scorecard.

        Returns:
            The header, one line per check with the hint and what came back under each failure,
            then the score. An import error is shown once, above the checks, and their hints left
            out. A failure the code raised says the file and line it was raised at; when the
            same exception at the same line failed several checks, it is said once, above the
            checks ("the same TypeError at 03_masking.py, line 58 failed 11 checks"), and
            those checks show no hint (a hint is about a wrong value, not a crash). Likewise
            when the code changed the same argument in several checks: said once above the
            checks ("changing the input (messages) failed 10 checks"), with the first
            check's detail and the hint of the check there to catch it (copy before
            changing), and those checks show no hint of their own.
        """
        lines = [self.header()]
        if self.error:
            lines += [f"  {line}" for line in self.error.splitlines()]
            lines.append("  no check could run: fix the file, then grade again")
        crashed: dict[str, Raised] = {}
        for (exception, _, _), found in self.crashes().items():
            raised = found[0].raised
            assert raised is not None
            lines.append(f"  the same {exception} at {raised.place} failed {len(found)} checks:")
            if raised.code:
                lines.append(f"      {raised.code}")
            lines.append(f"      {exception}: {text_lines(raised.message, ' ' * 8)}"
                         .rstrip(": "))
            lines.append("    fix that line first; those checks' hints are left out (a hint is "
                         "about a wrong value, not a crash)")
            crashed.update((c.name, raised) for c in found)
        changed: set[str] = set()
        for argument, found in self.changes().items():
            lines.append(f"  changing the input ({argument}) failed {len(found)} checks:")
            lines.append(f"      {text_lines(found[0].detail, ' ' * 6)}")
            lines.append(f"    hint: {self.change_hint(found)}")
            lines.append("    those checks' own hints are left out (the change failed them, "
                         "not a wrong value)")
            changed.update(c.name for c in found)
        for c in self.checks:
            mark = "PASS" if c.passed else "FAIL"
            lines.append(f"  [{mark}] {c.name:<44} {c.points}/{c.max_points}")
            if c.passed or self.error:
                continue
            if c.name in crashed:
                lines.append(f"         crashed: the {crashed[c.name].exception} at "
                             f"{crashed[c.name].place} (above)")
                continue
            if c.name in changed:
                lines.append(f"         changed the input ({c.changed}) (above)")
                continue
            lines.append(f"         hint: {c.hint}")
            if c.detail:
                lines.append(f"         got:  {text_lines(c.detail, ' ' * 15)}")
            if c.raised is not None:
                lines.append(f"         {self.raised_text(c.raised)}")
        lines.append(f"  score: {self.score}/{self.total}")
        return "\n".join(lines)

    def __str__(self) -> str:
        """Return the plain-text scorecard (``print(card)``), as :meth:`to_text`.

        Returns:
            The same text as :meth:`to_text`.
        """
        return self.to_text()

    def raised_text(self, raised: Raised) -> str:
        """Say where one exception was raised, for a check's lines.

        Args:
            raised: the exception that failed the check.

        Returns:
            ``"raised at 03_masking.py, line 58: first = messages[0]..."``, or, when no frame
            of its traceback is in the graded file, ``"raised outside 03_masking.py (no line
            of it in the traceback: the check or the kit raised it on what came back)"``.
        """
        if raised.file:
            return f"raised at {raised.place}" + (f": {raised.code}" if raised.code else "")
        name = PurePath(self.path).name if self.path else "the graded code"
        return (f"raised outside {name} (no line of it in the traceback: the check or the "
                "kit raised it on what came back)")


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

    def __str__(self) -> str:
        """Return every scorecard as text (``print(cards)``), as :meth:`to_text`.

        Returns:
            The same text as :meth:`to_text`.
        """
        return self.to_text()
