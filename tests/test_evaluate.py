"""Tests for mini_agent.harness.analyze: per-request replay, totals, the table and the CLI entry."""

from __future__ import annotations

import copy
import dataclasses
import io
import json
from pathlib import Path

import pytest

from mini_agent.harness import analyze as evaluate
from mini_agent.harness.analyze import analyze, format_analysis, main_analyze
from mini_agent.core.transcripts import Transcript
from mini_agent.harness.real_sessions import shared_data_dir
from mini_agent.harness.transcript_files import load

U1 = {"input_tokens": 3, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 100,
      "output_tokens": 9}


def small() -> Transcript:
    """user (4 chars), tool_use (24 chars), result (400), tool_use (24), result (400), text."""
    def use(tid):
        return {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": "ls",
                                                  "input": {}}]}

    def result(tid, ch):
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid,
                                             "content": f"{ch}\n" * 200}]}

    messages = [{"role": "user", "content": "abcd"}, use("t1"), result("t1", "a"), use("t2"),
                result("t2", "b"), {"role": "assistant", "content": "done"}]
    return Transcript(messages=messages, usage=[U1, None, None], repairs=["a repair"],
                      source_format="messages-json", model="m", path=Path("h.json"))


def test_rows_have_literal_raw_masked_and_share_values():
    t = small()
    before = copy.deepcopy(t.messages)
    a = analyze(t, keep=1)
    assert t.messages == before  # input not mutated
    rows = [(r.request, r.messages, r.raw_tokens, r.masked_tokens, r.tool_result_tokens)
            for r in a.rows]
    # request 3: (4 + 24 + 400 + 24 + 400) / 4 = 213 raw; masking t1's 400 chars into the
    # 40-char "[observation masked — 201 lines omitted]" gives ceil(492 / 4) = 123
    assert rows == [(1, 1, 1, 1, 0), (2, 3, 107, 107, 100), (3, 5, 213, 123, 200)]
    assert a.rows[2].tool_result_share == pytest.approx(200 / 213)
    assert a.rows[0].real_input_tokens == 123 and a.rows[0].cache_read_input_tokens == 100
    assert a.rows[0].output_tokens == 9 and a.rows[1].real_input_tokens is None
    assert a.requests == 3
    assert (a.raw_total_tokens, a.masked_total_tokens) == (321, 231)
    assert a.masking_ratio == pytest.approx(231 / 321)
    assert a.history_tokens == 214 and a.tool_result_tokens == 200  # + "done"
    assert a.tool_result_share == pytest.approx(200 / 214)
    assert a.real_input_total_tokens == 123


def test_keep_large_masks_nothing_and_negative_keep_raises():
    a = analyze(small(), keep=10)
    assert a.masked_total_tokens == a.raw_total_tokens and a.masking_ratio == 1.0
    with pytest.raises(ValueError, match="keep"):
        analyze(small(), keep=-1)


def test_system_prompt_counts_in_every_request():
    t = small()
    t.system = "x" * 40  # 10 tokens
    assert [r.raw_tokens for r in analyze(t, keep=1).rows] == [11, 117, 223]


def test_without_masking_the_masked_column_is_empty(monkeypatch):
    monkeypatch.setattr(evaluate, "mask_old_observations", None)
    a = analyze(small())
    assert a.masked_total_tokens is None and a.masking_ratio is None
    assert all(r.masked_tokens is None for r in a.rows)
    assert "(masking unavailable)" in format_analysis(a)


def test_format_analysis_table_and_totals():
    text = format_analysis(analyze(small(), keep=1))
    lines = text.splitlines()
    assert lines[0] == "h.json"
    assert lines[1] == "format messages-json, model m, 3 requests, history ~214 tokens"
    assert lines[2:4] == ["repairs (1):", "  - a repair"]
    assert lines[4].split() == ["req", "msgs", "raw", "~tok", "masked", "k=1", "tool_result",
                                "%", "real", "input", "cache", "read"]  # the share is in %
    assert lines[6] == "   1     1          1            1          0.0%         123         100"
    assert lines[8] == "   3     5        213          123         93.9%           -           -"
    assert "tool_result share of history tokens: 93.5% (~200 of ~214)" in text
    assert "~321 tokens raw, ~231 masked (keep=1); ratio 0.720" in text
    assert "real input tokens recorded" in text and "123" in lines[-1]


def test_format_analysis_can_cut_long_tables():
    text = format_analysis(analyze(small(), keep=1), max_rows=2)
    body = [line.split()[0] for line in text.splitlines()[6:9]]
    assert body == ["1", "...", "3"]


def test_to_dict_is_json_ready():
    data = json.loads(json.dumps(analyze(small(), keep=1).to_dict()))
    assert data["requests"] == 3 and data["rows"][2]["masked_tokens"] == 123
    assert data["repairs"] == ["a repair"] and data["keep"] == 1


# --------------------------------------------------------------------------- CLI entry

def test_main_analyze_errors_are_one_line_and_exit_2(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    assert main_analyze(tmp_path / "missing.jsonl", stdout=out, stderr=err) == 2
    assert err.getvalue().count("\n") == 1
    assert err.getvalue().startswith("mini-agent analyze: error: no such file: ")
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a transcript"}')
    err = io.StringIO()
    assert main_analyze(bad, stdout=out, stderr=err) == 2
    assert "unknown format" in err.getvalue() and out.getvalue() == ""
    good = tmp_path / "h.json"
    good.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    err = io.StringIO()
    assert main_analyze(good, keep=-1, stdout=out, stderr=err) == 2
    assert "keep must be >= 0" in err.getvalue()


def test_main_analyze_prints_table_or_json(tmp_path):
    path = tmp_path / "h.json"
    path.write_text(json.dumps(small().messages))
    out = io.StringIO()
    assert main_analyze(path, keep=1, stdout=out) == 0
    assert "ratio 0.720" in out.getvalue()
    out = io.StringIO()
    assert main_analyze(path, keep=1, as_json=True, stdout=out) == 0
    data = json.loads(out.getvalue())
    assert (data["raw_total_tokens"], data["masked_total_tokens"]) == (321, 231)


# --------------------------------------------------------------------------- real files

DATA = shared_data_dir(Path(__file__).parent)
REAL = sorted(p.relative_to(DATA).as_posix() for p in DATA.glob("*/*")) if DATA.is_dir() else []


@pytest.mark.parametrize("name", REAL or ["(absent)"])
def test_real_transcripts_analyze(shared_data, name):
    t = load(shared_data / name)
    a = analyze(t)
    assert a.requests == len(t.usage) > 0
    assert all(r.masked_tokens <= r.raw_tokens for r in a.rows)
    assert [r.raw_tokens for r in a.rows] == sorted(r.raw_tokens for r in a.rows)
    assert 0 < a.masking_ratio <= 1 and 0 <= a.tool_result_share < 1
    if t.source_format == "claude-code":
        # the recorded usage includes the system prompt and tools: far above the estimate
        assert a.real_input_total_tokens > a.raw_total_tokens
        assert a.masking_ratio < 0.8  # observations dominate: masking saves a lot
    assert format_analysis(a).count("\n") > a.requests


def test_real_figures_of_one_transcript(shared_data):
    a = analyze(load(shared_data / "claude-code/reliability-coverage-test-fix.jsonl"))
    assert (a.requests, a.raw_total_tokens, a.masked_total_tokens) == (14, 21239, 15841)
    assert a.real_input_total_tokens == 294215
    assert round(a.tool_result_share, 3) == 0.474


def test_the_totals_line_says_what_the_raw_column_counts():
    messages_only = format_analysis(analyze(small(), keep=1))
    assert ("sent over all requests (messages only; system prompt and tools are not in the "
            "transcript): ~321 tokens raw, ~231 masked (keep=1); ratio 0.720") in messages_only
    with_system = dataclasses.replace(small(), system="You are terse.")
    a = analyze(with_system, keep=1)
    assert a.system_counted and a.raw_total_tokens > 321
    assert ("sent over all requests (messages and the recorded system prompt; tool definitions "
            "are not in the transcript)") in format_analysis(a)
