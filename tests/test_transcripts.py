"""Tests for mini_agent.core.transcripts: every quirk of real transcripts gets a defined behaviour."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from mini_agent.core.messages import iter_blocks, validate_messages
from mini_agent.core.transcripts.claude_code import parse_jsonl
from mini_agent.core.transcripts import MISSING_START_TEXT, NO_RESULT_TEXT, TranscriptError, parse_text
from mini_agent.harness.real_sessions import shared_data_dir
from mini_agent.harness.transcript_files import load

# --------------------------------------------------------------------------- fixture builders

USAGE = {"input_tokens": 10, "cache_creation_input_tokens": 100,
         "cache_read_input_tokens": 1000, "output_tokens": 5}


def user(uuid, parent, content, **extra):
    return {"type": "user", "uuid": uuid, "parentUuid": parent, "isSidechain": False,
            "message": {"role": "user", "content": content}, **extra}


def asst(uuid, parent, mid, content, *, usage=USAGE, model="claude-opus-4-5", **extra):
    return {"type": "assistant", "uuid": uuid, "parentUuid": parent, "isSidechain": False,
            "message": {"id": mid, "role": "assistant", "model": model, "type": "message",
                        "content": content, "stop_reason": None, "usage": usage}, **extra}


def other(kind, uuid, parent, **extra):
    return {"type": kind, "uuid": uuid, "parentUuid": parent, **extra}


def tu(tid, name="Bash", **inp):
    return {"type": "tool_use", "id": tid, "name": name, "input": inp or {"command": "ls"}}


def tr(tid, content="ok"):
    return {"type": "tool_result", "tool_use_id": tid, "content": content}


def jsonl(*entries) -> str:
    return "\n".join(json.dumps(e) for e in entries) + "\n"


def cc(*entries, **opts):
    return parse_text(jsonl(*entries), name="session.jsonl", **opts)


# --------------------------------------------------------------------------- Claude Code

def test_simple_chain_gives_the_messages_and_aligned_usage():
    u2 = dict(USAGE, output_tokens=7)
    t = cc(user("u1", None, "fix it"),
           asst("a1", "u1", "m1", [tu("t1")]),
           user("u2", "a1", [tr("t1", "file.py")]),
           asst("a2", "u2", "m2", [{"type": "text", "text": "done"}], usage=u2))
    assert t.messages == [
        {"role": "user", "content": [{"type": "text", "text": "fix it"}]},
        {"role": "assistant", "content": [tu("t1")]},
        {"role": "user", "content": [tr("t1", "file.py")]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
    ]
    assert t.usage == [USAGE, u2]
    assert t.repairs == []
    assert t.source_format == "claude-code"
    assert t.model == "claude-opus-4-5"
    assert t.info["api_turns"] == 2


def test_lines_sharing_a_message_id_become_one_message_with_the_last_usage():
    final = dict(USAGE, output_tokens=99)
    t = cc(user("u1", None, "go"),
           asst("a1", "u1", "m1", [{"type": "thinking", "thinking": "hmm", "signature": "s"}],
                usage=dict(USAGE, output_tokens=1)),
           asst("a2", "a1", "m1", [{"type": "text", "text": "Looking."}],
                usage=dict(USAGE, output_tokens=1)),
           asst("a3", "a2", "m1", [tu("t1")], usage=final),
           user("u2", "a3", [tr("t1")]))
    assert [m["role"] for m in t.messages] == ["user", "assistant", "user"]
    assert [b["type"] for b in t.messages[1]["content"]] == ["thinking", "text", "tool_use"]
    assert t.usage == [final]
    assert t.info["api_turns"] == 1


def test_parallel_tool_uses_on_side_branches_are_brought_back():
    # Claude Code's real shape (entire-opus45-commit-compacted.jsonl lines 5-12): three
    # tool_use lines of one response; each result's parent is its tool_use line, and the
    # next response hangs off one result, so the parent chain alone misses the siblings.
    t = cc(user("u1", None, "commit this"),
           asst("a1", "u1", "m1", [tu("t1")]),
           asst("a2", "a1", "m1", [tu("t2")]),
           asst("a3", "a2", "m1", [tu("t3")]),
           user("r3", "a3", [tr("t3", "three")]),
           user("r1", "a1", [tr("t1", "one")]),
           user("r2", "a2", [tr("t2", "two")]),
           asst("a4", "r2", "m2", [{"type": "text", "text": "Committed."}]))
    assert t.messages[1] == {"role": "assistant", "content": [tu("t1"), tu("t2"), tu("t3")]}
    assert t.messages[2] == {"role": "user", "content": [tr("t3", "three"), tr("t1", "one"),
                                                         tr("t2", "two")]}
    assert len(t.messages) == 4 and t.repairs == []


def test_results_interleaved_between_lines_of_one_response():
    # Claude Code 2.1.33 (entire-opus46-git-status-debug.jsonl lines 8-13)
    t = cc(user("u1", None, "why?"),
           asst("a1", "u1", "m1", [tu("t1")]),
           user("r1", "a1", [tr("t1")]),
           asst("a2", "r1", "m1", [tu("t2")]),
           user("r2", "a2", [tr("t2")]),
           asst("a3", "r2", "m2", [{"type": "text", "text": "Found it."}]))
    assert t.messages == [
        {"role": "user", "content": [{"type": "text", "text": "why?"}]},
        {"role": "assistant", "content": [tu("t1"), tu("t2")]},
        {"role": "user", "content": [tr("t1"), tr("t2")]},
        {"role": "assistant", "content": [{"type": "text", "text": "Found it."}]},
    ]
    assert len(t.usage) == 2


def test_non_message_entries_and_sidechains_are_skipped():
    t = cc(other("file-history-snapshot", None, None),
           user("u1", None, "go"),
           other("progress", "p1", "u1", data={"x": 1}),
           asst("a1", "p1", "m1", [{"type": "text", "text": "hi"}]),
           other("system", "s1", "a1", subtype="stop_hook_summary"),
           other("queue-operation", None, None, operation="enqueue"),
           other("pr-link", None, None),
           user("u2", "s1", "more"),
           asst("a2", "u2", "m2", [{"type": "text", "text": "sure"}]),
           dict(asst("side", "a2", "m9", [{"type": "text", "text": "subagent"}]),
                isSidechain=True))
    assert [m["content"][0]["text"] for m in t.messages] == ["go", "hi", "more", "sure"]
    assert t.info["skipped_entries"] == {"file-history-snapshot": 1, "progress": 1,
                                         "system": 1, "queue-operation": 1, "pr-link": 1}
    assert t.info["sidechain_entries"] == 1


def test_abandoned_branch_is_not_loaded():
    t = cc(user("u1", None, "go"),
           asst("a1", "u1", "m1", [{"type": "text", "text": "first try"}]),
           asst("b1", "u1", "m2", [{"type": "text", "text": "second try"}]))
    assert [m["content"][0]["text"] for m in t.messages] == ["go", "second try"]


COMPACTED = [
    user("u1", None, "old question"),
    asst("a1", "u1", "m1", [{"type": "text", "text": "old answer"}]),
    other("system", "c1", None, subtype="compact_boundary", logicalParentUuid="a1",
          content="Conversation compacted"),
    user("s1", "c1", "This session is being continued... summary", isCompactSummary=True,
         isVisibleInTranscriptOnly=True),
    user("u2", "s1", "new question"),
    asst("a2", "u2", "m2", [{"type": "text", "text": "new answer"}]),
]


def test_compaction_restarts_the_history_at_the_summary_and_says_so():
    t = cc(*COMPACTED)
    assert t.messages == [
        {"role": "user", "content": [
            {"type": "text", "text": "This session is being continued... summary"},
            {"type": "text", "text": "new question"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "new answer"}]},
    ]
    assert t.repairs == ["line 3: compact_boundary: the history restarts at the compaction "
                         "summary; 2 earlier message entries are not loaded "
                         "(compaction='full' loads them)"]
    assert t.info["compactions"] == 1


def test_compaction_full_loads_the_earlier_history_too():
    t = cc(*COMPACTED, compaction="full")
    texts = [b["text"] for _, _, b in iter_blocks(t.messages)]
    assert texts == ["old question", "old answer",
                     "This session is being continued... summary", "new question", "new answer"]
    assert "compaction='full'" in t.repairs[0]


def test_is_meta_entries_are_kept_as_user_text():
    t = cc(user("u1", None, "/plan"),
           user("u2", "u1", [{"type": "text", "text": "# expanded command"}], isMeta=True),
           asst("a1", "u2", "m1", [{"type": "text", "text": "ok"}]))
    assert t.messages[0]["content"] == [{"type": "text", "text": "/plan"},
                                        {"type": "text", "text": "# expanded command"}]


def test_synthetic_assistant_entries_are_dropped_and_reported():
    t = cc(user("u1", None, "go"),
           asst("a1", "u1", "m1", [{"type": "text", "text": "API Error"}], model="<synthetic>"),
           user("u2", "a1", "again"),
           asst("a2", "u2", "m2", [{"type": "text", "text": "done"}]))
    assert t.messages == [
        {"role": "user", "content": [{"type": "text", "text": "go"},
                                     {"type": "text", "text": "again"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]}]
    assert t.repairs == ["line 2: dropped 1 <synthetic> assistant entries "
                         "(written by Claude Code, not the model)"]


def test_parent_outside_the_file_starts_the_history_there():
    t = cc(asst("a1", "elsewhere", "m1", [{"type": "text", "text": "continuing"}]),
           user("u1", "a1", "thanks"),
           asst("a2", "u1", "m2", [{"type": "text", "text": "welcome"}]))
    assert t.repairs[0] == ("line 1: parentUuid elsewhere points outside the file; "
                            "the history starts here")
    assert t.messages[0] == {"role": "user",
                             "content": [{"type": "text", "text": MISSING_START_TEXT}]}
    assert "placeholder user message" in t.repairs[1]
    assert len(t.usage) == 2


def test_truncated_last_line_and_bad_middle_line_are_reported():
    text = jsonl(user("u1", None, "go"), asst("a1", "u1", "m1", [{"type": "text", "text": "hi"}]))
    text = text.replace("\n", "\n{not json\n", 1) + '{"type": "user", "uuid": "u2", "par'
    t = parse_text(text, name="s.jsonl")
    assert t.repairs == ["line 2: line is not valid JSON (9 chars) ignored",
                         "line 4: truncated last line (35 chars) ignored"]
    assert [m["role"] for m in t.messages] == ["user", "assistant"]


def test_orphan_tool_result_is_dropped_and_reported():
    t = cc(user("u1", None, "go"),
           asst("a1", "u1", "m1", [tu("t1")]),
           user("u2", "a1", [tr("t1"), tr("toolu_x", "lost output")]),
           asst("a2", "u2", "m2", [{"type": "text", "text": "ok"}]))
    assert t.messages[2] == {"role": "user", "content": [tr("t1")]}
    assert t.repairs == ["line 3: dropped orphan tool_result toolu_x (13 chars; its tool_use "
                         "is not in the previous assistant message)"]


def test_tool_use_without_result_gets_an_error_result():
    t = cc(user("u1", None, "go"), asst("a1", "u1", "m1", [tu("t1")]))
    assert t.messages[-1] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": NO_RESULT_TEXT,
         "is_error": True}]}
    assert t.repairs == ["line 2: tool_use t1 had no tool_result; added an is_error result "
                         "saying so"]


def test_interrupted_tool_call_followed_by_text():
    t = cc(user("u1", None, "go"),
           asst("a1", "u1", "m1", [tu("t1"), tu("t2")]),
           user("u2", "a1", [tr("t1")]),
           user("u3", "u2", "[Request interrupted by user for tool use]"),
           asst("a2", "u3", "m2", [{"type": "text", "text": "stopping"}]))
    kinds = [(b["type"], b.get("tool_use_id")) for b in t.messages[2]["content"]]
    assert kinds == [("tool_result", "t2"), ("tool_result", "t1"), ("text", None)]
    validate_messages(t.messages)


def test_empty_thinking_and_whitespace_text_are_dropped_thinking_with_text_kept():
    t = cc(user("u1", None, "go"),
           asst("a1", "u1", "m1", [{"type": "text", "text": "\n\n"}]),
           asst("a2", "a1", "m1", [{"type": "thinking", "thinking": "", "signature": "sig"}]),
           asst("a3", "a2", "m1", [{"type": "thinking", "thinking": "plan", "signature": "s"},
                                   {"type": "text", "text": "Done."}]))
    assert t.messages[1]["content"] == [
        {"type": "thinking", "thinking": "plan", "signature": "s"},
        {"type": "text", "text": "Done."}]
    assert t.repairs == ["dropped empty or whitespace-only text blocks: 1 at line 2",
                         "dropped signature-only (empty) thinking blocks: 1 at line 3"]


def test_thinking_drop_option_removes_all_thinking():
    t = cc(user("u1", None, "go"),
           asst("a1", "u1", "m1", [{"type": "thinking", "thinking": "plan", "signature": "s"},
                                   {"type": "text", "text": "Done."}]), thinking="drop")
    assert t.messages[1]["content"] == [{"type": "text", "text": "Done."}]
    assert t.repairs == ["thinking='drop': removed 1 thinking blocks"]


def test_non_api_keys_are_stripped_from_blocks():
    block = {"type": "text", "text": "hi", "timestamp": 1.5}
    t = cc(user("u1", None, "go"), asst("a1", "u1", "m1", [block]))
    assert t.messages[1]["content"] == [{"type": "text", "text": "hi"}]
    assert t.repairs == ["stripped non-API keys (timestamp) from text blocks: 1 at line 2"]


def test_kit_session_log_is_read():
    text = jsonl({"type": "meta", "event": "session_start", "model": "claude-x", "timestamp": 1},
                 {"type": "message", "message": {"role": "user", "content": "go"}, "timestamp": 2},
                 {"type": "message", "message": {"role": "assistant", "content": [tu("t1")]},
                  "timestamp": 3},
                 {"type": "tool_result", "block": tr("t1"), "timestamp": 4})
    t = parse_text(text, name="abc.jsonl")
    assert t.source_format == "mini-agent-session" and t.model == "claude-x"
    assert t.messages[2] == {"role": "user", "content": [tr("t1")]}


# --------------------------------------------------------------------------- chat formats

def mini_swe(messages, **top):
    return {"info": {"exit_status": "Submitted", "model_stats": {"api_calls": 2}},
            "messages": messages, "trajectory_format": "mini-swe-agent-1.1", **top}


def call(cid, command):
    return {"index": 0, "id": cid, "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": command})}}


def test_mini_swe_agent_tool_calls_map_to_tool_use_and_tool_result():
    usage = {"prompt_tokens": 1540, "completion_tokens": 82,
             "prompt_tokens_details": {"cached_tokens": 320}}
    doc = mini_swe([
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "Fix the bug."},
        {"role": "assistant", "content": "", "reasoning_content": "Look first.",
         "tool_calls": [call("call_1", "ls")],
         "extra": {"response": {"model": "deepseek-reasoner", "usage": usage}}},
        {"role": "tool", "tool_call_id": "call_1", "content": "a.py\n"},
        {"role": "assistant", "content": "Submitting.", "tool_calls": [call("call_2", "cat p")],
         "extra": {"response": {"model": "deepseek-reasoner"}}},
        {"role": "exit", "content": "diff --git a/a.py"},
    ])
    t = parse_text(json.dumps(doc), name="x.traj.json")
    assert t.source_format == "mini-swe-agent" and t.model == "deepseek-reasoner"
    assert t.system == "You are helpful."
    assert t.messages == [
        {"role": "user", "content": [{"type": "text", "text": "Fix the bug."}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Look first."},
            {"type": "tool_use", "id": "call_1", "name": "bash", "input": {"command": "ls"}}]},
        {"role": "user", "content": [tr("call_1", "a.py\n")]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Submitting."},
            {"type": "tool_use", "id": "call_2", "name": "bash", "input": {"command": "cat p"}}]},
        {"role": "user", "content": [tr("call_2", "diff --git a/a.py")]},
    ]
    assert t.usage == [{"input_tokens": 1220, "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 320, "output_tokens": 82}, None]
    assert t.info["exit"] == "diff --git a/a.py" and t.info["exit_status"] == "Submitted"
    assert t.repairs == ["messages[5]: 'exit' message (the final submission) used as the "
                         "tool_result of call_2; also in Transcript.info['exit']"]


def test_bad_tool_arguments_and_late_system_message_are_reported():
    doc = mini_swe([
        {"role": "user", "content": "go"},
        {"role": "system", "content": "Be brief."},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "function": {"name": "bash", "arguments": "{broken"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "x"},
    ])
    t = parse_text(json.dumps(doc), name="y.traj.json")
    assert t.messages[1]["content"][0]["input"] == {"arguments": "{broken"}
    assert t.system == "Be brief."
    assert t.repairs == ["messages[1]: system message moved to Transcript.system",
                         "messages[2]: tool call arguments are not JSON; kept as "
                         "{'arguments': str}"]


TEXT_FORMAT = [
    {"role": "system", "content": "Reply with one bash block."},
    {"role": "user", "content": "Please solve this issue."},
    {"role": "assistant", "content": "Let me look.\n\n```mswea_bash_command\ncat a.py\n```"},
    {"role": "user", "content": "<returncode>0</returncode>\n<output>\nx\n</output>"},
    {"role": "assistant", "content": "Done.\n\n```mswea_bash_command\necho COMPLETE\n```"},
    {"role": "user", "content": "<returncode>0</returncode>"},
]


def test_plain_list_text_actions_are_kept_as_text_by_default():
    t = parse_text(json.dumps(TEXT_FORMAT), name="github_issue.traj.json")
    assert t.source_format == "mini-swe-agent"
    assert [m["role"] for m in t.messages] == ["user", "assistant"] * 2 + ["user"]
    assert all(b["type"] == "text" for _, _, b in iter_blocks(t.messages))
    assert t.repairs == [] and t.usage == [None, None]


def test_text_actions_can_become_tool_calls():
    t = parse_text(json.dumps(TEXT_FORMAT), name="github_issue.traj.json", text_actions="tools")
    assert t.messages[1]["content"][-1] == {"type": "tool_use", "id": "text_action_2",
                                            "name": "bash", "input": {"command": "cat a.py"}}
    assert t.messages[2]["content"] == [
        tr("text_action_2", "<returncode>0</returncode>\n<output>\nx\n</output>")]
    assert t.repairs == ["text_actions='tools': 2 text actions mapped to tool_use blocks "
                         "(id text_action_<i>, next observation as tool_result) at "
                         "messages[2, 4]"]


def test_swe_agent_history_with_reused_tool_call_ids():
    def action(cid, text):
        return {"role": "assistant", "content": text, "action": "ls", "message_type": "action",
                "tool_calls": [{"type": "function", "id": cid,
                                "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]}

    def observation(cid, text):
        return {"role": "tool", "content": text, "tool_call_ids": [cid]}

    doc = {"environment": "x", "trajectory": [], "info": {"exit_status": "submitted"},
           "history": [{"role": "system", "content": "SETTING"},
                       {"role": "user", "content": "the issue", "is_demo": True},
                       {"role": "user", "content": "solve it"},
                       action("call_a", "one"), observation("call_a", "first"),
                       action("call_a", "two"), observation("call_a", "second")]}
    t = parse_text(json.dumps(doc), name="demo.traj")
    assert t.source_format == "swe-agent" and t.system == "SETTING"
    assert len(t.messages[0]["content"]) == 2  # the demonstration and the task, merged
    assert t.messages[3]["content"][1]["id"] == "call_a_dup2"
    assert t.messages[4]["content"] == [tr("call_a_dup2", "second")]
    assert t.repairs == ["renamed 1 reused tool_use ids (with their tool_result) to "
                         "<id>_dupN at messages[5] (call_a)"]


def test_swe_agent_action_field_used_by_text_actions_tools():
    doc = {"trajectory": [], "history": [
        {"role": "user", "content": "solve it"},
        {"role": "assistant", "content": "DISCUSSION\nopen it\n", "action": "open a.py\n"},
        {"role": "user", "content": "[File: a.py]"}]}
    t = parse_text(json.dumps(doc), name="run.traj", text_actions="tools")
    assert t.messages[1]["content"][1] == {"type": "tool_use", "id": "text_action_1",
                                           "name": "bash", "input": {"command": "open a.py"}}
    assert t.messages[2]["content"] == [tr("text_action_1", "[File: a.py]")]


def test_plain_messages_json_merges_consecutive_roles():
    doc = {"system": "sys", "messages": [
        {"role": "user", "content": "a"}, {"role": "user", "content": "b"},
        {"role": "assistant", "content": [{"type": "text", "text": "c"}]},
        {"role": "assistant", "content": "d"}]}
    t = parse_text(json.dumps(doc), name="h.json")
    assert t.source_format == "messages-json" and t.system == "sys"
    assert t.messages == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "c"},
                                          {"type": "text", "text": "d"}]}]
    assert t.repairs == ["messages[2] + messages[3]: consecutive assistant messages merged "
                         "into one"]


# --------------------------------------------------------------------------- errors

def test_missing_file_and_unknown_formats_raise_transcript_error(tmp_path):
    with pytest.raises(TranscriptError, match="no such file"):
        load(tmp_path / "nope.jsonl")
    (tmp_path / "x.json").write_text('{"hello": 1}')
    with pytest.raises(TranscriptError, match="unknown format"):
        load(tmp_path / "x.json")
    (tmp_path / "e.jsonl").write_text("")
    with pytest.raises(TranscriptError, match="no JSON lines"):
        load(tmp_path / "e.jsonl")
    (tmp_path / "o.jsonl").write_text(jsonl(other("progress", "p", None)))
    with pytest.raises(TranscriptError, match="no user/assistant"):
        load(tmp_path / "o.jsonl")
    with pytest.raises(ValueError, match="compaction"):
        parse_text("[]", compaction="sometimes")


def test_load_reads_a_file_and_records_its_path(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(jsonl(user("u1", None, "go")))
    t = load(path)
    assert t.path == path and t.messages == [{"role": "user", "content": [
        {"type": "text", "text": "go"}]}]


# --------------------------------------------------------------------------- property

STEP = st.sampled_from(["user", "call1", "call2", "result_ok", "result_orphan",
                        "result_dup", "empty_text", "assistant_text"])


@settings(max_examples=80, deadline=None)
@given(st.lists(STEP, max_size=25))
def test_any_damaged_chat_loads_into_a_valid_history(steps):
    chat, pending, n = [], [], 0
    for step in steps:
        n += 1
        if step == "user":
            chat.append({"role": "user", "content": f"u{n}"})
        elif step in ("call1", "call2"):
            ids = [f"c{n}_{k}" for k in range(1 if step == "call1" else 2)]
            chat.append({"role": "assistant", "content": "",
                         "tool_calls": [call(i, "ls") for i in ids]})
            pending = ids
        elif step == "result_ok" and pending:
            chat.append({"role": "tool", "tool_call_id": pending.pop(0), "content": "out"})
        elif step == "result_orphan":
            chat.append({"role": "tool", "tool_call_id": f"ghost{n}", "content": "?"})
        elif step == "result_dup":
            chat.append({"role": "tool", "tool_call_id": f"c{n - 1}_0", "content": "again"})
        elif step == "empty_text":
            chat.append({"role": "assistant", "content": "   "})
        else:
            chat.append({"role": "assistant", "content": f"a{n}"})
    if not chat:
        chat = [{"role": "user", "content": "hi"}]
    try:
        t = parse_text(json.dumps(chat), name="h.json")
    except TranscriptError as err:  # only a history with nothing left may fail
        assert "at least one message" in str(err)
        return
    validate_messages(t.messages)
    calls = sum(len(m.get("tool_calls") or []) for m in chat)
    uses = sum(1 for _, _, b in iter_blocks(t.messages) if b["type"] == "tool_use")
    assert uses == calls  # no tool call is ever lost
    assert len(t.usage) == sum(1 for m in t.messages if m["role"] == "assistant")


# --------------------------------------------------------------------------- real files

DATA = shared_data_dir(Path(__file__).parent)
REAL_FILES = sorted(p.relative_to(DATA).as_posix() for p in DATA.glob("*/*")) \
    if DATA.is_dir() else []


def _manifest(shared_data: Path) -> dict[str, dict]:
    return {e["file"]: e for e in json.loads((shared_data / "manifest.json").read_text())}


@pytest.mark.parametrize("name", REAL_FILES or ["(absent)"])
def test_every_real_file_loads_into_a_valid_history(shared_data, name):
    t = load(shared_data / name)
    validate_messages(t.messages)
    assistants = sum(1 for m in t.messages if m["role"] == "assistant")
    assert len(t.usage) == assistants > 0
    if t.source_format == "claude-code" or "deepseek" in name:
        assert all(u is not None for u in t.usage)
    entry = _manifest(shared_data)[name]
    if entry["kind"] == "cc":
        full = load(shared_data / name, compaction="full")
        stats = entry["stats"]
        uses = sum(1 for _, _, b in iter_blocks(full.messages) if b["type"] == "tool_use")
        results = [b for _, _, b in iter_blocks(full.messages) if b["type"] == "tool_result"]
        assert sum(1 for m in full.messages if m["role"] == "assistant") == \
            stats["assistant_api_messages"]
        assert uses == stats["tool_use"] and len(results) == stats["tool_result"]
        assert not any(b.get("content") == NO_RESULT_TEXT for b in results)
        assert full.info["compactions"] == stats["compactions"]


def test_real_compacted_session_restarts_at_the_summary(shared_data):
    t = load(shared_data / "claude-code/entire-opus45-commit-compacted.jsonl")
    assert t.repairs == ["line 71: compact_boundary: the history restarts at the compaction "
                         "summary; 31 earlier message entries are not loaded "
                         "(compaction='full' loads them)"]
    assert t.messages[0]["content"][0]["text"].startswith("This session is being continued")
    assert len(t.usage) == 31
    full = load(shared_data / "claude-code/entire-opus45-commit-compacted.jsonl",
                compaction="full")
    assert full.repairs[1] == ("line 1: parentUuid aab20a5a-677e-4ff5-a8a5-1cf8994a8b05 points "
                               "outside the file; the history starts here")


def test_real_parallel_tool_calls_and_blank_text(shared_data):
    t = load(shared_data / "claude-code/entire-opus46-git-status-debug.jsonl")
    assert t.repairs == ["dropped empty or whitespace-only text blocks: 5 at line 6, line 52, "
                         "line 65, line 171, line 185"]
    first = t.messages[1]["content"]
    assert [b["type"] for b in first] == ["thinking", "text", "tool_use", "tool_use",
                                          "tool_use"]
    assert t.usage[0]["cache_creation_input_tokens"] == 25795


def test_real_mini_swe_agent_usage_and_exit(shared_data):
    t = load(shared_data / "mini-swe-agent/deepseek-reasoner-sqlfluff-2419.traj.json")
    assert t.model == "deepseek-reasoner" and len(t.usage) == 55
    assert t.usage[0] == {"input_tokens": 1220, "cache_creation_input_tokens": 0,
                          "cache_read_input_tokens": 320, "output_tokens": 82}
    assert t.messages[1]["content"][0]["type"] == "thinking"
    assert t.info["exit"].startswith("diff --git")


# --------------------------------------------------------------------------- adversarial files

def test_utf8_bom_is_ignored_in_jsonl_and_json(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + jsonl(user("u1", None, "hi"),
                                            asst("a1", "u1", "m1", [{"type": "text",
                                                                     "text": "yo"}])).encode())
    t = load(path)
    assert (len(t.messages), t.repairs) == (2, [])
    path = tmp_path / "m.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps([{"role": "user", "content": "hi"}]).encode())
    assert load(path).messages == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


def test_deeply_nested_json_is_a_transcript_error_or_a_skipped_line():
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(TranscriptError, match="nested too deeply"):
        parse_text(deep, name="x.json")
    t = parse_text(jsonl(user("u1", None, "hi")) + deep + "\n", name="x.jsonl")
    assert t.repairs == ["line 2: JSON nested too deeply (200000 chars) ignored"]


def test_directory_is_named_as_a_directory(tmp_path):
    with pytest.raises(TranscriptError, match="is a directory"):
        load(tmp_path)


def test_malformed_tool_calls_are_dropped_and_reported():
    t = parse_text(json.dumps(mini_swe([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "a", "tool_calls": ["x", None]},
        {"role": "assistant", "content": "b", "tool_calls": [{"id": "c", "function": "bash"}]},
        {"role": "tool", "tool_call_id": "c", "content": "ok"}])), name="t.traj.json")
    validate_messages(t.messages)
    assert "messages[1]: tool_calls entries that are not objects dropped" in t.repairs
    assert t.messages[1]["content"][-1] == {"type": "tool_use", "id": "c", "name": "tool",
                                            "input": {}}


def test_tool_use_without_an_id_gets_one_and_an_unmatched_result():
    t = parse_text(json.dumps([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "name": "x", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": ["x"],
                                      "content": "r"}]}]), name="m.json")
    validate_messages(t.messages)
    assert t.messages[1]["content"] == [{"type": "tool_use", "id": "toolu_missing_0",
                                         "name": "x", "input": {}}]
    assert t.messages[2]["content"][0]["content"] == NO_RESULT_TEXT


def test_non_string_ids_models_and_usage_do_not_crash():
    t = parse_text(jsonl(user(["u1"], None, "hi"), user("u2", {"x": 1}, "again"),
                         asst("a1", "u2", ["m1"], [{"type": "text", "text": "yo"}],
                              model=["m"])), name="s.jsonl")
    validate_messages(t.messages)
    assert t.model is None
    assert "line 3: message.id not a string; treated as missing" in t.repairs
    t = parse_text(json.dumps({"messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "x", "usage": {"prompt_tokens": "10"},
         "extra": {"response": {"model": ["m"]}}}]}), name="m.json")
    assert (t.usage, t.model) == ([None], None)


def test_impossible_field_types_are_a_transcript_error():
    with pytest.raises(TranscriptError, match="malformed transcript"):
        parse_text(json.dumps([{"role": "user", "content": [{"type": ["text"]}]}]),
                   name="m.json")


def _parse_jsonl_line_by_line(text, repairs):
    """The JSONL reader without its fast path: ``json.loads`` on every non-blank line."""
    lines = text.split("\n")
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    entries = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            what = "truncated last line" if i == last else "line is not valid JSON"
            repairs.append(f"line {i + 1}: {what} ({len(line)} chars) ignored")
            continue
        if isinstance(entry, dict):
            entries.append((i + 1, entry))
        else:
            repairs.append(f"line {i + 1}: not a JSON object, ignored")
    return entries


_JSON_PARTS = st.sampled_from(['{', '}', '{"a": 1}', '"a"', ':', '1', ',', ' ', '[', ']', '"',
                               'null', '\r', '\t', '1e400', '-', '\\u005f', '"\\n"', '\n',
                               '{"k": [1, {"x": "y"}]}', '\ufeff', '\x0b', 'tru'])


@given(st.lists(_JSON_PARTS, max_size=16).map("".join))
@settings(max_examples=600, deadline=None)
def test_the_jsonl_reader_reads_what_json_loads_reads_line_by_line(text):
    from mini_agent.core.transcripts.claude_code import parse_jsonl
    fast, plain = [], []
    assert parse_jsonl(text, fast) == _parse_jsonl_line_by_line(text, plain)
    assert fast == plain


def test_a_copied_draft_is_replace_with_new_lists():
    import dataclasses

    from mini_agent.core.transcripts.drafts import MessageDraft
    values = {f.name: object() for f in dataclasses.fields(MessageDraft)}
    values.update(blocks=[{"type": "text", "text": "a"}], positions=[3, 4])
    draft = MessageDraft(**values)
    copy = draft.copied()
    assert copy == dataclasses.replace(draft, blocks=list(draft.blocks),
                                       positions=list(draft.positions))
    assert copy.blocks is not draft.blocks and copy.positions is not draft.positions
    assert copy.blocks[0] is draft.blocks[0]


@pytest.mark.parametrize("line", [
    # the last non-blank line is found once, not for every line that is not JSON: a corrupt
    # file of n lines (a truncated pretty-printed trajectory read as JSONL) costs O(n)
    "{bad",
    # each line opens a value the next one continues: a scan in place would read on to the
    # end of the file (or its nesting limit) from every line
    '{"k": [',
])
def test_many_bad_jsonl_lines_are_read_in_linear_time(line):
    small, big = "\n".join([line] * 1_000), "\n".join([line] * 8_000)
    started = time.perf_counter()
    parse_jsonl(small, [])
    t_small = time.perf_counter() - started
    started = time.perf_counter()
    parse_jsonl(big, [])
    t_big = time.perf_counter() - started
    assert t_big < 8 * 3 * max(t_small, 0.005)  # linear (8x the lines), with slack


def test_a_value_over_several_lines_is_bad_lines_as_json_loads_reads_them():
    # the in-place scan of the first line runs on past its newline and succeeds; the lines
    # still read one by one: two bad lines, then an entry
    text = '{"a": [1\n2]}\n{"b": 1}\n'
    repairs = []
    assert parse_jsonl(text, repairs) == _parse_jsonl_line_by_line(text, []) == [(3, {"b": 1})]
    assert repairs == ["line 1: line is not valid JSON (8 chars) ignored",
                       "line 2: line is not valid JSON (3 chars) ignored"]
