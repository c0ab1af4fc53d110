"""Ctrl-C during ``mini-agent grade`` or ``evaluate``: one line on stderr, exit 130, no traceback.

The grading worker runs in a session of its own (no terminal's Ctrl-C reaches it); the
caller kills it before the interrupt reaches the command line, so the line "no worker left
running" is true: the test checks the worker's pid is gone.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mini_agent import cli

REPO = Path(__file__).resolve().parents[1]


def _raise_interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def test_grade_interrupted_says_one_line_and_exits_130(monkeypatch, capsys):
    monkeypatch.setattr("mini_agent.grading.main_grade", _raise_interrupt)
    assert cli.main(["grade", "03"]) == 130
    captured = capsys.readouterr()
    assert captured.err == "grading interrupted; no worker left running\n"
    assert captured.out == ""


def test_grade_json_interrupted_still_prints_one_document(monkeypatch, capsys):
    monkeypatch.setattr("mini_agent.grading.main_grade", _raise_interrupt)
    assert cli.main(["grade", "03", "--json"]) == 130
    document = json.loads(capsys.readouterr().out)
    assert document["error"] == "grading interrupted; no worker left running"


def test_evaluate_interrupted_says_one_line_and_exits_130(monkeypatch, capsys):
    monkeypatch.setattr("mini_agent.harness.evaluate_runner.main_evaluate", _raise_interrupt)
    assert cli.main(["evaluate", "--sample", "1"]) == 130
    assert capsys.readouterr().err == "evaluation interrupted\n"


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the worker in /proc")
def test_ctrl_c_while_a_check_spins_ends_the_worker(tmp_path):
    shutil.copytree(REPO / "exercises", tmp_path / "exercises")
    text = (REPO / "solutions" / "03_masking.py").read_text(encoding="utf-8")
    start = text.index("def approx_tokens")
    cut = text.index("\n", text.index('"""', text.index('"""', start) + 3)) + 1
    (tmp_path / "exercises" / "03_masking.py").write_text(
        text[:cut] + "    while True:\n        pass\n" + text[cut:], encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, "-m", "mini_agent.cli", "grade", "03", "--root", str(tmp_path),
         "--time-limit", "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        text=True)
    deadline = time.monotonic() + 30
    workers: list[int] = []
    while not workers and time.monotonic() < deadline:
        time.sleep(0.2)
        workers = _children(process.pid)
    assert workers, "the grading worker never started"
    time.sleep(1.0)  # the worker is spinning in check_approx_tokens_text by now
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert err == "grading interrupted; no worker left running\n"
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists()
