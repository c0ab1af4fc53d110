"""Tests for mini_agent.core.replay (the explorer's per-session report) and its two views."""

from __future__ import annotations

import copy

import pytest

from mini_agent.core.cache_policies import request_points, replay_with_cache
from mini_agent.core.policy_views import ServerCompactionView, SummaryPolicy
from mini_agent.core.replay import (DEFAULT_POLICIES, UnknownPolicyError, evaluate_session,
                                    policy_spec)
from mini_agent.core.retention import Fact
from mini_agent.core.masking import ThresholdMasking
from mini_agent.core.messages import validate_messages
from mini_agent.core.long_session import long_session
from mini_agent.core.sample_sessions import SAMPLE_OVERHEAD_TOKENS, sample_session_jsonl
from mini_agent.core.transcripts import Transcript, parse_text

POLICY_FIELDS = {"name", "tokens_sent", "usd", "hit_rate", "cache_breaks", "retained_facts",
                 "total_facts", "vs_best"}


@pytest.fixture(scope="module")
def sample():
    return parse_text(sample_session_jsonl(14), name="s.jsonl")


@pytest.fixture(scope="module")
def report(sample):
    return evaluate_session(sample, policies=("raw", "mask-2", "chunked-4", "payback"))


def test_report_fields_and_requests(sample, report):
    assert report["format"] == "claude-code" and report["model"].startswith("claude-sonnet-4-5")
    assert len(report["requests"]) == len(sample.usage) == 15
    first = report["requests"][0]
    # the sample's usage is the kit's own count: the estimate matches it, overhead included
    assert first["real_input_tokens"] == first["estimated_input_tokens"] > SAMPLE_OVERHEAD_TOKENS
    assert first["error"] == 0 and abs(report["overhead_tokens"] - SAMPLE_OVERHEAD_TOKENS) <= 1
    assert report["estimator_median_abs_error"] < 0.001
    assert [p["name"] for p in report["policies"]] == ["raw", "mask-2", "chunked-4", "payback"]
    assert all(POLICY_FIELDS <= set(p) for p in report["policies"])


def test_raw_row_is_the_simulators_replay_and_every_policy_is_at_or_above_the_bound(report):
    raw = report["policies"][0]
    assert raw["vs_best"] == pytest.approx(raw["usd"] / report["bound"]["usd"])
    assert all(p["vs_best"] >= 1 - 1e-9 for p in report["policies"])
    assert raw["cache_breaks"] == 0 and raw["retained_facts"] == raw["total_facts"] > 0
    masked = report["policies"][1]
    assert masked["tokens_sent"] < raw["tokens_sent"]
    assert masked["cache_breaks"] > 0  # every-turn masking moves the prefix every request


def test_given_facts_are_counted_in_the_last_view(sample):
    facts = [Fact("src/parser.py", "identifier", message=0), Fact("never said", "number")]
    out = evaluate_session(sample, policies=("raw",), facts=facts)
    assert (out["policies"][0]["retained_facts"], out["policies"][0]["total_facts"]) == (1, 2)


def test_unknown_policy_and_model():
    with pytest.raises(UnknownPolicyError, match="known: raw"):
        policy_spec("nope")
    with pytest.raises(UnknownPolicyError):
        policy_spec("chunked-0")
    assert {policy_spec(p).name for p in DEFAULT_POLICIES} == set(DEFAULT_POLICIES)
    t = Transcript(messages=[{"role": "user", "content": "hi"},
                             {"role": "assistant", "content": "ok"}], usage=[None],
                   repairs=[], source_format="messages-json")
    from mini_agent.core.pricing import UnknownModelError
    with pytest.raises(UnknownModelError):
        evaluate_session(t, policies=("raw",), model="gpt-nothing")


def test_summary_policy_summarises_every_n_turns_and_keeps_its_summary():
    history, _ = long_session(30)
    calls = []

    def summarize(messages):
        calls.append(len(messages))
        return f"summary of {len(messages)} messages"

    policy = SummaryPolicy(every_exchanges=8, keep_exchanges=3, summarize=summarize)
    before = copy.deepcopy(history)
    views = [policy(history[:i]) for i in request_points(history)]
    assert history == before
    assert policy.summaries == len(calls) >= 3
    for view in views:
        validate_messages(view)
    last = views[-1]
    assert last[0]["content"][0]["text"].startswith("[Summary of the conversation")
    assert sum(1 for m in last if m["role"] == "assistant") <= 8
    with pytest.raises(ValueError):
        SummaryPolicy(every_exchanges=3, keep_exchanges=3)


def test_server_compaction_view_compacts_at_the_trigger_and_starts_from_the_summary():
    history, _ = long_session(30)
    view = ServerCompactionView(trigger_tokens=5_000, summarize=lambda ms: "S")
    records = replay_with_cache(history, model="claude-sonnet-4-6", policy=view,
                                keep_views=True)
    assert view.summaries >= 2
    sizes = [r["view_tokens"] for r in records]
    assert max(sizes) < 5_000 + 3_000  # never far above the trigger
    assert all(r["view"][0]["content"][0]["text"].endswith("\nS")
               for r in records[-3:])
    plain = replay_with_cache(history, model="claude-sonnet-4-6",
                              policy=ThresholdMasking(keep=4, threshold_tokens=0))
    assert len(plain) == len(records)


def test_replay_with_recorded_times_expires_the_cache_after_a_long_pause():
    history, times = long_session(6)
    times = list(times)
    pause = request_points(history)[3]  # when the 4th request is answered
    for k in range(pause, len(times)):
        times[k] += 3600.0  # an hour's pause before the 4th request is answered
    records = replay_with_cache(history, model="claude-sonnet-4-6", times=times,
                                system="You are a coding agent. " * 200)
    reads = [r["usage"]["cache_read_input_tokens"] for r in records]
    assert reads[3] == 0 and reads[2] > 0 and reads[4] > 0
    with pytest.raises(ValueError, match="parallel"):
        replay_with_cache(history, model="claude-sonnet-4-6", times=times[:-1])


def test_facts_and_retention_in_the_report_equal_counting_them_afresh():
    import dataclasses

    from mini_agent.core.retention import extract_facts, facts_in_text, view_text
    t = parse_text(sample_session_jsonl(12, variant=3), name="s.jsonl")
    report = evaluate_session(t, keep_views=True)
    facts = extract_facts(t.messages)
    assert report["facts"] == [dataclasses.asdict(f) for f in facts] and len(facts) >= 5
    due = [f for f in facts if f.message < request_points(t.messages)[-1]]
    kept = [sum(facts_in_text(view_text(p["records"][-1]["view"]), due))
            for p in report["policies"]]
    assert [p["retained_facts"] for p in report["policies"]] == kept
    assert len(set(kept)) > 1  # the policies differ: a shared count would be wrong
    fast = evaluate_session(t)
    assert [p["retained_facts"] for p in fast["policies"]] == kept
