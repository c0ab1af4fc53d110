"""A hostile session file cannot blow up the evaluate report through its repair notes."""

import json

from mini_agent.core.explorer_tables import MAX_REPAIR_CHARS, format_report
from mini_agent.core.replay import evaluate_session
from mini_agent.harness.transcript_files import load


def test_a_megabyte_role_gives_a_short_repair_note_and_a_short_report_line(tmp_path):
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"},
                                {"role": "x" * 1_000_000, "content": "?"},
                                {"role": "assistant", "content": "ok"}]))
    transcript = load(path)
    [note] = [r for r in transcript.repairs if "unknown role" in r]
    assert len(note) < 120 and note.endswith(", ignored")
    report = evaluate_session(transcript, policies=("raw",))
    assert note in report["repairs"]
    assert max(len(line) for line in format_report(report).splitlines()) < 300


def test_a_long_note_is_cut_in_the_text_report_and_kept_whole_in_the_report(tmp_path):
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"},
                                {"role": "assistant", "content": "ok"}]))
    report = evaluate_session(load(path), policies=("raw",))
    note = "line 7: " + "y" * 5_000
    report["repairs"] = [note, "line 9: short"]
    lines = format_report(report).splitlines()
    assert f"  - {note[:MAX_REPAIR_CHARS - 3]}..." in lines
    assert "  - line 9: short" in lines
    assert report["repairs"][0] == note
