"""Tests for mini_agent.core.hindsight: the DP equals brute force; no policy beats it."""

from __future__ import annotations

import contextlib
import copy
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mini_agent.core.breakeven_masking import BreakEvenMasking
from mini_agent.core.cache_policies import PaybackMasking, replay_with_cache, request_points
from mini_agent.core.hindsight import masking_bound
from mini_agent.core.pricing import model_price
from mini_agent.core.masking import ChunkedMasking, ThresholdMasking, mask_old_observations
from mini_agent.core.long_session import long_session
from strategies import hostile_histories

MODEL = "claude-sonnet-4-6"
SYSTEM = "You are a coding agent. " * 60  # ~360 tokens, so small sessions are cacheable


def _tokens(history, b):
    view = history
    if b:  # mask only the oldest b results: rebuild from the two versions
        n = 0
        view = []
        masked = mask_old_observations(history, keep=0)
        for m, mm in zip(history, masked):
            if m["role"] == "user" and isinstance(m["content"], list):
                blocks = []
                for blk, mblk in zip(m["content"], mm["content"]):
                    if blk.get("type") == "tool_result":
                        blocks.append(mblk if n < b else blk)
                        n += 1
                    else:
                        blocks.append(blk)
                view.append({**m, "content": blocks})
            else:
                view.append(m)
    from mini_agent.core.prompt_cache import prefix_boundaries
    bounds = prefix_boundaries({"model": MODEL, "system": SYSTEM, "messages": view})
    return view, bounds


def brute_force(messages, points, keep, minimum, *, model=MODEL, times=None, ttl=300.0):
    """Cheapest schedule by enumerating every non-decreasing boundary sequence."""
    price = model_price(model).input_usd_per_mtok / 1e6
    read_x = model_price(model).cache_read_multiplier
    n_results = [sum(1 for m in messages[:i] if m["role"] == "user"
                     and isinstance(m["content"], list)) for i in points]
    tops = [max(0, n - keep) for n in n_results]
    best = float("inf")
    for schedule in itertools.product(*[range(t + 1) for t in tops]):
        if any(a > b for a, b in zip(schedule, schedule[1:])):
            continue
        total, prev = 0.0, None
        for r, (i, b) in enumerate(zip(points, schedule)):
            _, bounds = _tokens(messages[:i], b)
            t = bounds[-1].prefix_tokens
            read = 0
            if prev is not None and (times is None or times[r] - times[r - 1] <= ttl):
                pb, pbounds = prev
                pt = pbounds[-1].prefix_tokens
                # longest common prefix of block hashes = what is unchanged
                common = 0
                for x, y in zip(pbounds, bounds):
                    if x.prefix_hash != y.prefix_hash:
                        break
                    common = x.prefix_tokens
                read = common if common >= minimum and pt >= minimum else 0
            total += (read_x * read + 1.25 * (t - read)) if t >= minimum else t
            prev = (b, bounds)
        best = min(best, total * price)
    return best


def test_dp_equals_brute_force_on_a_small_session():
    history, _ = long_session(6)
    points = request_points(history)
    before = copy.deepcopy(history)
    bound = masking_bound(history, points, model=MODEL, system=SYSTEM, keep=1, min_tokens=1024)
    assert history == before
    assert bound.usd == pytest.approx(brute_force(history, points, 1, 1024), rel=1e-9)
    assert len(bound.schedule) == len(points) == len(bound.request_usd)
    assert list(bound.schedule) == sorted(bound.schedule)
    assert bound.usd == pytest.approx(sum(bound.request_usd))


@pytest.mark.parametrize("model,keep,minimum,times", [
    ("claude-sonnet-5-5", 1, 1024, [0.0, 20.0, 400.0, 420.0, 440.0, 1000.0, 1010.0]),  # reads 0.05x
    (MODEL, 0, 2048, None),                      # early requests below the minimum
    (MODEL, 2, 512, [0.0, 301.0, 320.0, 340.0, 360.0, 380.0, 700.0])])
def test_dp_equals_brute_force_with_pauses_prices_and_minimums(model, keep, minimum, times):
    history, _ = long_session(6)
    points = request_points(history)
    bound = masking_bound(history, points, model=model, system=SYSTEM, keep=keep,
                          min_tokens=minimum, times=times)
    assert bound.usd == pytest.approx(
        brute_force(history, points, keep, minimum, model=model, times=times), rel=1e-9)


def test_bound_moves_when_results_are_big_and_never_below_zero_keep():
    history, _ = long_session(30)
    points = request_points(history)
    bound = masking_bound(history, points, model=MODEL, system=SYSTEM, keep=4)
    assert bound.moves  # big read_file results: masking pays off at some point
    results_at = [sum(1 for m in history[:i] if m["role"] == "user"
                      and isinstance(m["content"], list)) for i in points]
    assert all(b <= max(0, n - 4) for b, n in zip(bound.schedule, results_at))


@pytest.mark.parametrize("policy,resume", [
    (None, False), (ThresholdMasking(keep=4, threshold_tokens=0), False),
    (ChunkedMasking(keep=4, chunk=8, threshold_tokens=0), False), (PaybackMasking(), True),
    (BreakEvenMasking.for_model(MODEL, system=SYSTEM), True)])
def test_no_masking_policy_beats_the_bound(policy, resume):
    history, _ = long_session(30)
    bound = masking_bound(history, request_points(history), model=MODEL, system=SYSTEM)
    records = replay_with_cache(history, model=MODEL, policy=policy, system=SYSTEM,
                                resume=resume)
    assert sum(r["cost_usd"] for r in records) >= bound.usd * (1 - 1e-9)


def test_ttl_gaps_make_the_bound_dearer_and_bad_input_raises():
    history, _ = long_session(10)
    points = request_points(history)
    near = masking_bound(history, points, model=MODEL, system=SYSTEM,
                         times=[60.0 * n for n in range(len(points))])
    far = masking_bound(history, points, model=MODEL, system=SYSTEM,
                        times=[600.0 * n for n in range(len(points))])
    assert far.usd > near.usd
    # with every gap past the TTL nothing is ever read: every request writes all its tokens
    price = model_price(MODEL).input_usd_per_mtok / 1e6
    assert far.usd == pytest.approx(sum((1.25 * t if t >= 1024 else t) * price
                                        for t in far.request_tokens))
    with pytest.raises(ValueError, match="keep"):
        masking_bound(history, points, model=MODEL, keep=-1)
    with pytest.raises(ValueError, match="times"):
        masking_bound(history, points, model=MODEL, times=[0.0])


@pytest.mark.parametrize("model", [MODEL, "claude-sonnet-5-5"])
def test_the_bound_is_reached_by_replaying_its_own_schedule(model):
    # the bound idealises reads (a cache entry at every changed block); replayed through the
    # simulator with resume breakpoints, its own schedule costs at most 1% more, never less
    history, _ = long_session(40)
    points = request_points(history)
    bound = masking_bound(history, points, model=model, system=SYSTEM)
    assert len(bound.moves) >= 2
    where = {i: b for i, b in zip(points, bound.schedule)}

    def follow(h, ctx=None):
        b = where[len(h)]
        total = sum(1 for m in h if m["role"] == "user" and isinstance(m["content"], list))
        return mask_old_observations(h, keep=total - b) if b else list(h)

    records = replay_with_cache(history, model=model, policy=follow, system=SYSTEM, resume=True)
    replayed = sum(r["cost_usd"] for r in records)
    assert bound.usd * (1 - 1e-9) <= replayed <= 1.01 * bound.usd


def _odd_history():
    """A session with the shapes the direct count must get right: empty and string content,
    a message with no blocks, a thinking block, an image inside a tool result."""
    from mini_agent.core.sample_sessions import sample_session_jsonl
    import json
    history = [json.loads(line)["message"] for line in sample_session_jsonl(8, variant=3)
               .splitlines() if "message" in json.loads(line)]
    history = [m for m in history if isinstance(m, dict) and "role" in m] or long_session(8)[0]
    png = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6k"
           "gAAAABJRU5ErkJggg==")
    extra = [{"role": "user", "content": ""},
             {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm " * 50,
                                                "signature": "s"},
                                               {"type": "tool_use", "id": "x1", "name": "see",
                                                "input": {"path": "ü.png", "n": 1}}]},
             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x1",
                                           "content": [{"type": "text", "text": "a\nb"},
                                                       {"type": "image", "source": {
                                                           "type": "base64",
                                                           "media_type": "image/png",
                                                           "data": png}}]}]},
             {"role": "assistant", "content": []},
             {"role": "assistant", "content": "ok"}]
    return history + extra


@pytest.mark.parametrize("system", [SYSTEM, "", None,
                                    [{"type": "text", "text": "a" * 999},
                                     {"type": "text", "text": "b" * 99,
                                      "cache_control": {"type": "ephemeral"}}]])
def test_direct_block_tokens_equal_prefix_boundaries(system):
    from mini_agent.core.hindsight import _block_tokens, _direct_block_tokens
    for history in (long_session(12)[0], _odd_history()):
        body = {"model": MODEL, "messages": history}
        if system:
            body["system"] = system
        assert _direct_block_tokens(history, system, None) == _block_tokens(body)
    assert _direct_block_tokens(history, system, [{"name": "t"}]) is None
    assert _direct_block_tokens([{"role": "user", "content": ["str block"]}], system,
                                None) is None


@pytest.mark.parametrize("history", [long_session(30)[0], _odd_history()])
def test_the_direct_bound_equals_the_bound_from_prefix_boundaries(history, monkeypatch):
    import mini_agent.core.hindsight as hindsight
    points = request_points(history)
    kwargs = dict(model=MODEL, system=SYSTEM, keep=2,
                  times=[100.0 * n for n in range(len(points))])
    fast = masking_bound(history, points, **kwargs)
    monkeypatch.setattr(hindsight, "_direct_block_tokens", lambda *a: None)
    assert masking_bound(history, points, **kwargs) == fast
    assert fast.moves or len(points) < 10


@pytest.mark.parametrize("memo", [False, True])
@pytest.mark.parametrize("history", [long_session(12)[0], _odd_history()])
def test_masked_result_tokens_equal_those_of_the_masked_history(history, memo):
    from mini_agent.core.hindsight import _masked_result_tokens
    from mini_agent.core.messages import tool_result_positions
    from mini_agent.core.tokens import approx_tokens, token_memo
    short = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "s",
                                          "content": "ok"}]}  # shorter than a placeholder
    history = [*history, short]
    positions = tool_result_positions(history)
    with token_memo() if memo else contextlib.nullcontext():
        got = _masked_result_tokens(history, positions)
        masked = mask_old_observations(history, keep=0)
    want = {("messages", i, j): approx_tokens(masked[i]["content"][j]) for i, j in positions}
    assert got == want and len(got) > 3
    assert got[("messages", len(history) - 1, 0)] == approx_tokens(short["content"][0])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=hostile_histories(max_turns=12), keep=st.integers(0, 3),
       system=st.sampled_from([SYSTEM, "", None, [{"type": "text", "text": "x" * 2000}]]),
       session=st.booleans())
def test_the_bound_read_from_a_block_memo_equals_the_counted_one(history, keep, system,
                                                                  session):
    """``masking_bound(memo=...)`` reads each block's tokens from the memo: the same bound."""
    from mini_agent.core.block_memo import BlockMemo
    from mini_agent.core.tokens import token_memo
    points = request_points(history)
    if not points:
        return
    kwargs = dict(model=MODEL, system=system, keep=keep,
                  times=[200.0 * n * n for n in range(len(points))])
    with token_memo() if session else contextlib.nullcontext():
        counted = masking_bound(history, points, **kwargs)
        read = masking_bound(history, points, memo=BlockMemo(history), **kwargs)
    assert read == counted


@pytest.mark.parametrize("history", [long_session(12)[0], _odd_history()])
def test_the_bound_read_from_a_block_memo_equals_the_counted_one_on_odd_histories(history):
    from mini_agent.core.block_memo import BlockMemo
    history = [*history, {"role": "user", "content": []}, {"role": "assistant", "content": []},
               {"role": "user", "content": "again"}, {"role": "assistant", "content": "ok"}]
    points = request_points(history)
    for system in (SYSTEM, None):
        want = masking_bound(history, points, model=MODEL, system=system, keep=1)
        assert masking_bound(history, points, model=MODEL, system=system, keep=1,
                             memo=BlockMemo(history)) == want


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=hostile_histories(max_turns=14), keep=st.integers(0, 3),
       minimum=st.sampled_from([0, 50, 400, 1024, 4096]),
       gaps=st.lists(st.sampled_from([10.0, 100.0, 400.0]), min_size=30, max_size=30))
def test_the_steady_step_equals_the_general_step(history, keep, minimum, gaps):
    """The DP's usual-case step gives the bound the general step gives, bit for bit."""
    import mini_agent.core.hindsight as hindsight
    points = request_points(history)
    if not points:
        return
    times = list(itertools.accumulate(gaps[:len(points)]))
    kwargs = dict(model=MODEL, system=SYSTEM, keep=keep, times=times, min_tokens=minimum)
    fast = masking_bound(history, points, **kwargs)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hindsight, "_steady_step", hindsight._step)
        assert masking_bound(history, points, **kwargs) == fast


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=hostile_histories(max_turns=12))
def test_result_positions_read_from_the_memo_equal_tool_result_positions(history):
    from mini_agent.core.block_memo import BlockMemo
    from mini_agent.core.hindsight import _result_positions
    from mini_agent.core.messages import tool_result_positions
    odd = {"type": "tool_result", "tool_use_id": "x", "content": "in the wrong message"}
    history = [*history, {"role": "assistant", "content": [{"type": "text", "text": "a"}, odd]},
               {"role": "user", "content": "plain"}, {"role": "user", "content": []},
               {"role": "user", "content": [{"type": "text", "text": "b"}, odd]}]
    want = tool_result_positions(history)
    assert _result_positions(history, BlockMemo(history).infos(history)) == want
    assert want[-1] == (len(history) - 1, 1)
