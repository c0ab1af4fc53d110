"""Tests for how ``mini-agent evaluate`` reports failed files and skips stray JSON files.

A failed file's error is written once for a reader (the text report, or stderr with
``--json``), the JSON and CSV keep a record of it, stderr always names it; a ``.json`` a
folder scan finds that is no transcript is skipped (exit 0), one named on its own is not.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from mini_agent.cli import main
from mini_agent.core.sample_sessions import sample_session_jsonl
from mini_agent.harness.evaluate_runner import evaluate_scan, is_foreign_json, main_evaluate

POLICIES = ("raw",)


@pytest.fixture
def mixed(tmp_path):
    """A folder with one good session, a corrupt .jsonl and a stray config.json."""
    root = tmp_path / "mixed"
    root.mkdir()
    (root / "good.jsonl").write_text(sample_session_jsonl(4, variant=3))
    (root / "bad.jsonl").write_text("garbage\n")
    (root / "config.json").write_text('{"a": 1}')
    return root


def run(paths, **kwargs):
    out, err = io.StringIO(), io.StringIO()
    code = main_evaluate([str(p) for p in paths], policies=POLICIES, stdout=out, stderr=err,
                         **kwargs)
    return code, out.getvalue(), err.getvalue()


def test_the_text_report_lists_a_failed_file_once_and_stderr_only_names_it(mixed):
    code, out, err = run([mixed])
    assert code == 1
    message = "not a transcript (no JSON lines found)"
    assert out.count(message) == 1 and err.count(message) == 0
    assert out.splitlines()[0] == f"{mixed / 'bad.jsonl'}: error: TranscriptError: bad.jsonl: " \
                                  f"{message}"
    assert err.splitlines() == [
        "mini-agent evaluate: skipped 1 file that is not a transcript: config.json",
        "mini-agent evaluate: 1 of 2 files failed (errors in the report): bad.jsonl"]
    assert "config.json" not in out


def test_with_json_the_error_is_on_stderr_once_and_a_record_in_the_json(mixed, tmp_path):
    target = tmp_path / "out.csv"
    code, out, err = run([mixed], as_json=True, csv_path=str(target))
    assert code == 1
    data = json.loads(out)
    assert [d["path"].rsplit("/", 1)[-1] for d in data] == ["bad.jsonl", "good.jsonl"]
    assert data[0] == {"path": str(mixed / "bad.jsonl"), "error": "TranscriptError: bad.jsonl: "
                       "not a transcript (no JSON lines found)"}
    lines = err.splitlines()
    assert lines[1] == f"mini-agent evaluate: {mixed / 'bad.jsonl'}: {data[0]['error']}"
    assert err.count("no JSON lines found") == 1
    assert lines[-1] == "mini-agent evaluate: 1 of 2 files failed (errors above): bad.jsonl"
    rows = list(csv.DictReader(target.open()))
    assert [(r["path"].rsplit("/", 1)[-1], r["name"], r["error"]) for r in rows] == [
        ("bad.jsonl", "", data[0]["error"]), ("good.jsonl", "raw", ""),
        ("good.jsonl", "recorded", "")]


def test_a_stray_json_in_a_folder_is_skipped_and_the_run_exits_0(mixed):
    (mixed / "bad.jsonl").unlink()
    (mixed / "sub").mkdir()
    (mixed / "sub" / "settings.json").write_text('[1, 2]')
    code, out, err = run([mixed])
    assert code == 0
    assert err == ("mini-agent evaluate: skipped 2 files that are not a transcript: config.json, "
                   f"{'sub/settings.json'}\n")
    assert out.startswith(f"{mixed / 'good.jsonl'}  (") and "error" not in out.split("\n")[0]
    assert main(["evaluate", str(mixed), "--policies", "raw"]) == 0


def test_a_non_transcript_named_on_the_command_line_is_still_an_error(mixed):
    code, out, err = run([mixed / "config.json"])
    assert code == 1
    assert "unknown format" in out and "skipped" not in err
    assert err.endswith("1 of 1 file failed (errors in the report): config.json\n")


def test_a_corrupt_transcript_in_a_folder_is_still_an_error(mixed):
    (mixed / "config.json").unlink()
    (mixed / "broken.json").write_text('{"messages": [')  # not JSON at all: corrupt
    (mixed / "x.traj.json").write_text('{"a": 1}')  # named as a trajectory
    code, out, err = run([mixed])
    assert code == 1 and "skipped" not in err
    assert err.endswith("3 of 4 files failed (errors in the report): bad.jsonl, broken.json, "
                        "x.traj.json\n")


def test_a_folder_of_stray_json_only_is_a_usage_error(tmp_path):
    (tmp_path / "config.json").write_text('{"a": 1}')
    code, out, err = run([tmp_path])
    assert code == 2 and out == ""
    assert err.splitlines() == [
        "mini-agent evaluate: skipped 1 file that is not a transcript: config.json",
        f"mini-agent evaluate: error: no transcript under {tmp_path}"]


def test_is_foreign_json_uses_the_loaders_shapes(tmp_path):
    cases = {"config.json": ('{"a": 1}', True), "list.json": ("[]", True),
             "msgs.json": ('[{"role": "user", "content": "hi"}]', False),
             "doc.json": ('{"messages": []}', False), "broken.json": ("{", False),
             "a.jsonl": ('{"a": 1}', False), "t.traj.json": ('{"a": 1}', False)}
    for name, (text, foreign) in cases.items():
        (tmp_path / name).write_text(text)
        assert is_foreign_json(tmp_path / name) is foreign, name
    reports, skipped = evaluate_scan([tmp_path / "msgs.json", tmp_path], policies=POLICIES,
                                     progress=False)
    assert sorted(skipped) == ["config.json", "list.json"]
    assert len(reports) == 6  # msgs.json twice (named, then found), doc, broken, a, t


def test_the_exit_codes_are_in_the_help(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "exit 0 when every file was evaluated, 1 when a file failed, 2 for a usage error" \
        in text and "not a transcript is skipped" in text


def test_a_claude_code_file_with_no_conversation_in_a_folder_is_skipped(mixed):
    """Claude Code writes summary-only and snapshot-only .jsonl files beside its sessions."""
    from mini_agent.harness.transcript_scan import is_conversationless_jsonl
    (mixed / "bad.jsonl").unlink()
    (mixed / "summary.jsonl").write_text(
        '{"type": "summary", "summary": "Fix the login bug", "leafUuid": "u1"}\n'
        '{"type": "file-history-snapshot", "messageId": "m1", "snapshot": {}}\n')
    (mixed / "empty.jsonl").write_text("")                        # no entry at all: an error
    (mixed / "odd.jsonl").write_text('{"type": "telemetry"}\n')  # unknown: an error
    code, out, err = run([mixed])
    assert code == 1
    assert err.splitlines() == [
        "mini-agent evaluate: skipped 2 files that are not a transcript: config.json, "
        "summary.jsonl",
        "mini-agent evaluate: 2 of 3 files failed (errors in the report): empty.jsonl, odd.jsonl"]
    code, out, err = run([mixed / "summary.jsonl"])   # named on its own: still an error
    assert code == 1 and "no user/assistant entries" in out
    assert [is_conversationless_jsonl(mixed / n) for n in
            ("summary.jsonl", "empty.jsonl", "odd.jsonl", "good.jsonl", "config.json")] == [
        True, False, False, False, False]
