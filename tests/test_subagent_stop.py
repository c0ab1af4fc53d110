"""A subagent's end fires SubagentStop with Claude Code's fields; a block sends it on, capped."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from mini_agent.harness.hooks import HookManager
from mini_agent.harness.stop_hook import STOP_FEEDBACK_PREFIX
from mini_agent.harness.subagent_hooks import DEFAULT_AGENT_TYPE, SubagentHooks
from mini_agent.harness.subagents import run_subagent, subagent_tool
from mini_agent.offline import ScriptedBrain, offline_async_client

PY = sys.executable


def reading(i: int, path: str) -> dict:
    return {"content": [{"type": "tool_use", "id": f"toolu_{i:02d}", "name": "read_file",
                         "input": {"path": path}}], "stop_reason": "tool_use"}


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    return tmp_path


def subagent(workspace, brain, hooks, **options):
    return run_subagent("Summarise notes.txt.", client=offline_async_client(brain),
                        workspace=workspace, hooks=hooks, **options)


def test_a_block_sends_the_subagent_on_and_the_payload_has_claude_codes_fields(workspace):
    payloads: list[dict] = []
    main_stops: list[dict] = []
    hooks = HookManager()
    hooks.on("SubagentStop", lambda p: payloads.append(p) or (
        {} if p["stop_hook_active"] else {"decision": "block", "reason": "name the file"}))
    hooks.on("Stop", main_stops.append)
    brain = ScriptedBrain(["Two lines.", "notes.txt has two lines: alpha, beta."])
    main_log = str(workspace / "sessions" / "s-main.jsonl")
    result = subagent(workspace, brain, hooks,
                      hook_fields={"session_id": "s-main", "transcript_path": main_log})
    assert result.exit_status == "completed" and result.turns == 2
    assert result.summary == "notes.txt has two lines: alpha, beta."
    assert main_stops == []   # a subagent fires SubagentStop, never Stop
    first, second = payloads
    assert set(first) >= {"hook_event_name", "session_id", "transcript_path", "cwd",
                          "stop_hook_active", "last_assistant_message", "agent_id",
                          "agent_type", "agent_transcript_path"}
    assert (first["hook_event_name"], first["session_id"], first["transcript_path"]) == (
        "SubagentStop", "s-main", main_log)
    own_log = workspace / "sessions" / "s-main" / "subagents" / f"agent-{result.agent_id}.jsonl"
    assert (first["agent_type"], first["agent_transcript_path"]) == (DEFAULT_AGENT_TYPE,
                                                                     str(own_log))
    assert [p["stop_hook_active"] for p in payloads] == [False, True]
    assert [p["last_assistant_message"] for p in payloads] == [
        "Two lines.", "notes.txt has two lines: alpha, beta."]
    assert first["agent_id"] == second["agent_id"] == result.agent_id
    assert len(result.agent_id) == 16 and int(result.agent_id, 16) >= 0
    assert result.history[2] == {"role": "user", "content": [
        {"type": "text", "text": STOP_FEEDBACK_PREFIX + "name the file"}]}


def test_a_hook_that_always_blocks_ends_the_subagent_at_the_cap(workspace):
    hooks = HookManager()
    hooks.on("SubagentStop", lambda p: {"decision": "block", "reason": "more"})
    result = subagent(workspace, ScriptedBrain([], final_text="Done."), hooks,
                      max_stop_hook_blocks=2)
    assert (result.exit_status, result.turns) == ("stop_hook_limit", 3)
    feedback = [m for m in result.history if m["role"] == "user"][1:]
    assert [m["content"][0]["text"] for m in feedback] == [STOP_FEEDBACK_PREFIX + "more"] * 2


def test_the_matcher_is_the_agent_type(workspace):
    seen: list[str] = []
    hooks = HookManager()
    hooks.on("SubagentStop", lambda p: seen.append("explore") or {}, matcher="Explore")
    hooks.on("SubagentStop", lambda p: seen.append("any") or {}, matcher="general-.*")
    subagent(workspace, ScriptedBrain(["ok"]), hooks)
    subagent(workspace, ScriptedBrain(["ok"]), hooks, agent_type="Explore")
    assert seen == ["any", "explore"]


def test_a_command_hook_from_settings_blocks_with_exit_code_2(workspace, tmp_path):
    log = tmp_path / "payload.json"
    script = tmp_path / "hook.py"
    script.write_text(
        "import json, sys\n"
        f"p = json.load(sys.stdin); open({str(log)!r}, 'a').write(json.dumps(p) + '\\n')\n"
        "if not p['stop_hook_active']:\n"
        "    print('cite line numbers', file=sys.stderr); sys.exit(2)\n")
    hooks = HookManager.from_settings({"hooks": {"SubagentStop": [
        {"matcher": "general-purpose", "hooks": [{"type": "command",
                                                 "command": f'"{PY}" "{script}"'}]}]}})
    assert hooks.warnings == []
    result = subagent(workspace, ScriptedBrain(["alpha, beta", "line 1 alpha, line 2 beta"]),
                      hooks)
    assert result.exit_status == "completed" and result.summary == "line 1 alpha, line 2 beta"
    assert result.history[2]["content"][0]["text"] == STOP_FEEDBACK_PREFIX + "cite line numbers"
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(p["hook_event_name"], p["stop_hook_active"]) for p in seen] == [
        ("SubagentStop", False), ("SubagentStop", True)]


def test_tool_hooks_guard_the_subagent_and_prompt_hooks_do_not_fire(workspace):
    fired: list[str] = []
    hooks = HookManager()
    hooks.on("PreToolUse", lambda p: fired.append(f"pre {p['agent_type']}") or {
        "decision": "block", "reason": "no reading"})
    hooks.on("UserPromptSubmit", lambda p: fired.append("prompt") or {"decision": "block"})
    hooks.on("SessionStart", lambda p: fired.append("start") or {})
    result = subagent(workspace, ScriptedBrain([reading(1, "notes.txt"), "could not read"]),
                      hooks)
    assert fired == [f"pre {DEFAULT_AGENT_TYPE}"]
    answer = result.history[2]["content"][0]
    assert (answer["is_error"], answer["content"]) == (True, "Blocked by hook: no reading")
    assert result.exit_status == "completed"


def test_without_hooks_nothing_changes(workspace):
    result = subagent(workspace, ScriptedBrain(["ok"]), None)
    assert (result.exit_status, result.agent_id, result.summary) == ("completed", "", "ok")


def test_the_subagent_tool_passes_the_hooks_on(workspace):
    stops: list[dict] = []
    hooks = HookManager()
    hooks.on("SubagentStop", lambda p: stops.append(p) or {})
    tool = subagent_tool(client=offline_async_client(ScriptedBrain(["found it"])),
                         workspace=workspace, hooks=hooks, agent_type="Explore")
    assert tool.run({"brief": "find it"}).startswith("found it")
    assert [p["agent_type"] for p in stops] == ["Explore"]


def test_the_wrapper_answers_prompt_events_empty_and_keeps_the_main_session_id():
    calls: list[tuple[str, dict]] = []

    class Recorder:
        async def fire(self, event, payload):
            calls.append((event, payload))
            return "answer"
    wrapper = SubagentHooks(Recorder(), agent_id="abc", agent_type="Explore",
                            fields={"session_id": "main"})
    assert asyncio.run(wrapper.fire("UserPromptSubmit", {"prompt": "x"})) == {}
    assert asyncio.run(wrapper.fire("Stop", {"session_id": None, "stop_hook_active": True})) \
        == "answer"
    assert calls == [("SubagentStop", {"session_id": "main", "stop_hook_active": True,
                                       "transcript_path": None, "agent_id": "abc",
                                       "agent_type": "Explore",
                                       "agent_transcript_path": None})]


def test_the_subagents_own_transcript_is_a_session_file_the_kit_can_resume(workspace):
    """agent_transcript_path names a real file: the subagent's whole conversation, in order."""
    from mini_agent.core.session_entries import rebuild_history
    from mini_agent.harness.session import resume_session
    seen: list[dict] = []
    hooks = HookManager()
    hooks.on("SubagentStop", lambda p: seen.append(p) or {})
    brain = ScriptedBrain([reading(1, "notes.txt"), "notes.txt: alpha, beta."])
    main_log = workspace / "sessions" / "s-main.jsonl"
    result = subagent(workspace, brain, hooks, hook_fields={"session_id": "s-main",
                                                            "transcript_path": str(main_log)})
    path = seen[0]["agent_transcript_path"]
    assert path == str(main_log.parent / "s-main" / "subagents" / f"agent-{result.agent_id}.jsonl")
    entries, problems = resume_session(path)
    assert problems == [] and entries[0]["event"] == "session_start"
    assert rebuild_history(entries)[0] == result.history and len(result.history) == 4
    assert not main_log.exists()   # the main session's file is the main agent's to write


def test_without_a_main_transcript_or_a_folder_for_it_the_path_is_none(workspace):
    seen: list[dict] = []
    hooks = HookManager()
    hooks.on("SubagentStop", lambda p: seen.append(p) or {})
    (workspace / "blocker").write_text("a file where the folder would go")
    for fields in ({}, {"transcript_path": str(workspace / "blocker" / "s.jsonl")}):
        result = subagent(workspace, ScriptedBrain(["ok"]), hooks, hook_fields=fields)
        assert result.exit_status == "completed"
    assert [p["agent_transcript_path"] for p in seen] == [None, None]
