"""``mini-agent sessions`` with no session logs says which folder it read and what writes one."""

from __future__ import annotations

import io

from mini_agent import cli


def test_no_sessions_names_the_absolute_folder_and_what_logs_there(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sessions").mkdir()
    out = io.StringIO()
    assert cli.main(["sessions"], out=out) == 0
    assert out.getvalue() == (
        f"no sessions in {tmp_path.resolve() / 'sessions'} (the interactive `mini-agent` "
        "logs each conversation there; the demo does not)\n")


def test_a_missing_folder_is_said_to_be_missing(tmp_path):
    out = io.StringIO()
    assert cli.main(["sessions", "--sessions-dir", str(tmp_path / "nope")], out=out) == 0
    assert out.getvalue().startswith(
        f"no sessions in {tmp_path.resolve() / 'nope'} (no such folder yet; the interactive")
