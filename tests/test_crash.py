"""Crash safety: SIGKILL a session-writing run at seeded random points, resume, finish.

Each session is killed ``KILLS_PER_SESSION`` times, at a random delay after the child is set
up, then run to completion. After every kill: no entry the child acknowledged (printed after
``append`` returned, i.e. after fsync) is missing, the only damage is an unfinished last record
(or such a record from an earlier kill, now in the middle), and the rebuilt history validates.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mini_agent.core.messages import validate_messages
from mini_agent.core.session_entries import rebuild_history
from mini_agent.harness.session import resume_session, session_path

CHILD = Path(__file__).resolve().parent / "crash_child.py"
SEED = 20260101
SESSIONS = 17
KILLS_PER_SESSION = 3
TURNS = 60  # long enough that no kill comes after the run already finished
MAX_ACKS_BEFORE_KILL = 30
MAX_KILL_DELAY_SECONDS = 0.003


def run_child(directory: Path, session_id: str, *,
              kill_after: tuple[int, float] | None) -> list[int]:
    """Run the child; with ``kill_after=(n, s)`` SIGKILL it ``s`` seconds after its n-th ACK
    (n=0: after READY), else let it finish. Returns the acknowledged ``seq`` numbers."""
    proc = subprocess.Popen([sys.executable, str(CHILD), str(directory), session_id,
                             str(TURNS), "7"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "READY"
    early: list[str] = []
    if kill_after is None:
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0 and out.rstrip().endswith("FINISHED")
    else:
        n, delay = kill_after
        early = [proc.stdout.readline() for _ in range(n)]
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=10)
        assert proc.returncode == -signal.SIGKILL, "the run finished before the kill"
    lines = early + out.splitlines()
    return [int(line.split()[1]) for line in lines if line.startswith("ACK ")]


def check_resume(path: Path, acked: set[int]) -> tuple[list[dict], list]:
    entries, problems = resume_session(path)
    present = {e.get("seq") for e in entries}
    lost = acked - present
    assert not lost, f"fsynced entries lost after SIGKILL: {sorted(lost)[:10]}"
    assert all(p.kind in ("truncated_last_line", "corrupt_line") for p in problems), problems
    history, _, _ = rebuild_history(entries)
    if any(e.get("type") == "message" for e in entries):
        validate_messages(history)
    else:  # killed before the first message was logged: nothing to resume, nothing lost
        assert history == []
    return entries, problems


@pytest.mark.slow
def test_sigkill_at_random_points_loses_no_fsynced_entry(tmp_path, capsys):
    rng = random.Random(SEED)
    kills = checked = torn = interrupted = 0
    for s in range(SESSIONS):
        sid = f"crash-{s}"
        path = session_path(tmp_path, sid)
        acked: set[int] = set()
        for _ in range(KILLS_PER_SESSION):
            point = (rng.randint(0, MAX_ACKS_BEFORE_KILL), rng.uniform(0, MAX_KILL_DELAY_SECONDS))
            acked_now = run_child(tmp_path, sid, kill_after=point)
            acked |= set(acked_now)
            kills += 1
            entries, problems = check_resume(path, acked)
            checked += len(acked)
            torn += sum(p.kind == "truncated_last_line" for p in problems)
            interrupted += len(rebuild_history(entries)[2].interrupted)
        acked |= set(run_child(tmp_path, sid, kill_after=None))
        entries, _ = check_resume(path, acked)
        history, _, report = rebuild_history(entries)
        assert history[-1] == {"role": "assistant", "content": "done"}
        assert sum(m["role"] == "assistant" for m in history) == TURNS
        assert not report.pending_user_message
    assert kills >= 50
    with capsys.disabled():
        print(f"\n[crash] kills={kills} acked entries checked={checked} lost=0 "
              f"torn last lines={torn} interrupted tool calls answered={interrupted}")


AGENT_CHILD = Path(__file__).resolve().parent / "crash_agent_child.py"
AGENT_SESSIONS = 2
AGENT_KILLS_PER_SESSION = 2


def run_agent_child(root: Path, session_id: str, *, kill_after_acks: int | None) -> list[int]:
    """Run a real offline Agent; SIGKILL it right after its n-th ACK (None: let it finish)."""
    proc = subprocess.Popen([sys.executable, str(AGENT_CHILD), str(root), str(root / "sessions"),
                             session_id], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "READY"
    early: list[str] = []
    if kill_after_acks is None:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0 and "FINISHED completed" in out, out[-500:]
    else:
        early = [proc.stdout.readline() for _ in range(kill_after_acks)]
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=10)
        assert proc.returncode == -signal.SIGKILL, "the run finished before the kill"
    return [int(x.split()[1]) for x in early + out.splitlines() if x.startswith("ACK ")]


@pytest.mark.slow
def test_sigkill_a_real_offline_agent_then_resume_to_completion(tmp_path, capsys):
    pytest.importorskip("mini_agent.harness.agent")
    rng = random.Random(SEED + 1)
    kills = interrupted = 0
    for s in range(AGENT_SESSIONS):
        root, sid = tmp_path / f"run{s}", f"agent-{s}"
        path = session_path(root / "sessions", sid)
        acked: set[int] = set()
        for k in range(AGENT_KILLS_PER_SESSION):
            # the first run logs ~30 entries; a resumed run fewer: kill well inside both
            acked |= set(run_agent_child(root, sid, kill_after_acks=rng.randint(1, 12 - 4 * k)))
            kills += 1
            entries, _ = check_resume(path, acked)
            interrupted += len(rebuild_history(entries)[2].interrupted)
        acked |= set(run_agent_child(root, sid, kill_after_acks=None))
        entries, _ = check_resume(path, acked)
        history, _, report = rebuild_history(entries)
        assert history[-1]["role"] == "assistant" and not report.pending_user_message
    with capsys.disabled():
        print(f"\n[agent crash] kills={kills} interrupted tool calls answered={interrupted} lost=0")
