"""Tests for mini_agent.core.compaction, mini_agent.core.compact_policy and
mini_agent.core.server_compaction."""

from __future__ import annotations

import copy

import anthropic
import pytest
from hypothesis import given, settings, strategies as st

from mini_agent.harness.summarizer import model_summarizer
from mini_agent.core.compact_policy import (CompactPolicy, CompactThresholds, OverheadTooLargeError,
                                            overhead_tokens_of, reactive_compact)
from mini_agent.core.compaction import (CLEARED_PLACEHOLDER, COLLAPSE_NOTICE, SUMMARY_PREFIX,
                                        SummaryError, auto_compact, clean_cut_points,
                                        context_collapse, micro_compact)
from mini_agent.core.messages import validate_messages
from mini_agent.offline import compaction_client, offline_client
from mini_agent.offline.brains import EchoBrain
from mini_agent.core.server_compaction import ServerCompaction, SummaryBrain, structured_summary
from mini_agent.core.long_session import long_session
from mini_agent.core.tokens import approx_tokens
from mini_agent.core.view import ViewContext
from strategies import histories, hostile_histories

T0 = 1_767_225_600.0


def exchange(tid: str, name: str, result: str, text: str = "thinking") -> list[dict]:
    return [{"role": "assistant", "content": [
                {"type": "text", "text": text},
                {"type": "tool_use", "id": tid, "name": name, "input": {"path": "src/a.py"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tid, "content": result}]}]


BIG = "line of file content\n" * 20


def history_of(*names: str) -> list[dict]:
    h = [{"role": "user", "content": "Fix the bug in src/a.py"}]
    for k, name in enumerate(names, 1):
        h += exchange(f"t{k}", name, BIG)
    return h


# --------------------------------------------------------------------------- micro_compact

def test_micro_compact_sixty_minute_boundary_is_strict():
    h = history_of("read_file", "read_file")
    times = [T0, T0, T0, T0 + 1, T0 + 1]
    view = micro_compact(h, times=times, now=T0 + 3600 + 1)
    # message 2 arrived 3601 s ago: cleared; message 4 arrived exactly 3600 s ago: kept
    assert view[2]["content"][0] == {"type": "tool_result", "tool_use_id": "t1",
                                     "content": CLEARED_PLACEHOLDER}
    assert view[4] is h[4]
    assert view[4]["content"][0]["content"] == BIG


def test_micro_compact_keeps_run_bash_writes_and_unknown_tools():
    h = history_of("run_bash", "edit_file", "grep", "glob")
    h[-1]["content"][0]["tool_use_id"] = "t4"
    times = [T0] * len(h)
    view = micro_compact(h, times=times, now=T0 + 7200)
    assert view[2] == h[2] and view[4] == h[4]  # run_bash, edit_file kept
    assert view[6]["content"][0]["content"] == CLEARED_PLACEHOLDER  # grep
    assert view[8]["content"][0]["content"] == CLEARED_PLACEHOLDER  # glob
    assert micro_compact(h, times=times, now=T0 + 7200, clearable_tools={"run_bash"})[2][
        "content"][0]["content"] == CLEARED_PLACEHOLDER


def test_micro_compact_keeps_is_error_and_rejects_misaligned_times():
    h = history_of("read_file")
    h[2]["content"][0]["is_error"] = True
    view = micro_compact(h, times=[T0] * 3, now=T0 + 4000)
    assert view[2]["content"][0] == {"type": "tool_result", "tool_use_id": "t1",
                                     "content": CLEARED_PLACEHOLDER, "is_error": True}
    with pytest.raises(ValueError, match="parallel"):
        micro_compact(h, times=[T0], now=T0)
    with pytest.raises(TypeError):
        micro_compact(h, times=[T0] * 3, now=T0, clearable_tools="read_file")


# --------------------------------------------------------------------------- context_collapse

def test_collapse_keeps_task_and_cuts_at_an_assistant_message():
    h = history_of("read_file", "grep", "run_bash", "read_file")
    tail_tokens = approx_tokens(h[-4:])
    view = context_collapse(h, keep_recent_tokens=tail_tokens)
    assert view == [{"role": "user", "content": [
                        {"type": "text", "text": "Fix the bug in src/a.py"},
                        {"type": "text", "text": COLLAPSE_NOTICE}]}, *h[-4:]]
    validate_messages(view)
    # a budget too small for any tail still keeps the last whole exchange
    assert context_collapse(h, keep_recent_tokens=0)[1:] == h[-2:]


def test_collapse_by_default_keeps_the_last_keep_last_messages_from_an_assistant_cut():
    """Exercise 04.2's rule: the latest assistant index <= len - keep_last, and > 1."""
    h = history_of("read_file", "grep", "run_bash", "read_file")  # 9 messages
    task = {"role": "user", "content": [{"type": "text", "text": "Fix the bug in src/a.py"},
                                        {"type": "text", "text": COLLAPSE_NOTICE}]}
    assert context_collapse(h) == [task, *h[5:]]  # keep_last=4: cut at 5
    assert [len(context_collapse(h, keep_last=k)) for k in range(10)] == \
        [3, 3, 3, 5, 5, 7, 7, 9, 9, 9]
    assert context_collapse(h, keep_last=7) == h and context_collapse(h, keep_last=7) is not h
    with pytest.raises(ValueError):
        context_collapse(h, keep_last=-1)


def test_collapse_never_separates_tool_use_from_result():
    h = history_of("read_file", "grep", "run_bash")
    for budget in range(0, approx_tokens(h) + 10, 7):
        view = context_collapse(h, keep_recent_tokens=budget)
        validate_messages(view)
        first = view[0]["content"]
        assert (first if isinstance(first, str) else first[0]["text"]) == "Fix the bug in src/a.py"


def test_clean_cut_points_are_assistant_starts():
    h = history_of("read_file", "grep")
    assert clean_cut_points(h) == [1, 3]


# --------------------------------------------------------------------------- auto_compact

def test_auto_compact_summary_plus_last_exchange():
    h = history_of("read_file", "grep", "run_bash")
    seen = []
    view = auto_compact(h, summarize=lambda ms: seen.append(ms) or "S")
    assert view == [{"role": "user", "content": [{"type": "text", "text": SUMMARY_PREFIX + "S"}]},
                    *h[-2:]]
    assert seen == [h[:-2]]
    validate_messages(view)


@pytest.mark.parametrize("bad", [lambda ms: "", lambda ms: "   ", lambda ms: 1 / 0])
def test_auto_compact_failure_is_a_summary_error(bad):
    with pytest.raises(SummaryError):
        auto_compact(history_of("read_file", "grep"), summarize=bad)


def test_structured_summary_keeps_task_identifiers_and_problems():
    h, _ = long_session(12)
    s = structured_summary(h)
    assert s.splitlines()[0] == "## Task"
    assert h[0]["content"] in s
    for section in ("## Decisions", "## Current state", "## Identifiers", "## Open problems",
                    "## Next steps"):
        assert section in s
    assert "src/parser.py" in s and "parse()" in s
    assert "FAILED tests/test_app.py::test_parse_empty" in s
    # a summary of a summary keeps the original task
    again = structured_summary([{"role": "user", "content": SUMMARY_PREFIX + s},
                                {"role": "assistant", "content": "ok, continuing"}])
    assert h[0]["content"] in again and "src/parser.py" in again


def summary_sections(summary: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    for line in summary.splitlines():
        if line.startswith("## "):
            sections[line[3:]] = []
        else:
            sections[list(sections)[-1]].append(line)
    return sections


def test_structured_summary_files_intentions_under_next_steps_not_decisions():
    h = [{"role": "user", "content": "Fix parse() in src/parser.py"},
         *exchange("t1", "read_file", "def parse(text): ...",
                   text="I need to see how render() is used in src/parser.py; I will read it."),
         {"role": "assistant", "content": "I decided to return an empty list instead, because "
                                          "callers iterate over the result. I will run the tests next."}]
    sections = summary_sections(structured_summary(h))
    assert sections["Decisions"] == [
        "- I decided to return an empty list instead, because callers iterate over the result."]
    assert sections["Next steps"] == ["- I will run the tests next."]
    only_intentions = h[:3] + [{"role": "assistant", "content": "Let me run the tests."}]
    assert summary_sections(structured_summary(only_intentions))["Decisions"] == [
        "- (none stated)"]


def test_model_summarizer_offline_goes_through_the_sdk():
    client = offline_client(SummaryBrain())
    summarize = model_summarizer(client, model="claude-sonnet-5-5")
    h, _ = long_session(6)
    s = summarize(h[:-1])
    assert s.startswith("## Task") and "src/parser.py" in s


# --------------------------------------------------------------------------- CompactPolicy

def small_policy(**kw) -> CompactPolicy:
    return CompactPolicy(CompactThresholds(2_000, 3_000, 4_000), **kw)


def ctx_for(h, times, now, turn=1):
    return ViewContext(times=tuple(times), now=now, turn=turn)


def test_policy_stops_after_the_cheapest_stage_that_suffices():
    h, times = long_session(20)
    h = h[:-1]
    times = times[:-1]
    policy = small_policy(collapse_keep_recent_tokens=1_500)
    # under the first threshold: nothing runs
    view = policy(h[:3], ctx_for(h[:3], times[:3], times[2]))
    assert policy.records[-1]["stage"] == "none" and view == h[:3]
    # everything old: micro_compact alone is enough
    view = policy(h, ctx_for(h, times, times[-1] + 10 * 3600))
    rec = policy.records[-1]
    assert [s["stage"] for s in rec["stages"]] == ["micro_compact"]
    assert rec["tokens_before"] >= 2_000 and rec["tokens_after"] < 3_000
    assert rec["tokens_after"] == approx_tokens(view)
    # nothing old: micro_compact saves nothing, collapse runs
    view = policy(h, ctx_for(h, times, times[-1]))
    rec = policy.records[-1]
    assert [s["stage"] for s in rec["stages"]] == ["micro_compact", "context_collapse"]
    assert rec["stages"][0]["tokens_before"] == rec["stages"][0]["tokens_after"]
    assert rec["tokens_after"] == approx_tokens(view) < 4_000
    validate_messages(view)


def test_policy_auto_compact_reuses_its_summary_and_stops_after_three_failures():
    h, times = long_session(30)
    calls = []

    def summarize(ms):
        calls.append(len(ms))
        return "short summary of the session"
    policy = small_policy(summarize=summarize, collapse_keep_recent_tokens=100_000)
    n = len(h) - 1
    v1 = policy(h[:n], ctx_for(h[:n], times[:n], times[n - 1]))
    assert policy.records[-1]["stage"] == "auto_compact" and len(calls) == 1
    assert v1[0]["content"][0]["text"].startswith(SUMMARY_PREFIX)
    validate_messages(v1)
    # the next request (two more messages) starts from the kept summary, no new generation
    longer = h[:n] + [{"role": "assistant", "content": "more"}, {"role": "user", "content": "ok"}]
    v2 = policy(longer, ctx_for(longer, list(times[:n]) + [times[n - 1]] * 2, times[n - 1]))
    assert len(calls) == 1 and v2[0] == v1[0] and v2[-2:] == longer[-2:]
    assert policy.records[-1]["stages"][0]["stage"] == "reuse_summary"

    failing = small_policy(summarize=lambda ms: 1 / 0, collapse_keep_recent_tokens=100_000)
    count = 0

    def boom(ms):
        nonlocal count
        count += 1
        raise RuntimeError("model down")
    failing.summarize = boom
    for _ in range(5):
        view = failing(h[:n], ctx_for(h[:n], times[:n], times[n - 1]))
        validate_messages(view)
    assert count == 3 and failing.consecutive_failures == 3
    assert "disabled" in failing.records[-1]["stages"][-1]["failed"]


def test_overhead_guard_is_a_clear_error_not_a_loop():
    tools = [{"name": f"tool_{i}", "description": "d" * 400, "input_schema": {"type": "object"}}
             for i in range(30)]
    overhead = overhead_tokens_of(system="s" * 400, tools=tools)
    assert overhead > 2_000
    with pytest.raises(OverheadTooLargeError, match="system prompt \\+ tools"):
        small_policy(overhead_tokens=overhead)
    assert small_policy(overhead_tokens=1_999).overhead_tokens == 1_999


def test_reactive_compaction_makes_the_retry_fit():
    h, times = long_session(20)
    h, times = h[:-1], times[:-1]
    tools = [{"name": n, "description": n, "input_schema": {"type": "object"}}
             for n in ("read_file", "grep", "run_bash", "edit_file")]
    client = offline_client(EchoBrain(), context_window_tokens=5_000, max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
        client.messages.create(model="claude-sonnet-5-5", max_tokens=50, messages=h, tools=tools)
    policy = small_policy()
    view = policy.on_context_overflow(h, ctx_for(h, times, times[-1]))
    assert policy.records[-1]["stage"] == "reactive"
    reply = client.messages.create(model="claude-sonnet-5-5", max_tokens=50, messages=view, tools=tools)
    assert reply.stop_reason in ("end_turn", "max_tokens")
    assert view[0]["content"][0]["text"] == h[0]["content"]


def test_server_compaction_simulated():
    edit = ServerCompaction()
    client = compaction_client(edit, EchoBrain())
    h, _ = long_session(70)         # ~50,800 tokens: the API's smallest trigger is 50,000
    h = h[:-1]
    tools = [{"name": n, "description": n, "input_schema": {"type": "object"}}
             for n in ("read_file", "grep", "run_bash", "edit_file")]
    cm = {"edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens",
                                                             "value": 50_000}}]}
    r = client.beta.messages.create(model="claude-sonnet-5-5", max_tokens=200, messages=h, tools=tools,
                                    context_management=cm, betas=["compact-2026-01-12"])
    assert [b.type for b in r.content] == ["compaction", "text"]
    assert r.content[0].content.startswith("## Task")
    assert r.content[0].encrypted_content
    assert r.context_management is None     # no invented applied_edits entry
    assert len(edit.compactions) == 1
    follow = h + [{"role": "assistant", "content": [b.model_dump(exclude_none=True)
                                                    for b in r.content]},
                  {"role": "user", "content": "continue"}]
    cm2 = {"edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens",
                                                              "value": 100_000}}]}
    r2 = client.beta.messages.create(model="claude-sonnet-5-5", max_tokens=200, messages=follow, tools=tools,
                                     context_management=cm2, betas=["compact-2026-01-12"])
    assert r2.content[0].text == "You said: continue"
    seen = client._client._transport.requests[-1]["messages"] if hasattr(client, "_client") \
        else None
    if seen is not None:
        assert seen[0]["content"][0]["text"].startswith(SUMMARY_PREFIX) and len(seen) == 3
    # pause_after_compaction: the block alone, stop_reason "compaction"
    cm3 = {"edits": [{**cm["edits"][0], "pause_after_compaction": True}]}
    r3 = client.beta.messages.create(model="claude-sonnet-5-5", max_tokens=200, messages=h, tools=tools,
                                     context_management=cm3, betas=["compact-2026-01-12"])
    assert r3.stop_reason == "compaction" and [b.type for b in r3.content] == ["compaction"]


# --------------------------------------------------------------------------- properties

@st.composite
def timed_histories(draw):
    h = draw(histories(min_turns=1, max_turns=8))
    gaps = draw(st.lists(st.sampled_from([0.0, 30.0, 1800.0, 3600.0, 5000.0]),
                         min_size=len(h), max_size=len(h)))
    times, t = [], T0
    for g in gaps:
        t += g
        times.append(t)
    return h, times, t + draw(st.sampled_from([0.0, 3600.0, 7200.0]))


def _stages(h, times, now):
    summarize = structured_summary
    return {
        "micro_compact": lambda v: micro_compact(v, times=times, now=now)
        if len(v) == len(times) else v,
        "context_collapse": lambda v: context_collapse(v, keep_recent_tokens=60),
        "auto_compact": lambda v: auto_compact(v, summarize=summarize),
    }


@settings(max_examples=80, deadline=None)
@given(timed_histories())
def test_every_stage_validates_keeps_input_is_idempotent_and_never_grows(case):
    h, times, now = case
    before = copy.deepcopy(h)
    for name, stage in _stages(h, times, now).items():
        once = stage(h)
        assert h == before, name
        validate_messages(once)  # also proves no kit key leaked into blocks or messages
        assert approx_tokens(once) <= approx_tokens(h), name
        if name != "micro_compact" or len(once) == len(h):
            assert stage(once) == once, name


@settings(max_examples=60, deadline=None)
@given(timed_histories(), st.integers(0, 3))
def test_policy_and_reactive_views_validate(case, scale):
    h, times, now = case
    before = copy.deepcopy(h)
    policy = CompactPolicy(CompactThresholds(10 + scale * 20, 20 + scale * 30, 30 + scale * 40),
                           summarize=structured_summary)
    ctx = ViewContext(times=tuple(times), now=now, turn=1)
    view = policy(h, ctx)
    validate_messages(view)
    assert approx_tokens(view) <= approx_tokens(h)
    assert policy.records[-1]["tokens_after"] == approx_tokens(view)
    validate_messages(reactive_compact(h, ctx, summarize=structured_summary))
    assert h == before


def test_metadata_in_a_block_is_refused_like_the_api():
    h = history_of("read_file")
    h[2]["content"][0]["timestamp"] = T0
    client = offline_client(EchoBrain(), max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="unexpected keys"):
        client.messages.create(model="claude-sonnet-5-5", max_tokens=50, messages=h, tools=[
            {"name": "read_file", "description": "r", "input_schema": {"type": "object"}}])


def test_summary_identifiers_are_paths_and_symbols_not_raw_tool_arguments():
    from mini_agent.core.server_compaction import structured_summary
    history = [
        {"role": "user", "content": "Fix parse() in src/parser.py."},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "grep",
             "input": {"pattern": "tokenize(", "path": "src"}},
            {"type": "tool_use", "id": "toolu_2", "name": "read_file",
             "input": {"path": "src/parser.py"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "src/lexer.py:3: x"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "def parse(): ..."}]},
        {"role": "assistant", "content": "Done."},
    ]
    section = structured_summary(history).split("## Identifiers\n")[1].split("\n## ")[0]
    identifiers = [line[2:] for line in section.splitlines()]
    assert "src/parser.py" in identifiers and "src/lexer.py" in identifiers
    assert "tokenize(" not in identifiers and "src" not in identifiers


# ------------------------------------------------------- tool pairing after a failed request

def _history_with_unanswered_call(trailing_prompt=True):
    history = [{"role": "user", "content": "task " * 50},
               {"role": "assistant", "content": "ok " * 200},
               {"role": "user", "content": "more " * 200},
               {"role": "assistant", "content": [
                   {"type": "text", "text": "Reading it."},
                   {"type": "tool_use", "id": "toolu_x", "name": "read_file", "input": {}}]}]
    if trailing_prompt:   # the next prompt was appended after the request failed
        history.append({"role": "user", "content": "Try again."})
    return history


@pytest.mark.parametrize("trailing_prompt", [True, False])
@pytest.mark.parametrize("stage", ["auto_compact", "context_collapse"])
def test_compaction_answers_a_call_whose_result_never_arrived(stage, trailing_prompt):
    from mini_agent.core.messages import NO_RESULT_TEXT, validate_messages
    history = _history_with_unanswered_call(trailing_prompt)
    before = repr(history)
    if stage == "auto_compact":
        view = auto_compact(history, summarize=lambda part: "short summary")
    else:
        view = context_collapse(history, keep_recent_tokens=10)
    assert repr(history) == before
    validate_messages(view)
    answer = next(b for m in view if isinstance(m["content"], list) for b in m["content"]
                  if b.get("type") == "tool_result")
    assert answer == {"type": "tool_result", "tool_use_id": "toolu_x", "content": NO_RESULT_TEXT,
                      "is_error": True}


def test_overhead_just_under_the_threshold_does_not_summarise_every_turn():
    from mini_agent.core.long_session import long_session as session
    calls = []

    def summarize(messages):
        calls.append(len(messages))
        return structured_summary(messages)

    policy = CompactPolicy(CompactThresholds(5_000, 5_000, 5_000), summarize=summarize,
                           overhead_tokens=4_900)
    history, times = session(30)
    for n in range(3, len(history) + 1, 2):
        policy(history[:n], ViewContext(times=tuple(times[:n]), now=times[n - 1], turn=n))
    assert len(policy.records) == 30
    assert 1 <= len(calls) <= 15          # it was 29: a summary on every request but the first
    skipped = [s for r in policy.records for s in r["stages"] if "skipped" in s]
    assert skipped and all(s["stage"] == "auto_compact" for s in skipped)
    assert all(r["stage"] != "auto_compact" for r in policy.records
               if any("skipped" in s for s in r["stages"]))


@settings(max_examples=60, deadline=None)
@given(hostile_histories(max_turns=12))
def test_compaction_outputs_keep_tool_pairing_after_any_crash_cut(history):
    from mini_agent.core.messages import validate_messages
    # the next prompt arrives after the history stopped anywhere (maybe after a lost call)
    if history[-1]["role"] == "user":
        history = history + [{"role": "assistant", "content": "Noted."}]
    history = history + [{"role": "user", "content": "Go on — 続けて."}]
    before = repr(history)
    for view in (auto_compact(history, summarize=lambda part: "summary — 要約"),
                 context_collapse(history, keep_recent_tokens=50)):
        validate_messages(view)
    assert repr(history) == before
