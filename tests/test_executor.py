"""Tests for mini_agent.harness.executor: ordered drain, parallel reads, serialized writes, errors."""

import asyncio
import threading
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from mini_agent.harness.executor import (SIBLING_ABORTED, OrderedDrain, StreamingExecutor, error_text,
                                         run_serially, run_tool)
from mini_agent.harness.hooks import HookManager
from mini_agent.core.messages import validate_messages
from mini_agent.harness.tools import Tool
from mini_agent.harness.workspace import ToolError


class Recorder:
    """Builds tools that sleep ``seconds`` in their worker thread and record start/end times."""

    def __init__(self):
        self.spans = {}  # tool_use input "tag" -> (start, end)
        self.lock = threading.Lock()

    def tool(self, name, safety, *, fail=False, latency_seconds=0.0):
        def run(input):
            start = time.perf_counter()
            time.sleep(input.get("seconds", 0.0))
            end = time.perf_counter()
            with self.lock:
                self.spans[input["tag"]] = (start, end)
            if fail:
                raise ToolError(f"{name} failed on purpose")
            return f"{name} {input['tag']}"
        return Tool(name=name, description=name, input_schema={"type": "object"},
                    safety=safety, run=run, latency_seconds=latency_seconds)


def use(i, name, **input):
    return {"type": "tool_use", "id": f"toolu_{i:02d}", "name": name, "input": input}


async def run_all(tools, blocks, hooks=None):
    executor = StreamingExecutor(tools, hooks=hooks)
    for block in blocks:
        executor.schedule(block)
    return [o async for o in executor.drain_all()]


def overlaps(a, b):
    return a[0] < b[1] and b[0] < a[1]


# ------------------------------------------------------------------ OrderedDrain

def test_drain_ready_stops_at_the_first_unsettled_task_and_never_repeats():
    async def main():
        drain = OrderedDrain()
        slow, fast = asyncio.Event(), asyncio.Event()

        async def value(event, v):
            await event.wait()
            return v
        drain.add("a", value(slow, "A"))
        drain.add("b", value(fast, "B"))
        fast.set()
        await asyncio.sleep(0.01)
        first = list(drain.drain_ready())       # b is done but a is not: nothing
        slow.set()
        await asyncio.sleep(0.01)
        second = list(drain.drain_ready())
        third = list(drain.drain_ready())
        rest = [v async for v in drain.drain_all()]
        return first, second, third, rest
    assert asyncio.run(main()) == ([], ["A", "B"], [], [])


def test_drain_all_continues_after_drain_ready_from_the_shared_cursor():
    async def main():
        drain = OrderedDrain()
        for i, delay in enumerate([0.0, 0.03, 0.0]):
            drain.add(str(i), asyncio.sleep(delay, result=i))
        await asyncio.sleep(0.005)
        early = list(drain.drain_ready())
        late = [v async for v in drain.drain_all()]
        return early, late, drain.pending
    assert asyncio.run(main()) == ([0], [1, 2], 0)


def test_a_consumer_that_stops_early_does_not_get_the_result_again():
    async def main():
        drain = OrderedDrain()
        for i in range(3):
            drain.add(str(i), asyncio.sleep(0, result=i))
        await asyncio.sleep(0.01)
        for value in drain.drain_ready():
            break
        return value, [v async for v in drain.drain_all()]
    assert asyncio.run(main()) == (0, [1, 2])


# ------------------------------------------------------------------ ordering property

@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["read-only", "write"]),
                          st.floats(min_value=0.0, max_value=0.004)), min_size=1, max_size=7))
def test_results_come_back_in_tool_use_order_exactly_once(plan):
    rec = Recorder()
    tools = {"r": rec.tool("r", "read-only"), "w": rec.tool("w", "write")}
    blocks = [use(i, "r" if safety == "read-only" else "w", tag=i, seconds=seconds)
              for i, (safety, seconds) in enumerate(plan)]
    outcomes = asyncio.run(run_all(tools, blocks))
    assert [o.tool_use_id for o in outcomes] == [b["id"] for b in blocks]
    assert all(not o.is_error for o in outcomes)
    validate_messages([{"role": "user", "content": "go"},
                       {"role": "assistant", "content": blocks},
                       {"role": "user", "content": [o.block for o in outcomes]}])
    # writes never overlap anything
    for i, (safety, _) in enumerate(plan):
        if safety == "write":
            assert not any(overlaps(rec.spans[i], rec.spans[j]) for j in rec.spans if j != i)


# ------------------------------------------------------------------ serialization, measured

def test_reads_overlap_and_a_write_runs_alone():
    rec = Recorder()
    tools = {"r": rec.tool("r", "read-only"), "w": rec.tool("w", "write")}
    blocks = [use(0, "r", tag="r0", seconds=0.08), use(1, "r", tag="r1", seconds=0.08),
              use(2, "w", tag="w2", seconds=0.03), use(3, "r", tag="r3", seconds=0.05),
              use(4, "r", tag="r4", seconds=0.05)]
    outcomes = asyncio.run(run_all(tools, blocks))
    s = rec.spans
    assert overlaps(s["r0"], s["r1"]) and overlaps(s["r3"], s["r4"])
    for other in ("r0", "r1", "r3", "r4"):
        assert not overlaps(s["w2"], s[other])
    assert s["w2"][0] >= max(s["r0"][1], s["r1"][1])       # waits for everything before it
    assert min(s["r3"][0], s["r4"][0]) >= s["w2"][1]        # everything after waits for it
    assert [o.block["content"] for o in outcomes] == ["r r0", "r r1", "w w2", "r r3", "r r4"]


def test_parallel_reads_all_run_at_the_same_time():
    # measured by the tools' own spans, not by wall-clock thresholds (speed is benchmarked)
    rec = Recorder()
    tools = {"r": rec.tool("r", "read-only")}
    blocks = [use(i, "r", tag=i, seconds=0.1) for i in range(4)]
    asyncio.run(run_all(tools, blocks))
    starts = [rec.spans[i][0] for i in range(4)]
    ends = [rec.spans[i][1] for i in range(4)]
    assert max(starts) < min(ends)  # every read started before any read finished


def test_latency_seconds_is_honoured_and_overlaps_for_reads():
    rec = Recorder()
    tools = {"r": rec.tool("r", "read-only", latency_seconds=0.1)}
    outcomes = asyncio.run(run_all(tools, [use(i, "r", tag=i) for i in range(5)]))
    assert all(o.ended_at - o.started_at >= 0.1 for o in outcomes)
    assert max(o.started_at for o in outcomes) < min(o.ended_at for o in outcomes)
    serial = asyncio.run(run_serially(tools, [use(i, "r", tag=i) for i in range(3)]))
    assert all(later.started_at >= earlier.ended_at
               for earlier, later in zip(serial, serial[1:]))


# ------------------------------------------------------------------ errors are data

def test_failing_write_aborts_later_siblings_only():
    rec = Recorder()
    tools = {"r": rec.tool("r", "read-only"), "w": rec.tool("w", "write"),
             "bad": rec.tool("bad", "write", fail=True)}
    blocks = [use(0, "r", tag="a"), use(1, "bad", tag="b"), use(2, "r", tag="c"),
              use(3, "w", tag="d")]
    outcomes = asyncio.run(run_all(tools, blocks))
    assert [(o.block["content"], o.is_error) for o in outcomes] == [
        ("r a", False), ("bad failed on purpose", True),
        (SIBLING_ABORTED, True), (SIBLING_ABORTED, True)]
    assert set(rec.spans) == {"a", "b"}  # the aborted siblings never ran


def test_failing_read_does_not_abort_siblings():
    rec = Recorder()
    tools = {"r": rec.tool("r", "read-only"), "bad": rec.tool("bad", "read-only", fail=True)}
    outcomes = asyncio.run(run_all(tools, [use(0, "bad", tag="x"), use(1, "r", tag="y")]))
    assert [o.is_error for o in outcomes] == [True, False]


def test_unknown_tool_and_crashing_tool_become_error_results():
    def crash(input):
        raise KeyError("boom")
    tools = {"crash": Tool("crash", "d", {"type": "object"}, "read-only", crash)}
    outcomes = asyncio.run(run_all(tools, [use(0, "nope"), use(1, "crash")]))
    assert outcomes[0].block == {"type": "tool_result", "tool_use_id": "toolu_00",
                                 "content": "Unknown tool: nope (available: crash)",
                                 "is_error": True}
    assert outcomes[1].block["content"] == "crash failed: KeyError: 'boom'"
    assert outcomes[1].is_error


def test_input_not_matching_the_schema_is_an_error_result():
    tool = Tool("read_file", "d", {"type": "object", "properties": {"path": {"type": "string"}},
                                   "required": ["path"]}, "read-only", lambda i: "never")
    outcomes = asyncio.run(run_all({"read_file": tool}, [use(0, "read_file")]))
    assert outcomes[0].is_error and "missing required input 'path'" in outcomes[0].block["content"]


def test_error_text():
    assert error_text("x", ToolError("do Y instead")) == "do Y instead"
    assert error_text("x", ValueError("v")) == "x failed: ValueError: v"


def test_a_non_utf8_name_comes_back_encodable_through_every_door():
    """The loop's executor and run_tool are one path: both give the same encodable text."""
    tool = Tool("ls", "d", {"type": "object"}, "read-only", lambda i: "caf\udce9.txt\nb.txt")
    outcome = asyncio.run(run_all({"ls": tool}, [use(0, "ls")]))[0]
    assert outcome.block["content"] == "caf\ufffd.txt\nb.txt"
    outcome.block["content"].encode("utf-8")
    assert run_tool({"ls": tool}, "ls", {}) == ("caf\ufffd.txt\nb.txt", False)
    assert run_tool({"ls": tool}, "nope", {}) == ("Unknown tool: nope (available: ls)", True)


def test_empty_output_is_never_sent_as_empty_content():
    tool = Tool("t", "d", {"type": "object"}, "read-only", lambda i: "")
    outcome = asyncio.run(run_all({"t": tool}, [use(0, "t")]))[0]
    assert outcome.block["content"] == "(no output)"


# ------------------------------------------------------------------ hooks

def test_pre_tool_use_block_and_updated_input_post_tool_use_context():
    seen = []
    tool = Tool("run_bash", "d", {"type": "object"}, "write",
                lambda i: seen.append(i) or f"ran {i['command']}")
    hooks = HookManager()
    hooks.on("PreToolUse", lambda p: {"decision": "block", "reason": "no rm"}
             if "rm" in p["tool_input"]["command"] else None)
    hooks.on("PreToolUse", lambda p: {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "updatedInput": {"command": "ls -a"}}}
        if p["tool_input"]["command"] == "ls" else None)
    hooks.on("PostToolUse", lambda p: {"hookSpecificOutput": {
        "hookEventName": "PostToolUse", "additionalContext": "note: checked"}})
    outcomes = asyncio.run(run_all({"run_bash": tool}, [
        use(0, "run_bash", command="rm -rf x"), use(1, "run_bash", command="ls")], hooks))
    assert outcomes[0].block == {"type": "tool_result", "tool_use_id": "toolu_00",
                                 "content": "Blocked by hook: no rm", "is_error": True}
    assert outcomes[1].block["content"] == "ran ls -a\n\nnote: checked"
    assert outcomes[1].input == {"command": "ls -a"}
    assert seen == [{"command": "ls -a"}]  # the blocked call never ran


def test_a_post_tool_use_block_reason_reaches_the_model():
    """Claude Code: a PostToolUse ``"decision": "block"`` cannot undo the call; its reason is
    fed to the model. It used to be dropped, so a lint hook's complaint never arrived."""
    tool = Tool("edit_file", "d", {"type": "object"}, "write", lambda i: "edited")
    hooks = HookManager()
    hooks.on("PostToolUse", lambda p: {"decision": "Block", "reason": "lint: unused import"})
    hooks.on("PostToolUse", lambda p: {"hookSpecificOutput": {"additionalContext": "never"}})
    outcome = asyncio.run(run_all({"edit_file": tool}, [use(0, "edit_file")], hooks))[0]
    assert outcome.block["content"] == "edited\n\nPostToolUse hook: lint: unused import"
    stop = HookManager()
    stop.on("PostToolUse", lambda p: {"continue": False, "stopReason": "budget"})
    stopped = asyncio.run(run_all({"edit_file": tool}, [use(0, "edit_file")], stop))[0]
    assert (stopped.block["content"], stopped.hook_stop_reason) == ("edited", "budget")


# --------------------------------------------------------------------------- result size cap

def test_cap_result_content_cuts_strings_and_shares_the_budget_in_lists():
    from mini_agent.harness.executor import cap_result_content
    assert cap_result_content("abcdef", 4) == "abcd\n[... truncated: 2 more characters]"
    assert cap_result_content("abc", 4) == "abc"
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "x" * 10}}
    content = [{"type": "text", "text": "a" * 6}, image, {"type": "text", "text": "b"}]
    assert cap_result_content(content, 8) == [
        {"type": "text", "text": "a" * 6},
        {"type": "text", "text": "[an image of 10 characters was dropped: over the tool "
                                 "result size cap]"},
        {"type": "text", "text": "b"}]
    assert content[1] is image and len(content) == 3  # input untouched


def test_an_oversized_tool_output_is_capped_before_it_is_stored():
    from mini_agent.harness.executor import MAX_TOOL_RESULT_CHARS, StreamingExecutor

    class Huge:
        safety = "read-only"

        def run(self, tool_input):
            return "z" * (MAX_TOOL_RESULT_CHARS * 3)

    async def go():
        executor = StreamingExecutor({"huge": Huge()})
        executor.schedule({"type": "tool_use", "id": "t1", "name": "huge", "input": {}})
        return [o async for o in executor.drain_all()]
    (outcome,) = asyncio.run(go())
    assert outcome.block["content"] == ("z" * MAX_TOOL_RESULT_CHARS
                                        + f"\n[... truncated: {2 * MAX_TOOL_RESULT_CHARS:,} "
                                        "more characters]")
