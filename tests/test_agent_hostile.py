"""Hostile and careless use of the Agent: each case has a named behaviour, the history stays valid.

* An ``on_event`` callback that raises (or a Ctrl-C / cancellation while an async callback
  runs) ends the run at once, settled: the loop is closed before the error reaches the
  caller, every tool_use is answered in the history and the session, and the next run's
  request satisfies the API's rules.
* A second cancellation while an interrupted run settles waits for the settling.
* A second run at once, or ``run`` from the Agent's own callback, is refused (RuntimeError).
* A hook handler that raises SystemExit / KeyboardInterrupt gives no answer (fail closed in
  PreToolUse); one that mutates its payload changes nothing.
* MINI_AGENT_MODEL naming a retired or unknown model: one CLI line naming the variable.
"""

from __future__ import annotations

import asyncio

import pytest

from mini_agent.core.messages import validate_messages
from mini_agent.core.session_entries import rebuild_history
from mini_agent.harness.agent import Agent
from mini_agent.harness.executor import INTERRUPTED_TEXT
from mini_agent.harness.session import SessionWriter, resume_session
from mini_agent.harness.tools import Tool
from mini_agent.offline import ScriptedBrain, offline_async_client


def use(i: int) -> dict:
    return {"type": "tool_use", "id": f"toolu_{i:02d}", "name": "r", "input": {"x": i}}


REPLY = {"content": [{"type": "text", "text": "Two reads."}, use(1), use(2)],
         "stop_reason": "tool_use"}


def read_tool(ran: list) -> dict[str, Tool]:
    return {"r": Tool("r", "reads", {"type": "object", "properties": {}}, "read-only",
                      lambda i: ran.append(i["x"]) or f"read {i['x']}", latency_seconds=0.05)}


class CallbackBug(Exception):
    """What a careless ``on_event`` raises."""


def shape(history: list[dict]) -> list[tuple[str, list[str]]]:
    return [(m["role"], [b["type"] for b in m["content"]]) for m in history]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_callback_that_raises_leaves_the_run_settled_before_the_error_arrives(tmp_path, mode):
    ran: list[int] = []
    writer = SessionWriter(tmp_path)
    agent = Agent(offline_async_client(ScriptedBrain([REPLY, "Done."])), tools=read_tool(ran),
                  session=writer)

    def sync_bug(event):
        if type(event).__name__ == "ToolUseReady":
            raise CallbackBug("a bug in the caller's callback")

    async def async_bug(event):
        sync_bug(event)

    async def main():
        with pytest.raises(CallbackBug):
            await agent.arun("go", on_event=sync_bug if mode == "sync" else async_bug)
        # settled at once: the tool_use that arrived is stored and answered
        assert shape(agent.history) == [("user", ["text"]), ("assistant", ["text", "tool_use"]),
                                        ("user", ["tool_result"])]
        answer = agent.history[2]["content"][0]
        assert answer["tool_use_id"] == "toolu_01"
        assert answer["content"] in ("read 1", INTERRUPTED_TEXT)
        validate_messages(agent.history)
        logged, _ = rebuild_history(resume_session(writer.path)[0])[:2]
        assert logged == agent.history   # the session holds the same settled history
        result = await agent.arun("go on")
        assert result.exit_status == "completed"
        validate_messages(agent.history)
    asyncio.run(main())
    assert ran in ([], [1])   # toolu_02 never ran: it arrived after the callback broke


def test_a_cancel_while_an_async_callback_awaits_settles_the_run(tmp_path):
    agent = Agent(offline_async_client(ScriptedBrain([REPLY, "Done."])), tools=read_tool([]))

    async def slow_callback(event):
        if type(event).__name__ == "ToolUseReady":
            await asyncio.sleep(10)

    async def main():
        task = asyncio.ensure_future(agent.arun("go", on_event=slow_callback))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        validate_messages(agent.history)
        assert shape(agent.history)[-1] == ("user", ["tool_result"])
        assert (await agent.arun("go on")).exit_status == "completed"
    asyncio.run(main())


@pytest.mark.parametrize("model, why", [("claude-sonnet-4-5", "retired"),
                                        ("claude-nonsense-9", "not a model the kit knows")])
def test_the_cli_names_an_unserved_model_and_the_variable_that_chose_it(
        model, why, tmp_path, monkeypatch, capsys):
    import io
    from mini_agent import cli
    monkeypatch.setenv("MINI_AGENT_MODEL", model)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert cli.main(["demo", "--workspace", str(tmp_path)], out=io.StringIO()) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err == (f"mini-agent: the offline API does not serve the model {model} ({why}; "
                   f"404 not_found_error: model: {model}); set MINI_AGENT_MODEL to a served "
                   "model or unset it to use the default, claude-sonnet-5-5\n")


def tool_use_reply(name: str = "r") -> dict:
    return {"content": [{"type": "tool_use", "id": "toolu_01", "name": name, "input": {"x": 1}}],
            "stop_reason": "tool_use"}


def _exits(code):
    def handler(payload):
        raise SystemExit(code)   # "exit 2 blocks", copied from the command hooks
    return handler


def _interrupts(payload):
    raise KeyboardInterrupt


async def _async_exits(payload):
    raise SystemExit(2)


@pytest.mark.parametrize("handler, raised", [(_exits(2), "SystemExit(2)"),
                                             (_interrupts, "KeyboardInterrupt()"),
                                             (_async_exits, "SystemExit(2)")])
def test_a_hook_handler_that_exits_blocks_its_tool_call_and_the_run_goes_on(handler, raised):
    from mini_agent.harness.hooks import HookManager
    ran: list[int] = []
    hooks = HookManager()
    hooks.on("PreToolUse", handler, timeout_seconds=5)
    agent = Agent(offline_async_client(ScriptedBrain([tool_use_reply(), "Done."])),
                  tools=read_tool(ran), hooks=hooks)
    result = agent.run("go")   # before: the agent's event-loop thread died and this hung
    assert result.exit_status == "completed" and ran == []
    answer = agent.history[2]["content"][0]
    assert answer["is_error"] is True
    assert answer["content"].startswith(
        f"Blocked by hook: PreToolUse hook {handler.__name__} raised {raised} instead of "
        "returning an answer")
    assert answer["content"].endswith("blocked to be safe (fail closed)")
    validate_messages(agent.history)


def test_a_post_tool_use_handler_that_exits_is_a_reported_error():
    from mini_agent.harness.hooks import HookManager
    hooks = HookManager()
    hooks.on("PostToolUse", _exits(1))
    result = asyncio.run(hooks.fire("PostToolUse", {"tool_name": "r", "tool_input": {}}))
    assert not result.blocked
    assert result.errors == ["PostToolUse hook handler raised SystemExit(1) instead of "
                             "returning an answer (return {\"decision\": \"block\", "
                             "\"reason\": ...} to block); ignored"]


@pytest.mark.parametrize("event", ["PreToolUse", "PostToolUse"])
def test_a_hook_that_mutates_its_payload_changes_nothing_the_tool_runs_or_the_history_says(event):
    from mini_agent.harness.hooks import HookManager
    ran: list[dict] = []
    tools = {"r": Tool("r", "reads", {"type": "object", "properties": {}}, "read-only",
                       lambda i: ran.append(dict(i)) or "read")}
    hooks = HookManager()

    def meddle(payload):
        payload["tool_input"]["x"] = "rm -rf /"        # in place: not the updatedInput contract
        payload.get("tool_response", {}).clear() if isinstance(
            payload.get("tool_response"), dict) else None
        payload["tool_name"] = "other"
    later: list[dict] = []
    hooks.on(event, meddle)
    hooks.on(event, lambda p: later.append(p) or {})
    agent = Agent(offline_async_client(ScriptedBrain([tool_use_reply(), "Done."])), tools=tools,
                  hooks=hooks)
    agent.run("go")
    assert ran == [{"x": 1}]
    assert agent.history[1]["content"][0]["input"] == {"x": 1}
    assert later[0]["tool_input"] == {"x": 1} and later[0]["tool_name"] == "r"
    validate_messages(agent.history)


def test_a_second_cancel_while_the_run_settles_still_leaves_a_valid_history(tmp_path):
    import time
    effects: list[str] = []

    def slow(_input):
        time.sleep(0.4)
        effects.append("slow")
        return "slow done"
    tools = {"s": Tool("s", "slow read", {"type": "object", "properties": {}}, "read-only", slow),
             "w": Tool("w", "write", {"type": "object", "properties": {}}, "write",
                       lambda i: effects.append("w") or "written")}
    reply = {"content": [{"type": "tool_use", "id": "toolu_01", "name": "s", "input": {}},
                         {"type": "tool_use", "id": "toolu_02", "name": "w", "input": {}}],
             "stop_reason": "tool_use"}
    writer = SessionWriter(tmp_path)
    agent = Agent(offline_async_client(ScriptedBrain([reply, "Done."])), tools=tools,
                  session=writer)
    started = asyncio.Event()

    async def main():
        task = asyncio.ensure_future(agent.arun(
            "go", on_event=lambda e: type(e).__name__ == "MessageAppended" and len(
                agent.history) == 2 and started.set()))
        await started.wait()
        await asyncio.sleep(0.05)
        task.cancel()          # the slow read runs: the run settles (waits for it)
        await asyncio.sleep(0.05)
        task.cancel()          # impatient: a second cancel while it settles
        with pytest.raises(asyncio.CancelledError):
            await task
        assert shape(agent.history) == [("user", ["text"]), ("assistant", ["tool_use", "tool_use"]),
                                        ("user", ["tool_result", "tool_result"])]
        first, second = agent.history[2]["content"]
        assert first["content"] == "slow done"   # the running read finished and is kept
        assert second["is_error"] and second["content"] == INTERRUPTED_TEXT
        validate_messages(agent.history)
        logged = rebuild_history(resume_session(writer.path)[0])[0]
        assert logged == agent.history
        assert (await agent.arun("go on")).exit_status == "completed"
    asyncio.run(main())
    assert effects == ["slow"]   # the queued write never ran


ONE_CALL = {"content": [{"type": "tool_use", "id": "toolu_01", "name": "r", "input": {"x": 1}}],
            "stop_reason": "tool_use"}
BUSY = "this agent is running a prompt already"


def test_a_second_concurrent_run_is_refused_and_the_first_one_is_untouched():
    agent = Agent(offline_async_client(ScriptedBrain([ONE_CALL, "Done."])), tools=read_tool([]))

    async def main():
        return await asyncio.gather(agent.arun("one"), agent.arun("two"),
                                    return_exceptions=True)
    first, second = asyncio.run(main())
    assert first.exit_status == "completed"
    assert isinstance(second, RuntimeError) and str(second).startswith(BUSY)
    assert shape(agent.history) == [("user", ["text"]), ("assistant", ["tool_use"]),
                                    ("user", ["tool_result"]), ("assistant", ["text"])]
    assert agent.history[0]["content"][0]["text"] == "one"
    validate_messages(agent.history)
    assert agent.run("three").exit_status == "completed"   # the agent is free again


def test_run_called_from_inside_a_callback_raises_instead_of_hanging():
    agent = Agent(offline_async_client(ScriptedBrain(["Hi."])))
    errors: list[BaseException] = []

    def nested(event):
        if type(event).__name__ == "LoopEnd":
            try:
                agent.run("again")   # before: the agent's own loop thread waited on itself
            except RuntimeError as exc:
                errors.append(exc)
    assert agent.run("go", on_event=nested).exit_status == "completed"
    assert len(errors) == 1 and str(errors[0]).startswith(BUSY)
    assert len(agent.history) == 2
