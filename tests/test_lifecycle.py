"""Tests for mini_agent.core.lifecycle: tiers, timeline lines, the cold store and the recall tool."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings, strategies as st

from mini_agent.core.lifecycle import COLD, COLD_INDEX_HEADER, HOT, TIMELINE_HEADER, WARM_A, WARM_B, LifecyclePolicy, LifecycleThresholds, assign_tiers, fold_exchange, lifecycle_view, split_exchanges
from mini_agent.harness.cold_store import ColdStore, recall_segment_tool
from mini_agent.core.messages import validate_messages
from mini_agent.core.long_session import long_session
from mini_agent.core.tokens import approx_tokens
from mini_agent.harness.tools import ToolError
from mini_agent.core.view import ViewContext
from strategies import histories

T0 = 1_767_225_600.0  # 2026-01-01T00:00Z


def session(steps=30):
    h, t = long_session(steps)
    return h[:-1], t[:-1]


def test_fold_exchange_literal_lines():
    ex = [{"role": "assistant", "content": [
              {"type": "text", "text": "The header is wrong. I will check the parser."},
              {"type": "tool_use", "id": "a", "name": "read_file", "input": {"path": "src/app.py"}},
              {"type": "tool_use", "id": "b", "name": "grep", "input": {"pattern": "parse("}}]},
          {"role": "user", "content": [
              {"type": "tool_result", "tool_use_id": "a", "content": "1\n2\n3"},
              {"type": "tool_result", "tool_use_id": "b", "content": "No such dir\nmore",
               "is_error": True},
              {"type": "text", "text": "Also look at cli.py please."}]}]
    assert fold_exchange(ex, segment="seg-007", time_seconds=T0 + 14 * 3600 + 30 * 60) == (
        "[14:30] read_file+grep (seg-007): src/app.py 3 lines, parse( error: No such dir more; "
        "The header is wrong.; user: Also look at cli.py please.")
    reply = [{"role": "assistant", "content": "All done."}]
    assert fold_exchange(reply, segment="seg-010", time_seconds=T0 + 59) == \
        "[00:00] reply (seg-010): All done."


def test_tiers_by_exchange_age_and_relevance():
    h, t = session(12)
    th = LifecycleThresholds(hot_exchanges=2, warm_a_exchanges=4, warm_b_exchanges=8,
                             max_relevant=0)
    assert assign_tiers(h, thresholds=th) == [COLD] * 4 + [WARM_B] * 4 + [WARM_A] * 2 + [HOT] * 2
    # the request names src/parser.py: the newest older exchange that touched it becomes Hot
    h2 = h + [{"role": "assistant", "content": "Done."},
              {"role": "user", "content": "Show me src/parser.py again"}]
    tiers = assign_tiers(h2, thresholds=LifecycleThresholds(2, 4, 8, max_relevant=1))
    ranges = split_exchanges(h2)
    promoted = [k for k, tier in enumerate(tiers[:-2]) if tier == HOT]
    assert len(promoted) == 1
    s, e = ranges[promoted[0]]
    assert "src/parser.py" in json.dumps(h2[s:e])


def test_budget_demotes_oldest_first_and_keeps_newest_hot():
    h, t = session(20)
    th = LifecycleThresholds(hot_exchanges=3, warm_a_exchanges=6, warm_b_exchanges=15,
                             max_relevant=0,
                             view_budget_tokens=2_500)
    view, info = lifecycle_view(h, times=t, thresholds=th)
    assert approx_tokens(view) <= 2_500
    tiers = info["tiers"]
    rank = {HOT: 0, WARM_A: 1, WARM_B: 2, COLD: 3}
    assert all(rank[a] >= rank[b] for a, b in zip(tiers, tiers[1:]))  # colder is older
    assert tiers[-1] == HOT
    impossible = LifecycleThresholds(view_budget_tokens=1)
    assert lifecycle_view(h, times=t, thresholds=impossible)[1]["tiers"][-1] == HOT


def test_view_layout_timeline_and_cold_index():
    h, t = session(12)
    th = LifecycleThresholds(hot_exchanges=2, warm_a_exchanges=4, warm_b_exchanges=8,
                             max_relevant=0)
    view, info = lifecycle_view(h, times=t, thresholds=th)
    validate_messages(view)
    head = view[0]["content"]
    assert head[0] == {"type": "text", "text": h[0]["content"]}  # the task, verbatim
    assert head[1]["text"].startswith(COLD_INDEX_HEADER)
    assert head[1]["text"].splitlines()[1] == "seg-001: " + info["cold"][0][1]
    assert head[2]["text"].startswith(TIMELINE_HEADER)
    assert head[2]["text"].splitlines()[1].startswith("[00:10] ")
    assert "(seg-005)" in head[2]["text"].splitlines()[1]
    # Warm-A: results masked, reasoning kept; Hot: verbatim
    ranges = split_exchanges(h)
    assert view[-4:] == h[ranges[-2][0]:]
    warm_a = view[1:5]
    assert warm_a[0] == h[ranges[8][0]]
    assert warm_a[1]["content"][0]["content"].startswith("[observation masked")


def test_cold_store_restart_ties_eviction_and_exact_reheat(tmp_path):
    path = tmp_path / "cold.sqlite"
    store = ColdStore(path)
    odd = [{"role": "assistant", "content": [{"type": "text", "text": "é ✓ \"q\" \n\t",
                                              "z": 1, "a": 2.5}]}]
    store.put("seg-002", "second", T0, odd)          # same timestamp, inserted first
    store.put("seg-001", "first", T0, [{"role": "user", "content": "x"}])
    assert store.put("seg-002", "second", T0, odd) == 1  # idempotent
    with pytest.raises(ValueError, match="already stored"):
        store.put("seg-002", "second", T0, [{"role": "user", "content": "other"}])
    store.close()
    again = ColdStore(path)                             # a restart
    assert [s["id"] for s in again.segments()] == ["seg-002", "seg-001"]
    assert again.reheat_json("seg-002") == json.dumps(odd, ensure_ascii=False)
    assert again.reheat("seg-002") == odd
    assert list(again.reheat("seg-002")[0]["content"][0]) == ["type", "text", "z", "a"]
    assert again.evict_oldest(1) == ["seg-002"]         # by sequence, not by time or id
    assert [s["id"] for s in again.segments()] == ["seg-001"]
    again.put("seg-003", "third", T0 - 100, [{"role": "user", "content": "y"}])
    assert [s["seq"] for s in again.segments()] == [2, 3]  # a deleted seq is never reused
    with pytest.raises(KeyError, match="unknown cold segment"):
        again.reheat("seg-999")


def test_cold_store_accepts_a_segment_whose_last_turn_grew():
    # a continuation request can show an open user turn cold; the next prompt extends it
    store = ColdStore()
    turn = [{"role": "assistant", "content": [{"type": "text", "text": "a"}]},
            {"role": "user", "content": [{"type": "text", "text": "b"}]}]
    grown = [turn[0], {"role": "user", "content": [*turn[1]["content"],
                                                   {"type": "text", "text": "c"}]}]
    assert store.put("seg-001", "reply", T0, turn) == 1
    assert store.put("seg-001", "reply", T0, grown) == 1 and store.reheat("seg-001") == grown
    with pytest.raises(ValueError, match="already stored"):
        store.put("seg-001", "reply", T0, turn)  # shrinking would lose blocks
    with pytest.raises(ValueError, match="already stored"):
        store.put("seg-001", "reply", T0, [turn[1], grown[1]])


def test_policy_stores_cold_segments_and_the_tool_reheats_them():
    h, t = session(30)
    store = ColdStore()
    policy = LifecyclePolicy(LifecycleThresholds(2, 4, 8, max_relevant=0), store=store)
    view = policy(h, ViewContext(times=tuple(t), now=t[-1], turn=3))
    rec = policy.records[-1]
    assert rec["turn"] == 3 and rec["counts"][COLD] == 22 == len(store)
    assert rec["view_tokens"] == approx_tokens(view) < rec["raw_tokens"]
    tool = recall_segment_tool(store)
    assert tool.safety == "read-only" and tool.name == "recall_segment"
    ranges = split_exchanges(h)
    assert json.loads(tool.run({"id": "seg-005"})) == h[ranges[4][0]:ranges[4][1]]
    with pytest.raises(ToolError, match="seg-001"):
        tool.run({"id": "seg-404"})
    with pytest.raises(ToolError):
        tool.run({})
    policy(h, ViewContext(times=tuple(t), now=t[-1], turn=4))  # same segments again: no error
    assert len(store) == 22


@st.composite
def timed(draw):
    h = draw(histories(min_turns=1, max_turns=10))
    times = [T0 + 60 * i for i in range(len(h))]
    th = LifecycleThresholds(draw(st.integers(1, 2)), draw(st.integers(2, 4)),
                             draw(st.integers(4, 6)),
                             view_budget_tokens=draw(st.sampled_from([None, 50, 400])))
    return h, times, th


@settings(max_examples=60, deadline=None)
@given(timed())
def test_lifecycle_view_properties(case):
    h, times, th = case
    before = copy.deepcopy(h)
    view, info = lifecycle_view(h, times=times, thresholds=th)
    assert h == before
    validate_messages(view)  # no kit metadata in the wire format, pairing intact
    assert approx_tokens(view) <= approx_tokens(h)
    assert len(info["tiers"]) == len(split_exchanges(h))
    # deterministic: the same history gives the same view and tiers
    assert lifecycle_view(h, times=times, thresholds=th) == (view, info)
    # each tier transition alone keeps the view valid and never grows it
    for tier in (HOT, WARM_A, WARM_B, COLD):
        tiers = [tier] * (len(info["tiers"]) - 1) + [HOT] if info["tiers"] else []
        v, _ = lifecycle_view(h, times=times, tiers=tiers)
        validate_messages(v)
        assert approx_tokens(v) <= approx_tokens(h)


def test_the_model_reheats_a_cold_segment_through_the_agent():
    from mini_agent.harness.agent import Agent
    from mini_agent.offline import offline_client
    from mini_agent.offline.brains import ScriptedBrain
    h, t = session(30)
    store = ColdStore()
    LifecyclePolicy(store=store)(h, ViewContext(times=tuple(t), now=t[-1]))
    brain = ScriptedBrain([{"content": [
        {"type": "text", "text": "Let me reheat seg-003."},
        {"type": "tool_use", "id": "toolu_r1", "name": "recall_segment",
         "input": {"id": "seg-003"}}], "stop_reason": "tool_use"}, "Done."])
    agent = Agent(offline_client(brain), tools={"recall_segment": recall_segment_tool(store)})
    agent.run("What did seg-003 contain?")
    result = agent.history[2]["content"][0]
    assert not result.get("is_error"), result
    assert result["content"] == store.reheat_json("seg-003")  # tool runs in a worker thread
    ranges = split_exchanges(h)
    assert json.loads(result["content"]) == h[ranges[2][0]:ranges[2][1]]
