"""Hostile inputs for the loader's and the replay's fast paths, each compared with its plain twin.

The JSONL reader with ``orjson`` against the plain reader (``LOADS`` set to None), the
chain shortcut against the parent-link walk, and ``evaluate_session`` against its copying
replay (``reference=True``), on lines and sessions chosen to sit on each shortcut's edges.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import sys

import pytest

import mini_agent.core.transcripts.claude_code as cc
from mini_agent.core.replay import evaluate_session
from mini_agent.core.sample_sessions import sample_session_jsonl, sample_transcript

_HOSTILE_LINES = [
    '{"a":1,"a":2,"b":3}', '{"a":1,"\\u0061":2}', '{"a":1}\n\x85\n{"b":2}',
    '{"a":1}\n\u2028\n{"b":2}', '{"a":1}\x85', '\x85{"a":1}', '\ufeff{"a":1}\n{"b":2}',
    '{"a":"\\ud83d\\ude00"}', '{"a":"\\ud800\\ud800"}', '{"a":"x"}\n{"a":"\\ud800"}\n{"b":1}',
    '{"a":1}\r\n{"b":2}\r\n', '{"a":1}\n\n\n', '{"a":1}\n   \n{', '{"a":[1,{"b":[]}]}\n[1]\n"s"\n3',
    '{"a":1}\x00', '{"a":"\x00"}', '{"":1}', '{"a":1} {"b":2}', '{"a":NaN}\n{"b":Infinity}',
    '{"a":1e400}\n{"b":-1e400}', '{"a":1.7976931348623159e308}', '{"a":-0}', '{"a":-0.0}',
    '{"a":9223372036854775808}', '{"a":18446744073709551615}', '{"a":18446744073709551616}',
    '{"a":-9223372036854775809}', '{"a":1.0E+19}', '{"a":1' + '0' * 5000 + '}',
    '{"a":1}\n' + '[' * 1000 + ']' * 1000, '{"z":' + '[' * 1023 + ']' * 1023 + '}',
    '{"z":' + '{"a":' * 1023 + '1' + '}' * 1023 + '}', '{"a":1}\n{"a":01}\n{"b":2}',
]


def _parse(text: str, fast: bool):
    saved = cc.LOADS
    cc.LOADS = saved if fast else None
    repairs: list[str] = []
    try:
        return cc.parse_jsonl(text, repairs), repairs
    finally:
        cc.LOADS = saved


@pytest.mark.parametrize("text", _HOSTILE_LINES,
                         ids=[f"line{i}" for i in range(len(_HOSTILE_LINES))])
def test_parse_jsonl_hostile_lines_match_plain_reader(text):
    fast, plain = _parse(text, True), _parse(text, False)
    assert repr(fast) == repr(plain)


def test_parse_jsonl_nesting_near_recursion_limit_matches_plain_reader():
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)
    try:
        for nest in range(200, 320, 3):
            text = '{"x":1}\n{"z":' + "[" * nest + "]" * nest + '}\n{"y":2}'
            assert repr(_parse(text, True)) == repr(_parse(text, False)), nest
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.parametrize("field,value", [
    ("isSidechain", 0), ("isSidechain", []), ("isSidechain", "false"),
    ("logicalParentUuid", None), ("uuid", 1), ("parentUuid", ""), ("type", "progress"),
])
def test_chain_shortcut_matches_walk_on_edge_fields(tmp_path, field, value):
    from mini_agent.harness.transcript_files import load
    entries = [json.loads(line) for line in sample_session_jsonl(2).splitlines() if line.strip()]
    entries[1][field] = value
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n", encoding="utf-8")

    def snapshot(walk_only: bool):
        saved = cc.linear_chain
        if walk_only:
            cc.linear_chain = lambda entries: None
        try:
            t = load(path)
            return repr((t.messages, t.usage, t.repairs, t.info, t.times))
        except Exception as error:  # the same refusal either way
            return repr(error)
        finally:
            cc.linear_chain = saved
    assert snapshot(False) == snapshot(True)


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_replay_short_and_copied_histories_match_reference(cut):
    t = sample_transcript(3)
    messages = [copy.deepcopy(m) if i % 2 else m for i, m in enumerate(t.messages[:cut])]
    assistants = sum(m["role"] == "assistant" for m in messages)
    short = dataclasses.replace(t, messages=messages, usage=t.usage[:assistants],
                                times=t.times[:cut] if t.times else None)
    fast = json.dumps(evaluate_session(short), default=str, sort_keys=True)
    assert fast == json.dumps(evaluate_session(short, reference=True), default=str,
                              sort_keys=True)
