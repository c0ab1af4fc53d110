"""Tests for mini_agent.core.breakeven_masking: the move rule by hand, cold moves, the bound."""

from __future__ import annotations

import copy

import pytest

from mini_agent.core.breakeven_masking import BreakEvenMasking, breakeven_boundary
from mini_agent.core.cache_policies import PaybackMasking, replay_with_cache, request_points
from mini_agent.core.hindsight import masking_bound
from mini_agent.core.long_session import long_session
from mini_agent.core.masking import placeholder
from mini_agent.core.replay import evaluate_session
from mini_agent.core.view import ViewContext

MODEL = "claude-sonnet-5-5"  # cache reads at 0.05x
SYSTEM = "You are a coding agent. " * 60


def reads(n: int) -> list[dict]:
    """A 100-token task, then ``n`` read_file calls of 1,000-token results (12-token calls).

    Masking one result saves 990 tokens (its placeholder keeps 10).
    """
    history = [{"role": "user", "content": "x" * 400}]
    for k in range(n):
        history.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{k}", "name": "read_file", "input": {"path": f"f{k}"}}]})
        history.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{k}", "content": "y" * 4000}]})
    return history


def masked_count(view: list[dict]) -> int:
    return sum(1 for m in view if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result" and b["content"] == placeholder("y" * 4000))


def test_moves_when_twice_the_rent_paid_beats_the_rewrite():
    # keep=1, read 0.1: at the request after result 4 (history of 9 messages) the rent paid
    # is 0.1 * (990 + 1980 + 2970) = 594 and the re-write 1.15 * 1178 - 297 = 1057.7 < 2 * 594;
    # one request earlier 2 * 297 = 594 < 1131.4. The rent restarts after each move.
    history = reads(12)
    got = [breakeven_boundary(history[:2 * n + 1], keep=1, min_cacheable_tokens=0)
           for n in range(1, 13)]
    assert got == [0, 0, 0, 3, 3, 3, 6, 6, 6, 9, 9, 9]
    # at the model's read price (0.05) the reads saved are worth half: later, bigger moves
    cheap = [breakeven_boundary(history[:2 * n + 1], keep=1, min_cacheable_tokens=0,
                                read_multiplier=0.05) for n in range(1, 13)]
    assert cheap == [0, 0, 0, 0, 0, 5, 5, 5, 5, 5, 10, 10]
    # a rent factor of 1 (classic break-even) waits one request longer
    assert breakeven_boundary(history[:9], keep=1, min_cacheable_tokens=0, rent_factor=1) == 0
    assert breakeven_boundary(history[:11], keep=1, min_cacheable_tokens=0, rent_factor=1) == 4


def test_a_cold_cache_makes_the_move_free_and_restarts_the_rent():
    history = reads(4)
    times = [float(k) for k in range(len(history))]
    warm = dict(keep=1, min_cacheable_tokens=0)
    # the request of history[:5] sent 400 s after the previous one: move at once
    assert breakeven_boundary(history[:5], times=times[:5], now=5.0, **warm) == 0
    assert breakeven_boundary(history[:5], times=times[:5], now=400.0, **warm) == 1
    assert breakeven_boundary(history[:5], times=times[:5], now=400.0, ttl_seconds=3600,
                              **warm) == 0
    # a past pause (before the request of history[:5]): that request moved to 1 and the
    # rent restarted, so the warm move to 3 at history[:9] does not happen yet
    paused = times[:5] + [t + 500 for t in times[5:]]
    assert breakeven_boundary(history, times=paused, now=509.0, **warm) == 1
    assert breakeven_boundary(history, times=times, now=9.0, **warm) == 3
    # times not parallel to the history: no pause is ever seen
    assert breakeven_boundary(history, times=times[:3], now=900.0, **warm) == 3


def test_the_minimum_cacheable_length_counts_the_system_prompt():
    history = reads(4)
    assert breakeven_boundary(history, keep=1, min_cacheable_tokens=4096) == 0
    assert breakeven_boundary(history, keep=1, min_cacheable_tokens=4096,
                              fixed_tokens=3000) == 3
    policy = BreakEvenMasking.for_model(MODEL, system="s" * 4000)
    assert (policy.read_multiplier, policy.min_cacheable_tokens, policy.fixed_tokens) == \
        (0.05, 1024, 1000)
    blocks = BreakEvenMasking.for_model(MODEL, system=[{"type": "text", "text": "s" * 800}])
    assert blocks.fixed_tokens == 200
    with pytest.raises(ValueError):
        BreakEvenMasking(rent_factor=0)
    with pytest.raises(ValueError, match="keep"):
        breakeven_boundary(history, keep=-1)


def test_the_view_masks_the_oldest_results_and_leaves_the_history_alone():
    history = reads(4)
    before = copy.deepcopy(history)
    policy = BreakEvenMasking(keep=1, min_cacheable_tokens=0)
    view = policy(history, ViewContext())
    assert history == before
    assert masked_count(view) == 3
    assert [b["content"] == placeholder("y" * 4000) for m in view[2::2]
            for b in m["content"]] == [True, True, True, False]
    assert policy(history[:7]) == history[:7] and policy(history[:7]) is not history


def test_never_below_the_bound_and_closer_to_it_than_payback_at_the_new_prices():
    history, _ = long_session(30)
    points = request_points(history)
    bound = masking_bound(history, points, model=MODEL, system=SYSTEM).usd

    def cost(policy):
        return sum(r["cost_usd"] for r in replay_with_cache(
            history, model=MODEL, policy=policy, system=SYSTEM, resume=True))

    ours = cost(BreakEvenMasking.for_model(MODEL, system=SYSTEM))
    assert bound <= ours <= 1.05 * bound
    assert cost(PaybackMasking()) > 1.09 * bound  # payback prices reads at 0.1, not 0.05


def test_the_explorer_replays_it_by_name(shared_data):
    from mini_agent.harness.transcript_files import load
    # a Claude Code session with two pauses past the TTL: the free moves close the gap
    path = shared_data / "claude-code" / "entire-haiku45-telemetry-plan.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    report = evaluate_session(load(path, text_actions="tools"),
                              policies=("payback", "breakeven"))
    payback, ours = report["policies"]
    assert ours["name"] == "breakeven"
    assert 1.0 <= ours["vs_best"] < 1.02 < 1.10 < payback["vs_best"]
