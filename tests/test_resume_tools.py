"""Resume settles interrupted tool calls against the workspace: an edit that landed is not run
again, one that did not land is run, read-only calls are redone, run_bash stays an error."""

from __future__ import annotations

import pytest

from mini_agent.cli import build_agent
from mini_agent.core.edit_reconcile import RESUME_TEXTS, edit_outcome
from mini_agent.core.session_entries import rebuild_history
from mini_agent.harness.session import SessionWriter, resume_session


@pytest.mark.parametrize("old, new, text, want", [
    ("RATE = 0.1", "RATE = 0.08", "RATE = 0.08\n", "applied"),
    ("RATE = 0.1", "RATE = 0.08", "RATE = 0.1\n", "not_applied"),
    ("RATE = 0.1", "RATE = 0.08", "RATE = 0.2\n", "unknown"),
    ("RATE = 0.1", "RATE = 0.08", None, "unknown"),
    ("RATE = 0.1", "RATE = 0.08", "RATE = 0.1\nRATE = 0.08\n", "unknown"),
    ("a = 1", "a = 1\nb = 2", "a = 1\nb = 2\n", "applied"),        # insertion around old
    ("a = 1", "a = 1\nb = 2", "a = 1\n", "not_applied"),
    ("a = 1\nb = 2", "a = 1", "a = 1\nb = 2\n", "not_applied"),    # deletion
    ("a = 1\nb = 2", "a = 1", "a = 1\n", "applied"),
    ("b = 2\n", "", "a = 1\n", "applied"),
    ("b = 2\n", "", "a = 1\nb = 2\n", "not_applied"),
    ("", "new file\n", None, "not_applied"),                       # create
    ("", "new file\n", "new file\n", "applied"),
    ("", "new file\n", "other\n", "unknown"),
    ("税率 = 10", "税率 = 8", "税率 = 8\n", "applied"),
])
def test_edit_outcome(old, new, text, want):
    assert edit_outcome(old, new, text) == want


def crashed_session(tmp_path, file_text):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "rate.py").write_text(file_text, encoding="utf-8")
    sessions = tmp_path / "sessions"
    with SessionWriter(sessions, "cut") as log:
        log.append({"type": "message", "message": {"role": "user", "content": "fix the rate"}})
        log.append({"type": "message", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_edit", "name": "edit_file",
             "input": {"path": "rate.py", "old_string": "RATE = 0.1", "new_string": "RATE = 0.08"}},
            {"type": "tool_use", "id": "toolu_read", "name": "read_file",
             "input": {"path": "rate.py"}},
            {"type": "tool_use", "id": "toolu_bash", "name": "run_bash",
             "input": {"command": "echo hi >> log.txt"}}]}})
    return workspace, sessions


def results_of(agent):
    return {b["tool_use_id"]: b for b in agent.history[-1]["content"]}


def test_an_edit_that_landed_is_not_run_again(tmp_path):
    workspace, sessions = crashed_session(tmp_path, "RATE = 0.08\n")
    agent = build_agent(workspace)
    report = agent.resume("cut", directory=sessions)
    got = results_of(agent)
    assert got["toolu_edit"] == {"type": "tool_result", "tool_use_id": "toolu_edit",
                                 "content": RESUME_TEXTS["applied"]}
    assert (workspace / "rate.py").read_text() == "RATE = 0.08\n"
    assert not (workspace / "rate.py.bak").exists()            # edit_file never ran
    assert got["toolu_read"]["content"].startswith(RESUME_TEXTS["reread"])
    assert "RATE = 0.08" in got["toolu_read"]["content"]
    assert got["toolu_bash"]["is_error"] is True
    assert got["toolu_bash"]["content"] == RESUME_TEXTS["not_rerun"].format(
        call="the command `echo hi >> log.txt`")
    assert "run it again if you still need it" not in got["toolu_bash"]["content"].lower()
    assert not (workspace / "log.txt").exists()                 # run_bash never re-run
    assert report.interrupted == [("toolu_bash", "run_bash")]
    assert "interrupted tool call toolu_edit (edit_file): applied" in report.notes
    assert "interrupted tool call toolu_read (read_file): reread" in report.notes
    assert "interrupted tool call toolu_bash (run_bash): not_rerun" in report.notes
    # the answers are logged: a second resume finds nothing interrupted
    _, _, again = rebuild_history(resume_session(sessions / "cut.jsonl")[0])
    assert again.interrupted == []


def test_an_edit_that_did_not_land_is_run_now(tmp_path):
    workspace, sessions = crashed_session(tmp_path, "RATE = 0.1\n")
    agent = build_agent(workspace)
    agent.resume("cut", directory=sessions)
    got = results_of(agent)
    assert got["toolu_edit"]["content"].startswith(RESUME_TEXTS["rerun"] + "Edited rate.py")
    assert "is_error" not in got["toolu_edit"]
    assert (workspace / "rate.py").read_text() == "RATE = 0.08\n"


def test_an_edit_that_cannot_be_told_runs_nothing(tmp_path):
    workspace, sessions = crashed_session(tmp_path, "RATE = 0.5\n")
    agent = build_agent(workspace)
    agent.resume("cut", directory=sessions)
    got = results_of(agent)
    assert got["toolu_edit"]["is_error"] is True
    assert (workspace / "rate.py").read_text() == "RATE = 0.5\n"
