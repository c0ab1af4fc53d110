"""Graded checks for exercise 06 (hooks); ``impl`` is the module under test.

Each check targets one typical mistake: running handlers concurrently (``asyncio.gather``),
letting later handlers run or merging outputs after a block, earlier-wins merging, forgetting
to await async handlers, mutating the caller's payload, a too-greedy ``rm -rf`` pattern.
"""

from __future__ import annotations

import asyncio

from mini_agent.grading import check


def fire(manager, event: str, payload: dict) -> dict:
    return asyncio.run(manager.fire(event, payload))


@check(points=2, hint="Await each handler before calling the next one; asyncio.gather runs "
                      "them at the same time, so a slow first handler finishes after a fast one.")
def check_handlers_run_serially_in_order(impl):
    log: list[str] = []
    m = impl.HookManager()

    async def slow(payload):
        log.append("slow start")
        await asyncio.sleep(0.01)
        log.append("slow end")
        return {}

    async def fast(payload):
        log.append("fast")
        return {}
    m.on("Stop", slow)
    m.on("Stop", fast)
    fire(m, "Stop", {})
    assert log == ["slow start", "slow end", "fast"], f"call order was {log}"


@check(points=2, hint="Return the blocking output as soon as you see it: no later handler runs.")
def check_first_block_returns_at_once(impl):
    calls: list[str] = []
    m = impl.HookManager()
    m.on("PreToolUse", lambda p: calls.append("first") or {"decision": "block", "reason": "no"})
    m.on("PreToolUse", lambda p: calls.append("second") or {"decision": "block", "reason": "late"})
    result = fire(m, "PreToolUse", {"tool_name": "run_bash", "tool_input": {}})
    assert calls == ["first"], f"handlers called: {calls}"
    assert result == {"decision": "block", "reason": "no"}, f"got {result}"


@check(points=2, hint="A block is returned as it is: do not merge earlier or later outputs "
                      "into it.")
def check_no_merging_around_a_block(impl):
    m = impl.HookManager()
    m.on("PreToolUse", lambda p: {"systemMessage": "looked fine", "additionalContext": "x"})
    m.on("PreToolUse", lambda p: {"decision": "block", "reason": "dangerous"})
    m.on("PreToolUse", lambda p: {"systemMessage": "after"})
    result = fire(m, "PreToolUse", {"tool_name": "run_bash", "tool_input": {}})
    assert result == {"decision": "block", "reason": "dangerous"}, f"got {result}"


@check(points=2, hint="Merge with {**merged, **output}: the later handler's value wins, keys "
                      "only in earlier outputs stay.")
def check_merge_later_wins(impl):
    m = impl.HookManager()
    m.on("UserPromptSubmit", lambda p: {"systemMessage": "a", "additionalContext": "ctx"})
    m.on("UserPromptSubmit", lambda p: {"systemMessage": "b"})
    m.on("UserPromptSubmit", lambda p: None)
    result = fire(m, "UserPromptSubmit", {"prompt": "hi"})
    assert result == {"systemMessage": "b", "additionalContext": "ctx"}, f"got {result}"


@check(points=1, hint="Call the handler, and if what it returned is awaitable, await it.")
def check_sync_and_async_handlers(impl):
    m = impl.HookManager()

    async def async_handler(payload):
        return {"additionalContext": "from async"}
    m.on("SessionStart", lambda p: {"systemMessage": "from sync"})
    m.on("SessionStart", async_handler)
    assert fire(m, "SessionStart", {}) == {"systemMessage": "from sync",
                                           "additionalContext": "from async"}
    assert fire(m, "Stop", {}) == {}, "an event with no handlers returns {}"


@check(points=2, hint="For PreToolUse, give the next handler a NEW payload dict whose "
                      "tool_input is the updatedInput; leave the caller's payload alone.")
def check_updated_input_reaches_the_next_handler(impl):
    seen: list[dict] = []
    m = impl.HookManager()
    m.on("PreToolUse", lambda p: {"updatedInput": {"command": "ls -la"}})
    m.on("PreToolUse", lambda p: seen.append(p["tool_input"]) or {})
    payload = {"tool_name": "run_bash", "tool_input": {"command": "ls"}}
    result = fire(m, "PreToolUse", payload)
    assert seen == [{"command": "ls -la"}], f"second handler saw {seen}"
    assert result == {"updatedInput": {"command": "ls -la"}}
    assert payload == {"tool_name": "run_bash", "tool_input": {"command": "ls"}}, \
        "the caller's payload was mutated"


@check(points=2, hint="Match rm, -rf or -fr, then / followed by the end, a space or *; only "
                      "for run_bash/Bash.")
def check_block_rm_rf(impl):
    def decide(tool, command):
        return impl.block_rm_rf({"tool_name": tool, "tool_input": {"command": command}})
    for command in ("rm -rf /", "rm  -fr   /", "sudo rm -rf / --no-preserve-root", "rm -rf /*"):
        out = decide("run_bash", command)
        assert out.get("decision") == "block" and out.get("reason"), f"{command!r}: {out}"
    assert decide("Bash", "rm -rf /").get("decision") == "block"
    for command in ("rm -rf /tmp/build", "rm -rf ./out", "ls /", "rm -r notes"):
        assert decide("run_bash", command) == {}, f"{command!r} should be allowed"
    assert decide("read_file", "rm -rf /") == {}, "only shell tools run commands"
