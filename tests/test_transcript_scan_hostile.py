"""Claude Code files with no conversation under hostile shapes, through ``mini-agent evaluate``.

A summary-only file with a byte order mark and CRLF line ends is skipped like a plain one; a
line whose ``type`` is a list or an object is no known entry type, so the file is reported as
failed (by name, in the report), never an exception that ends the whole run.
"""

from __future__ import annotations

import io

import pytest

from mini_agent.harness.evaluate_runner import main_evaluate
from mini_agent.harness.transcript_scan import is_conversationless_jsonl

SUMMARY = '{"type": "summary", "summary": "Fix the login bug", "leafUuid": "u1"}'
SNAPSHOT = '{"type": "file-history-snapshot", "messageId": "m1", "snapshot": {}}'


def run(paths):
    out, err = io.StringIO(), io.StringIO()
    code = main_evaluate([str(p) for p in paths], policies=("raw",), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_a_summary_only_file_with_a_bom_and_crlf_is_skipped(tmp_path):
    (tmp_path / "s.jsonl").write_bytes(f"\ufeff{SUMMARY}\r\n{SNAPSHOT}\r\n".encode())
    assert is_conversationless_jsonl(tmp_path / "s.jsonl")
    code, out, err = run([tmp_path])
    assert code == 2 and out == ""
    assert err.splitlines()[0] == \
        "mini-agent evaluate: skipped 1 file that is not a transcript: s.jsonl"


@pytest.mark.parametrize("kind", ['["summary"]', '{"summary": 1}', "null", "7"])
def test_a_type_that_is_not_a_string_is_reported_not_raised(tmp_path, kind):
    (tmp_path / "odd.jsonl").write_text(f'{SUMMARY}\n{{"type": {kind}}}\n')
    assert not is_conversationless_jsonl(tmp_path / "odd.jsonl")
    code, out, err = run([tmp_path])
    assert code == 1 and out.startswith(f"{tmp_path / 'odd.jsonl'}: error: ")
    assert err.splitlines() == [
        "mini-agent evaluate: 1 of 1 file failed (errors in the report): odd.jsonl"]
