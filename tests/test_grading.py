"""Tests for mini_agent.grading: grading follows the learner's folder, never hangs, reports once.

The exercise graded here is 03 (masking) in a temporary copy of the repository's folder: its
``exercises/`` holds the reference answer, changed per test (an endless loop, a syntax error).
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
import types
from importlib import resources
from pathlib import Path

import pytest

import mini_agent
from mini_agent import cli
from mini_agent.grading import (
                                CheckResult, Scorecard, check, checks_module, collect_checks, exercise_ids, find_file,
                                find_root, grade, grade_all, main_grade, normalize_exercise, run_checks)
from mini_agent.grading.registry import CHECKS_PACKAGE
from mini_agent.grading.runner import SkippedCall, names_used, run_check, stub_out
from mini_agent.grading.supervisor import STDERR_KEEP_BYTES, Worker, WorkerError

REPO = Path(__file__).resolve().parent.parent
SOLUTION_03 = (REPO / "solutions" / "03_masking.py").read_text(encoding="utf-8")
SHOULD_MASK = "def should_mask(messages: list[dict], threshold_tokens: int = 8_000) -> bool:\n"
CHECKS_03 = collect_checks(checks_module("03"))
TOTAL_03 = sum(fn.grading["points"] for fn in CHECKS_03)
"""Exercise 03's full marks; its should_mask check is worth 1 point."""
ESTIMATE_CHECKS_03 = [fn.__name__ for fn in CHECKS_03
                      if fn.__name__.startswith(("check_approx_tokens", "check_should_mask"))]
"""The checks that call approx_tokens (should_mask calls it too)."""


@pytest.fixture
def copy(tmp_path, monkeypatch):
    """A learner's copy of the kit's exercises/ with 03 answered (the reference answer);
    the current directory is a sub-folder of it, as a notebook kernel's would be."""
    shutil.copytree(REPO / "exercises", tmp_path / "exercises")
    (tmp_path / "exercises" / "03_masking.py").write_text(SOLUTION_03, encoding="utf-8")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    return tmp_path


def write_03(copy: Path, text: str) -> Path:
    path = copy / "exercises" / "03_masking.py"
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- checks and cards

def test_check_decorator():
    @check(points=3, hint="look left", time_limit_seconds=30)
    def check_x(impl):
        pass
    assert check_x.grading == {"points": 3, "hint": "look left", "time_limit_seconds": 30,
                               "guards_input": False}
    assert check(guards_input=True)(lambda impl: None).grading["guards_input"] is True
    with pytest.raises(ValueError):
        check(points=0)
    with pytest.raises(ValueError, match="time_limit_seconds must be positive"):
        check(time_limit_seconds=0)


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
    def todo():
        raise NotImplementedError("Exercise 99.1")
    return types.SimpleNamespace(f=lambda: 1, todo=todo)


def test_collect_checks_in_definition_order_marked_only():
    names = [fn.__name__ for fn in collect_checks(_checks_module())]
    assert names == ["check_a_passes", "check_b_asserts", "check_c_todo", "check_d_crashes"]


def test_run_checks_scorecard_and_json_shape():
    card = run_checks("99", _checks_module(), _impl(), implementation="fake")
    assert (card.score, card.total, card.full_marks) == (2, 8, False)
    data = card.to_dict()
    assert {k: v for k, v in data.items() if k not in ("checks", "kit_version")} == {
        "exercise": "99", "implementation": "fake", "path": "", "score": 2, "total": 8,
        "error": ""}
    assert data["kit_version"] == mini_agent.__version__
    assert [(c["name"], c["points"], c["max_points"], c["passed"], c["hint"])
            for c in data["checks"]] == [
        ("check_a_passes", 2, 2, True, ""), ("check_b_asserts", 0, 1, False, "h-assert"),
        ("check_c_todo", 0, 1, False, "h-todo"), ("check_d_crashes", 0, 4, False, "h-crash")]
    assert all(set(c) == {"name", "points", "max_points", "passed", "hint", "detail",
                          "seconds", "raised", "changed"} for c in data["checks"])
    assert [c["raised"] and c["raised"]["exception"] for c in data["checks"]] == [
        None, None, None, "AttributeError"]
    assert json.loads(json.dumps(data)) == data
    details = {c.name: c.detail for c in card.checks}
    assert details["check_b_asserts"] == "f() should be 2"
    assert details["check_c_todo"] == "not implemented yet (Exercise 99.1)"
    assert details["check_d_crashes"].startswith("AttributeError")
    text = card.to_text()
    assert text.splitlines()[0] == f"Exercise 99: fake (mini-agent {mini_agent.__version__})"
    assert "[PASS] check_a_passes" in text and "hint: h-crash" in text
    assert text.splitlines()[-1] == "  score: 2/8"


def test_scorecard_empty_is_not_full_marks():
    card = Scorecard("01", "x", [])
    assert (card.score, card.total, card.to_dict()["checks"], card.full_marks) == (0, 0, [], False)
    assert CheckResult("c", 1, 1, True).hint == ""


def test_names_used_lists_the_implementation_names_a_check_calls():
    def check_x(impl):
        impl.drain_ready()
        assert [x for x in (lambda: impl.drain_all())()]
    assert names_used(check_x, {"drain_all", "drain_ready", "add"}) == [
        "drain_ready", "drain_all"]


# --------------------------------------------------------------------------- which files

def test_checks_ship_inside_the_package():
    files = {p.name for p in resources.files(CHECKS_PACKAGE).iterdir()}
    assert {f"{name}.py" for name in
            ("checks_01_streaming", "checks_03_masking", "checks_08_context_lifecycle")} <= files
    assert checks_module("03").__name__ == f"{CHECKS_PACKAGE}.checks_03_masking"
    assert Path(checks_module("03").__file__).parent == Path(mini_agent.__file__).parent / \
        "grading" / "checks"


def test_a_non_editable_install_includes_the_checks():
    """pyproject's package discovery (what `pip install .` ships) finds the checks package."""
    from setuptools import find_packages
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    found = find_packages(where=REPO, **config["tool"]["setuptools"]["packages"]["find"])
    assert {"mini_agent.grading", CHECKS_PACKAGE} <= set(found)


def test_grading_follows_the_copy_from_a_sub_folder(copy):
    card = grade("03")
    assert card.path == str(copy / "exercises" / "03_masking.py")
    assert card.full_marks and card.score == TOTAL_03
    assert card.to_text().splitlines()[0] == (
        f"Exercise 03: {copy}/exercises/03_masking.py (mini-agent {mini_agent.__version__})")
    assert find_root() == copy


def test_root_names_the_folder(copy, tmp_path_factory):
    other = tmp_path_factory.mktemp("elsewhere")
    shutil.copytree(REPO / "exercises", other / "exercises")  # untouched stubs
    assert grade("03", root=other).score == 0
    assert grade("03").score == TOTAL_03  # the current folder's copy, not the other one
    with pytest.raises(FileNotFoundError, match="no exercises/03_"):
        grade("03", root=copy / "notebooks")


def test_outside_any_copy_grading_says_where_it_looked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"no exercises/ folder in .* or pass the folder that "
                       r"holds it \(--root DIR on the command line, root=DIR in Python\)"):
        grade("03")
    assert main_grade("03") == 2
    assert "no exercises/ folder" in capsys.readouterr().err


def test_a_missing_exercise_file_says_how_to_create_it(copy):
    (copy / "exercises" / "03_masking.py").unlink()
    # a learner's copy has no solutions/: make-exercises cannot help there
    with pytest.raises(FileNotFoundError, match=r"copy the exercise files again from the "
                       r"kit's exercises/ folder into .*exercises$"):
        grade("03")
    (copy / "solutions").mkdir()  # a maintainer's clone
    with pytest.raises(FileNotFoundError, match="`mini-agent make-exercises` creates"):
        grade("03")


def test_root_pointing_at_exercises_itself_says_to_pass_the_folder_above(copy, capsys):
    with pytest.raises(FileNotFoundError, match=r"is exercises/ itself; pass the folder that "
                       r"holds it \(--root .*\)$") as caught:
        grade("03", root=copy / "exercises")
    assert str(caught.value).endswith(f"(--root {copy}, or root= in Python)")


def test_exercise_files_copied_without_their_folder_are_named(tmp_path, monkeypatch):
    for f in sorted((REPO / "exercises").glob("0[1-4]_*.py")):
        shutil.copy(f, tmp_path / f.name)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"holds 01_.*\.py, 02_.*\.py, 03_.*\.py, \.\.\.: "
                       r"put them in a folder named exercises/"):
        grade("03")


@pytest.mark.parametrize("written", ["3", "03", "03_masking", "03_masking.py", 3])
def test_an_exercise_can_be_named_several_ways(written, copy, capsys):
    assert normalize_exercise(written) == "03"
    assert main_grade(str(written)) == 0
    assert capsys.readouterr().out.startswith(f"Exercise 03: {copy}/exercises/03_masking.py")


@pytest.mark.parametrize("written, why", [
    ("99", "(no checks for exercise 99)"),
    ("03_wrong", "(exercise 03 is 03_masking)"),
    ("masking", ""),
])
def test_an_unknown_exercise_lists_the_valid_ids_and_exits_2(written, why, capsys):
    assert main_grade(written) == 2
    err = capsys.readouterr().err
    valid = ", ".join(exercise_ids())
    assert valid.startswith("01, 02, 03, 04, 05, 06, 07, 08")
    assert err == f"mini-agent grade: unknown exercise {written!r}{' ' + why if why else ''}; " \
                  f"valid ids: {valid}\n"


# --------------------------------------------------------------------------- never hang

def test_an_endless_loop_costs_that_check_only(copy):
    write_03(copy, SOLUTION_03.replace(SHOULD_MASK, SHOULD_MASK + "    while True:\n"
                                                                  "        pass\n"))
    card = grade("03", time_limit_seconds=2)
    failed = [c for c in card.checks if not c.passed]
    assert [c.name for c in failed] == ["check_should_mask_threshold"]
    assert failed[0].detail.startswith(
        "timed out after 2 s: look for an endless loop in should_mask (03_masking.py, line ")
    assert failed[0].seconds >= 2
    assert card.score == TOTAL_03 - 1 and card.total == TOTAL_03


def test_a_function_that_timed_out_costs_one_time_limit_not_one_per_check(copy):
    # approx_tokens loops; its 4 checks and should_mask's (should_mask calls approx_tokens)
    # would each wait the limit: the first times out, the others are skipped at once, in a
    # new worker where the masking checks still pass
    approx = "def approx_tokens(messages: list[dict]) -> int:\n"
    write_03(copy, SOLUTION_03.replace(approx, approx + "    while True:\n        pass\n"))
    started = time.perf_counter()
    card = grade("03", time_limit_seconds=3)
    wall_seconds = time.perf_counter() - started
    assert wall_seconds < 2 * 3, f"graded in {wall_seconds:.1f} s"
    failed = [c for c in card.checks if not c.passed]
    assert [c.name for c in failed] == ESTIMATE_CHECKS_03 and len(failed) == 5
    first = ESTIMATE_CHECKS_03[0]
    assert failed[0].detail.startswith(
        "timed out after 3 s: look for an endless loop in approx_tokens (03_masking.py, line ")
    assert [c.detail for c in failed[1:]] == \
        [f"skipped: `approx_tokens` timed out in {first}"] * 4
    assert all(c.seconds < 1 for c in failed[1:])
    assert card.score == TOTAL_03 - sum(fn.grading["points"] for fn in CHECKS_03
                                        if fn.__name__ in ESTIMATE_CHECKS_03)


def test_the_function_whose_call_never_returned_is_blamed_not_the_helper_it_calls(copy):
    # mask_old_observations spins calling a correct approx_tokens, where the time goes: the
    # innermost graded frame is approx_tokens, but stubbing it would fail should_mask's check
    write_03(copy, SOLUTION_03 + "\n\ndef mask_old_observations(messages, keep=4):\n"
                                 "    while True:\n"
                                 "        approx_tokens(messages * 50)\n")
    card = grade("03", time_limit_seconds=1)
    failed = [c for c in card.checks if not c.passed]
    masking = [fn.__name__ for fn in CHECKS_03 if fn.__name__ not in ESTIMATE_CHECKS_03]
    assert [c.name for c in failed] == masking
    assert re.fullmatch(r"timed out after 1 s: look for an endless loop in mask_old_observations "
                        r"\(03_masking\.py, line \d+, calls approx_tokens\)", failed[0].detail)
    assert {c.detail for c in failed[1:]} == {
        f"skipped: `mask_old_observations` timed out in {masking[0]}"}
    assert card.score == sum(fn.grading["points"] for fn in CHECKS_03
                             if fn.__name__ in ESTIMATE_CHECKS_03)


def test_stub_out_replaces_functions_methods_and_properties():
    module = types.ModuleType("_graded")
    exec("def f():\n    return 1\n"
         "def g():\n    return f() + 1\n"
         "class C:\n    def m(self):\n        return 2\n"
         "    @property\n    def p(self):\n        return 3\n"
         "    @staticmethod\n    def s():\n        return 4\n", module.__dict__)
    calls: list[str] = []
    for qualname in ("f", "C.m", "C.p", "C.s"):
        assert stub_out(module, "_graded", qualname, f"skipped {qualname}", calls.append)
    for call, message in [(module.g, "skipped f"), (lambda: module.C().m(), "skipped C.m"),
                          (lambda: module.C().p, "skipped C.p"), (module.C.s, "skipped C.s")]:
        with pytest.raises(SkippedCall, match=message):
            call()  # g reaches f through the module's globals
    assert calls == ["skipped f", "skipped C.m", "skipped C.p", "skipped C.s"]
    assert not stub_out(module, "_graded", "<module>", "x", calls.append)
    assert not stub_out(module, "_graded", "missing", "x", calls.append)
    assert not stub_out(module, "not_loaded_anywhere", "f", "x", calls.append)


def test_stub_out_replaces_every_alias_of_the_function():
    module = types.ModuleType("_graded")
    exec("def _impl():\n    return 1\nf = _impl\ng = f\n"
         "class C:\n    def m(self):\n        return 2\n    n = m\n", module.__dict__)
    calls: list[str] = []
    assert stub_out(module, "_graded", "_impl", "skipped _impl", calls.append)
    assert stub_out(module, "_graded", "C.m", "skipped C.m", calls.append)
    for call in (module._impl, module.f, module.g, module.C().m, module.C().n):
        with pytest.raises(SkippedCall):
            call()
    assert calls == ["skipped _impl"] * 3 + ["skipped C.m"] * 2


def test_an_aliased_function_that_timed_out_costs_one_time_limit(copy):
    # the loop reports _mask_impl; the checks call mask_old_observations, the same function
    write_03(copy, SOLUTION_03 + "\n\ndef _mask_impl(messages, keep=4):\n    while True:\n"
                                 "        pass\n\n\nmask_old_observations = _mask_impl\n")
    started = time.perf_counter()
    card = grade("03", time_limit_seconds=1)
    wall_seconds = time.perf_counter() - started
    failed = [c for c in card.checks if not c.passed]
    masking = [fn.__name__ for fn in CHECKS_03 if fn.__name__ not in ESTIMATE_CHECKS_03]
    assert [c.name for c in failed] == masking
    assert failed[0].detail.startswith("timed out after 1 s: look for an endless loop in "
                                       "_mask_impl (03_masking.py, line ")
    assert {c.detail for c in failed[1:]} == {f"skipped: `_mask_impl` timed out in {masking[0]}"}
    assert wall_seconds < 2 * 1 + 3, f"graded in {wall_seconds:.1f} s"


def test_a_skipped_check_fails_even_when_it_swallows_the_exception():
    from mini_agent.grading.worker import Session
    module = types.ModuleType("_graded")
    exec("def f():\n    return 1\n", module.__dict__)

    @check(points=1, hint="h")
    def check_swallows(impl):
        try:
            impl.f()
        except Exception:  # noqa: BLE001 - what a careless check could do
            pass
    channel = io.StringIO()
    session = Session(channel)
    session.impl, session.checks = module, {"check_swallows": check_swallows}
    assert stub_out(module, None, "f", "skipped: `f` timed out in check_a", session.skip)
    session.run({"name": "check_swallows", "time_limit_seconds": 5})
    reply = json.loads(channel.getvalue())
    assert (reply["passed"], reply["detail"]) == (False, "skipped: `f` timed out in check_a")


def test_a_module_level_endless_loop_is_reported_once(copy):
    path = write_03(copy, SOLUTION_03 + "\nwhile True:\n    pass\n")
    card = grade("03", time_limit_seconds=1)
    assert card.error.startswith(f"could not import {path}: timed out after 1 s: look for an "
                                 "endless loop in <module> (03_masking.py, line ")
    assert card.score == 0 and len(card.checks) == len(CHECKS_03)


def test_a_process_exit_in_one_function_costs_that_check_only(copy):
    write_03(copy, SOLUTION_03.replace(SHOULD_MASK, SHOULD_MASK + "    import os\n"
                                                                  "    os._exit(3)\n"))
    card = grade("03")
    failed = [c for c in card.checks if not c.passed]
    assert [c.name for c in failed] == ["check_should_mask_threshold"]
    assert failed[0].detail.startswith("the grading process ended while this check ran "
                                       "(exit code 3)")
    assert card.score == TOTAL_03 - 1


def test_a_keyboard_interrupt_raised_by_the_code_fails_that_check_and_says_so(copy):
    write_03(copy, SOLUTION_03.replace(SHOULD_MASK, SHOULD_MASK + "    raise KeyboardInterrupt\n"))
    card = grade("03")
    failed = [c for c in card.checks if not c.passed]
    assert [(c.name, c.detail) for c in failed] == [
        ("check_should_mask_threshold", "raised KeyboardInterrupt")]
    assert card.score == TOTAL_03 - 1


def test_a_keyboard_interrupt_in_process_stops_the_grading():
    @check(points=1, hint="h")
    def check_interrupted(impl):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        run_check(check_interrupted, None)
    assert run_check(check_interrupted, None, interrupts=True).detail == "raised KeyboardInterrupt"


def test_replacing_the_workers_run_check_changes_no_result(copy):
    # the file runs in the worker, whose module is __main__: it binds run_check before loading
    write_03(copy, SOLUTION_03 + """
import sys as _sys
from mini_agent.grading.scorecard import CheckResult as _Result
def _all_pass(fn, impl, **kwargs):
    return _Result(fn.__name__, fn.grading["points"], fn.grading["points"], True)
_sys.modules["__main__"].run_check = _all_pass
def should_mask(messages, threshold_tokens=8_000):
    raise NotImplementedError("Exercise 03.3")
""")
    card = grade("03")
    assert [c.name for c in card.checks if not c.passed] == ["check_should_mask_threshold"]


def alive(pid: int) -> bool:
    """True while process ``pid`` runs (a zombie waiting for its parent to reap it is dead)."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
        except (FileNotFoundError, ProcessLookupError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_dead(pids: list[int], seconds: float = 3.0) -> list[int]:
    """The pids of ``pids`` still alive after up to ``seconds``."""
    deadline = time.monotonic() + seconds
    while (left := [pid for pid in pids if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


FORK_AT_IMPORT = """
import os as _os, time as _time
_child = _os.fork()
if _child == 0:
    while True:
        _time.sleep(0.5)
with open({pids!r}, "a") as _file:
    _file.write(f"{{_child}}\\n")
"""
"""Appended to the answer: a child forked on import that sleeps forever, its pid recorded."""


def test_no_process_the_code_started_outlives_grading(copy):
    # a child forked on import, and a `sleep 654` that should_mask waits for until its time
    # limit: the worker's process group is killed, with everything in it
    pids = copy / "pids.txt"
    run_sleep = (f"    import subprocess\n    _p = subprocess.Popen(['sleep', '654'])\n"
                 f"    open({str(pids)!r}, 'a').write(f'{{_p.pid}}\\n')\n    _p.wait()\n")
    write_03(copy, SOLUTION_03.replace(SHOULD_MASK, SHOULD_MASK + run_sleep)
             + FORK_AT_IMPORT.format(pids=str(pids)))
    card = grade("03", time_limit_seconds=1)
    assert [c.name for c in card.checks if not c.passed] == ["check_should_mask_threshold"]
    started = [int(line) for line in pids.read_text().split()]
    assert len(started) == 2  # the child forked on import, the sleep should_mask started
    assert wait_dead(started) == []


def test_a_dead_caller_takes_the_worker_and_what_the_code_started_with_it(copy):
    # the kernel that graded dies (restarted, killed) while should_mask waits on `sleep 654`:
    # within about a second the worker sees its parent gone and ends its whole group
    import signal
    import subprocess
    pids = copy / "pids.txt"
    run_sleep = (f"    import os, subprocess\n    _p = subprocess.Popen(['sleep', '654'])\n"
                 f"    open({str(pids)!r}, 'a').write(f'{{os.getpid()}} {{_p.pid}}\\n')\n"
                 f"    _p.wait()\n")
    write_03(copy, SOLUTION_03.replace(SHOULD_MASK, SHOULD_MASK + run_sleep))
    caller = subprocess.Popen(
        [sys.executable, "-c", "from mini_agent.grading import grade; grade('03', "
         "time_limit_seconds=60)"], cwd=copy / "notebooks", stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (pids.exists() and pids.read_text().endswith("\n")):
            assert time.monotonic() < deadline and caller.poll() is None
            time.sleep(0.05)
        worker, sleep = map(int, pids.read_text().split()[:2])
        assert alive(worker) and alive(sleep)
    finally:
        caller.send_signal(signal.SIGKILL)
        caller.wait()
    # the check's own limit (60 s) is far away: only the parent watch can end them this soon
    assert wait_dead([worker, sleep], seconds=5.0) == []
    # and no `sleep` started while the worker ended (the check calls should_mask again once
    # the first sleep is killed) survives it
    started = [int(pid) for pid in pids.read_text().split()[1::2]]
    assert wait_dead(started) == []


def test_a_loop_that_holds_the_interpreter_is_blamed_from_the_stack_dump(copy):
    # no watchdog report can come (the C loop never lets go): the stack dump names
    # approx_tokens, it is stubbed, and the four other checks that call it cost nothing
    head = "def approx_tokens(messages: list[dict]) -> int:\n"
    write_03(copy, SOLUTION_03.replace(
        head, head + "    import itertools\n    sum(itertools.repeat(1))\n"))
    card = grade("03", time_limit_seconds=1)
    failed = {c.name: c for c in card.checks if not c.passed}
    first = failed.pop("check_approx_tokens_text")
    assert re.fullmatch(r"timed out after 1 s: look for an endless loop in approx_tokens "
                        r"\(03_masking\.py, line \d+\)", first.detail)
    assert sorted(failed) == ["check_approx_tokens_thinking_and_images",
                              "check_approx_tokens_tool_result",
                              "check_approx_tokens_tool_use", "check_should_mask_threshold"]
    assert {c.detail for c in failed.values()} == {
        "skipped: `approx_tokens` timed out in check_approx_tokens_text"}
    assert all(c.seconds < 1 for c in failed.values())



def test_a_method_that_holds_the_interpreter_is_found_from_its_line_and_stubbed(copy):
    # the dump says `add`, not `OrderedDrain.add`: its line finds the method, which is
    # stubbed, so the other checks that add tasks are skipped at once
    solution = (REPO / "solutions" / "02_ordered_drain.py").read_text(encoding="utf-8")
    head = "        # BEGIN SOLUTION\n        self.tasks.append("
    assert solution.count(head) == 1
    (copy / "exercises" / "02_ordered_drain.py").write_text(solution.replace(
        head, "        import itertools\n        sum(itertools.repeat(1))\n" + head),
        encoding="utf-8")
    card = grade("02", time_limit_seconds=1)
    failed = [c for c in card.checks if not c.passed]
    assert re.fullmatch(r"timed out after 1 s: look for an endless loop in add "
                        r"\(02_ordered_drain\.py, line \d+\)", failed[0].detail)
    skipped = {c.detail for c in failed[1:]}
    assert skipped == {f"skipped: `OrderedDrain.add` timed out in {failed[0].name}"}
    assert len(failed) >= 3 and all(c.seconds < 1 for c in failed[1:])


def test_qualname_at_finds_the_method_a_dump_line_is_in():
    from types import ModuleType
    from mini_agent.grading.stack_dump import qualname_at
    module = ModuleType("learner")
    exec(compile("def add():\n    pass\n\n\nclass Drain:\n    def add(self):\n        pass\n\n"
                 "    @staticmethod\n    def put():\n        pass\n\n"
                 "    @property\n    def size(self):\n        return 0\n",
                 "learner.py", "exec"), module.__dict__)
    assert qualname_at(module, "add", 2) == "add"
    assert qualname_at(module, "add", 7) == "Drain.add"
    assert qualname_at(module, "put", 11) == "Drain.put"
    assert qualname_at(module, "size", 15) == "Drain.size"
    assert qualname_at(module, "missing", 3) == "missing"
    assert qualname_at(module, "add", 0) == "add"  # before any definition: the name as given

DUMP = """learner output
Timeout (0:00:02)!
Thread 0x00007f0000000002 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 320 in wait
  File "/usr/lib/python3.11/threading.py", line 1395 in run

Thread 0x00007f0000000001 (most recent call first):
  File "/w/exercises/03_masking.py", line 45 in approx_tokens
  File "/w/exercises/03_masking.py", line 9 in _count
  File "/w/exercises/03_masking.py", line 80 in mask_old_observations
  File "/kit/mini_agent/grading/checks/checks_03_masking.py", line 12 in check_x
  File "/kit/mini_agent/grading/worker.py", line 200 in run
more learner output
"""


def test_the_stack_dump_names_the_outermost_graded_call_of_the_thread_that_spun():
    from mini_agent.grading.stack_dump import dump_threads, stuck_function
    graded = lambda f: f == "/w/exercises/03_masking.py"  # noqa: E731
    threads = dump_threads(DUMP)
    assert [len(t) for t in threads] == [2, 5]
    assert threads[1][0] == ("/w/exercises/03_masking.py", 45, "approx_tokens")
    assert stuck_function(DUMP, graded) == (
        "mask_old_observations",
        "mask_old_observations (03_masking.py, line 80, calls _count, then approx_tokens)", 80)
    assert stuck_function(DUMP, lambda f: False) is None
    assert stuck_function("no dump here", graded) is None
    # only the last dump counts
    assert stuck_function(DUMP.replace("line 80", "line 81") + DUMP.split("more")[0]
                          .replace("line 80", "line 99"), graded)[1].startswith(
        "mask_old_observations (03_masking.py, line 99")


def test_a_process_exit_while_a_forked_child_holds_the_pipe_is_not_a_timeout(copy):
    # the child forked on import holds the worker's reply pipe open: the end of the worker
    # must still be seen at once (not as a timeout), and the child killed
    pids = copy / "pids.txt"
    write_03(copy, SOLUTION_03.replace(SHOULD_MASK, SHOULD_MASK + "    import os\n"
                                                                  "    os._exit(3)\n")
             + FORK_AT_IMPORT.format(pids=str(pids)))
    card = grade("03", time_limit_seconds=5)
    failed = [c for c in card.checks if not c.passed]
    assert [c.name for c in failed] == ["check_should_mask_threshold"]
    assert failed[0].detail.startswith("the grading process ended while this check ran "
                                       "(exit code 3)")
    assert failed[0].seconds < 2
    assert wait_dead([int(line) for line in pids.read_text().split()]) == []


def test_a_worker_that_cannot_start_says_what_it_printed(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "executable", "/bin/sh")  # refuses python's -P option
    with pytest.raises(WorkerError, match=r"the grading worker did not start: .*-P"):
        Worker(cwd=tmp_path)


def test_a_thread_the_code_left_running_does_not_delay_the_worker_s_end(copy):
    path = write_03(copy, SOLUTION_03 + "\nimport threading as _threading, time as _time\n"
                                        "def _forever():\n    while True:\n"
                                        "        _time.sleep(0.1)\n"
                                        "_threading.Thread(target=_forever).start()\n")
    worker = Worker(cwd=copy)
    loaded = worker.request({"op": "load", "exercise": "03", "implementation": "exercises",
                             "path": str(path), "time_limit_seconds": 10}, seconds=30)
    assert loaded["error"] == ""
    started = time.perf_counter()
    worker.close()  # the worker exits when its stdin closes; it used to wait for the thread
    assert worker.process.returncode == 0
    assert time.perf_counter() - started < 2


def test_a_stderr_flood_keeps_only_the_end_of_it(copy):
    # approx_tokens writes megabytes to stderr without end: the caller keeps the last 64 KiB
    path = write_03(copy, SOLUTION_03 + "\n\ndef approx_tokens(messages):\n    import sys\n"
                                        "    while True:\n"
                                        "        sys.stderr.write('z' * 1_000_000)\n")
    worker = Worker(cwd=copy)
    try:
        loaded = worker.request({"op": "load", "exercise": "03", "implementation": "exercises",
                                 "path": str(path), "time_limit_seconds": 10}, seconds=30)
        assert loaded["error"] == ""
        reply = worker.request({"op": "run", "name": ESTIMATE_CHECKS_03[0],
                                "time_limit_seconds": 1}, seconds=5)
        assert reply["op"] == "timeout" and reply["where"].startswith("approx_tokens (")
        assert worker.stderr_bytes > 10 * STDERR_KEEP_BYTES  # it did flood
        assert len(worker.stderr_tail) <= STDERR_KEEP_BYTES
        assert worker.stderr_text(100) == "z" * 100
    finally:
        worker.kill()


@pytest.mark.parametrize("exercise", ["02", "06"])
def test_grading_inside_a_running_event_loop_gives_full_marks(exercise):
    """A notebook cell runs inside an asyncio loop; async checks must still pass there."""
    async def grade_in_a_cell():
        asyncio.get_running_loop()  # as in Jupyter: a loop runs in this thread
        return grade(exercise, implementation="solutions", root=REPO)
    card = asyncio.run(grade_in_a_cell())
    failed = [f"{c.name}: {c.detail}" for c in card.checks if not c.passed]
    assert not failed and card.full_marks, failed


# --------------------------------------------------------------------------- report once

def test_a_file_that_does_not_parse_is_reported_once_with_its_line(copy):
    path = write_03(copy, SOLUTION_03 + "\ndef broken(:\n    pass\n")
    line = len(SOLUTION_03.splitlines()) + 2
    card = grade("03")
    assert card.error == (f"could not import {path}, line {line}: SyntaxError: invalid syntax\n"
                          "    def broken(:")
    assert card.score == 0 and card.total == TOTAL_03 and len(card.checks) == len(CHECKS_03)
    assert {c.detail for c in card.checks} == {"not run: the file does not import"}
    text = card.to_text()
    assert text.count("SyntaxError") == 1 and "hint:" not in text
    assert text.splitlines()[1] == f"  could not import {path}, line {line}: SyntaxError: " \
                                   "invalid syntax"


def test_an_error_raised_on_import_names_the_line_of_the_file(copy):
    path = write_03(copy, SOLUTION_03 + "\nLIMIT = undefined_name + 1\n")
    card = grade("03")
    line = len(SOLUTION_03.splitlines()) + 2
    assert card.error == (f"could not import {path}, line {line}: NameError: name "
                          "'undefined_name' is not defined\n    LIMIT = undefined_name + 1")


# --------------------------------------------------------------------------- the command

def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return cli.main(["grade", *argv], out=out), out.getvalue()


def test_exit_codes(copy):
    assert run_cli("03")[0] == 0  # full marks
    write_03(copy, SOLUTION_03.replace("return approx_tokens(messages) > threshold_tokens",
                                       "return approx_tokens(messages) >= threshold_tokens"))
    assert run_cli("03")[0] == 1  # below full marks
    write_03(copy, "def broken(:\n")
    assert run_cli("03")[0] == 1  # does not import
    assert run_cli("77")[0] == 2 and run_cli()[0] == 2 and run_cli("03", "--all")[0] == 2
    assert run_cli("03", "--no-such-option")[0] == 2


def test_json_is_one_document_on_stdout_whatever_happens(copy, capsys):
    write_03(copy, SOLUTION_03.replace(SHOULD_MASK, SHOULD_MASK + '    print("hi from a check")\n')
             + 'print("hello from import")\n')
    code, out = run_cli("03", "--json")
    card = json.loads(out)
    assert code == 0 and card["score"] == card["total"] == TOTAL_03
    assert card["path"] == str(copy / "exercises" / "03_masking.py")
    assert card["kit_version"] == mini_agent.__version__ and card["error"] == ""
    assert all(set(c) >= {"name", "points", "passed", "hint", "detail", "seconds"}
               for c in card["checks"])
    for argv, message in ((["77"], "unknown exercise '77'"),
                          ([], "give one exercise id"),
                          (["03", "--bogus"], "unrecognized arguments: --bogus"),
                          (["03", "--time-limit", "0"], "the time limit must be positive"),
                          (["03", "--root", str(copy / "notebooks")], "no exercises/03_")):
        code, out = run_cli(*argv, "--json")
        document = json.loads(out)  # exactly one JSON document, even for a usage error
        assert code == 2 and message in document["error"], (argv, document)
        assert (document["score"], document["total"], document["checks"]) == (0, 0, [])
    capsys.readouterr()
    write_03(copy, "def broken(:\n")
    code, out = run_cli("3", "--json")
    card = json.loads(out)
    assert code == 1 and card["error"].startswith("could not import") and card["total"] == TOTAL_03


def test_all_grades_every_exercise_in_one_call(copy):
    shutil.copy(REPO / "solutions" / "07_sessions.py", copy / "exercises" / "07_sessions.py")
    (copy / "exercises" / "08_context_lifecycle.py").unlink()
    code, out = run_cli("--all", "--json")
    room = json.loads(out)
    assert code == 1
    assert [card["exercise"] for card in room["exercises"]] == exercise_ids()
    scores = {card["exercise"]: (card["score"], card["total"]) for card in room["exercises"]}
    assert scores["03"] == (TOTAL_03, TOTAL_03) and scores["07"][0] == scores["07"][1] > 0
    assert scores["01"][0] == 0  # an untouched stub
    missing = room["exercises"][exercise_ids().index("08")]
    assert "no exercises/08_" in missing["error"] and missing["total"] > 0
    assert room["score"] == sum(s for s, _ in scores.values()) == TOTAL_03 + scores["07"][0]
    assert room["total"] == sum(t for _, t in scores.values())
    assert room["root"] == str(copy)
    code, text = run_cli("--all")
    assert code == 1 and text.splitlines()[-1] == f"  total: {room['score']}/{room['total']}"


def test_all_at_full_marks_exits_0(copy):
    for exercise in exercise_ids():
        solution = find_file("solutions", exercise, root=REPO)
        shutil.copy(solution, copy / "exercises" / solution.name)
    room = grade_all()
    assert room.full_marks and room.score == room.total > 0
    assert run_cli("--all")[0] == 0


def test_the_class_results_recipe_in_the_docs_builds_the_csv(copy, tmp_path_factory,
                                                            monkeypatch):
    """docs/grading.md's merge script, run on two students' JSON files (one could not grade)."""
    room = tmp_path_factory.mktemp("room")
    (room / "results").mkdir()
    code, out = run_cli("--all", "--json")
    (room / "results" / "ana.json").write_text(out, encoding="utf-8")
    code, out = run_cli("--all", "--json", "--root", str(room))  # no exercises/ there
    (room / "results" / "ben.json").write_text(out, encoding="utf-8")
    doc = (REPO / "docs" / "grading.md").read_text(encoding="utf-8")
    script = doc.split("```python\n")[1].split("```")[0]
    monkeypatch.chdir(room)
    exec(compile(script, "docs/grading.md", "exec"), {"__name__": "recipe"})  # writes class.csv
    with open("class.csv", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert [row["student"] for row in rows] == ["ana", "ben"]
    assert rows[0]["03"] == str(TOTAL_03) and rows[0]["01"] == "0" and rows[0]["error"] == ""
    assert rows[0]["score"] == str(TOTAL_03) and int(rows[0]["total"]) > TOTAL_03
    assert rows[1]["score"] == "0" and "no exercises/" in rows[1]["error"]


DUMP_WITH_A_LEARNER_THREAD = """Timeout (0:00:02)!
Thread 0x00007f0000000003 (most recent call first):
  File "/w/exercises/03_masking.py", line 150 in background_poller
  File "/usr/lib/python3.11/threading.py", line 982 in run
  File "/usr/lib/python3.11/threading.py", line 1045 in _bootstrap_inner
  File "/usr/lib/python3.11/threading.py", line 1002 in _bootstrap

Thread 0x00007f0000000001 (most recent call first):
  File "/w/exercises/03_masking.py", line 45 in approx_tokens
  File "/kit/mini_agent/grading/runner.py", line 100 in run_check
  File "/kit/mini_agent/grading/worker.py", line 200 in run
  File "/kit/mini_agent/grading/worker.py", line 330 in main
"""


def test_the_stack_dump_blames_the_thread_that_runs_the_check_not_a_learner_thread():
    # faulthandler lists the newest thread first and labels none as current: a thread the
    # learner's code started in a graded function (a poller parked in time.sleep) comes
    # before the thread running the check, which is the one to blame (it has grader frames)
    from mini_agent.grading.stack_dump import stuck_function
    graded = lambda f: f == "/w/exercises/03_masking.py"  # noqa: E731
    assert stuck_function(DUMP_WITH_A_LEARNER_THREAD, graded)[0] == "approx_tokens"


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_worker_spinning_with_the_interpreter_held_ends_when_its_caller_dies(tmp_path):
    # the parent watch is a Python thread, which never runs while the check's code holds the
    # interpreter (sum(itertools.repeat(1))): the reaper process ends the worker instead
    pids = tmp_path / "pids.txt"
    shutil.copytree(REPO / "exercises", tmp_path / "exercises")
    head = "def approx_tokens(messages: list[dict]) -> int:\n"
    spin = (f"    import os, itertools\n    open({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n')\n"
            "    sum(itertools.repeat(1))\n")
    answer = (REPO / "solutions" / "03_masking.py").read_text(encoding="utf-8")
    (tmp_path / "exercises" / "03_masking.py").write_text(answer.replace(head, head + spin),
                                                          encoding="utf-8")
    (tmp_path / "notebooks").mkdir()
    caller = subprocess.Popen([sys.executable, "-c", "from mini_agent.grading import grade; "
                               "grade('03', time_limit_seconds=60)"], cwd=tmp_path / "notebooks",
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = None
    try:
        deadline = time.monotonic() + 60
        while not (pids.exists() and pids.read_text().endswith("\n")):
            assert time.monotonic() < deadline and caller.poll() is None
            time.sleep(0.05)
        worker = int(pids.read_text().split()[0])
        time.sleep(0.5)
        caller.kill()
        caller.wait()
        time.sleep(3)
        stat = Path(f"/proc/{worker}/stat")
        alive = stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    finally:
        if caller.poll() is None:
            caller.kill()
        if worker is not None:
            subprocess.run(["kill", "-9", str(worker)], stderr=subprocess.DEVNULL)
    assert not alive


def test_the_class_csv_example_in_the_docs_has_todays_points():
    # docs/grading.md shows a full-marks row: its totals are the checks' points today
    from mini_agent.grading.registry import checks_module, collect_checks, exercise_ids
    text = (REPO / "docs" / "grading.md").read_text(encoding="utf-8")
    head = next(ln for ln in text.splitlines() if ln.startswith("student,score,total,"))
    ana = next(ln for ln in text.splitlines() if ln.startswith("ana,")).split(",")
    points = {e: sum(fn.grading["points"] for fn in collect_checks(checks_module(e)))
              for e in exercise_ids()}
    assert head.split(",")[3:-1] == sorted(points)
    assert [int(v) for v in ana[3:-1]] == [points[e] for e in sorted(points)]
    assert int(ana[1]) == int(ana[2]) == sum(points.values())
