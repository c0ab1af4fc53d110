"""Graded checks for exercise 06 (hooks); ``impl`` is the module under test.

The same checks run against the package (``from mini_agent import ...``). Typical mistakes
caught: running handlers concurrently (``asyncio.gather``) or in reverse order; letting later
handlers run, or merging outputs, after a block; treating any ``"decision"`` (``approve``) as a
block, or a block as a block only for PreToolUse; earlier-wins merging; forgetting ``None``
outputs; deciding whether to await from the handler (``iscoroutinefunction``) instead of from
what it returned; mutating the caller's payload or a handler's output dict; passing an
``updatedInput`` only to the very next handler; a ``rm -rf`` pattern that is a plain substring,
misses ``-fr``, tabs, ``sudo`` or ``/*``, blocks ``/tmp/x``, or ignores the tool name.

Source: exercise 06 (``solutions/06_hooks.py``) and its seed, ``HookManager.fire`` in
section 5 of 002_4516104fd432e704.txt (handlers in order, later outputs win, a block stops
the rest; the ``rm -rf`` guard of its usage example).
"""

from __future__ import annotations

import asyncio
import copy

from mini_agent.grading import check
from mini_agent.grading.checks._report import InputChanged


def fire(manager, event: str, payload: dict) -> dict:
    """Run ``manager.fire(event, payload)`` to its end; an exception names the event and payload.

    Args:
        manager: the HookManager under test.
        event: the hook event ("PreToolUse", "Stop"...).
        payload: the event's payload dict.

    Returns:
        The merged output ``fire`` returned.

    Raises:
        AssertionError: ``fire`` raised (other than NotImplementedError, which propagates).
    """
    try:
        return asyncio.run(manager.fire(event, payload))
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - shown with the input that raised it
        raise AssertionError(f"fire({event!r}, {payload}): expected the merged output, got "
                             f"{type(exc).__name__}: {exc}") from exc


def manager(impl, event: str, *handlers):
    """Build a HookManager with handlers registered for one event, in order.

    Args:
        impl: the implementation under test.
        event: the hook event they are registered on.
        handlers: the handlers, in registration order.

    Returns:
        The manager.
    """
    m = impl.HookManager()
    for handler in handlers:
        m.on(event, handler)
    return m


@check(points=2, hint="Await each handler before calling the next one; asyncio.gather runs "
                      "them at the same time, so a slow first handler finishes after a fast one.")
def check_handlers_run_serially_in_order(impl):
    log: list[str] = []

    async def slow(payload):
        log.append("slow start")
        await asyncio.sleep(0.01)
        log.append("slow end")
        return {}

    async def fast(payload):
        log.append("fast")
        return {}

    def plain(payload):
        log.append("plain")
    fire(manager(impl, "Stop", slow, fast, plain), "Stop", {})
    expected = ["slow start", "slow end", "fast", "plain"]
    assert log == expected, f"handlers slow, fast, plain: expected calls {expected}, got {log}"


@check(points=2, hint="Return the blocking output as soon as you see it: no later handler "
                      "runs, and nothing else is merged into it.")
def check_first_block_returns_at_once(impl):
    calls: list[str] = []
    m = manager(impl, "PreToolUse",
                lambda p: calls.append("first") or {"systemMessage": "looked fine",
                                                    "additionalContext": "x"},
                lambda p: calls.append("second") or {"decision": "block", "reason": "no"},
                lambda p: calls.append("third") or {"decision": "block", "reason": "late"})
    result = fire(m, "PreToolUse", {"tool_name": "run_bash", "tool_input": {}})
    assert calls == ["first", "second"], \
        f"outputs [message, block 'no', block 'late']: expected calls [first, second], got {calls}"
    assert result == {"decision": "block", "reason": "no"}, \
        (f"outputs [message, block 'no', block 'late']: expected the block as it is "
         f"{{'decision': 'block', 'reason': 'no'}}, got {dict(result)}")


@check(points=1, hint="A block is a block for every event, and only 'block' is one: "
                      "'approve' is merged like any other output.")
def check_which_outputs_block(impl):
    for event, payload in (("UserPromptSubmit", {"prompt": "deploy"}), ("Stop", {})):
        calls: list[str] = []
        m = manager(impl, event, lambda p: calls.append("a") or {"decision": "block",
                                                                 "reason": "not now"},
                    lambda p: calls.append("b") or {"systemMessage": "b"})
        result = fire(m, event, payload)
        assert result == {"decision": "block", "reason": "not now"} and calls == ["a"], \
            f"{event}: block then message: expected the block alone, got {result} (calls {calls})"
    m = manager(impl, "PreToolUse", lambda p: {"decision": "approve", "reason": "safe"},
                lambda p: {"systemMessage": "checked"})
    result = fire(m, "PreToolUse", {"tool_name": "read_file", "tool_input": {"path": "a"}})
    assert result.get("decision") != "block" and result.get("systemMessage") == "checked", \
        ("approve then message: expected no block and the message merged "
         f"({{'decision': 'approve', 'reason': 'safe', 'systemMessage': 'checked'}}), got {result}")


@check(points=2, hint="Merge key by key into a new dict: a later handler's value wins, keys "
                      "only in earlier outputs stay, a None output adds nothing.")
def check_merge_later_wins(impl):
    first = {"systemMessage": "a", "additionalContext": "ctx"}
    second = {"systemMessage": "b"}
    m = manager(impl, "UserPromptSubmit", lambda p: first, lambda p: None, lambda p: second)
    result = fire(m, "UserPromptSubmit", {"prompt": "hi"})
    expected = {"systemMessage": "b", "additionalContext": "ctx"}
    assert result == expected, \
        f"outputs [{first}, None, {second}]: expected {expected}, got {result}"
    if first != {"systemMessage": "a", "additionalContext": "ctx"} or \
            second != {"systemMessage": "b"}:
        raise InputChanged(f"the same outputs: expected the handlers' own dicts unchanged, got "
                           f"{first} and {second} after fire", "the handlers' outputs")
    assert fire(m, "UserPromptSubmit", {"prompt": "again"}) == expected, \
        "firing the same handlers a second time gave another result"


@check(points=1, hint="Call the handler, then look at what it returned: if that is awaitable, "
                      "await it (a plain function may return a coroutine too).")
def check_sync_and_async_handlers(impl):
    async def async_handler(payload):
        return {"additionalContext": "from async"}

    async def late(payload):
        return {"systemMessage": "from a coroutine"}
    made: list = []
    m = manager(impl, "SessionStart", lambda p: {"systemMessage": "from sync"}, async_handler,
                lambda p: made.append(late(p)) or made[-1])
    try:
        result = fire(m, "SessionStart", {"source": "startup"})
    finally:
        for coroutine in made:
            coroutine.close()  # one that was never awaited: no warning at exit
    expected = {"systemMessage": "from a coroutine", "additionalContext": "from async"}
    assert result == expected, f"sync, async, lambda returning a coroutine: expected {expected}, " \
                               f"got {result}"
    result = fire(impl.HookManager(), "Stop", {})
    assert result == {}, f"an event with no handlers: expected {{}}, got {result}"


@check(points=2, hint="For PreToolUse, the payload the next handlers see carries the newest "
                      "updatedInput as its tool_input; build new payload dicts, never change "
                      "the caller's.")
def check_updated_input_reaches_later_handlers(impl):
    seen: list[dict] = []
    m = manager(impl, "PreToolUse",
                lambda p: {"updatedInput": {"command": "ls -la"}},
                lambda p: seen.append(dict(p["tool_input"])) or {},
                lambda p: seen.append(dict(p["tool_input"])) or {
                    "updatedInput": {"command": p["tool_input"]["command"] + " src"}},
                lambda p: seen.append(dict(p["tool_input"])) or None)
    payload = {"tool_name": "run_bash", "tool_input": {"command": "ls"}}
    before = copy.deepcopy(payload)
    result = fire(m, "PreToolUse", payload)
    expected = [{"command": "ls -la"}, {"command": "ls -la"}, {"command": "ls -la src"}]
    assert seen == expected, ("handler 1 updates to 'ls -la', 2 returns {}, 3 appends ' src', 4 "
                              f"looks: expected tool_inputs {expected}, got {seen}")
    assert result == {"updatedInput": {"command": "ls -la src"}}, \
        f"the same handlers: expected {{'updatedInput': {{'command': 'ls -la src'}}}}, got {result}"
    if payload != before:
        raise InputChanged(f"payload {before}: expected it unchanged after fire, got {payload}",
                           "the payload")


def decide(impl, tool, command):
    """Ask the learner's ``block_rm_rf`` about one tool call.

    Args:
        impl: the implementation under test.
        tool: the ``tool_name`` of the payload.
        command: the ``tool_input.command``.

    Returns:
        What ``block_rm_rf`` returned (a block decision, or None to allow).
    """
    return impl.block_rm_rf({"tool_name": tool, "tool_input": {"command": command}})


@check(points=2, hint="Match rm, then -rf or -fr, then / followed by the end, whitespace or *; "
                      "whitespace means any amount of spaces or tabs; rm may come after other "
                      "words.")
def check_block_rm_rf_blocks(impl):
    for tool, command in (("run_bash", "rm -rf /"), ("run_bash", "rm  -fr   /"),
                          ("run_bash", "sudo rm -rf / --no-preserve-root"),
                          ("run_bash", "rm -rf /*"), ("run_bash", "rm\t-rf\t/"),
                          ("run_bash", "cd /tmp && rm -rf / "), ("Bash", "rm -rf /")):
        out = decide(impl, tool, command)
        assert isinstance(out, dict) and out.get("decision") == "block" \
            and isinstance(out.get("reason"), str) and out["reason"].strip(), \
            f"{tool} {command!r}: expected {{'decision': 'block', 'reason': <why>}}, got {out}"


@check(points=2, hint="Only the root itself: / must be followed by the end, whitespace or *; "
                      "and only shell tools (run_bash, Bash) run commands.")
def check_block_rm_rf_allows(impl):
    for tool, command in (("run_bash", "rm -rf /tmp/build"), ("run_bash", "rm -rf ./out"),
                          ("run_bash", "ls /"), ("run_bash", "rm -r notes"),
                          ("run_bash", "rm -rf /home/ユーザー"), ("Bash", "rm -fr /var/cache"),
                          ("read_file", "rm -rf /"), ("edit_file", "rm -fr /*")):
        out = decide(impl, tool, command)
        assert out == {}, f"{tool} {command!r}: expected {{}} (allowed), got {out}"
