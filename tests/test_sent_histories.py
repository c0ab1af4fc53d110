"""Every request the kit sends obeys the API's rules, under every view policy (property tests).

The REAL :class:`~mini_agent.harness.agent.Agent` runs on the REAL loop, executor and tools (a fresh
copy of the demo workspace per example) against the offline Claude. The model is a
:class:`RandomBrain` whose replies hypothesis draws: text (empty and whitespace-only pieces
included), 0-4 ``tool_use`` blocks per turn (the kit's tools and an unknown one, with inputs
that succeed and inputs that fail, reads and writes mixed), ``max_tokens`` cuts in text and
inside a tool_use's JSON, a tiny output cap, overloaded (529) answers, several prompts in a
row, streamed or not, with or without ``auto_continue``, with or without cache breakpoints.

For every example and every request the transport accepted:

* the body passes ``validate_messages`` (each ``tool_use`` answered in the next user
  message, no empty text, roles alternate) and the transport refused nothing (a refusal is
  recorded and fails the example, it is never swallowed);
* at most 4 ``cache_control`` markers; no kit metadata key in a message or block;

and for the agent:

* the FULL history validates, is only ever appended to (a policy builds a view, it never
  shortens or edits the record), and a policy never mutates the history it is given;
* it holds every tool_result the executor produced, exactly once, in tool_use order.

Each policy's thresholds are scaled down so it really fires; each test asserts that it did
in at least one example. The literal regression tests at the end replay defects these
properties found.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

import anthropic
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mini_agent.harness.agent import Agent, ContextOverflowError
from mini_agent.core.cache import place_breakpoints
from mini_agent.core.cache_policies import PaybackMasking, ResumeBreakpoints
from mini_agent.core.clock import ManualClock
from mini_agent.core.compact_policy import (CompactPolicy, CompactThresholds, overhead_tokens_of,
                                            reactive_compact)
from mini_agent.demo import copy_demo_workspace
from mini_agent.core.lifecycle import LifecyclePolicy, LifecycleThresholds
from mini_agent.harness.cold_store import ColdStore, recall_segment_tool
from mini_agent.harness.loop import ToolResult
from mini_agent.core.masking import ChunkedMasking, ThresholdMasking
from mini_agent.core.block_rules import ALLOWED_BLOCK_KEYS, ALLOWED_MESSAGE_KEYS
from mini_agent.core.messages import (NO_RESULT_TEXT, Message, content_blocks, tool_results,
                                      tool_uses, validate_messages)
from mini_agent.core.streaming import ToolUseReady
from mini_agent.offline import FaultPlan, offline_async_client, offline_client
from mini_agent.core.context_edits import (CONTEXT_MANAGEMENT_BETA, clear_tool_uses_edit,
                                         clear_tool_uses_transform)
from mini_agent.offline.transport import ALLOWED_REQUEST_KEYS
from mini_agent.core.tokens import approx_tokens
from mini_agent.harness.tools import Workspace, build_tools
from mini_agent.core.view import full_view

# ------------------------------------------------------------------ the random model

UNKNOWN_TOOL = "no_such_tool"
NOTES = "notes.txt"

# Inputs per tool: (succeeds, fails). Failing ones cover missing/ill-typed input, paths
# outside the workspace, bad regexes, a write that fails (its later siblings are aborted).
TOOL_INPUTS: dict[str, tuple[list[dict], list[dict]]] = {
    "read_file": ([{"path": "invoicing/money.py"}, {"path": "README.md", "limit": 12},
                   {"path": NOTES}],
                  [{"path": "missing.py"}, {"path": "../outside.txt"}, {},
                   {"path": "README.md", "offset": 100_000}, {"path": 7}]),
    "list_dir": ([{"path": "."}, {"path": "invoicing"}], [{"path": "nope"}]),
    "grep": ([{"pattern": "def ", "path": "invoicing"}], [{"pattern": "("}, {}]),
    "glob": ([{"pattern": "**/*.py"}], [{"pattern": "../*"}]),
    "run_bash": ([{"command": "echo ok"}, {"command": "exit 3"}], [{}]),
    "edit_file": ([{"path": NOTES, "old_string": "alpha", "new_string": "beta"},
                   {"path": NOTES, "old_string": "beta", "new_string": "alpha"}],
                  [{"path": NOTES, "old_string": "zzz", "new_string": "y"},
                   {"path": "../x", "old_string": "", "new_string": "y"}]),
    UNKNOWN_TOOL: ([], [{"x": 1}]),
}
TOOL_NAMES = tuple(TOOL_INPUTS)

TEXT_PIECES = ("", " ", "\n\n", "Let me look.", "Reading the code now.  ",
               "The total is wrong: " + "rounding " * 30, "Done here.")
text_pieces = st.one_of(st.sampled_from(TEXT_PIECES),
                        st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)),
                                max_size=30))


@st.composite
def tool_calls(draw) -> dict:
    name = draw(st.sampled_from(TOOL_NAMES))
    good, bad = TOOL_INPUTS[name]
    return {"type": "tool_use", "name": name, "input": draw(st.sampled_from(good + bad))}


@st.composite
def replies(draw) -> list[dict]:
    """One reply's content without ids: text pieces and 0-4 tool_use blocks, any order."""
    blocks: list[dict] = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            blocks.append({"type": "text", "text": draw(text_pieces)})
        blocks.append(draw(tool_calls()))
    if draw(st.booleans()) or not blocks:
        blocks.append({"type": "text", "text": draw(text_pieces)})
    return blocks


class RandomBrain:
    """Answers request k with ``script[k]`` (then "Done."), giving each tool_use a fresh id.

    Deterministic: the same script and request order give the same replies.
    """

    def __init__(self, script: list[list[dict]]) -> None:
        self.script = script
        self.calls = 0

    def respond(self, request: dict[str, Any]) -> dict[str, Any]:
        k, self.calls = self.calls, self.calls + 1
        if k >= len(self.script):
            return {"content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn"}
        content = []
        for j, block in enumerate(self.script[k]):
            block = copy.deepcopy(block)
            if block["type"] == "tool_use":
                block["id"] = f"toolu_{k:02d}_{j}"
            content.append(block)
        uses = any(b["type"] == "tool_use" for b in content)
        return {"content": content, "stop_reason": "tool_use" if uses else "end_turn"}


@dataclasses.dataclass
class Scenario:
    script: list[list[dict]]
    prompts: list[str]
    max_tokens_at: dict[int, str]
    overloaded_at: set[int]
    stream: bool
    auto_continue: bool
    max_tokens: int
    max_turns: int
    prepare: str  # "none" | "breakpoints" | "resume"
    sync_client: bool  # anthropic.Anthropic (blocking calls in threads) instead of AsyncAnthropic


def scenario(**changes: Any) -> Scenario:
    """A literal scenario: defaults (one prompt, no faults, streamed) with ``changes``."""
    base = Scenario(script=[], prompts=["Fix the tests."], max_tokens_at={}, overloaded_at=set(),
                    stream=True, auto_continue=True, max_tokens=4096, max_turns=5,
                    prepare="none", sync_client=False)
    return dataclasses.replace(base, **changes)


def read_dir() -> dict:
    return {"type": "tool_use", "name": "list_dir", "input": {"path": "."}}


READS = scenario(script=[[{"type": "text", "text": "Reading."},
                          {"type": "tool_use", "name": "read_file",
                           "input": {"path": "invoicing/money.py"}},
                          {"type": "tool_use", "name": "read_file",
                           "input": {"path": "invoicing/invoice.py"}}]] * 5
                 + [[{"type": "text", "text": "Done here."}]],
                 prompts=["Fix the tests.", "Summarise."], max_turns=8, prepare="breakpoints")
"""A long reading session: every policy below fires on it (each test runs it explicitly)."""


@st.composite
def scenarios(draw) -> Scenario:
    # the SDK retries a 529 twice: three in a row make a storm that ends the prompt
    overloaded = draw(st.one_of(st.sets(st.integers(1, 12), max_size=2),
                                st.integers(1, 10).map(lambda n: {n, n + 1, n + 2})))
    return Scenario(
        script=draw(st.lists(replies(), min_size=1, max_size=8)),
        prompts=draw(st.lists(st.sampled_from(["Fix the tests.", "Now read money.py.",
                                               "Summarise.", "Edit notes.txt please"]),
                              min_size=1, max_size=3)),
        max_tokens_at=draw(st.dictionaries(st.integers(1, 6),
                                           st.sampled_from(["text", "tool_use"]), max_size=4)),
        overloaded_at=overloaded,
        stream=draw(st.booleans()),
        auto_continue=draw(st.booleans()),
        max_tokens=draw(st.sampled_from([4096, 4096, 40])),
        max_turns=draw(st.integers(1, 5)),
        prepare=draw(st.sampled_from(["none", "breakpoints", "resume"])),
        sync_client=draw(st.integers(0, 3)) == 0)


# ------------------------------------------------------------------ checks

def assert_wire_clean(body: dict[str, Any]) -> None:
    """No kit metadata anywhere in a request body (top level, messages, blocks, nested)."""
    assert set(body) <= ALLOWED_REQUEST_KEYS, sorted(set(body) - ALLOWED_REQUEST_KEYS)
    for i, message in enumerate(body["messages"]):
        assert set(message) <= ALLOWED_MESSAGE_KEYS, (i, sorted(message))
        for block in content_blocks(message):
            allowed = ALLOWED_BLOCK_KEYS.get(block["type"])
            assert allowed is not None and set(block) <= allowed, (i, block)
            if block["type"] == "tool_result" and isinstance(block.get("content"), list):
                for part in block["content"]:
                    assert set(part) <= ALLOWED_BLOCK_KEYS[part["type"]], (i, part)


def count_markers(obj: Any) -> int:
    if isinstance(obj, dict):
        return ("cache_control" in obj) + sum(count_markers(v) for v in obj.values())
    if isinstance(obj, list):
        return sum(count_markers(v) for v in obj)
    return 0


def assert_results_in_order(history: list[Message]) -> None:
    """Each user message after an assistant with tool_use answers exactly those ids, in order."""
    for i, message in enumerate(history):
        if message["role"] != "assistant" or not tool_uses(message):
            continue
        asked = [b["id"] for b in tool_uses(message)]
        answered = [b["tool_use_id"] for b in tool_results(history[i + 1])]
        assert answered == asked, (i, asked, answered)


class TickingClock(ManualClock):
    """A clock that moves ``step`` seconds at every reading (so ages grow between requests)."""

    def __init__(self, step: float) -> None:
        super().__init__()
        self.step = step

    def now(self) -> float:
        return self.advance(self.step)


@dataclasses.dataclass
class Setup:
    """What one policy test varies: the view policy and the transport/agent extras."""

    policy: Callable
    on_context_overflow: Callable | None = None
    extra_tools: dict = dataclasses.field(default_factory=dict)
    transport: dict = dataclasses.field(default_factory=dict)
    prepare: tuple = ()
    clock_step_seconds: float = 1.0


ALLOWED_ERRORS = (anthropic.OverloadedError, ContextOverflowError)
"""Errors a prompt may end with (an overload storm, a context that cannot fit): the history
must stay valid and the next prompt must work."""


@dataclasses.dataclass
class Outcome:
    requests: list[dict]
    views_smaller: int
    history: list[Message]


async def drive(scenario: Scenario, setup: Setup) -> Outcome:
    """Run the scenario's prompts through a real Agent; check the invariants as it goes."""
    with tempfile.TemporaryDirectory(prefix="sent-histories-") as tmp:
        root = copy_demo_workspace(Path(tmp) / "ws")
        (root / NOTES).write_text("alpha\n", encoding="utf-8")
        tools = {**build_tools(Workspace(root, max_output_chars=1_200)), **setup.extra_tools}
        faults = FaultPlan(max_tokens_at=dict(scenario.max_tokens_at),
                           overloaded_at=set(scenario.overloaded_at))
        factory = offline_client if scenario.sync_client else offline_async_client
        client = factory(RandomBrain(scenario.script), faults=faults, max_retries=2,
                         **setup.transport)
        client._calculate_retry_timeout = lambda *a, **k: 0.0  # retry 529s without sleeping
        transport = client.offline_transport
        refusals: list[str] = []
        check = transport._check

        def spy_check(body, **kwargs):  # record every 400 the transport answers
            error = check(body, **kwargs)
            if error:
                refusals.append(error)
            return error
        transport._check = spy_check

        smaller = 0

        def spy_policy(history, ctx):
            nonlocal smaller
            before = copy.deepcopy(history)
            view = setup.policy(history, ctx)
            assert history == before, "a view policy mutated the history it was given"
            smaller += approx_tokens(view) < approx_tokens(history)
            return view

        prepare = list(setup.prepare)
        if scenario.prepare == "breakpoints":
            prepare.append(functools.partial(place_breakpoints, canonical=True, anchors=True))
        elif scenario.prepare == "resume":
            prepare.append(ResumeBreakpoints())
        agent = Agent(client, tools=tools, view_policy=spy_policy,
                      clock=TickingClock(setup.clock_step_seconds),
                      max_turns=scenario.max_turns, max_tokens=scenario.max_tokens,
                      prepare_request=prepare, stream=scenario.stream,
                      auto_continue=scenario.auto_continue,
                      on_context_overflow=setup.on_context_overflow)
        produced: list[dict] = []
        asked: list[str] = []
        failed = False
        try:
            for prompt in scenario.prompts:
                record = copy.deepcopy(agent.history)
                events: list = []
                try:
                    async for event in agent.astream(prompt):
                        events.append(event)
                except ALLOWED_ERRORS:
                    failed = True
                assert not refusals, f"the offline API refused a request: {refusals[0]}"
                produced += [e.block for e in events if isinstance(e, ToolResult)]
                asked += [e.block["id"] for e in events if isinstance(e, ToolUseReady)]
                # the record is only appended to (the last user turn may gain the new prompt)
                history = agent.history
                assert len(history) >= len(record)
                if record:
                    assert history[:len(record) - 1] == record[:-1]
                    last, now = record[-1], history[len(record) - 1]
                    assert now == last or (last["role"] == now["role"] == "user" and
                                           content_blocks(now)[:len(content_blocks(last))]
                                           == content_blocks(last))
                validate_messages(history, tools=[t.definition() for t in tools.values()],
                                  request=False)
                assert len(agent.times) == len(history)
        finally:
            closed = client.close()
            if asyncio.iscoroutine(closed):
                await closed
        assert not refusals, f"the offline API refused a request: {refusals[0]}"
        for body in transport.requests:
            validate_messages(body["messages"], system=body.get("system"),
                              tools=body.get("tools"))
            assert count_markers(body) <= 4
            assert_wire_clean(body)
        history = agent.history
        assert_results_in_order(history)
        stored = [b for m in history for b in tool_results(m)]
        kept = [b for b in stored if not (b.get("is_error") and b["content"] == NO_RESULT_TEXT)]
        assert len(kept) == len(stored) or failed
        assert [b["tool_use_id"] for b in kept] == [b["tool_use_id"] for b in produced]
        assert kept == produced
        assert [b["tool_use_id"] for b in produced] == asked
        return Outcome(list(transport.requests), smaller, history)


def run(scenario: Scenario, setup: Setup) -> Outcome:
    return asyncio.run(drive(scenario, setup))


EXAMPLES = int(os.environ.get("MINI_AGENT_PROPERTY_EXAMPLES", "40"))
"""Examples per policy; raise it for a longer hunt (``MINI_AGENT_PROPERTY_EXAMPLES=2000``)."""

SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def tool_definitions(extra: dict | None = None) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        tools = {**build_tools(tmp), **(extra or {})}
        return [t.definition() for t in tools.values()]


# ------------------------------------------------------------------ one property per policy

def test_full_view_sends_valid_histories():
    @SETTINGS
    @given(scenarios())
    def check(scenario):
        run(scenario, Setup(full_view))
    check()


def test_threshold_masking_sends_valid_histories():
    fired = []

    @SETTINGS
    @given(scenarios(), st.integers(0, 2), st.sampled_from([0, 300, 1_500]))
    @example(READS, 1, 1_500)
    def check(scenario, keep, threshold):
        policy = ThresholdMasking(keep=keep, threshold_tokens=threshold,
                                  exclude_tools=("glob",))
        fired.append(run(scenario, Setup(policy)).views_smaller)
    check()
    assert any(fired), "masking never shrank a view"


def test_chunked_masking_sends_valid_histories():
    fired = []

    @SETTINGS
    @given(scenarios(), st.integers(0, 2), st.integers(1, 3), st.sampled_from([0, 500]))
    @example(READS, 1, 2, 500)
    def check(scenario, keep, chunk, threshold):
        policy = ChunkedMasking(keep=keep, chunk=chunk, threshold_tokens=threshold)
        fired.append(run(scenario, Setup(policy)).views_smaller)
    check()
    assert any(fired), "chunked masking never shrank a view"


def summarize_fine(messages):
    return f"The user asked for a fix; {len(messages)} messages so far."


def summarizers() -> st.SearchStrategy:
    def empty(messages):
        return " "

    def broken(messages):
        raise RuntimeError("summary model down")
    return st.sampled_from([summarize_fine, summarize_fine, empty, broken, None])


def test_compact_policy_sends_valid_histories():
    stages: list[str] = []
    overhead = overhead_tokens_of(tools=tool_definitions())

    @SETTINGS
    @given(scenarios(), summarizers(), st.sampled_from([1.0, 0.4, 0.1]),
           st.sampled_from([200_000, 2_500]))
    @example(READS, summarize_fine, 1.0, 200_000)
    def check(scenario, summarize, scale, window):
        thresholds = CompactThresholds(overhead + round(400 * scale),
                                       overhead + round(500 * scale),
                                       overhead + round(500 * scale))
        policy = CompactPolicy(thresholds, summarize=summarize, overhead_tokens=overhead,
                               max_age_seconds=120)
        run(scenario, Setup(policy, on_context_overflow=policy.on_context_overflow,
                            transport={"context_window_tokens": window},
                            clock_step_seconds=30.0))
        stages.extend(s["stage"] for r in policy.records for s in r["stages"])
    check()
    assert {"micro_compact", "context_collapse", "auto_compact"} <= set(stages), set(stages)


def test_reactive_compaction_sends_valid_histories():
    retried = []

    @SETTINGS
    @given(scenarios(), st.sampled_from([800, 1_000, 1_300]))
    @example(READS, 1_300)
    def check(scenario, window):
        def overflow(history, ctx):
            retried.append(True)
            return reactive_compact(history, ctx, keep_recent_tokens=300,
                                    summarize=lambda m: "Earlier work, summarised.")
        run(scenario, Setup(full_view, on_context_overflow=overflow,
                            transport={"context_window_tokens": window}))
    check()
    assert retried, "the context window never overflowed"


def test_lifecycle_policy_sends_valid_histories():
    tiers_seen: set[str] = set()

    @SETTINGS
    @given(scenarios(), st.integers(1, 2), st.integers(0, 2), st.integers(0, 2),
           st.sampled_from([None, 600, 1_500]))
    @example(READS, 1, 1, 1, None)
    def check(scenario, hot, warm_a, warm_b, budget):
        store = ColdStore()
        thresholds = LifecycleThresholds(hot_exchanges=hot, warm_a_exchanges=hot + warm_a,
                                         warm_b_exchanges=hot + warm_a + warm_b,
                                         view_budget_tokens=budget)
        policy = LifecyclePolicy(thresholds, store=store)
        run(scenario, Setup(policy, extra_tools={"recall_segment": recall_segment_tool(store)}))
        for record in policy.records:
            if not record["fallback"]:
                tiers_seen.update(t for t, n in record["counts"].items() if n)
        store.close()
    check()
    assert {"warm_a", "warm_b", "cold"} <= tiers_seen, tiers_seen


def test_payback_masking_sends_valid_histories():
    fired = []

    @SETTINGS
    @given(scenarios(), st.integers(0, 1), st.sampled_from([0.5, 4.0, 16.0]),
           st.sampled_from([0.0, 0.0, 0.5, 2.0]))
    @example(READS, 1, 4.0, 0.5)
    def check(scenario, keep, horizon, ratio):
        policy = PaybackMasking(keep=keep, horizon_ratio=horizon, min_free_tokens=20,
                                min_cacheable_tokens=0, min_free_ratio=ratio)
        fired.append(run(scenario, Setup(policy)).views_smaller)
    check()
    assert any(fired), "payback masking never moved its boundary"


def test_server_side_context_editing_sends_valid_histories():
    applied = []

    def transform(request):
        request, extra = clear_tool_uses_transform(request)
        applied.extend(extra.get("context_management", {}).get("applied_edits", []))
        return request, extra

    @SETTINGS
    @given(scenarios(), st.integers(0, 2), st.sampled_from([0, 1, 3]), st.booleans())
    @example(READS, 1, 1, False)
    def check(scenario, keep, trigger, clear_inputs):
        edit = clear_tool_uses_edit(trigger_tool_uses=trigger, keep=keep,
                                    clear_tool_inputs=clear_inputs)

        def with_edit(request):
            return {**request, "extra_body": {"context_management": {"edits": [edit]}},
                    "extra_headers": {"anthropic-beta": CONTEXT_MANAGEMENT_BETA}}
        run(scenario, Setup(full_view, transport={"request_transforms": [transform]},
                            prepare=(with_edit,)))
    check()
    assert applied, "the server-side edit never cleared a tool result"


# ------------------------------------------------------------------ regressions found above


def test_regression_lifecycle_cold_segment_extended_after_an_overload_storm():
    # Request 2's text is cut, the continuation (requests 3-5) is overloaded: the prompt
    # ends, and the continuation view had already stored seg-001 = [A1, U1] cold. The next
    # prompt extends U1, so seg-001 grew: ColdStore.put raised ValueError on every later
    # request ("cold segment 'seg-001' is already stored with other messages").
    store = ColdStore()
    policy = LifecyclePolicy(LifecycleThresholds(hot_exchanges=1, warm_a_exchanges=1,
                                                  warm_b_exchanges=1),
                             store=store)
    outcome = run(scenario(script=[[read_dir()], [{"type": "text", "text": "Reading now."}],
                                   [read_dir()]],
                           prompts=["Fix the tests.", "Now read money.py."],
                           max_tokens_at={2: "text"}, overloaded_at={3, 4, 5}),
                  Setup(policy, extra_tools={"recall_segment": recall_segment_tool(store)}))
    assert store.reheat("seg-001") == outcome.history[1:3]
    assert outcome.history[2]["content"][-1] == {"type": "text", "text": "Now read money.py."}
