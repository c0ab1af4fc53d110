"""A function that changes its input is told so once, not under every check's unrelated hint.

``result = messages`` in ``mask_old_observations`` (and assignments into it) fails ten checks
of exercise 03 with "expected messages unchanged"; each used to show its own hint ("count the
results from the end of the history"...). The scorecard now says the change once, with the
hint of the check there to catch it (copy before changing), as it does for one crash.
"""

from __future__ import annotations

import json
import re
import shutil
import types
from pathlib import Path

import pytest

from mini_agent.grading import grade
from mini_agent.grading.checks import checks_05_prompt_caching, checks_08_context_lifecycle
from mini_agent.grading.checks._report import InputChanged, snapshot, unchanged
from mini_agent.grading.command import main_grade
from mini_agent.grading.registry import check
from mini_agent.grading.runner import run_check
from mini_agent.grading.scorecard import INPUT_HINT, CheckResult, Raised, Scorecard

REPO = Path(__file__).resolve().parents[1]
SOLUTION_03 = (REPO / "solutions" / "03_masking.py").read_text(encoding="utf-8")
GUARD_HINT_03 = (
    "Build new lists and new dicts ({**block, 'content': ...}); never assign into the input's "
    "messages or blocks.")


def mutating_03() -> str:
    """The reference 03 with its copies taken out: it assigns into the caller's history."""
    text = SOLUTION_03.replace("    result = [dict(m) for m in messages]\n",
                               "    result = messages\n")
    text, removed = re.subn(r"        if result\[i\]\[\"content\"\] is messages\[i\]\[\"content\"\]:"
                            r"\n            result\[i\]\[\"content\"\] = list\(messages\[i\]"
                            r"\[\"content\"\]\)\n", "", text)
    assert removed == 1 and "result = messages\n" in text
    return text


@pytest.fixture(scope="module")
def mutated(tmp_path_factory):
    root = tmp_path_factory.mktemp("mutated")
    shutil.copytree(REPO / "exercises", root / "exercises")
    (root / "exercises" / "03_masking.py").write_text(mutating_03(), encoding="utf-8")
    return root, grade("03", root=root)


def test_the_change_is_said_once_with_the_guard_checks_hint(mutated):
    _, card = mutated
    changed = [c for c in card.checks if c.changed]
    assert len(changed) == 10 and {c.changed for c in changed} == {"messages"}
    assert "check_does_not_mutate_input" in [c.name for c in changed]
    assert all(not c.passed and c.raised is None for c in changed)
    text = card.to_text()
    assert text.count("changing the input (messages) failed 10 checks:") == 1
    assert text.count(f"hint: {GUARD_HINT_03}") == 1
    assert text.count("changed the input (messages) (above)") == 10
    for c in changed:  # the misleading hints are gone
        if c.name != "check_does_not_mutate_input":
            assert c.hint and c.hint not in text, c.name
    assert "count the results from the end of the history" not in text
    # the group comes before the checks, the first check's detail with it
    assert text.index("changing the input") < text.index("[PASS]")
    assert changed[0].detail in text


def test_a_check_failed_for_another_reason_keeps_its_hint(mutated):
    _, card = mutated
    other = {c.name: c for c in card.checks}["check_keep_beyond_count"]
    assert not other.passed and other.changed == ""
    text = card.to_text()
    assert f"hint: {other.hint}" in text and "got the input list itself" in text
    assert card.score == 8 and card.total == 24


def test_json_names_the_argument_changed(mutated, capsys):
    root, _ = mutated
    assert main_grade("03", as_json=True, root=root) == 1
    document = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in document["checks"] if c["changed"] == "messages"] == [
        "check_masks_oldest_keeps_newest", "check_several_results_in_one_message",
        "check_placeholder_line_count", "check_list_content", "check_does_not_mutate_input",
        "check_keeps_every_key", "check_everything_else_untouched",
        "check_keep_zero_masks_all", "check_default_keep", "check_view_is_valid"]
    assert all(c["changed"] == "" for c in document["checks"] if c["passed"])
    assert all(c["hint"] for c in document["checks"] if not c["passed"])  # data keeps hints


def test_the_reference_answer_changes_nothing(tmp_path):
    shutil.copytree(REPO / "exercises", tmp_path / "exercises")
    shutil.copy(REPO / "solutions" / "03_masking.py", tmp_path / "exercises" / "03_masking.py")
    card = grade("03", root=tmp_path)
    assert card.full_marks and not card.changes()
    assert all(c.changed == "" for c in card.checks)


def test_unchanged_raises_input_changed_naming_the_argument():
    messages = [{"role": "user", "content": "hi"}]
    before = snapshot(messages)
    unchanged(before, messages, what="x", names=("messages",))  # equal: no error
    messages[0]["content"] = "bye"
    with pytest.raises(InputChanged) as info:
        unchanged(before, messages, what="x", names=("messages",))
    assert isinstance(info.value, AssertionError) and info.value.argument == "messages"
    assert str(info.value) == "x: expected messages unchanged, got a change at messages[0]['content']"


def test_run_check_records_the_change_and_the_guard():
    @check(points=2, hint="copy it", guards_input=True)
    def check_guard(impl):
        raise InputChanged("f(xs): expected xs unchanged, got a change at xs[0]", "xs")

    @check(hint="wrong value")
    def check_value(impl):
        raise AssertionError("f(xs): expected 2, got 3")

    guard = run_check(check_guard, types.SimpleNamespace())
    assert (guard.passed, guard.changed, guard.guards_input, guard.hint) == (
        False, "xs", True, "copy it")
    value = run_check(check_value, types.SimpleNamespace())
    assert (value.changed, value.guards_input) == ("", False)


def _failed(name, *, changed="", guards=False, raised=None, hint=None):
    return CheckResult(name, 0, 1, False, hint or f"hint of {name}", f"detail of {name}",
                       raised=raised, changed=changed, guards_input=guards)


def test_one_changed_check_keeps_its_own_hint():
    card = Scorecard("99", "fake", [_failed("check_a", changed="xs"),
                                    CheckResult("check_b", 1, 1, True)], kit_version="0")
    assert card.changes() == {}
    text = card.to_text()
    assert "hint: hint of check_a" in text and "changing the input" not in text


def test_without_a_failed_guard_check_the_general_advice_is_given():
    checks = [_failed("check_a", changed="xs"), _failed("check_b", changed="xs"),
              _failed("check_c", changed="ys"), _failed("check_d", changed="ys", guards=True,
                                                        hint="Sort a copy.")]
    card = Scorecard("99", "fake", checks, kit_version="0")
    assert {k: [c.name for c in v] for k, v in card.changes().items()} == {
        "xs": ["check_a", "check_b"], "ys": ["check_c", "check_d"]}
    text = card.to_text()
    assert text.count(f"hint: {INPUT_HINT}") == 1  # xs: no guard check among them
    assert text.count("hint: Sort a copy.") == 1  # ys: the guard's own advice
    assert "hint of check_" not in text


def test_crash_grouping_still_works_beside_a_change():
    boom = Raised("TypeError", "bad", "/abs/answer.py", 7, "x = y[0]")
    checks = [_failed("check_a", raised=boom), _failed("check_b", raised=boom),
              _failed("check_c", changed="xs"), _failed("check_d", changed="xs"),
              _failed("check_e")]
    card = Scorecard("99", "fake", checks, kit_version="0")
    text = card.to_text()
    assert "the same TypeError at answer.py, line 7 failed 2 checks:" in text
    assert "changing the input (xs) failed 2 checks:" in text
    assert text.count("crashed: the TypeError at answer.py, line 7 (above)") == 2
    assert text.count("changed the input (xs) (above)") == 2
    assert "hint: hint of check_e" in text
    assert not any(f"hint of check_{n}" in text for n in "abcd")


def test_other_exercises_report_a_change_as_a_change():
    def sorts_in_place(tools):
        tools.sort(key=lambda t: t["name"])
        return "0" * 64
    fingerprint = run_check(checks_05_prompt_caching.check_tools_fingerprint_leaves_tools_alone,
                            types.SimpleNamespace(tools_fingerprint=sorts_in_place))
    assert (fingerprint.passed, fingerprint.changed, fingerprint.guards_input) == (
        False, "tools", True)

    def evicts_in_place(segments):
        segments.sort(key=lambda s: s["seq"])
        return [s["id"] for s in segments]
    eviction = run_check(checks_08_context_lifecycle.check_eviction_not_by_time,
                         types.SimpleNamespace(eviction_order=evicts_in_place))
    assert (eviction.passed, eviction.changed, eviction.guards_input) == (
        False, "the segments", False)
