"""Tests for ``Transcript.times``: one recorded time per loaded message, or None.

The rule (``mini_agent/core/transcripts/__init__.py``, "Times"): a merged message takes the time of
its last part; a message with no time of its own takes the previous message's (the first timed
one's, at the start); None when the file records no time at all.
"""

from __future__ import annotations

import datetime as dt
import json
import math

import pytest
from hypothesis import given, strategies as st

from mini_agent.core.transcripts import parse_text
from mini_agent.harness.transcript_files import load
from mini_agent.core.transcripts.drafts import seconds
from test_transcripts import asst, call, jsonl, mini_swe, tr, tu, user

T0 = 1_768_212_000.0  # 2026-01-12T10:00:00Z


def iso(offset_seconds: float) -> str:
    """``T0 + offset`` as Claude Code writes it: ``"2026-01-12T10:00:01.500Z"``."""
    when = dt.datetime.fromtimestamp(T0 + offset_seconds, tz=dt.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


# --------------------------------------------------------------------------- seconds()

def test_seconds_reads_numbers_and_iso_strings_and_nothing_else():
    assert seconds(12) == 12.0 and seconds(1.5) == 1.5
    assert seconds("1970-01-01T00:01:00.5Z") == 60.5
    assert seconds("1970-01-01T01:00:00+01:00") == 0.0
    assert seconds("1970-01-01T00:00:07") == 7.0  # no zone: UTC
    assert seconds(iso(1.5)) == T0 + 1.5
    for bad in (None, True, "yesterday", "", math.nan, math.inf, [1], {"t": 1}, 10**400):
        assert seconds(bad) is None


# --------------------------------------------------------------------------- Claude Code

def test_claude_code_times_come_from_each_entry_timestamp():
    t = parse_text(jsonl(user("u1", None, "fix it", timestamp=iso(0)),
                         asst("a1", "u1", "m1", [tu("t1")], timestamp=iso(4.25)),
                         user("u2", "a1", [tr("t1")], timestamp=iso(5)),
                         asst("a2", "u2", "m2", [{"type": "text", "text": "done"}],
                              timestamp=iso(9))),
                   name="s.jsonl")
    assert t.times == [T0, T0 + 4.25, T0 + 5, T0 + 9]


def test_split_response_and_its_results_take_the_time_of_their_last_line():
    # Claude Code writes one response's parallel tool_use blocks as separate lines, each
    # followed by its result: the assistant message is stamped by its last line, the merged
    # user message by its last result.
    t = parse_text(jsonl(user("u1", None, "go", timestamp=iso(0)),
                         asst("a1", "u1", "m1", [tu("t1")], timestamp=iso(2)),
                         user("r1", "a1", [tr("t1")], timestamp=iso(3)),
                         asst("a2", "r1", "m1", [tu("t2")], timestamp=iso(4)),
                         user("r2", "a2", [tr("t2")], timestamp=iso(6)),
                         asst("a3", "r2", "m2", [{"type": "text", "text": "ok"}],
                              timestamp=iso(8))),
                   name="s.jsonl")
    assert [m["role"] for m in t.messages] == ["user", "assistant", "user", "assistant"]
    assert t.times == [T0, T0 + 4, T0 + 6, T0 + 8]


def test_added_messages_take_a_neighbour_time():
    # starts with an assistant turn (placeholder user message put first: the first time) and
    # ends with an unanswered tool_use (an is_error result added: the previous message's time)
    t = parse_text(jsonl(asst("a1", None, "m1", [tu("t1")], timestamp=iso(3))), name="s.jsonl")
    assert [m["role"] for m in t.messages] == ["user", "assistant", "user"]
    assert t.times == [T0 + 3] * 3


def test_claude_code_without_timestamps_has_no_times():
    t = parse_text(jsonl(user("u1", None, "hi"), asst("a1", "u1", "m1", [{"type": "text",
                                                                          "text": "yo"}])),
                   name="s.jsonl")
    assert t.times is None


def test_kit_session_log_times_are_its_timestamps():
    text = jsonl({"type": "message", "message": {"role": "user", "content": "go"}, "timestamp": 2},
                 {"type": "message", "message": {"role": "assistant", "content": [tu("t1")]},
                  "timestamp": 3},
                 {"type": "tool_result", "block": tr("t1"), "timestamp": 4})
    assert parse_text(text, name="abc.jsonl").times == [2.0, 3.0, 4.0]


# --------------------------------------------------------------------------- chat formats

def test_mini_swe_agent_times_come_from_extra_timestamp():
    doc = mini_swe([
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Fix the bug."},
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "ls")],
         "extra": {"timestamp": 100.5}},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py", "extra": {"timestamp": 101.0}},
        {"role": "assistant", "content": "", "tool_calls": [call("c2", "cat a.py")],
         "extra": {"timestamp": 107.25}},
        {"role": "exit", "content": "diff", "extra": {"exit_status": "Submitted"}},
    ])
    t = parse_text(json.dumps(doc), name="x.traj.json")
    # task message: the first recorded time; exit (the last tool_result): the previous one
    assert t.times == [100.5, 100.5, 101.0, 107.25, 107.25]


@pytest.mark.parametrize("doc", [
    [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
    {"history": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
     "trajectory": [{"action": "", "execution_time": 1.5}]},
    [{"role": "user", "content": "hi", "extra": {"timestamp": "soon"}},
     {"role": "assistant", "content": "yo", "extra": {"timestamp": None}}],
])
def test_chat_files_without_usable_times_have_none(doc):
    assert parse_text(json.dumps(doc), name="h.json").times is None


@given(st.lists(st.one_of(st.none(), st.floats(0, 1e10)), min_size=1, max_size=12))
def test_times_are_parallel_to_messages_whatever_is_recorded(stamps):
    chat = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}",
             **({"extra": {"timestamp": s}} if s is not None else {})}
            for i, s in enumerate(stamps)]
    t = parse_text(json.dumps(chat), name="h.json")
    recorded = [s for s in stamps if s is not None]
    if not recorded:
        assert t.times is None
    else:
        assert len(t.times) == len(t.messages)
        assert set(t.times) <= set(recorded)


# --------------------------------------------------------------------------- real files

def _entry_times(path) -> list[float]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [seconds(e["timestamp"]) for e in map(json.loads, lines)
            if e.get("type") in ("user", "assistant") and "timestamp" in e]


def test_real_claude_code_files_have_one_recorded_time_per_message(shared_data):
    paths = sorted((shared_data / "claude-code").glob("*.jsonl"))
    assert paths
    for path in paths:
        recorded = _entry_times(path)
        for compaction in ("restart", "full"):
            t = load(path, compaction=compaction)
            assert t.times is not None and len(t.times) == len(t.messages), path.name
            assert set(t.times) <= set(recorded), path.name
            assert t.times == sorted(t.times), path.name
        assert load(path, compaction="full").times[-1] == max(recorded), path.name


def test_real_claude_code_session_span(shared_data):
    t = load(shared_data / "claude-code/reliability-coverage-test-fix.jsonl")
    recorded = _entry_times(shared_data / "claude-code/reliability-coverage-test-fix.jsonl")
    assert t.times[0] == recorded[0] and t.times[-1] == recorded[-1]
    assert 30 < t.times[-1] - t.times[0] < 120  # a short recorded run, about a minute


def test_real_mini_swe_agent_times_match_each_response(shared_data):
    path = shared_data / "mini-swe-agent/deepseek-chat-django-14752.traj.json"
    doc = json.loads(path.read_text())
    stamps = [m["extra"]["timestamp"] for m in doc["messages"] if m["role"] == "assistant"]
    t = load(path)
    assert [x for x, m in zip(t.times, t.messages) if m["role"] == "assistant"] == stamps
    assert t.times == sorted(t.times)


def test_real_files_without_times(shared_data):
    for name in ("swe-agent/gpt4-pydicom-1458.traj",
                 "swe-agent/demo-function-calling-marshmallow-1867.traj",
                 "mini-swe-agent/official-test-github-issue.traj.json"):
        assert load(shared_data / name).times is None, name
