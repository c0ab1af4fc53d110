"""Tests for mini_agent.harness.real_sessions: the shared data folder is optional."""

from __future__ import annotations

import os

import pytest

from mini_agent.core.sample_sessions import SAMPLE_LABEL, sample_session_jsonl
from mini_agent.harness import real_sessions
from mini_agent.harness.real_sessions import (SHARED_DATA_ENV_VAR, real_or_generated, repo_root,
                                              shared_data_dir)


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home folder of its own, without Claude Code sessions."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


def test_shared_data_dir_from_the_variable_or_beside_the_repository(tmp_path, monkeypatch):
    repo = tmp_path / "clone"
    for name in ("notebooks", "exercises"):
        (repo / name).mkdir(parents=True)
    monkeypatch.delenv(SHARED_DATA_ENV_VAR, raising=False)
    monkeypatch.chdir(repo / "notebooks")  # a notebook runs in notebooks/
    assert repo_root() == repo.resolve()
    assert shared_data_dir() == tmp_path.resolve() / "shared" / "data"
    monkeypatch.setenv(SHARED_DATA_ENV_VAR, str(tmp_path / "elsewhere"))
    assert shared_data_dir() == tmp_path / "elsewhere"
    monkeypatch.setenv(SHARED_DATA_ENV_VAR, "  ")  # blank: the default again
    assert shared_data_dir() == tmp_path.resolve() / "shared" / "data"
    monkeypatch.chdir(tmp_path)  # outside any clone: beside the installed package
    assert repo_root() == real_sessions.PACKAGE_PARENT


def test_missing_file_falls_back_to_a_generated_session_and_says_so(tmp_path, monkeypatch,
                                                                     home):
    monkeypatch.setenv(SHARED_DATA_ENV_VAR, str(tmp_path / "missing"))
    session = real_or_generated("claude-code/entire-sonnet45-lint-fix.jsonl", steps=20)
    assert session.generated and session.path is None
    assert session.title == "A kit-generated session"
    messages = session.transcript.messages
    assert SAMPLE_LABEL in messages[0]["content"][0]["text"]
    assert len(session.transcript.usage) == 21  # one request per exchange, plus the first
    assert str(tmp_path / "missing" / "claude-code" / "entire-sonnet45-lint-fix.jsonl") \
        in session.note
    assert "KIT-GENERATED" in session.note
    assert (f"({SHARED_DATA_ENV_VAR} points at a folder without it: {tmp_path / 'missing'}; "
            "set it to the folder that holds the data)") in session.note
    assert 'real_or_generated("~/.claude/projects/<project>/<session>.jsonl")' in session.note


def test_the_hint_names_your_newest_own_session(tmp_path, monkeypatch, home):
    monkeypatch.setenv(SHARED_DATA_ENV_VAR, str(tmp_path / "missing"))
    project = home / ".claude" / "projects" / "-work-app"
    project.mkdir(parents=True)
    old, new = project / "old.jsonl", project / "new.jsonl"
    for n, path in enumerate((old, new)):
        path.write_text(sample_session_jsonl(3, variant=n))
        os.utime(path, (1_000 + n, 1_000 + n))
    session = real_or_generated("claude-code/x.jsonl", steps=5)
    assert f'real_or_generated("{new}")' in session.note
    monkeypatch.delenv(SHARED_DATA_ENV_VAR)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(real_sessions, "PACKAGE_PARENT", tmp_path / "site-packages")
    unset = real_or_generated("claude-code/x.jsonl", steps=5).note
    assert f"no clone of the kit is at or above {tmp_path.resolve()}" in unset
    assert f"set {SHARED_DATA_ENV_VAR} to the folder that holds the data" in unset
    own = real_or_generated(str(new).replace(str(home), "~"))  # the line the note suggests
    assert not own.generated and own.path == new
    assert own.transcript.messages == real_or_generated(new).transcript.messages


def test_a_present_file_is_loaded_from_the_shared_folder(tmp_path, monkeypatch, home):
    shared = tmp_path / "shared-copy"
    (shared / "claude-code").mkdir(parents=True)
    path = shared / "claude-code" / "s.jsonl"
    path.write_text(sample_session_jsonl(4, variant=2))
    monkeypatch.setenv(SHARED_DATA_ENV_VAR, str(shared))
    session = real_or_generated("claude-code/s.jsonl")
    assert (session.generated, session.path) == (False, path)
    assert session.title == "A real Claude Code session"
    assert session.note == f"Real session: {path}"
    assert len(session.transcript.usage) == 7  # variant 2: 4 + 2 exchanges, 7 requests


def test_the_note_says_where_it_looked_in_a_clone(tmp_path, monkeypatch, home):
    clone = tmp_path / "kit"
    for name in ("notebooks", "exercises"):
        (clone / name).mkdir(parents=True)
    monkeypatch.delenv(SHARED_DATA_ENV_VAR, raising=False)
    monkeypatch.setattr(real_sessions, "PACKAGE_PARENT", tmp_path / "venv" / "site-packages")
    monkeypatch.chdir(clone / "notebooks")
    note = real_or_generated("claude-code/x.jsonl", steps=5).note
    assert note.startswith(f"{tmp_path.resolve() / 'shared' / 'data' / 'claude-code' / 'x.jsonl'}"
                           " is not here (looked in the shared data folder beside the clone "
                           f"{clone.resolve()}; put the data there, or set {SHARED_DATA_ENV_VAR}")
    assert "installed" not in note


def test_an_installed_kit_outside_a_clone_does_not_claim_a_repository(tmp_path, monkeypatch,
                                                                      home):
    """A non-editable install run in /tmp: the folder above the package is site-packages."""
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    (site / "mini_agent").mkdir(parents=True)
    monkeypatch.delenv(SHARED_DATA_ENV_VAR, raising=False)
    monkeypatch.setattr(real_sessions, "PACKAGE_PARENT", site)
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert real_sessions.find_clone() is None
    note = real_or_generated("claude-code/x.jsonl", steps=5).note
    assert note.startswith(f"{site.parent / 'shared' / 'data' / 'claude-code' / 'x.jsonl'} is "
                           f"not here (mini-agent is installed in {site} and no clone of the kit "
                           f"is at or above {elsewhere.resolve()}")
    assert f"set {SHARED_DATA_ENV_VAR} to the folder that holds the data" in note
    assert "repository" not in note and "beside the clone" not in note
    # the variable then finds the data wherever it is
    data = tmp_path / "data"
    (data / "claude-code").mkdir(parents=True)
    (data / "claude-code" / "x.jsonl").write_text(sample_session_jsonl(3))
    monkeypatch.setenv(SHARED_DATA_ENV_VAR, str(data))
    assert not real_or_generated("claude-code/x.jsonl").generated


def test_an_editable_install_run_outside_its_clone_names_the_clone(tmp_path, monkeypatch, home):
    clone = tmp_path / "kit"
    for name in ("notebooks", "exercises"):
        (clone / name).mkdir(parents=True)
    monkeypatch.delenv(SHARED_DATA_ENV_VAR, raising=False)
    monkeypatch.setattr(real_sessions, "PACKAGE_PARENT", clone)
    monkeypatch.chdir(tmp_path)
    assert real_sessions.find_clone() == clone
    note = real_or_generated("claude-code/x.jsonl", steps=5).note
    assert f"beside the clone {clone}" in note


def test_an_absolute_path_that_is_missing_blames_no_data_folder(tmp_path, monkeypatch, home):
    monkeypatch.setenv(SHARED_DATA_ENV_VAR, str(tmp_path / "missing"))
    note = real_or_generated(tmp_path / "gone.jsonl", steps=5).note
    assert note.startswith(f"{tmp_path / 'gone.jsonl'} is not here, so this is a KIT-GENERATED")
