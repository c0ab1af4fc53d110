"""A check failed by an exception in the learner's code names the file and line it came from.

One bug at the top of ``mask_old_observations`` fails a dozen checks with the same
TypeError; the scorecard says so once, with the line, and leaves out the checks' hints
(each is about a wrong value, not a crash). A check that fails on a wrong value keeps its
hint and names no place; the JSON carries the place for an LMS.
"""

from __future__ import annotations

import json
import shutil
import types
from pathlib import Path

import pytest

from mini_agent.grading import grade
from mini_agent.grading.command import main_grade
from mini_agent.grading.registry import check
from mini_agent.grading.runner import run_check
from mini_agent.grading.scorecard import CheckResult, Raised, Scorecard

REPO = Path(__file__).resolve().parents[1]
SOLUTION_03 = (REPO / "solutions" / "03_masking.py").read_text(encoding="utf-8")
BUG = "    first = messages[0]['content'][0]['type']\n"


def with_bug(text: str) -> tuple[str, int]:
    """The reference 03 with BUG as the first line of mask_old_observations' body."""
    start = text.index("def mask_old_observations")
    doc_end = text.index('"""', text.index('"""', start) + 3) + 3
    cut = text.index("\n", doc_end) + 1
    line = text[:cut].count("\n") + 1
    return text[:cut] + BUG + text[cut:], line


@pytest.fixture
def buggy(tmp_path):
    shutil.copytree(REPO / "exercises", tmp_path / "exercises")
    text, line = with_bug(SOLUTION_03)
    (tmp_path / "exercises" / "03_masking.py").write_text(text, encoding="utf-8")
    return tmp_path, line


def test_one_crash_that_fails_many_checks_is_said_once_with_its_line(buggy):
    root, line = buggy
    card = grade("03", root=root)
    crashed = [c for c in card.checks if c.raised is not None]
    assert len(crashed) >= 10
    for c in crashed:
        assert c.raised.exception == "TypeError"
        assert c.raised.file == str((root / "exercises" / "03_masking.py").resolve())
        assert c.raised.line == line
        assert c.raised.code == BUG.strip()
    text = card.to_text()
    assert text.count(f"the same TypeError at 03_masking.py, line {line} failed "
                      f"{len(crashed)} checks") == 1
    assert BUG.strip() in text
    for c in crashed:  # a hint is about a wrong value: none for the crash
        assert c.hint and c.hint not in text
    passed = [c for c in card.checks if c.passed]
    assert passed and all(c.raised is None for c in passed)


def test_json_carries_the_place(buggy, capsys):
    root, line = buggy
    assert main_grade("03", as_json=True, root=root) == 1
    document = json.loads(capsys.readouterr().out)
    raised = [c["raised"] for c in document["checks"] if c["raised"]]
    assert raised and raised[0] == {
        "exception": "TypeError", "message": "string indices must be integers, not 'str'",
        "file": str((root / "exercises" / "03_masking.py").resolve()), "line": line,
        "code": BUG.strip()}
    assert all(c["raised"] is None for c in document["checks"] if c["passed"])


def _module(tmp_path: Path, source: str):
    path = tmp_path / "answer.py"
    path.write_text(source, encoding="utf-8")
    namespace: dict = {"__file__": str(path)}
    exec(compile(source, str(path), "exec"), namespace)  # noqa: S102 - the test's own code
    return types.SimpleNamespace(**namespace), path


def test_the_innermost_line_of_the_graded_file_is_named(tmp_path):
    impl, path = _module(tmp_path, "def outer(x):\n    return inner(x)\n\n\n"
                                   "def inner(x):\n    return x['key']\n")

    @check(points=1, hint="Return the value.")
    def check_outer(impl):
        impl.outer("text")

    result = run_check(check_outer, impl, is_graded=lambda f: Path(f) == path)
    assert result.raised == Raised("TypeError", "string indices must be integers, not 'str'",
                                   str(path.resolve()), 6, "return x['key']")


def test_a_wrong_value_names_no_exception_and_keeps_its_hint(tmp_path):
    impl, path = _module(tmp_path, "def f():\n    return 1\n")

    @check(points=1, hint="Return 2.")
    def check_f(impl):
        assert impl.f() == 2, "f(): expected 2, got 1"

    result = run_check(check_f, impl, is_graded=lambda f: Path(f) == path)
    assert result.raised is None
    text = Scorecard("99", "x", [result], path=str(path)).to_text()
    assert "hint: Return 2." in text and "raised" not in text


def test_an_exception_outside_the_graded_file_says_so(tmp_path):
    impl, path = _module(tmp_path, "def f():\n    return None\n")

    @check(points=1, hint="Return a list.")
    def check_f(impl):
        impl.f()[0]  # the check indexes what came back

    result = run_check(check_f, impl, is_graded=lambda f: Path(f) == path)
    assert result.raised is not None and result.raised.exception == "TypeError"
    assert result.raised.file == "" and result.raised.line is None
    text = Scorecard("99", "x", [result], path=str(path)).to_text()
    assert "raised outside answer.py (no line of it in the traceback" in text
    assert "hint: Return a list." in text


def test_one_crash_in_one_check_keeps_the_hint_and_names_the_line():
    raised = Raised("TypeError", "bad", "/abs/exercises/03_masking.py", 7, "x = y[0]")
    card = Scorecard("03", "exercises", [
        CheckResult("check_a", 0, 1, False, "Raise ValueError.", "got TypeError", 0.0, raised),
        CheckResult("check_b", 1, 1, True)], path="/abs/exercises/03_masking.py")
    text = card.to_text()
    assert "hint: Raise ValueError." in text
    assert "raised at 03_masking.py, line 7: x = y[0]" in text
    assert "the same" not in text


def test_print_of_a_scorecard_is_its_text():
    card = Scorecard("03", "exercises", [CheckResult("check_a", 1, 1, True)], path="/abs/03.py",
                     kit_version="0.1.0")
    assert str(card) == card.to_text()
    assert str(card).splitlines()[0] == "Exercise 03: /abs/03.py (mini-agent 0.1.0)"
    from mini_agent.grading import Scorecards
    cards = Scorecards("/abs", "exercises", [card], kit_version="0.1.0")
    assert str(cards) == cards.to_text() and str(cards).endswith("total: 1/1")


def test_the_notebook_scorecard_says_the_crash_once_without_the_checks_hints(buggy):
    from mini_agent.ui.widgets import scorecard_html
    root, line = buggy
    card = grade("03", root=root)
    crashed = [c for c in card.checks if c.raised is not None]
    page = scorecard_html(card)
    assert page.count(f"The same <code>TypeError</code> at 03_masking.py, line {line} failed "
                      f"{len(crashed)} checks") == 1
    assert page.count("crashed: the TypeError at") == len(crashed)
    for c in crashed:
        assert c.hint not in page or any(o.hint == c.hint for o in card.checks
                                         if not o.passed and o.raised is None)
    assert "messages[0][&#x27;content&#x27;][0][&#x27;type&#x27;]" in page  # escaped code line


BAD_STR_MODULE = ("class Bad(Exception):\n    def __str__(self):\n"
                  "        raise RuntimeError('no str')\n\n\n"
                  "def f():\n    raise Bad()\n")
"""A graded module whose exception's ``str()`` raises; ``raise Bad()`` is line 7."""


def test_an_exception_whose_str_raises_fails_its_check_at_the_line_that_raised_it(tmp_path):
    impl, path = _module(tmp_path, BAD_STR_MODULE)

    @check(points=1, hint="Return 2.")
    def check_f(impl):
        impl.f()

    result = run_check(check_f, impl, is_graded=lambda f: Path(f) == path)
    assert not result.passed and result.detail == "Bad: <exception str() failed>"
    assert result.raised == Raised("Bad", "<exception str() failed>", str(path.resolve()), 7,
                                   "raise Bad()")
    assert "Bad" in Scorecard("99", "x", [result], path=str(path)).to_text()


def test_a_check_helper_names_an_exception_whose_str_raises(tmp_path):
    from mini_agent.grading.checks._report import called, expect_raises
    impl, path = _module(tmp_path, BAD_STR_MODULE)

    @check(points=1, hint="Return 2.")
    def check_f(impl):
        called(impl.f, "f()", 2)

    result = run_check(check_f, impl, is_graded=lambda f: Path(f) == path)
    assert result.detail == "f(): expected 2, got Bad: '<exception str() failed>'"
    assert result.raised is not None and (result.raised.exception, result.raised.line) == ("Bad", 7)
    with pytest.raises(AssertionError, match="got Bad: '<exception str"):
        expect_raises(ValueError, impl.f, "f()")


def test_a_message_of_many_line_breaks_keeps_the_scorecard_short(tmp_path):
    impl, path = _module(tmp_path, "def f():\n    raise ValueError('one' + '\\n' * 5000 + 'two'"
                                   " + '\\nx' * 50)\n")

    @check(points=1, hint="Return 2.")
    def check_a(impl):
        impl.f()

    @check(points=1, hint="Return 2.")
    def check_b(impl):
        impl.f()

    results = [run_check(fn, impl, is_graded=lambda f: Path(f) == path)
               for fn in (check_a, check_b)]
    for found in (results, results[:1]):   # said once above the checks, or under the one
        text = Scorecard("99", "x", found, path=str(path)).to_text()
        lines = text.splitlines()
        assert len(lines) < 20 and "" not in lines, text
        assert "two" in text and lines[-1] == "  score: 0/%d" % len(found)
        assert all(line.startswith("  ") for line in lines[1:])
