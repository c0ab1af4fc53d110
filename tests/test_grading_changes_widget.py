"""The notebook scorecard says a change to the input once, as the text scorecard does."""

from __future__ import annotations

from mini_agent.grading.scorecard import CheckResult, Scorecard
from mini_agent.ui.widgets import scorecard_html


def test_the_notebook_scorecard_says_the_change_once_without_the_checks_hints():
    checks = [CheckResult(f"check_{n}", 0, 1, False, f"hint of {n}", f"detail <{n}>",
                          changed="messages", guards_input=n == "b") for n in "abc"]
    checks.append(CheckResult("check_d", 0, 1, False, "hint of d", "wrong value"))
    page = scorecard_html(Scorecard("03", "fake", checks, kit_version="0"))
    assert page.count("Changing the input (<code>messages</code>) failed 3 checks") == 1
    assert page.count("hint of b") == 1  # the guard check's hint, said once above
    assert "hint of a" not in page and "hint of c" not in page
    assert page.count("changed the input (<code>messages</code>) (above)") == 3
    assert "detail &lt;a&gt;" in page and "hint of d" in page
