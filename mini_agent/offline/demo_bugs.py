"""What the demo brain knows about the demo project: its two planted bugs and its test report.

The bundled demo project (``mini_agent/demo``) is an invoicing package with two bugs planted
in it, the second hidden behind the first. This module holds everything specific to them:
each bug as a :class:`Recipe` (the function it lives in, the wrong line as a pattern, the
fix and the README rule it breaks), and the reader of ``run_tests.py``'s report (the failing
test ids, their lines and errors). A real model would read the same facts off the project;
here they are written down, so :class:`~mini_agent.offline.demo_brain.DemoBrain` can fix the
project deterministically. Does not: find any other bug; a project without these lines makes
the brain say so and stop.

Source:
    the demo project itself: ``mini_agent/demo/project/README.md`` (rules 1 and 2) and the report
    ``run_tests.py`` prints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

DEFAULT_TEST_COMMAND = "python3 run_tests.py"
"""How the demo project runs its tests (its README says the same)."""


@dataclass(frozen=True)
class Recipe:
    """A bug pattern: inside ``def function``, a line matching ``bad`` is wrong; ``fix`` repairs it.

    Attributes:
        function: the name of the function the bug lives in.
        bad: matches the wrong line.
        fix: ``fix(line) -> line`` with the bug repaired.
        title: the bug in a few words, for the summary.
        why: the README rule it breaks and why the fix is right.
        good: matches the repaired line (what ``fix`` writes), so the fix can be found in
            the code again when the edit that made it is no longer in view; a ``grep``
            pattern, not anchored.
    """

    function: str
    bad: re.Pattern[str]
    fix: Callable[[str], str]
    title: str
    why: str
    good: re.Pattern[str] | None = None


RECIPES = (
    Recipe("bulk_discount_rate",
           re.compile(r"^\s*if\s+quantity\s*>\s*tier\.min_quantity\s*:\s*(#.*)?$"),
           lambda line: re.sub(r">(?!=)", ">=", line, count=1),
           "the bulk discount started one unit too late",
           "README rule 2 says the tiers apply to \"10 or more\" units, but the comparison is "
           "`>`, so a line of exactly 10 units gets no discount. The minimum must be "
           "inclusive: `>=`.",
           re.compile(r"if quantity >= tier\.min_quantity:")),
    Recipe("round_money",
           re.compile(r"^\s*return\s+amount\.quantize\(CENT\)\s*(#.*)?$"),
           lambda line: line.replace("quantize(CENT)", "quantize(CENT, rounding=ROUND_HALF_UP)"),
           "half cents were rounded to even",
           "`Decimal.quantize` without a rounding mode uses the context default, "
           "ROUND_HALF_EVEN (banker's rounding), so 47.405 becomes 47.40. README rule 1 says "
           "halves round up, and `round_percent` in the same module already passes "
           "`rounding=ROUND_HALF_UP`, which the module imports.",
           re.compile(r"return amount\.quantize\(CENT, rounding=ROUND_HALF_UP\)")),
)
"""The two planted bugs, in the order the tests reveal them."""


def recipe_for_line(line: str) -> Recipe | None:
    """Find the recipe a line is the bad line of.

    Args:
        line: one line, e.g. the last line of an edit's ``old_string``.

    Returns:
        The first recipe whose ``bad`` pattern matches ``line``, or None.
    """
    return next((r for r in RECIPES if r.bad.match(line)), None)


FIXED_PATTERN = "|".join(r.good.pattern for r in RECIPES if r.good)
"""A grep pattern for every recipe's repaired line: where the fixes are, read from the code."""


def recipe_for_fixed_line(line: str) -> Recipe | None:
    """Find the recipe a line is the repaired line of.

    Args:
        line: one line of code, e.g. from a grep hit.

    Returns:
        The first recipe whose ``good`` pattern occurs in ``line``, or None.
    """
    return next((r for r in RECIPES if r.good and r.good.search(line)), None)


def find_bug(recipe: Recipe, lines: dict[int, str]) -> tuple[int, str] | None:
    """(line number, line) of the recipe's bad line inside ``def recipe.function``.

    Args:
        recipe: the bug to look for.
        lines: a read_file observation as ``{line_number: text}``.
    Returns:
        The first bad line inside the function, or None.
    """
    inside = False
    for n in sorted(lines):
        line = lines[n]
        if re.match(rf"^\s*def {recipe.function}\(", line):
            inside = True
        elif inside and re.match(r"^(def|class) ", line):
            inside = False
        elif inside and recipe.bad.match(line):
            return n, line
    return None


# --------------------------------------------------------------------------- the test report

@dataclass(frozen=True)
class TestReport:
    """The parts of a ``run_tests.py`` report the brain uses.

    Attributes:
        ran: tests run.
        passed: tests passed.
        exit_code: from the ``[exit code: N]`` line, or None when it is missing.
        failures: ``(test id, location, code line, error)`` per failing test, in report order.
    """

    __test__ = False  # a report, not a pytest test class
    ran: int
    passed: int
    exit_code: int | None
    failures: tuple[tuple[str, str, str, str], ...]  # (test id, location, code line, error)

    @property
    def ok(self) -> bool:
        """True when the tests exited with code 0 and nothing failed."""
        return self.exit_code == 0 and not self.failures


def parse_test_report(text: str) -> TestReport | None:
    """Parse the demo's test report.

    Args:
        text: a run_bash observation.

    Returns:
        A :class:`TestReport`, or None when the text has no ``Ran N tests: M passed`` line
        (e.g. a masked observation).
    """
    summary = re.search(r"^Ran (\d+) tests: (\d+) passed", text, re.M)
    code = re.search(r"^\[exit code: (-?\d+)\]$", text, re.M)
    failures = []
    for m in re.finditer(r"^(?:FAIL|ERROR): (\S+)\n((?:  .*\n?)*)", text, re.M):
        detail = [line.strip() for line in m.group(2).splitlines()]
        where = next((d.split(" in ")[0] for d in detail if re.match(r"\S+\.py:\d+ in ", d)), "")
        code_line = detail[1] if len(detail) > 2 else ""
        failures.append((m.group(1), where, code_line, detail[-1] if detail else ""))
    if not summary:
        return None
    return TestReport(int(summary.group(1)), int(summary.group(2)),
                      int(code.group(1)) if code else None, tuple(failures))


def called_names(code_line: str) -> list[str]:
    """List the functions a failing test line calls, minus assertions and constructors.

    Args:
        code_line: the test's source line from the report.

    Returns:
        Called names in first-seen order, without ``assert*``, capitalised names and
        ``self``.

    >>> called_names("self.assertEqual(line_total(item, 10), Decimal('9.00'))")
    ['line_total']
    """
    names = re.findall(r"([A-Za-z_]\w*)\(", code_line)
    return [n for n in dict.fromkeys(names)
            if not n.startswith("assert") and not n[0].isupper() and n != "self"]


def cent_off(error: str) -> tuple[str, str] | None:
    """Recognise an assertion that compares two Decimals exactly one cent apart.

    Args:
        error: the failure's error line.

    Returns:
        ``(got, expected)`` as written in the error, or None when they are not one cent
        apart.

    >>> cent_off("AssertionError: Decimal('47.40') != Decimal('47.41')")
    ('47.40', '47.41')
    """
    m = re.search(r"Decimal\('(-?[\d.]+)'\) != Decimal\('(-?[\d.]+)'\)", error)
    if m and abs(round(float(m.group(1)) * 100) - round(float(m.group(2)) * 100)) == 1:
        return m.group(1), m.group(2)
    return None
