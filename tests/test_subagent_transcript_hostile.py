"""A subagent's own transcript under hostile main-session paths, and beside parallel siblings.

A ``transcript_path`` the subagent cannot log beside (a NUL byte in it, a file or a read-only
file system where its folder would go, no ``.jsonl`` suffix) leaves the subagent unlogged,
``agent_transcript_path`` None, and the run completes; subagents run in parallel for one main
session each log their own conversation to their own file.
"""

from __future__ import annotations

import json
import threading

import pytest

from mini_agent.harness.hooks import HookManager
from mini_agent.harness.session import resume_session
from mini_agent.harness.subagents import run_subagent
from mini_agent.offline import ScriptedBrain, offline_async_client


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    return tmp_path


def run(workspace, transcript_path, brain=None):
    seen: list[dict] = []
    hooks = HookManager()
    hooks.on("SubagentStop", lambda p: seen.append(p) or {})
    result = run_subagent("Summarise notes.txt.",
                          client=offline_async_client(brain or ScriptedBrain(["ok"])),
                          workspace=workspace, hooks=hooks,
                          hook_fields={"session_id": "s", "transcript_path": transcript_path})
    return result, [p["agent_transcript_path"] for p in seen]


@pytest.mark.parametrize("path", ["/tmp/main\x00.jsonl", "/proc/no-such.jsonl",
                                  "/dev/null/main.jsonl", "{ws}/main"])
def test_a_path_it_cannot_log_beside_leaves_the_subagent_unlogged(workspace, path):
    result, paths = run(workspace, path.format(ws=workspace))
    assert result.exit_status == "completed" and paths == [None]
    assert not (workspace / "main").exists()


def test_parallel_subagents_of_one_session_each_log_their_own_conversation(workspace):
    main = str(workspace / "sessions" / "m.jsonl")
    out: dict[int, tuple] = {}

    def worker(k: int) -> None:
        brain = ScriptedBrain([{"content": [{"type": "tool_use", "id": "toolu_01",
                                             "name": "read_file",
                                             "input": {"path": "notes.txt"}}],
                                "stop_reason": "tool_use"}, f"summary number {k}"])
        out[k] = run(workspace, main, brain)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    paths = {k: paths[0] for k, (_, paths) in out.items()}
    assert len(set(paths.values())) == 4
    for k, path in paths.items():
        assert path == str(workspace / "sessions" / "m" / "subagents"
                           / f"agent-{out[k][0].agent_id}.jsonl")
        entries, problems = resume_session(path)
        text = json.dumps(entries)
        assert problems == [] and len(entries) == 5
        assert [f"summary number {j}" in text for j in range(4)] == [j == k for j in range(4)]


def test_a_path_object_logs_as_a_str_and_the_hooks_get_a_str(workspace):
    """A ``Path`` is what a caller often holds: the subagent logs, its hooks see JSON strings."""
    seen: list[dict] = []
    hooks = HookManager()
    hooks.on("SubagentStop", lambda p: seen.append(p) or {})
    main = workspace / "sessions" / "s.jsonl"
    result = run_subagent("Summarise notes.txt.", client=offline_async_client(
        ScriptedBrain(["ok"])), workspace=workspace, hooks=hooks,
        hook_fields={"session_id": "s", "transcript_path": main})
    own = workspace / "sessions" / "s" / "subagents" / f"agent-{result.agent_id}.jsonl"
    assert seen[0]["transcript_path"] == str(main)
    assert seen[0]["agent_transcript_path"] == str(own) and own.is_file()
    json.dumps(seen[0])   # a command hook gets the payload as JSON
