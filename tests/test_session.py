"""Tests for mini_agent.harness.session: write-ahead writer, damaged-file resume, history rebuild."""

from __future__ import annotations

import copy
import json
import os
import stat

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_agent.core.clock import ManualClock
from mini_agent.core.messages import NO_RESULT_TEXT, validate_messages
from mini_agent.core.session_entries import history_to_entries, rebuild_history
from mini_agent.harness.session import (SessionProblem, SessionWriter, encode_entry, list_sessions,
                                        main_sessions, resume_session, scrub_secrets)
from strategies import histories

T0 = 1_767_225_600.0


def msg(role, content, t=T0):
    return {"type": "message", "message": {"role": role, "content": content}, "timestamp": t}


def use(id, name="read_file"):
    return {"type": "tool_use", "id": id, "name": name, "input": {"path": "a.py"}}


def result(id, text="ok", t=T0):
    return {"type": "tool_result", "block": {"type": "tool_result", "tool_use_id": id,
                                             "content": text}, "timestamp": t}


def line(entry: dict) -> str:
    """The line the writer makes for ``entry`` (its own timestamp kept), newline included."""
    return encode_entry(entry).decode("utf-8")


def write_lines(path, text: str):
    path.write_bytes(text.encode("utf-8"))
    return path


# --------------------------------------------------------------------------- SessionWriter

def test_writer_appends_one_fsynced_line_per_entry_with_clock_timestamps(tmp_path):
    clock = ManualClock()
    w = SessionWriter(tmp_path / "sessions", "s1", clock=clock)
    w.append({"type": "message", "message": {"role": "user", "content": "hi"}})
    clock.advance(5)
    w.append({"type": "meta", "event": "x", "timestamp": 42.0})  # caller's timestamp wins
    # Readable through another handle before close: the write reached the file.
    lines = (tmp_path / "sessions" / "s1.jsonl").read_text().splitlines()
    assert [json.loads(x) for x in lines] == [
        {"timestamp": T0, "type": "message", "message": {"role": "user", "content": "hi"},
         "crc": "40330c73"},
        {"timestamp": 42.0, "type": "meta", "event": "x", "crc": lines[1][-10:-2]}]
    assert w.entries_written == 2
    w.close()
    w.close()  # idempotent
    with pytest.raises(ValueError, match="closed"):
        w.append({"type": "meta"})


def test_writer_creates_file_0600_and_directory_0700(tmp_path):
    w = SessionWriter(tmp_path / "new", "s1")
    assert stat.S_IMODE(os.stat(w.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) & 0o077 == 0
    w.close()


def test_writer_generates_ids_and_refuses_paths_and_non_dicts(tmp_path):
    w = SessionWriter(tmp_path, clock=ManualClock())
    assert w.session_id.startswith("20260101-000000-") and w.path.parent == tmp_path
    with pytest.raises(TypeError):
        w.append(["not", "a", "dict"])
    with pytest.raises(TypeError):
        w.append({"type": "meta", "x": object()})
    for bad in ("../evil", "a/b", ".hidden", "x" * 200):
        with pytest.raises(ValueError, match="invalid session id"):
            SessionWriter(tmp_path, bad)
    assert w.entries_written == 0 and w.path.read_text() == ""


def test_api_key_never_reaches_the_file(tmp_path, monkeypatch):
    key = "sk-ant-api03-" + "Z" * 40
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    with SessionWriter(tmp_path, "s") as w:
        w.append({"type": "meta", "env": {"ANTHROPIC_API_KEY": key}})
        w.append(msg("user", f"my key is {key}"))
    text = w.path.read_text()
    assert key not in text and "sk-ant-" not in text
    assert text.count("[REDACTED]") == 2
    monkeypatch.setenv("ANTHROPIC_API_KEY", "plainsecret123")
    assert scrub_secrets('"plainsecret123"') == '"[REDACTED]"'


def test_reopening_after_a_torn_append_does_not_fuse_records(tmp_path):
    path = write_lines(tmp_path / "s.jsonl", line(msg("user", "hi")) + '{"type": "mes')
    with SessionWriter(tmp_path, "s") as w:
        w.append(msg("assistant", "hello"))
    entries, problems = resume_session(path)
    assert [e["message"]["content"] for e in entries] == ["hi", "hello"]
    assert problems == [SessionProblem(2, "corrupt_line", problems[0].detail)]


# --------------------------------------------------------------------------- resume_session

def test_empty_file_and_blank_lines(tmp_path):
    assert resume_session(write_lines(tmp_path / "a.jsonl", "")) == ([], [])
    assert resume_session(write_lines(tmp_path / "b.jsonl", "\n\n")) == ([], [])
    with pytest.raises(FileNotFoundError):
        resume_session(tmp_path / "missing.jsonl")


def test_truncated_last_line_is_skipped_and_reported(tmp_path):
    good = [msg("user", "one"), msg("assistant", "two")]
    text = "".join(line(e) for e in good) + line(msg("user", "three"))[:25]
    entries, problems = resume_session(write_lines(tmp_path / "s.jsonl", text))
    assert entries == good
    assert [(p.line, p.kind) for p in problems] == [(3, "truncated_last_line")]
    assert str(problems[0]).startswith("line 3: truncated_last_line: incomplete final record")


def test_crlf_line_ends_and_a_byte_order_mark_lose_nothing(tmp_path):
    """A session file that went through a Windows checkout or an editor has CRLF line ends
    (and maybe a BOM); every line used to fail its checksum and the whole session was lost."""
    good = [msg("user", "one\r\ntwo"), msg("assistant", "three")]
    text = "".join(line(e) for e in good)
    crlf = write_lines(tmp_path / "crlf.jsonl", text.replace("\n", "\r\n"))
    assert resume_session(crlf) == (good, [])
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert resume_session(bom) == (good, [])
    torn = write_lines(tmp_path / "torn.jsonl", text.replace("\n", "\r\n") + line(good[1])[:20])
    entries, problems = resume_session(torn)
    assert entries == good and [(p.line, p.kind) for p in problems] == [
        (3, "truncated_last_line")]


def test_corrupt_middle_line_is_reported_and_reading_goes_on(tmp_path):
    a, b = msg("user", "one"), msg("assistant", "two")
    text = line(a) + "{not json at all\n" + line(b)
    entries, problems = resume_session(write_lines(tmp_path / "s.jsonl", text))
    assert entries == [a, b]
    assert [(p.line, p.kind) for p in problems] == [(2, "corrupt_line")]


def test_truncated_line_in_the_middle_is_corrupt_not_truncated(tmp_path):
    a, b = msg("user", "one"), msg("assistant", "two")
    text = line(a)[:20] + "\n" + line(b)
    entries, problems = resume_session(write_lines(tmp_path / "s.jsonl", text))
    assert entries == [b] and [(p.line, p.kind) for p in problems] == [(1, "corrupt_line")]


def test_fused_records_are_split_and_reported(tmp_path):
    a, b, c = msg("user", "one"), msg("assistant", "two"), msg("user", "three")
    text = line(a).strip() + line(b) + line(c)
    entries, problems = resume_session(write_lines(tmp_path / "s.jsonl", text))
    assert entries == [a, b, c]
    assert problems == [SessionProblem(1, "fused_records", "2 record(s) recovered from one line")]


def test_torn_record_fused_with_a_whole_one_keeps_the_whole_one(tmp_path):
    # A crash mid-append, then a writer that did not end the torn line: nested blocks of
    # the torn record (dicts with "type" but no "timestamp") must not pass for records.
    torn = line(msg("user", [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]))
    whole = msg("assistant", "two")
    text = torn[:-30] + line(whole)
    entries, problems = resume_session(write_lines(tmp_path / "s.jsonl", text))
    assert entries == [whole]
    assert problems[0].kind == "fused_records" and "characters of a damaged record dropped" in \
        problems[0].detail


def test_non_objects_and_bad_utf8_are_reported(tmp_path):
    a = msg("user", "one")
    data = b"42\n" + b'{"type": "meta", "x": "\xff\xfe"}\n' + encode_entry(a)
    (tmp_path / "s.jsonl").write_bytes(data)
    entries, problems = resume_session(tmp_path / "s.jsonl")
    assert entries == [a]
    assert problems == [(1, "corrupt_line"), (2, "corrupt_line")]  # (line, kind) pairs
    assert problems[0].detail == "a JSON int, not an object, skipped"


def test_last_line_without_newline_that_parses_is_kept(tmp_path):
    a = msg("user", "one")
    entries, problems = resume_session(write_lines(tmp_path / "s.jsonl", line(a).strip()))
    assert (entries, problems) == ([a], [])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=6), st.data())
def test_any_byte_truncation_loses_only_the_torn_record(tmp_path_factory, texts, data):
    folder = tmp_path_factory.mktemp("trunc")
    entries = [msg("user" if i % 2 == 0 else "assistant", t, T0 + i) for i, t in
               enumerate(texts)]
    with SessionWriter(folder, "s", clock=ManualClock()) as w:
        for e in entries:
            w.append(e)
    raw = w.path.read_bytes()
    cut = data.draw(st.integers(0, len(raw)))
    w.path.write_bytes(raw[:cut])
    got, problems = resume_session(w.path)
    whole_lines = raw[:cut].count(b"\n")
    assert got[:whole_lines] == entries[:whole_lines]
    assert len(got) in (whole_lines, whole_lines + 1)  # +1 when only the newline was cut
    assert all(p.kind == "truncated_last_line" for p in problems) and len(problems) <= 1
    assert len(got) + len(problems) == (whole_lines + (cut > 0 and raw[cut - 1:cut] != b"\n"))


# --------------------------------------------------------------------------- rebuild_history

def test_crash_between_tool_use_and_result_answers_the_unanswered_call():
    entries = [{"type": "meta", "event": "session_start", "model": "m", "timestamp": T0},
               msg("user", "fix the bug", T0 + 1),
               msg("assistant", [{"type": "text", "text": "reading"}, use("t1"),
                                 use("t2", "grep")], T0 + 2),
               result("t1", "file text", T0 + 3)]
    history, times, report = rebuild_history(entries)
    assert history == [
        {"role": "user", "content": "fix the bug"},
        {"role": "assistant", "content": [{"type": "text", "text": "reading"}, use("t1"),
                                          use("t2", "grep")]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "file text"},
            {"type": "tool_result", "tool_use_id": "t2", "content": NO_RESULT_TEXT,
             "is_error": True}]}]
    assert times == [T0 + 1, T0 + 2, T0 + 3]
    assert report.interrupted == [("t2", "grep")] and report.pending_user_message
    assert report.meta["model"] == "m"
    assert "t2 (grep): answered with an is_error result" in str(report)
    validate_messages(history)


def test_results_are_folded_in_logged_order_before_the_next_assistant_turn():
    entries = [msg("user", "go"), msg("assistant", [use("a"), use("b"), use("c")]),
               result("b", "B"), result("a", "A"), msg("assistant", "done")]
    history, times, report = rebuild_history(entries)
    # logged order kept (the identity round trip); the unanswered call is answered last
    assert [b["tool_use_id"] for b in history[2]["content"]] == ["b", "a", "c"]
    assert report.interrupted == [("c", "read_file")]
    entries = [msg("user", "go"), msg("assistant", [use("a"), use("b")]),
               result("b", "B"), result("a", "A"), msg("assistant", "done")]
    history, times, report = rebuild_history(entries)
    assert history[3] == {"role": "assistant", "content": "done"}
    assert report.interrupted == [] and not report.pending_user_message
    assert str(report) == "clean: nothing to repair"


def test_trailing_user_message_is_kept_and_unanswered_prompts_merge():
    entries = [msg("user", "first"), msg("assistant", "ok"), msg("user", "second"),
               msg("user", "third")]
    history, _, report = rebuild_history(entries)
    assert history[2] == {"role": "user", "content": [{"type": "text", "text": "second"},
                                                      {"type": "text", "text": "third"}]}
    assert report.pending_user_message and len(report.notes) == 1


def test_orphan_results_unknown_entries_and_missing_first_prompt_are_reported():
    entries = [msg("assistant", "hello"), result("zz"), {"type": "weird", "timestamp": T0},
               msg("user", "hi")]
    history, _, report = rebuild_history(entries)
    validate_messages(history)
    assert history[0]["role"] == "user" and history[1] == {"role": "assistant",
                                                           "content": "hello"}
    assert len(report.notes) == 3
    assert rebuild_history([]) == ([], [], rebuild_history([])[2])


def test_entries_are_not_mutated():
    entries = [msg("user", "go"), msg("assistant", [use("a")])]
    before = json.dumps(entries)
    rebuild_history(entries)
    assert json.dumps(entries) == before


def test_parallel_results_out_of_tool_use_order_round_trip_byte_for_byte():
    history = [{"role": "user", "content": "go"},
               {"role": "assistant", "content": [use("a"), use("b")]},
               {"role": "user", "content": [result("b", "B")["block"], result("a", "A")["block"],
                                            {"type": "text", "text": "note"}]},
               {"role": "assistant", "content": "done"}]
    rebuilt, _, report = rebuild_history(history_to_entries(history))
    assert json.dumps(rebuilt) == json.dumps(history) and report.interrupted == []


@settings(max_examples=80, deadline=None)
@given(histories(shuffle_results=True))
def test_round_trip_and_every_crash_prefix_rebuilds_a_valid_history(history):
    entries = history_to_entries(history, [T0 + i for i in range(len(history))])
    rebuilt, times, report = rebuild_history(entries)
    assert rebuilt == history and times == [T0 + i for i in range(len(history))]
    for k in range(len(entries)):
        prefix_history, prefix_times, _ = rebuild_history(entries[:k])
        if prefix_history:
            validate_messages(prefix_history, request=False)
        assert len(prefix_times) == len(prefix_history)


# --------------------------------------------------------------------------- listing

def test_list_sessions_and_cli_body(tmp_path, capsys):
    clock = ManualClock()
    with SessionWriter(tmp_path, "a", clock=clock) as w:
        w.append({"type": "meta", "event": "session_start", "model": "claude-x"})
        w.append(msg("user", "hi", T0 + 1))
        w.append(msg("assistant", "hello", T0 + 9))
    with open(w.path, "a") as f:
        f.write('{"torn')
    rows = list_sessions(tmp_path)
    assert rows == [{"session_id": "a", "path": str(w.path), "entries": 3, "prompts": 1,
                     "replies": 1, "first_time": T0, "last_time": T0 + 9, "model": "claude-x",
                     "problems": 1}]
    assert list_sessions(tmp_path / "nope") == []
    assert main_sessions(tmp_path) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].split()[:3] == ["a", "1", "1"]
    assert main_sessions(tmp_path / "nope") == 0
    assert "no sessions in" in capsys.readouterr().out


# --------------------------------------------------------------------------- adversarial input

def test_entries_of_the_wrong_shape_are_skipped_with_a_note():
    user = {"type": "message", "message": {"role": "user", "content": "hi"}, "timestamp": 1.0}
    entries = [user,
               {"type": "message", "timestamp": 2.0},
               {"type": "message", "message": "text", "timestamp": 2.0},
               {"type": "message", "message": {"role": "assistant"}, "timestamp": 2.0},
               {"type": "message", "message": {"role": "assistant", "content": [
                   {"type": "tool_use", "name": "x", "input": {}}]}, "timestamp": 2.0},
               {"type": "tool_result", "block": "ok", "timestamp": 2.0}]
    history, _, report = rebuild_history(entries)
    assert history == [{"role": "user", "content": "hi"}]
    assert report.notes == [
        "entry 1: a message entry without a user or assistant message; skipped",
        "entry 2: a message entry without a user or assistant message; skipped",
        "entry 3: a message entry whose content is not a string or a list of blocks; skipped",
        "entry 4: a message entry with a block that is not an object or a tool_use without "
        "id; skipped",
        "entry 5: a tool_result entry without a block holding a string tool_use_id; skipped"]


def test_deeply_nested_line_is_a_corrupt_line(tmp_path):
    from mini_agent.harness.session import resume_session
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000 + b"\n"
                     + encode_entry({"type": "meta", "timestamp": 1}))
    entries, problems = resume_session(path)
    assert entries == [{"type": "meta", "timestamp": 1}]
    assert [str(p) for p in problems] == [
        "line 1: corrupt_line: JSON nested too deeply (200000 bytes) skipped"]


def test_list_sessions_skips_a_directory_named_like_a_session(tmp_path):
    from mini_agent.harness.session import list_sessions
    (tmp_path / "odd.jsonl").mkdir()
    assert list_sessions(tmp_path) == []


def test_api_key_with_json_escaped_characters_is_redacted(tmp_path, monkeypatch):
    from mini_agent.harness.session import SessionWriter
    monkeypatch.setenv("ANTHROPIC_API_KEY", 'proxy"key\\0123')
    with SessionWriter(tmp_path, "s1") as writer:
        writer.append({"type": "tool_result", "block": {
            "type": "tool_result", "tool_use_id": "t", "content": 'env: proxy"key\\0123'}})
    text = (tmp_path / "s1.jsonl").read_text()
    assert "proxy" not in text and "[REDACTED]" in text


# --------------------------------------------------------------------------- checksums

def _session_bytes(tmp_path, entries):
    with SessionWriter(tmp_path, "c", clock=ManualClock()) as w:
        for e in entries:
            w.append(e)
    return w.path, w.path.read_bytes()


CHECKED_ENTRIES = [msg("user", "fix the bug in money.py"),
                   msg("assistant", [{"type": "text", "text": "読みます"}, use("t1")]),
                   result("t1", "def round_money(x):\n    return round(x, 2)\n"),
                   msg("assistant", "Done: 修正しました.")]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_every_flipped_or_deleted_byte_is_reported(tmp_path_factory, data):
    path, raw = _session_bytes(tmp_path_factory.mktemp("flip"), CHECKED_ENTRIES)
    newlines = [i for i, b in enumerate(raw) if b == 10]
    at = data.draw(st.sampled_from([i for i in range(len(raw)) if i not in newlines]))
    if data.draw(st.booleans()):
        damaged = raw[:at] + raw[at + 1:]
    else:
        flip = data.draw(st.integers(1, 255).filter(lambda x: raw[at] ^ x != 10))
        damaged = raw[:at] + bytes([raw[at] ^ flip]) + raw[at + 1:]
    path.write_bytes(damaged)
    entries, problems = resume_session(path)
    line_no = raw[:at].count(b"\n") + 1
    assert [p.line for p in problems] == [line_no]
    assert problems[0].kind in ("checksum_mismatch", "corrupt_line", "missing_checksum")
    assert entries == [e for i, e in enumerate(CHECKED_ENTRIES) if i != line_no - 1]


def test_unchecked_lines_are_read_as_plain_json_lines(tmp_path):
    a, b = msg("user", "one"), msg("assistant", "two")
    path = write_lines(tmp_path / "s.jsonl", json.dumps(a) + "\n" + json.dumps(b) + "\n")
    assert resume_session(path) == ([a, b], [])  # exercise 07's format: nothing to report
    with SessionWriter(tmp_path, "s") as w:  # an old session resumed by the new writer
        w.append(msg("user", "three"))
    path.write_bytes(path.read_bytes() + json.dumps(msg("assistant", "four")).encode() + b"\n")
    entries, problems = resume_session(path)
    assert [e["message"]["content"] for e in entries] == ["one", "two", "three"]
    assert problems == [(4, "missing_checksum")]


def test_a_damaged_checksum_key_is_not_mistaken_for_a_legacy_line(tmp_path):
    path, raw = _session_bytes(tmp_path, CHECKED_ENTRIES[:1])
    path.write_bytes(raw.replace(b'"crc"', b'"crd"'))
    assert resume_session(path) == ([], [SessionProblem(
        1, "missing_checksum", "a record without a valid checksum field (a damaged line) "
        "skipped")])


def test_a_damaged_line_over_the_salvage_limit_is_reported_without_a_search(tmp_path,
                                                                            monkeypatch):
    import mini_agent.harness.session_reader as reader
    monkeypatch.setattr(reader, "MAX_SALVAGE_LINE_BYTES", 1000)
    big = encode_entry(result("t1", "x" * 5000)).replace(b"xxxx", b"xyxx", 1)
    path = tmp_path / "s.jsonl"
    path.write_bytes(encode_entry(msg("user", "go")) + big + encode_entry(msg("user", "b")))
    entries, problems = resume_session(path)
    assert len(entries) == 2
    assert str(problems[0]).startswith("line 2: corrupt_line: damaged line of 5,")
    assert "over the 1,000-byte salvage limit" in str(problems[0])


def test_salvage_gives_up_within_its_budget_on_a_hostile_line(tmp_path):
    # many record starts and checksum tails that never match: bounded work, nothing kept
    hostile = (b'{"timestamp":1,' * 2000 + b',"crc":"00000000"}' * 2000)
    path = tmp_path / "s.jsonl"
    path.write_bytes(hostile + b"\n" + encode_entry(msg("user", "ok")))
    entries, problems = resume_session(path)
    assert entries == [msg("user", "ok")] and problems[0].line == 1


@pytest.mark.parametrize("damage", [
    lambda m: {**m, "content": [{"type": "txet", "text": "hi"}]},
    lambda m: {**m, "content": [{"type": "text", "text": "hi", "cache_control": {"type": "x"}}]},
    lambda m: {**m, "content": [{"type": "text", "txet": "hi"}]},
])
def test_records_the_api_would_refuse_are_skipped_and_the_resume_goes_on(damage):
    bad_assistant = {"type": "message", "timestamp": T0,
                     "message": damage({"role": "assistant", "content": "x"})}
    bad_result = {"type": "tool_result", "timestamp": T0, "block": {
        "type": "tool_result", "tool_use_id": "t1", "content": [{"type": "bogus"}]}}
    entries = [msg("user", "go"), msg("assistant", [use("t1")]), bad_result, bad_assistant,
               msg("user", "next"), msg("assistant", "fine")]
    history, _, report = rebuild_history(entries)
    validate_messages(history)
    assert history[2]["content"][0]["content"] == NO_RESULT_TEXT
    assert history[-1] == {"role": "assistant", "content": "fine"}
    assert sum("the API would refuse" in n for n in report.notes) == 2


def test_agent_resume_reports_and_skips_a_damaged_record(tmp_path):
    from mini_agent.harness.agent import Agent
    from mini_agent.offline import EchoBrain, offline_async_client
    from mini_agent.core.view import full_view
    path, raw = _session_bytes(tmp_path, CHECKED_ENTRIES)
    lines = raw.split(b"\n")
    lines[2] = lines[2].replace(b"round_money", b"round_monex")  # the tool result
    path.write_bytes(b"\n".join(lines))
    from mini_agent.harness.tools import Tool
    read = Tool(name="read_file", description="read", input_schema={"type": "object"},
                run=lambda i: "text", safety="read-only")
    agent = Agent(offline_async_client(EchoBrain()), view_policy=full_view,
                  tools={"read_file": read})
    report = agent.resume("c", directory=tmp_path)
    # the damaged result leaves t1 unanswered; a read-only call is simply run again on resume
    assert report.interrupted == []
    assert "interrupted tool call t1 (read_file): reread" in report.notes
    assert agent.history[2]["content"][0]["content"].endswith("text")
    assert any(n.startswith("line 3: checksum_mismatch") for n in report.notes)
    validate_messages(agent.history, request=False)
    assert agent.run("continue").exit_status == "completed"


def test_list_sessions_survives_checked_entries_of_the_wrong_shape(tmp_path, capsys):
    with SessionWriter(tmp_path, "odd", clock=ManualClock()) as w:
        w.append({"type": "message", "message": "hello", "timestamp": float("nan")})
        w.append({"type": "message", "message": None, "timestamp": 1e300})
        w.append({"type": "message", "message": ["x"], "timestamp": True})
        w.append(msg("user", "hi", T0 + 1))
        w.append({"type": "meta", "model": ["not", "a", "name"], "timestamp": float("inf")})
    [row] = list_sessions(tmp_path)
    assert (row["entries"], row["prompts"], row["replies"]) == (5, 1, 0)
    assert (row["first_time"], row["last_time"], row["model"]) == (T0 + 1, T0 + 1, None)
    assert main_sessions(tmp_path) == 0
    assert capsys.readouterr().out.splitlines()[1].split()[:3] == ["odd", "1", "0"]


def test_an_entry_holding_a_lone_surrogate_is_written_escaped_and_reads_back_the_same(tmp_path):
    entry = {"type": "tool_result", "block": {"type": "tool_result", "tool_use_id": "t",
                                              "content": "caf\udce9 \ud83d"}}
    with SessionWriter(tmp_path, "s", clock=ManualClock()) as w:
        w.append(entry)
        w.append(msg("user", "after", T0))
    raw = w.path.read_bytes()
    assert b"\\udce9" in raw and raw.decode("utf-8")  # valid UTF-8 on disk
    entries, problems = resume_session(w.path)
    assert problems == [] and entries[0]["block"] == entry["block"]


def test_a_session_open_in_another_process_is_refused_and_one_in_this_process_taken_over(
        tmp_path):
    import subprocess
    import sys
    from mini_agent.harness.session import SessionBusyError
    first = SessionWriter(tmp_path, "s", clock=ManualClock())
    first.append(msg("user", "from A", T0))
    newer = SessionWriter(tmp_path, "s", clock=ManualClock())   # this process: takes over
    with pytest.raises(ValueError, match="a newer writer of the same session took it over"):
        first.append(msg("user", "lost?", T0))
    newer.append(msg("assistant", "to A", T0 + 1))
    newer.close()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\n"
         "from mini_agent.harness.session import SessionWriter\n"
         f"w = SessionWriter({str(tmp_path)!r}, 's')\nprint('open', flush=True)\n"
         "sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "open\n"
        with pytest.raises(SessionBusyError, match="open for writing in another process"):
            SessionWriter(tmp_path, "s", clock=ManualClock())
    finally:
        holder.communicate("")
    with SessionWriter(tmp_path, "s", clock=ManualClock()) as again:   # released: free again
        again.append(msg("user", "later", T0 + 2))
    entries, problems = resume_session(first.path)
    assert problems == []
    assert [e["message"]["content"] for e in entries] == ["from A", "to A", "later"]


def test_a_logged_user_message_with_an_orphan_tool_result_is_skipped_not_fatal():
    entries = [msg("user", "hi", 1.0), msg("assistant", "ok", 2.0),
               {"type": "message", "timestamp": 3.0, "message": {"role": "user", "content": [
                   {"type": "tool_result", "tool_use_id": "toolu_x", "content": "r"}]}},
               msg("assistant", "fine", 4.0)]
    history, _, report = rebuild_history(entries)
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert any("entry 2" in note for note in report.notes)


def test_an_orphan_tool_result_beside_text_keeps_the_text():
    entries = [msg("user", "hi", 1.0), msg("assistant", "ok", 2.0),
               {"type": "message", "timestamp": 3.0, "message": {"role": "user", "content": [
                   {"type": "tool_result", "tool_use_id": "toolu_x", "content": "r"},
                   {"type": "text", "text": "and now?"}]}},
               msg("assistant", "fine", 4.0)]
    before = copy.deepcopy(entries)
    history, times, report = rebuild_history(entries)
    assert history[2] == {"role": "user", "content": [{"type": "text", "text": "and now?"}]}
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]
    assert times == [1.0, 2.0, 3.0, 4.0]
    assert any("'toolu_x'" in note and "entry 2" in note for note in report.notes)
    assert entries == before


@pytest.mark.parametrize("empty", ["", "   ", []])
def test_an_empty_logged_assistant_message_is_skipped_not_fatal(empty):
    # valid only as the optional final assistant message of a request: in a log a message
    # always follows it, so it is a record the API would refuse in place
    entries = [msg("user", "go"), msg("assistant", empty), msg("user", "next"),
               msg("assistant", "fine"), msg("assistant", empty)]
    before = copy.deepcopy(entries)
    history, times, report = rebuild_history(entries)
    validate_messages(history, request=False)
    assert history == [{"role": "user", "content": [{"type": "text", "text": "go"},
                                                     {"type": "text", "text": "next"}]},
                       {"role": "assistant", "content": "fine"}]
    assert len(times) == 2 and entries == before
    assert sum("the API would refuse" in n for n in report.notes) == 2
