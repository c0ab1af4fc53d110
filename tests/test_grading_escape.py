"""Tests for grading's reach over processes that leave the worker's group (Linux only).

A check's code that starts a child in a session of its own (``start_new_session=True``,
``os.setsid()``), or orphans one with a double fork, must not outlive the check's time limit,
the end of the grading, or the death of the caller (a kernel killed with SIGKILL): the worker
is a child subreaper and its whole tree is killed (:mod:`mini_agent.grading.reaper`).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mini_agent.grading import grade
from mini_agent.grading.reaper import become_subreaper, kill_tree, process_table, tree_of

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="subreaper and /proc are Linux-only")

REPO = Path(__file__).resolve().parent.parent
SOLUTION_03 = (REPO / "solutions" / "03_masking.py").read_text(encoding="utf-8")
SHOULD_MASK = "def should_mask(messages: list[dict], threshold_tokens: int = 8_000) -> bool:\n"


@pytest.fixture
def copy(tmp_path, monkeypatch):
    """A learner's copy of exercises/ with 03 answered; the current folder below it."""
    shutil.copytree(REPO / "exercises", tmp_path / "exercises")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    return tmp_path


def answer(copy: Path, body: str) -> None:
    """Write exercise 03's reference answer with ``body`` run first in should_mask."""
    (copy / "exercises" / "03_masking.py").write_text(
        SOLUTION_03.replace(SHOULD_MASK, SHOULD_MASK + body), encoding="utf-8")


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as dead)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False


def wait_dead(pids: list[int], seconds: float) -> list[int]:
    """The pids of ``pids`` still alive after up to ``seconds``."""
    deadline = time.monotonic() + seconds
    while (left := [pid for pid in pids if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def setsid_sleep(pids: Path, *, wait: bool) -> str:
    """should_mask's first lines: start ``sleep 300`` in a new session, record its pid."""
    return (f"    import os, subprocess\n"
            f"    _p = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
            f"    open({str(pids)!r}, 'a').write(f'{{os.getpid()}} {{_p.pid}}\\n')\n"
            + ("    _p.wait()\n" if wait else ""))


def recorded(pids: Path) -> list[tuple[int, int]]:
    return [tuple(map(int, line.split())) for line in pids.read_text().splitlines()]


def test_a_setsid_child_dies_when_its_check_times_out(copy):
    pids = copy / "pids.txt"
    answer(copy, setsid_sleep(pids, wait=True))
    started = time.monotonic()
    card = grade("03", time_limit_seconds=1)
    assert [c.name for c in card.checks if not c.passed] == ["check_should_mask_threshold"]
    sleepers = [sleep for _, sleep in recorded(pids)]
    assert sleepers and os.getsid(os.getpid()) not in [os.getsid(p) for p in sleepers
                                                       if alive(p)]
    assert wait_dead(sleepers, 3.0) == []
    assert time.monotonic() - started < 30


def test_a_setsid_child_of_a_check_that_passed_dies_when_grading_ends(copy):
    # no time limit reached: the worker ends on request and kills its tree on the way out
    pids = copy / "pids.txt"
    answer(copy, setsid_sleep(pids, wait=False))
    card = grade("03", time_limit_seconds=10)
    assert card.full_marks, [c.detail for c in card.checks if not c.passed]
    sleepers = [sleep for _, sleep in recorded(pids)]
    assert len(sleepers) >= 1 and wait_dead(sleepers, 3.0) == []


def test_an_orphan_of_a_double_fork_in_a_new_session_dies_with_the_grading(copy):
    # the classic daemon: fork, setsid, fork again, the middle process exits; the grandchild
    # is handed to the worker (a subreaper), not to init
    pids = copy / "pids.txt"
    answer(copy, f"""    import os, time
    if not os.path.exists({str(pids)!r}):
        _r, _w = os.pipe()
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.write(_w, f'{{os.getpid()}}\\n'.encode())
                time.sleep(300)
            os._exit(0)
        open({str(pids)!r}, 'w').write(os.read(_r, 64).decode())
""")
    card = grade("03", time_limit_seconds=10)
    assert card.full_marks, [c.detail for c in card.checks if not c.passed]
    daemon = int(pids.read_text())
    assert wait_dead([daemon], 3.0) == []


def grading_caller(copy, pids):
    """Start a process that grades 03 (a 60 s limit, far away) and wait until the checked
    code has written its pids: the caller a test then kills."""
    caller = subprocess.Popen(
        [sys.executable, "-c", "from mini_agent.grading import grade; grade('03', "
         "time_limit_seconds=60)"], cwd=copy / "notebooks", stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (pids.exists() and pids.read_text().endswith("\n")):
        if time.monotonic() > deadline or caller.poll() is not None:
            caller.kill()
            caller.wait()
            raise AssertionError("the graded code never wrote its pids")
        time.sleep(0.05)
    return caller


def test_a_setsid_child_dies_when_the_caller_is_killed(copy):
    # the kernel that graded is killed mid-check (its limit, 60 s, far away): the worker's
    # parent watch or its reaper kills the worker's tree, the escaped sleeper with it
    pids = copy / "pids.txt"
    answer(copy, setsid_sleep(pids, wait=True))
    caller = grading_caller(copy, pids)
    try:
        worker, sleep = recorded(pids)[0]
        assert alive(worker) and alive(sleep)
        assert os.getsid(sleep) == sleep != os.getsid(worker)  # out of the worker's group
    finally:
        caller.send_signal(signal.SIGKILL)
        caller.wait()
    assert wait_dead([worker, sleep], 5.0) == []
    assert wait_dead([s for _, s in recorded(pids)], 3.0) == []


def test_a_setsid_child_dies_with_a_caller_killed_while_the_check_holds_the_interpreter(copy):
    # no thread of the worker can run (a C-level loop): the reaper process alone must stop the
    # worker and walk its tree
    pids = copy / "pids.txt"
    answer(copy, setsid_sleep(pids, wait=False) + "    import itertools\n"
                                                  "    sum(itertools.repeat(1))\n")
    caller = grading_caller(copy, pids)
    try:
        worker, sleep = recorded(pids)[0]
        time.sleep(0.3)
        assert alive(worker) and alive(sleep)
    finally:
        caller.send_signal(signal.SIGKILL)
        caller.wait()
    assert wait_dead([worker, sleep], 5.0) == []


def test_kill_tree_finds_descendants_that_left_the_group_and_spares_the_root():
    # a subreaper child of this test process orphans a setsid'd sleeper, then kill_tree
    # (run in the child, the root) finds it by ancestry, not by group
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the root
        try:
            become_subreaper()
            if os.fork() == 0:
                os.setsid()
                sleeper = subprocess.Popen(["sleep", "300"])
                os.write(write, f"{sleeper.pid}\n".encode())
                os._exit(0)  # the sleeper is orphaned: handed to the root
            time.sleep(0.3)
            table = process_table()
            found = tree_of(os.getpid(), table)
            code = 0 if kill_tree(os.getpid()) == len(found) >= 1 else 1
        finally:
            os._exit(locals().get("code", 2))
    os.close(write)
    sleeper = int(os.read(read, 64))
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert wait_dead([sleeper], 3.0) == []


def test_a_setsid_child_dies_when_the_code_ends_the_worker_with_os_exit(copy):
    pids = copy / "pids.txt"
    answer(copy, setsid_sleep(pids, wait=False) + "    os._exit(5)\n")
    card = grade("03", time_limit_seconds=10)
    failed = [c for c in card.checks if not c.passed]
    assert failed and all("exit code 5" in c.detail for c in failed)
    sleepers = [sleep for _, sleep in recorded(pids)]
    assert len(sleepers) == len(failed) and wait_dead(sleepers, 3.0) == []


def test_a_setsid_child_dies_when_a_check_that_overran_returns(copy):
    # the watchdog reports the timeout, then the check returns and the worker ends itself
    # (os._exit) while the caller is about to kill it: the tree dies either way
    pids = copy / "pids.txt"
    answer(copy, setsid_sleep(pids, wait=False) + "    import time\n    time.sleep(1.3)\n")
    card = grade("03", time_limit_seconds=1)
    assert not card.full_marks
    sleepers = [sleep for _, sleep in recorded(pids)]
    assert sleepers and wait_dead(sleepers, 3.0) == []


@pytest.mark.parametrize("where", ["import", "check"])
def test_a_fork_whose_child_returns_into_the_worker_changes_no_result(copy, where):
    # os.fork() and both copies go on: the child returns into the worker's loop with the
    # same request and reply pipes; it must never answer or read a request
    pids = copy / "pids.txt"
    fork = (f"import os as _os\nif _os.fork() == 0:\n"
            f"    open({str(pids)!r}, 'a').write(f'{{_os.getpid()}}\\n')\n")
    if where == "import":
        (copy / "exercises" / "03_masking.py").write_text(SOLUTION_03 + "\n" + fork,
                                                          encoding="utf-8")
    else:
        answer(copy, "".join("    " + line + "\n" for line in fork.splitlines()))
    for _ in range(2):
        card = grade("03", time_limit_seconds=10)
        assert card.full_marks, [(c.name, c.detail) for c in card.checks if not c.passed]
    children = [int(line) for line in pids.read_text().split()]
    assert children and wait_dead(children, 3.0) == []
