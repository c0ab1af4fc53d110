"""Tests for mini_agent.grading, and proof that exercise 03's checks catch the wrong answers."""

from __future__ import annotations

import asyncio
import copy
import json
import math
import types

import pytest

from mini_agent import grading
from mini_agent.grading import (
    CheckResult, Scorecard, check, collect_checks, find_file, grade, load_module, main_grade,
    make_exercises, make_stub, run_checks)

# --------------------------------------------------------------------------- make_stub


def test_make_stub_numbers_regions_and_keeps_indentation():
    source = ('def f(x):\n    """Doc."""\n    # BEGIN SOLUTION\n    y = x + 1\n    return y\n'
              "    # END SOLUTION\n\n\nclass A:\n    def g(self):\n        # BEGIN SOLUTION\n"
              "        return 2\n        # END SOLUTION\n")
    assert make_stub(source, "07") == (
        'def f(x):\n    """Doc."""\n    raise NotImplementedError("Exercise 07.1")\n\n\n'
        'class A:\n    def g(self):\n        raise NotImplementedError("Exercise 07.2")\n')


def test_make_stub_without_markers_is_identity():
    assert make_stub("x = 1\n", "03") == "x = 1\n"


@pytest.mark.parametrize("source, message", [
    ("# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION\n", "line 2: nested"),
    ("x = 1\n# END SOLUTION\n", "line 2: # END SOLUTION without"),
    ("def f():\n    # BEGIN SOLUTION\n    return 1\n", "without # END SOLUTION"),
])
def test_make_stub_marker_errors(source, message):
    with pytest.raises(ValueError, match=message):
        make_stub(source, "03")


def test_make_exercises_writes_then_reports_drift(tmp_path):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "solutions" / "42_demo.py").write_text(
        "def f():\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n")
    assert make_exercises(root=tmp_path, check=True) == ["exercises/42_demo.py"]
    assert not (tmp_path / "exercises").exists()  # check only compares
    assert make_exercises(root=tmp_path) == ["exercises/42_demo.py"]
    text = (tmp_path / "exercises" / "42_demo.py").read_text()
    assert text.endswith('def f():\n    raise NotImplementedError("Exercise 42.1")\n')
    assert text.startswith("# Generated from solutions/42_demo.py")
    assert make_exercises(root=tmp_path, check=True) == []
    (tmp_path / "exercises" / "42_demo.py").write_text(text + "# edited\n")
    assert make_exercises(root=tmp_path, check=True) == ["exercises/42_demo.py"]


def test_make_exercises_keeps_edited_files_unless_forced(tmp_path):
    (tmp_path / "solutions").mkdir()
    for name in ("42_demo.py", "43_more.py"):
        (tmp_path / "solutions" / name).write_text(
            "def f():\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n")
    make_exercises(root=tmp_path)
    edited = tmp_path / "exercises" / "42_demo.py"
    stub = edited.read_text()
    edited.write_text(stub.replace('raise NotImplementedError("Exercise 42.1")', "return 1"))
    (tmp_path / "exercises" / "43_more.py").unlink()
    assert make_exercises(root=tmp_path) == ["exercises/43_more.py"]  # missing: created
    assert "return 1" in edited.read_text()  # the learner's work survives
    assert make_exercises(root=tmp_path, check=True) == ["exercises/42_demo.py"]
    assert make_exercises(root=tmp_path, force=True) == ["exercises/42_demo.py"]
    assert edited.read_text() == stub


# --------------------------------------------------------------------------- checks and cards

def test_check_decorator():
    @check(points=3, hint="look left")
    def check_x(impl):
        pass
    assert check_x.grading == {"points": 3, "hint": "look left"}
    with pytest.raises(ValueError):
        check(points=0)


def _checks_module():
    mod = types.ModuleType("fake_checks")

    @check(points=2, hint="h-pass")
    def check_a_passes(impl):
        assert impl.f() == 1

    @check(points=1, hint="h-assert")
    def check_b_asserts(impl):
        if impl.f() != 2:
            raise AssertionError("f() should be 2")

    @check(points=1, hint="h-todo")
    def check_c_todo(impl):
        impl.todo()

    @check(points=4, hint="h-crash")
    def check_d_crashes(impl):
        impl.missing()

    def check_unmarked(impl):  # no @check: not collected
        raise AssertionError

    for fn in (check_d_crashes, check_a_passes, check_unmarked, check_b_asserts, check_c_todo):
        setattr(mod, fn.__name__, fn)
    return mod


def _impl():
    impl = types.SimpleNamespace(f=lambda: 1)

    def todo():
        raise NotImplementedError("Exercise 99.1")
    impl.todo = todo
    return impl


def test_collect_checks_in_definition_order_marked_only():
    names = [fn.__name__ for fn in collect_checks(_checks_module())]
    assert names == ["check_a_passes", "check_b_asserts", "check_c_todo", "check_d_crashes"]


def test_run_checks_scorecard_and_json_shape():
    card = run_checks("99", _checks_module(), _impl(), implementation="fake")
    assert (card.score, card.total) == (2, 8)
    assert card.to_dict() == {"exercise": "99", "score": 2, "total": 8, "checks": [
        {"name": "check_a_passes", "points": 2, "passed": True, "hint": ""},
        {"name": "check_b_asserts", "points": 0, "passed": False, "hint": "h-assert"},
        {"name": "check_c_todo", "points": 0, "passed": False, "hint": "h-todo"},
        {"name": "check_d_crashes", "points": 0, "passed": False, "hint": "h-crash"}]}
    assert json.loads(json.dumps(card.to_dict())) == card.to_dict()
    details = {c.name: c.detail for c in card.checks}
    assert details["check_b_asserts"] == "f() should be 2"
    assert details["check_c_todo"] == "not implemented yet (Exercise 99.1)"
    assert details["check_d_crashes"].startswith("AttributeError")
    text = card.to_text()
    assert text.splitlines()[0] == "Exercise 99 (fake)"
    assert "[PASS] check_a_passes" in text and "hint: h-crash" in text
    assert text.splitlines()[-1] == "  score: 2/8"


def test_scorecard_empty():
    card = Scorecard("01", "x", [])
    assert (card.score, card.total, card.to_dict()["checks"]) == (0, 0, [])
    assert CheckResult("c", 1, 1, True).hint == ""


def _tiny_repo(tmp_path, exercise_source: str):
    (tmp_path / "tests" / "exercises").mkdir(parents=True)
    (tmp_path / "tests" / "exercises" / "checks_98_tiny.py").write_text(
        "from mini_agent.grading import check\n\n"
        "@check(points=2, hint='return 1')\n"
        "def check_one(impl):\n    assert impl.f() == 1\n")
    for folder, body in (("solutions", "def f():\n    return 1\n"),
                         ("exercises", exercise_source)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "98_tiny.py").write_text(body)
    return tmp_path


def test_grade_on_a_repository(tmp_path):
    root = _tiny_repo(tmp_path, "def f():\n    return 0\n")
    assert grade("98", implementation="solutions", root=root).score == 2
    card = grade("98", root=root)
    assert (card.score, card.implementation) == (0, "exercises/98_tiny.py")


def test_grade_a_file_that_does_not_import(tmp_path):
    card = grade("98", root=_tiny_repo(tmp_path, "def f(:\n"))
    assert card.score == 0 and card.total == 2
    assert card.checks[0].detail.startswith("could not import 98_tiny.py: ")
    assert "SyntaxError" in card.checks[0].detail


def test_unknown_exercise(tmp_path):
    with pytest.raises(FileNotFoundError, match="checks_77"):
        grade("77", root=_tiny_repo(tmp_path, ""))
    with pytest.raises(FileNotFoundError):
        find_file("solutions", "77", root=tmp_path)


def test_main_grade_exit_codes_and_json(capsys):
    assert main_grade("77") == 2
    assert "mini-agent grade:" in capsys.readouterr().err
    assert main_grade("03", as_json=True, implementation="solutions") == 0
    card = json.loads(capsys.readouterr().out)
    assert set(card) == {"exercise", "score", "total", "checks"}
    assert card["exercise"] == "03" and card["score"] == card["total"] == 20
    assert all(set(c) == {"name", "points", "passed", "hint"} for c in card["checks"])
    assert main_grade("03", implementation="solutions") == 0
    assert capsys.readouterr().out.rstrip().endswith("score: 20/20")


def test_load_module_is_fresh_each_time(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("state = []\n")
    a, b = load_module(path), load_module(path)
    a.state.append(1)
    assert b.state == [] and a is not b


# --------------------------------------------------------------------------- exercise 03 checks

CHECKS_03 = load_module(find_file("tests/exercises", "checks_03"))
ALL_03 = {fn.__name__ for fn in collect_checks(CHECKS_03)}
MASKING_03 = {n for n in ALL_03 if not n.startswith(("check_approx", "check_should"))}


def _positions(messages):
    return [(i, j) for i, m in enumerate(messages)
            if m["role"] == "user" and isinstance(m["content"], list)
            for j, b in enumerate(m["content"]) if b["type"] == "tool_result"]


def _text(block):
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    return "".join(p["text"] for p in content if p["type"] == "text")


def _ph(n):
    return f"[observation masked — {n} lines omitted]"


def masker(*, select=lambda pos, keep: pos[:max(0, len(pos) - keep)], raises=True,
           lines=lambda text: text.count("\n") + 1, mutate=False,
           rebuild=lambda block, ph: {**block, "content": ph},
           mask_user_text=False, mask_assistant_text=False):
    """A mask_old_observations with one knob turned to a typical wrong answer."""
    def mask_old_observations(messages, keep=4):
        if raises and keep < 0:
            raise ValueError("keep < 0")
        out = messages if mutate else copy.deepcopy(messages)
        for i, j in select(_positions(messages), keep):
            block = messages[i]["content"][j]
            out[i]["content"][j] = rebuild(block, _ph(lines(_text(block))))
            if mask_user_text:
                out[i]["content"] = [
                    {"type": "text", "text": _ph(lines(b["text"]))} if b["type"] == "text" else b
                    for b in out[i]["content"]]
            if mask_assistant_text:
                out[i - 1]["content"] = [
                    {"type": "text", "text": _ph(lines(b["text"]))} if b["type"] == "text" else b
                    for b in out[i - 1]["content"]]
        return out
    return mask_old_observations


WRONG_MASKERS = {
    "masks the newest": (masker(select=lambda pos, keep: pos[keep:]),
                         {"check_masks_oldest_keeps_newest"}),
    "mutates the input": (masker(mutate=True), {"check_does_not_mutate_input"}),
    "changes tool_use_id": (masker(rebuild=lambda b, ph: {**b, "tool_use_id": "masked",
                                                          "content": ph}),
                            {"check_keeps_tool_use_id", "check_view_is_valid"}),
    "counts newlines, not lines": (masker(lines=lambda text: text.count("\n")),
                                   {"check_placeholder_line_count", "check_list_content"}),
    "counts characters": (masker(lines=len),
                          {"check_placeholder_line_count", "check_list_content"}),
    "masks user text": (masker(mask_user_text=True), {"check_user_text_untouched"}),
    "masks assistant text": (masker(mask_assistant_text=True), {"check_assistant_untouched"}),
    "drops is_error": (masker(rebuild=lambda b, ph: {"type": "tool_result",
                                                      "tool_use_id": b["tool_use_id"],
                                                      "content": ph}),
                       {"check_keeps_is_error"}),
    "keep=0 masks nothing": (masker(select=lambda pos, keep: pos[:-keep]),
                             {"check_keep_zero_masks_all"}),
    "keep beyond count wraps": (masker(select=lambda pos, keep: pos[:len(pos) - keep]),
                                {"check_keep_beyond_count"}),
    "negative keep accepted": (masker(raises=False), {"check_negative_keep_raises"}),
    "returns the input": (lambda messages, keep=4: list(messages),
                          MASKING_03 - {"check_keep_beyond_count"}),
}


def _failed(impl):
    card = run_checks("03", CHECKS_03, impl)
    return {c.name for c in card.checks if not c.passed}


@pytest.fixture
def solution_03():
    return load_module(find_file("solutions", "03"))


def test_the_reference_masker_passes(solution_03):
    solution_03.mask_old_observations = masker()
    assert _failed(solution_03) == set()


@pytest.mark.parametrize("name", sorted(WRONG_MASKERS))
def test_each_wrong_masker_fails_exactly_its_checks(name, solution_03):
    wrong, expected = WRONG_MASKERS[name]
    solution_03.mask_old_observations = wrong
    assert _failed(solution_03) == expected


def _approx(messages, *, overhead=20, rounding=math.ceil):
    chars = 0
    for m in messages:
        for b in ([{"type": "text", "text": m["content"]}] if isinstance(m["content"], str)
                  else m["content"]):
            if b["type"] == "text":
                chars += len(b["text"])
            elif b["type"] == "tool_use":
                chars += len(json.dumps(b["input"])) + len(b["name"]) + overhead
            elif b["type"] == "tool_result":
                chars += len(_text(b))
    return rounding(chars / 4)


def test_wrong_estimates_and_trigger_fail_their_checks(solution_03, monkeypatch):
    reference = solution_03.approx_tokens
    monkeypatch.setattr(solution_03, "approx_tokens", _approx)
    assert _failed(solution_03) == set()
    monkeypatch.setattr(solution_03, "approx_tokens", lambda m: _approx(m, overhead=0))
    assert _failed(solution_03) == {"check_approx_tokens_tool_blocks"}
    monkeypatch.setattr(solution_03, "approx_tokens", lambda m: _approx(m, rounding=math.floor))
    assert _failed(solution_03) == {"check_approx_tokens_text", "check_approx_tokens_tool_blocks"}
    monkeypatch.setattr(solution_03, "approx_tokens", reference)
    monkeypatch.setattr(solution_03, "should_mask",
                        lambda messages, threshold_tokens=8_000:
                        reference(messages) >= threshold_tokens)
    assert _failed(solution_03) == {"check_should_mask_threshold"}


def test_the_kit_masker_passes_the_exercise_checks(solution_03):
    from mini_agent.masking import mask_old_observations
    solution_03.mask_old_observations = mask_old_observations
    assert _failed(solution_03) == set()


def test_grading_module_paths():
    assert grading.REPO_ROOT == find_file("solutions", "03").parent.parent


@pytest.mark.parametrize("exercise", ["02", "06"])
def test_grading_inside_a_running_event_loop_gives_full_marks(exercise):
    """A notebook cell runs inside an asyncio loop; async checks must still pass there."""
    async def grade_in_a_cell():
        asyncio.get_running_loop()  # as in Jupyter: a loop runs in this thread
        return grade(exercise, implementation="solutions")
    card = asyncio.run(grade_in_a_cell())
    failed = [f"{c.name}: {c.detail}" for c in card.checks if not c.passed]
    assert not failed and card.score == card.total > 0, failed


@pytest.mark.parametrize("name", sorted(WRONG_MASKERS))
def test_failed_03_checks_say_what_was_expected_and_what_came_back(name, solution_03):
    solution_03.mask_old_observations = WRONG_MASKERS[name][0]
    failed = [c for c in run_checks("03", CHECKS_03, solution_03).checks if not c.passed]
    assert failed
    for c in failed:
        if c.detail.startswith("mini_agent.messages.MessageValidationError"):
            continue  # the validator names the broken rule and the message index
        assert "expected" in c.detail and "got" in c.detail, (c.name, c.detail)


def test_keep_zero_failure_points_at_the_negative_slice_pitfall(solution_03):
    solution_03.mask_old_observations = WRONG_MASKERS["keep=0 masks nothing"][0]
    card = run_checks("03", CHECKS_03, solution_03)
    (failed,) = [c for c in card.checks if not c.passed]
    assert failed.detail == "3 results, keep=0: masked results: expected 3, got 0"
    assert "positions[:-keep]" in failed.hint and "negative-slice" in failed.hint
    assert "got:  3 results, keep=0: masked results: expected 3, got 0" in card.to_text()


@pytest.mark.parametrize("written", ["3", "03", "03_masking", "03_masking.py", 3])
def test_an_exercise_can_be_named_several_ways(written, capsys):
    assert grading.normalize_exercise(written) == "03"
    assert main_grade(str(written), implementation="solutions") == 0
    assert capsys.readouterr().out.startswith("Exercise 03 (solutions/03_masking.py)")


@pytest.mark.parametrize("written, why", [
    ("99", "(no tests/exercises/checks_99_*.py)"),
    ("03_wrong", "(exercise 03 is 03_masking)"),
    ("masking", ""),
])
def test_an_unknown_exercise_lists_the_valid_ids_and_exits_2(written, why, capsys):
    assert main_grade(written) == 2
    err = capsys.readouterr().err
    valid = ", ".join(grading.exercise_ids())
    assert valid.startswith("01, 02, 03, 04, 05, 06, 07, 08")  # from checks_NN_*.py
    assert err == f"mini-agent grade: unknown exercise {written!r}{' ' + why if why else ''}; " \
                  f"valid ids: {valid}\n"


def test_a_missing_exercise_file_says_how_to_create_it(tmp_path):
    root = _tiny_repo(tmp_path, "")
    (root / "exercises" / "98_tiny.py").unlink()
    with pytest.raises(FileNotFoundError, match="`mini-agent make-exercises` creates"):
        grade("98", root=root)
