"""Tests for mini_agent.harness.agent: full history vs view, hooks, write-ahead session, overflow, stats."""

import asyncio
import json

import pytest

from mini_agent.harness.agent import Agent, ContextOverflowError
from mini_agent.core.clock import ManualClock
from mini_agent.harness.hooks import HookManager
from mini_agent.harness.loop import LoopEnd
from mini_agent.core.masking import ThresholdMasking, mask_old_observations
from mini_agent.core.messages import MessageValidationError, validate_messages
from mini_agent.offline import ScriptedBrain, offline_async_client, offline_client
from mini_agent.core.session_entries import rebuild_history
from mini_agent.harness.session import SessionWriter, resume_session
from mini_agent.harness.tools import Tool
from mini_agent.core.view import full_view

BIG = "\n".join(f"line {i}: " + "x" * 60 for i in range(40))  # ~700 tokens per observation


def read_tool():
    return Tool("read_file", "read", {"type": "object"}, "read-only",
                lambda i: f"{i['path']}\n{BIG}")


def use(i, path):
    return {"type": "tool_use", "id": f"toolu_{i:02d}", "name": "read_file",
            "input": {"path": path}}


def reads(n):
    return ScriptedBrain([{"content": [{"type": "text", "text": f"Reading f{i}."}, use(i, f"f{i}")],
                           "stop_reason": "tool_use"} for i in range(n)], final_text="Read all.")


def make_agent(brain, **kwargs):
    client = kwargs.pop("client", None) or offline_async_client(
        brain, **kwargs.pop("transport", {}))
    return Agent(client, tools={"read_file": read_tool()}, clock=kwargs.pop("clock", ManualClock()),
                 **kwargs)


def test_full_history_is_kept_and_the_view_is_sent():
    agent = make_agent(reads(6), view_policy=ThresholdMasking(keep=2, threshold_tokens=500))
    result = agent.run("Read the files.")
    assert result.text == "Read all." and result.exit_status == "completed"
    assert len(agent.history) == len(agent.times) == 14
    assert all(b["content"].startswith("f") for m in agent.history[2::2] if m["role"] == "user"
               for b in m["content"] if b["type"] == "tool_result")
    sent = agent.client.offline_transport.requests[-1]["messages"]
    assert sent == mask_old_observations(agent.history[:-1], keep=2)
    assert [r["turn"] for r in agent.requests] == list(range(1, 8))
    last = agent.requests[-1]
    assert last["view_tokens"] < last["raw_tokens"] and last["stop_reason"] == "end_turn"
    assert last["usage"]["input_tokens"] > 0
    validate_messages(agent.history)


def test_stats_and_history_text():
    agent = make_agent(reads(5), view_policy=ThresholdMasking(keep=2, threshold_tokens=100))
    agent.run("go")
    stats = agent.stats()
    assert (stats["turns"], stats["messages"], stats["masked_count"]) == (6, 12, 3)
    assert stats["view_tokens"] < stats["raw_tokens"]
    assert agent.stats_line() == (f"turns: 6   messages: 12   raw: ~{stats['raw_tokens']} tok   "
                                  f"view: ~{stats['view_tokens']} tok   masked: 3")
    text = agent.history_text(limit_chars=300)
    assert text.startswith("[\n  {\n    \"role\": \"user\"") and "more characters]" in text
    assert len(agent.history_text(limit_chars=10**9)) == len(json.dumps(agent.history, indent=2,
                                                                        ensure_ascii=False))


def test_times_follow_the_clock():
    clock = ManualClock()
    agent = make_agent(reads(1), clock=clock, view_policy=full_view)
    agent.run("go")
    assert agent.times == [clock.now()] * 4
    clock.advance(60)
    agent.run("again")
    assert agent.times[-1] == agent.times[0] + 60 and len(agent.times) == len(agent.history)


def test_prepare_request_runs_before_validation():
    seen = []

    def mark(request):
        seen.append(len(request["messages"]))
        return {**request, "metadata": {"user_id": "u1"}}
    agent = make_agent(reads(1), prepare_request=[mark])
    agent.run("go")
    assert seen == [1, 3]
    assert agent.client.offline_transport.requests[0]["metadata"] == {"user_id": "u1"}

    def break_it(request):
        return {**request, "messages": request["messages"] + [{"role": "user", "content": "x"}]}
    bad = make_agent(reads(1), prepare_request=[break_it])
    with pytest.raises(MessageValidationError, match="alternate"):
        bad.run("go")
    assert bad.client.offline_transport.request_count == 0


def test_write_ahead_session(tmp_path):
    """The user message is on disk before the API sees the request; the log rebuilds the history."""
    path_holder = {}

    class Spy(ScriptedBrain):
        def respond(self, request):
            lines = path_holder["path"].read_text().splitlines()
            path_holder.setdefault("seen", []).append(len(lines))
            last = json.loads(lines[-1])
            assert last["type"] in ("message", "tool_result")
            return super().respond(request)
    brain = Spy(reads(2).responses, final_text="Done.")
    session = SessionWriter(tmp_path, "s1", clock=ManualClock())
    path_holder["path"] = session.path
    agent = make_agent(brain, session=session, view_policy=ThresholdMasking(keep=1,
                                                                            threshold_tokens=10))
    agent.run("Read two files.")
    entries, problems = resume_session(session.path)
    assert problems == []
    assert [e["type"] for e in entries] == ["meta", "message", "message", "tool_result",
                                           "message", "tool_result", "message"]
    assert (entries[0]["event"], entries[0]["model"]) == ("session_start", agent.model)
    assert path_holder["seen"] == [2, 4, 6]  # user prompt, then each tool result, all written first
    history, times, report = rebuild_history(entries)
    assert history == agent.history  # the FULL history, never the masked view
    assert "[observation masked" not in session.path.read_text()


def test_resume_continues_a_logged_session(tmp_path):
    agent = make_agent(reads(1), session=SessionWriter(tmp_path, "abc", clock=ManualClock()))
    agent.run("first")
    again = make_agent(ScriptedBrain([], final_text="Welcome back."))
    report = again.resume("abc", directory=tmp_path)
    assert again.history == agent.history and len(again.times) == len(agent.times)
    assert "clean" in str(report)
    assert again.run("second").text == "Welcome back."
    entries, _ = resume_session(tmp_path / "abc.jsonl")
    assert rebuild_history(entries)[0] == again.history
    with pytest.raises(FileNotFoundError):
        again.resume("nope", directory=tmp_path)


def test_hooks_around_the_run():
    calls = []
    hooks = HookManager()
    hooks.on("SessionStart", lambda p: calls.append(("start", p["source"])))
    hooks.on("UserPromptSubmit", lambda p: {"hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit", "additionalContext": "Today is Monday."}})
    hooks.on("PreToolUse", lambda p: calls.append(("pre", p["tool_name"])))
    hooks.on("PostToolUse", lambda p: calls.append(("post", p["tool_name"])))
    hooks.on("Stop", lambda p: calls.append(("stop", p["exit_status"])))
    agent = make_agent(reads(1), hooks=hooks)
    agent.run("go")
    agent.run("more")
    assert calls == [("start", "startup"), ("pre", "read_file"), ("post", "read_file"),
                     ("stop", "completed"), ("stop", "completed")]
    assert agent.history[0]["content"] == [{"type": "text", "text": "go"},
                                           {"type": "text", "text": "Today is Monday."}]


def test_hooks_get_session_id_and_cwd_and_their_messages_reach_the_user(tmp_path):
    import os

    from mini_agent.core.hook_output import HookNotice
    payloads = []
    hooks = HookManager()
    hooks.on("PreToolUse", lambda p: payloads.append(p) or {"systemMessage": "reading f0"})
    hooks.on("PostToolUse", lambda p: (_ for _ in ()).throw(RuntimeError("log disk full")))
    session = SessionWriter(tmp_path, "s9", clock=ManualClock())
    agent = make_agent(reads(1), hooks=hooks, session=session)
    result = agent.run("go")
    assert (payloads[0]["session_id"], payloads[0]["cwd"]) == ("s9", os.getcwd())
    notices = [e for e in result.events if isinstance(e, HookNotice)]
    assert [(n.event, n.system_message) for n in notices] == [("PreToolUse", "reading f0"),
                                                              ("PostToolUse", None)]
    assert "log disk full" in notices[1].errors[0]
    assert result.exit_status == "completed"  # a failing hook does not stop the run


def test_continue_false_stops_after_the_turn_with_a_valid_history():
    stops = []
    hooks = HookManager()
    hooks.on("PostToolUse", lambda p: {"continue": False, "stopReason": "budget spent"})
    hooks.on("Stop", lambda p: stops.append(p["exit_status"]))
    agent = make_agent(reads(3), hooks=hooks)
    result = agent.run("go")
    assert result.exit_status == "hook_stopped" and result.turns == 1
    assert agent.client.offline_transport.request_count == 1
    assert stops == ["hook_stopped"]
    validate_messages(agent.history)
    assert agent.history[-1]["content"][0]["type"] == "tool_result"


def test_a_blocked_prompt_sends_and_stores_nothing():
    hooks = HookManager()
    hooks.on("UserPromptSubmit", lambda p: {"decision": "block", "reason": "secrets"})
    agent = make_agent(reads(1), hooks=hooks)
    result = agent.run("my key is sk-ant-xyz")
    assert result.exit_status == "prompt_blocked"
    assert agent.history == [] and agent.client.offline_transport.request_count == 0


def test_context_overflow_retries_once_with_the_handler_view():
    calls = []

    def shrink(history, ctx):
        calls.append((len(history), len(ctx.times)))
        return mask_old_observations(history, keep=1)
    agent = make_agent(reads(4), view_policy=full_view, on_context_overflow=shrink,
                       transport={"context_window_tokens": 2_500})
    agent.run("go")
    assert calls and all(n == t for n, t in calls)
    assert any(r["overflow_retry"] for r in agent.requests)
    validate_messages(agent.history)


def test_context_overflow_without_recovery_raises_a_clear_error():
    agent = make_agent(reads(4), view_policy=full_view, transport={"context_window_tokens": 2_000})
    with pytest.raises(ContextOverflowError, match="no on_context_overflow") as info:
        agent.run("go")
    assert info.value.raw_tokens > 1_500 and "prompt is too long" in info.value.api_message
    hopeless = make_agent(reads(4), view_policy=full_view, on_context_overflow=lambda h, c: h,
                          transport={"context_window_tokens": 2_000})
    with pytest.raises(ContextOverflowError, match="after on_context_overflow"):
        hopeless.run("go")
    validate_messages(hopeless.history)


def test_run_works_inside_a_running_event_loop_and_arun_too():
    agent = make_agent(reads(1))

    async def notebook_cell():
        first = agent.run("sync inside a loop")  # as in Jupyter
        second = await agent.arun("async")
        return first, second
    first, second = asyncio.run(notebook_cell())
    assert first.text == second.text == "Read all."


def test_sync_client_and_on_request_and_on_event():
    records, events = [], []
    agent = make_agent(None, client=offline_client(reads(2)), on_request=records.append)
    result = agent.run("go", on_event=events.append)
    assert len(records) == 3 and records == agent.requests
    assert events[-1] == LoopEnd("completed", 3) and result.events == events


def test_empty_prompt_is_refused():
    with pytest.raises(ValueError, match="empty"):
        make_agent(reads(1)).run("  ")


def test_a_tool_that_calls_sys_exit_is_an_error_result_not_a_hang():
    def cli(_):
        raise SystemExit(2)           # a tool wrapping argparse on bad arguments

    reply = {"content": [{"type": "tool_use", "id": "toolu_1", "name": "cli", "input": {}},
                         {"type": "tool_use", "id": "toolu_2", "name": "ok", "input": {}}],
             "stop_reason": "tool_use"}
    tools = {"cli": Tool("cli", "c", {"type": "object"}, "read-only", cli),
             "ok": Tool("ok", "o", {"type": "object"}, "read-only", lambda _: "fine")}
    agent = Agent(offline_async_client(ScriptedBrain([reply, "Done."])), tools=tools)
    # through arun with a deadline: before the fix Agent.run waited forever on a dead loop
    result = asyncio.run(asyncio.wait_for(agent.arun("Go."), timeout=60))
    assert result.exit_status == "completed"
    answers = agent.history[2]["content"]
    assert [(a["tool_use_id"], a.get("is_error", False)) for a in answers] == [
        ("toolu_1", True), ("toolu_2", False)]
    assert answers[0]["content"] == ("cli exited with status 2 (SystemExit); nothing else is "
                                     "known of its work")
    validate_messages(agent.history)


def test_a_history_with_tool_calls_needs_tools_before_anything_is_sent(tmp_path):
    use = {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}
    first = Agent(offline_async_client(ScriptedBrain([
        {"content": [use], "stop_reason": "tool_use"}, "Done."])),
        tools={"read": Tool("read", "r", {"type": "object"}, "read-only", lambda _: "ok")},
        session=SessionWriter(tmp_path, "s1"))
    assert first.run("go").exit_status == "completed"
    bare = Agent(offline_async_client(ScriptedBrain(["Hi."])))        # built without tools
    bare.resume("s1", directory=tmp_path)
    with pytest.raises(MessageValidationError, match="must define tools") as info:
        bare.run("and now?")
    assert info.value.rule == "tools_required" and info.value.index == 1
    assert bare.client.offline_transport.requests == []              # refused before sending


def test_stats_after_resume_say_the_turns_count_from_the_resume(tmp_path):
    first = Agent(offline_async_client(ScriptedBrain(["One.", "Two."])),
                  session=SessionWriter(tmp_path, "s1"))
    first.run("a")
    first.run("b")
    assert first.stats_line().startswith("turns: 2   messages: 4 ")
    again = Agent(offline_async_client(ScriptedBrain(["Three."])))
    again.resume("s1", directory=tmp_path)
    assert again.stats_line().startswith("turns: 0 since resume   messages: 4 ")
    again.run("c")
    assert again.stats_line().startswith("turns: 1 since resume   messages: 6 ")


@pytest.mark.parametrize("context", ["   ", "\n\t", ""])
def test_whitespace_context_from_a_prompt_hook_is_not_sent(context):
    """A UserPromptSubmit hook whose additionalContext is only whitespace must not add a
    block the API refuses ("text content blocks must contain non-whitespace text"): that
    would fail this run and every later one, the block staying in the history."""
    hooks = HookManager()
    hooks.on("UserPromptSubmit", lambda p: {"hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit", "additionalContext": context}})
    agent = Agent(offline_client(ScriptedBrain(["fine", "again"])), tools={}, hooks=hooks)
    assert agent.run("hello").exit_status == "completed"
    assert agent.history[0] == {"role": "user", "content": [{"type": "text", "text": "hello"}]}
    assert agent.run("more").exit_status == "completed"
    validate_messages(agent.history + [{"role": "user", "content": "next"}])


def test_session_start_context_reaches_the_model_once():
    """SessionStart's additionalContext (a command hook's plain stdout, as in Claude Code)
    used to be dropped: only UserPromptSubmit's reached the model."""
    hooks = HookManager()
    hooks.on("SessionStart", lambda p: {"hookSpecificOutput": {
        "hookEventName": "SessionStart", "additionalContext": "branch: main"}})
    hooks.on("UserPromptSubmit", lambda p: {"hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit", "additionalContext": f"asked: {p['prompt']}"}})
    agent = Agent(offline_client(ScriptedBrain(["one", "two"])), tools={}, hooks=hooks)
    agent.run("hi")
    agent.run("again")
    assert [m["content"] for m in agent.history if m["role"] == "user"] == [
        [{"type": "text", "text": "hi"}, {"type": "text", "text": "branch: main"},
         {"type": "text", "text": "asked: hi"}],
        [{"type": "text", "text": "again"}, {"type": "text", "text": "asked: again"}]]


def test_lone_surrogates_in_a_reply_or_a_prompt_never_break_the_session_or_the_next_request(
        tmp_path):
    """A model's tool input may hold a JSON escape like "\\udcff" (a lone surrogate), a prompt
    may hold one (a non-UTF-8 file name pasted in). UTF-8 cannot carry them: the session line
    and the next request's JSON would fail to encode mid-turn. The session keeps them escaped;
    the history the kit sends shows U+FFFD in their place."""
    ran = []
    read = Tool("read", "d", {"type": "object"}, "read-only",
                lambda i: ran.append(i["path"]) or "read it")
    reply = {"content": [{"type": "text", "text": "look \ud83d"},
                         {"type": "tool_use", "id": "toolu_1", "name": "read",
                          "input": {"path": "a\udcff"}}], "stop_reason": "tool_use"}
    client = offline_client(ScriptedBrain([reply, "done", "again"]))
    agent = Agent(client, tools={"read": read}, session=SessionWriter(tmp_path, "s"))
    assert agent.run("hi").exit_status == "completed"
    assert ran == ["a\udcff"]   # the tool ran with the input as the model sent it
    assert agent.history[1]["content"] == [
        {"type": "text", "text": "look \ufffd"},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a\ufffd"}}]
    assert agent.run("and caf\udce9.txt?").exit_status == "completed"
    assert agent.history[4]["content"] == [{"type": "text", "text": "and caf\ufffd.txt?"}]
    sent = client.offline_transport.requests
    assert len(sent) == 3
    entries, problems = resume_session(tmp_path / "s.jsonl")
    assert problems == []
    assert rebuild_history(entries)[0] == agent.history
