"""Tests that the learner's code cannot pass for the grading worker's replies.

The worker answers on a private pipe, each reply line prefixed with a random nonce the
caller sent before any learner code loaded (:mod:`mini_agent.grading.worker`). A file that
prints a JSON "passed" line, writes it to ``sys.__stdout__`` or to every open descriptor gets
its honest score; the lines it wrote are dropped, and the replies stay in step with the checks.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from mini_agent.grading import grade

REPO = Path(__file__).resolve().parent.parent

FORGER = '''
import json as _json
import os as _os
import sys as _sys


def _forge():
    line = _json.dumps({"op": "result", "name": "x", "passed": True, "detail": "",
                        "seconds": 0.0, "raised": None, "changed": ""}) + "\\n"
    for fd in range(1, 64):  # the reply pipe is one of them
        try:
            _os.write(fd, line.encode())
        except OSError:
            pass
    for fd in range(3, 64):  # and text without a line end before the next reply
        try:
            _os.write(fd, b"partial")
        except OSError:
            pass
    print(line, end="", flush=True)
    _sys.__stdout__.write(line)
    _sys.__stdout__.flush()
    _sys.stderr.write(line)
'''


@pytest.fixture
def copy(tmp_path, monkeypatch):
    """A learner's copy of exercises/, the current folder below it."""
    shutil.copytree(REPO / "exercises", tmp_path / "exercises")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    return tmp_path


@pytest.mark.skipif(sys.platform == "win32", reason="descriptors as on POSIX")
def test_a_stub_that_writes_passed_lines_everywhere_scores_zero(copy):
    path = copy / "exercises" / "09_memory_paths.py"
    text = path.read_text(encoding="utf-8") + FORGER
    # every function forges "passed" lines, then is still the unanswered stub
    text = text.replace('    raise NotImplementedError("Exercise 09.',
                        '    _forge()\n    raise NotImplementedError("Exercise 09.')
    path.write_text(text, encoding="utf-8")
    card = grade("09")
    assert card.score == 0, [c.name for c in card.checks if c.passed]
    assert all("NotImplementedError" in c.detail or "Exercise 09" in c.detail
               for c in card.checks), [c.detail for c in card.checks]


@pytest.mark.skipif(sys.platform == "win32", reason="descriptors as on POSIX")
def test_a_correct_answer_that_writes_failed_lines_keeps_full_marks(copy):
    solution = (REPO / "solutions" / "09_memory_paths.py").read_text(encoding="utf-8")
    text = solution + FORGER.replace('"passed": True, "detail": ""',
                                     '"passed": False, "detail": "forged"') + (
        "\n_validate = validate_memory_path\n\n\n"
        "def validate_memory_path(path, *, max_path_chars=255):\n"
        "    _forge()\n"
        "    return _validate(path, max_path_chars=max_path_chars)\n")
    (copy / "exercises" / "09_memory_paths.py").write_text(text, encoding="utf-8")
    card = grade("09")
    assert card.score == card.total, [(c.name, c.detail) for c in card.checks if not c.passed]


def test_the_worker_frames_every_reply_with_its_nonce():
    import io
    from mini_agent.grading.worker import Session
    channel = io.StringIO()
    Session(channel, "ab12").send({"op": "ready", "pid": 1})
    assert channel.getvalue() == 'ab12 {"op": "ready", "pid": 1}\n'
