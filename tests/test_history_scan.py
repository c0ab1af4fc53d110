"""The per-session fast paths (history scans, memoised copies) equal the plain functions.

Inside ``token_memo()`` the masking family reads prefix sums and cached copies from a
:class:`~mini_agent.core.history_scan.HistoryScan` instead of recounting the history at every
request. Each test replays histories request by request inside one memo (as
``evaluate_session`` does) and compares with the plain code run outside any memo, and, for
``payback_boundary``, with a copy of its original quadratic loop.
"""

import copy

import pytest
from hypothesis import given, settings
from strategies import hostile_histories

from mini_agent.core.cache_policies import (PaybackMasking, payback_boundary, request_points,
                                            result_savings)
from mini_agent.core.compaction import micro_compact
from mini_agent.core.history_scan import scan_for
from mini_agent.core.masking import (ChunkedMasking, ThresholdMasking, mask_old_observations,
                                     placeholder)
from mini_agent.core.messages import (assistant, tool_names_by_id, tool_result_block,
                                      tool_result_positions, tool_result_text, tool_use_block, user)
from mini_agent.core.sample_sessions import sample_transcript
from mini_agent.core.timeline import cold_label, fold_exchange
from mini_agent.core.tokens import approx_tokens, token_memo


def _reference_result_savings(history, exclude_tools):
    names = tool_names_by_id(history) if exclude_tools else {}
    out = []
    for i, j in tool_result_positions(history):
        block = history[i]["content"][j]
        saved = approx_tokens(block) - approx_tokens(placeholder(tool_result_text(block)))
        if names.get(block.get("tool_use_id")) in exclude_tools:
            saved = 0
        out.append((i, max(0, saved)))
    return out


def _reference_payback(history, *, keep=4, horizon_ratio=0.5, min_free_tokens=2_000,
                       exclude_tools=(), min_cacheable_tokens=1024, min_free_ratio=2.0,
                       write_multiplier=1.25, read_multiplier=0.1):
    """payback_boundary as it was before the prefix sums (quadratic), the oracle."""
    results = _reference_result_savings(history, tuple(exclude_tools))
    message_tokens = [approx_tokens(m) for m in history]
    boundary = requests = seen_results = 0
    for t, message in enumerate(history):
        while seen_results < len(results) and results[seen_results][0] <= t:
            seen_results += 1
        if message.get("role") != "user":
            continue
        requests += 1
        candidate = max(boundary, seen_results - keep)
        if candidate <= boundary:
            continue
        freed = sum(s for _, s in results[boundary:candidate])
        if freed < min_free_tokens:
            continue
        if sum(message_tokens[:t + 1]) - sum(s for _, s in results[:candidate]) \
                < min_cacheable_tokens:
            continue
        first = results[boundary - 1][0] if boundary else 0
        masked_before = sum(s for i, s in results[:boundary] if i >= first)
        suffix = sum(message_tokens[first:t + 1]) - masked_before - freed
        extra = (write_multiplier - read_multiplier) * suffix - read_multiplier * freed
        if freed < min_free_ratio * suffix:
            continue
        if read_multiplier * freed * horizon_ratio * requests > extra:
            boundary = candidate
    return boundary


PAYBACK_OPTIONS = [{}, {"keep": 1, "min_free_tokens": 200, "min_free_ratio": 0.5},
                   {"keep": 0, "min_free_tokens": 0, "min_cacheable_tokens": 0,
                    "horizon_ratio": 3.0}]


def _sessions():
    for steps, variant in ((3, 0), (12, 1), (12, 4), (40, 2)):
        yield sample_transcript(steps, variant=variant)


def _prefixes(messages):
    return [messages[:i] for i in request_points(messages)] + [list(messages)]


def _plain(fn, histories):
    return [fn(h) for h in histories]


def _memoised(fn, histories):
    with token_memo():
        return [fn(h) for h in histories]


CALLS = {
    "approx_tokens": approx_tokens,
    "tool_result_positions": tool_result_positions,
    "result_savings": lambda h: result_savings(h, ()),
    "result_savings_excluding": lambda h: result_savings(h, ("read_file",)),
    "mask_keep_0": lambda h: mask_old_observations(h, keep=0),
    "mask_keep_3": lambda h: mask_old_observations(h, keep=3),
    "mask_excluding": lambda h: mask_old_observations(h, keep=1, exclude_tools=("grep",)),
    "threshold": lambda h: ThresholdMasking(keep=10, threshold_tokens=0)(h),
    "threshold_high": lambda h: ThresholdMasking(keep=2, threshold_tokens=3_000)(h),
    "chunked": lambda h: ChunkedMasking(keep=4, chunk=8, threshold_tokens=0)(h),
    "chunked_3": lambda h: ChunkedMasking(keep=1, chunk=3, threshold_tokens=0)(h),
    "payback_policy": lambda h: PaybackMasking()(h),
    "micro_compact": lambda h: micro_compact(h, times=[100.0 * i for i in range(len(h))],
                                             now=100.0 * len(h) + 1_000),
    "micro_compact_all": lambda h: micro_compact(h, times=[0.0] * len(h), now=1e9),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_fast_paths_equal_the_plain_functions_request_by_request(name):
    for transcript in _sessions():
        messages = transcript.messages
        snapshot = copy.deepcopy(messages)
        histories = _prefixes(messages)
        plain = _plain(CALLS[name], histories)
        # twice in one memo: growing, then again from the start (a second policy)
        with token_memo():
            fast = [CALLS[name](h) for h in histories] + [CALLS[name](h) for h in histories]
        assert fast == plain + plain, name
        assert messages == snapshot  # never mutated


@pytest.mark.parametrize("options", PAYBACK_OPTIONS)
def test_payback_boundary_equals_the_quadratic_original(options):
    for transcript in _sessions():
        histories = _prefixes(transcript.messages)
        expected = [_reference_payback(h, **options) for h in histories]
        assert _plain(lambda h: payback_boundary(h, **options), histories) == expected
        assert _memoised(lambda h: payback_boundary(h, **options), histories) == expected
        excluded = [_reference_payback(h, exclude_tools=("read_file",), **options)
                    for h in histories]
        assert _memoised(lambda h: payback_boundary(h, exclude_tools=("read_file",),
                                                    **options), histories) == excluded
    assert any(b > 0 for b in expected)  # the oracle does move on a 40-step session


@pytest.mark.parametrize("keep,chunk,threshold", [(0, 1, 0), (4, 8, 0), (2, 3, 2_000),
                                                   (10, 1, 6_000)])
def test_chunked_view_equals_the_plain_chunked_policy(keep, chunk, threshold):
    moved = kept = 0
    for transcript in _sessions():
        histories = _prefixes(transcript.messages)
        policy = ChunkedMasking(keep=keep, chunk=chunk, threshold_tokens=threshold)
        plain = _plain(policy, histories)   # outside a memo: the policy's plain code
        with token_memo():
            fast = [scan_for(h).chunked_view(h, keep, chunk, threshold) for h in histories]
        assert fast == plain
        moved += sum(v != h for v, h in zip(plain, histories))
        kept += sum(approx_tokens(h) <= threshold for h in histories)
    assert moved and (kept or not threshold)   # both branches were taken


def _odd_history():
    """Repeated ids, a result before its tool_use, a result of no tool_use, a list result."""
    big = "line\n" * 400
    return [
        user("go"),
        assistant([tool_use_block("t1", "read_file", {"path": "a"})]),
        user([tool_result_block("t1", big), tool_result_block("t9", big)]),
        assistant([tool_use_block("t1", "run_bash", {"command": "ls"})]),   # t1 again
        user([tool_result_block("t1", [{"type": "text", "text": big}])]),
        assistant([tool_use_block("t9", "grep", {"pattern": "x"})]),        # after its result
        user([tool_result_block("t9", big), tool_result_block("t2", "short")]),
        assistant("done"),
    ]


@pytest.mark.parametrize("name", sorted(CALLS))
def test_irregular_ids_fall_back_to_the_plain_functions(name):
    history = _odd_history()
    histories = [history[:k] for k in range(1, len(history) + 1)]
    assert _memoised(CALLS[name], histories) == _plain(CALLS[name], histories)


def test_diverging_histories_with_the_same_first_message():
    history = _odd_history()
    other = history[:3] + [assistant([tool_use_block("t5", "grep", {"pattern": "y"})]),
                           user([tool_result_block("t5", "z\n" * 900)])]
    calls = [history, other, history[:5], other, history]
    for fn in (approx_tokens, lambda h: mask_old_observations(h, keep=0),
               lambda h: payback_boundary(h, min_free_tokens=0, min_cacheable_tokens=0)):
        assert _memoised(fn, calls) == _plain(fn, calls)


def test_tuples_and_slices_of_other_chains_are_counted_plainly():
    history = sample_transcript(6, variant=3).messages
    with token_memo():
        ThresholdMasking(keep=1, threshold_tokens=0)(history)   # scans the history
        assert approx_tokens(tuple(history)) == approx_tokens(list(history))
        tail = history[3:]
        assert scan_for(tail, create=False) is None
        assert mask_old_observations(tail, keep=0) == _plain(
            lambda h: mask_old_observations(h, keep=0), [tail])[0]


def test_views_are_new_lists_and_share_the_masked_copies():
    messages = sample_transcript(12, variant=1).messages
    policy = ThresholdMasking(keep=2, threshold_tokens=0)
    with token_memo():
        first = policy(messages[:-3])
        second = policy(messages)
    assert first is not second and first[0] is messages[0]
    masked = [k for k, m in enumerate(first) if m is not messages[k]]
    assert masked  # something was masked
    # a message masked the same way in both views is the same object (made once)
    same = [k for k in masked if second[k]["content"] == first[k]["content"]]
    assert same and all(second[k] is first[k] for k in same)


def test_the_memo_ends_with_its_block():
    """A message changed between two replays is counted again (no stale scan survives)."""
    history = [user("x" * 400), assistant("ok"), user("y" * 40)]
    with token_memo():
        assert approx_tokens(history) == 111  # ceil(442 / 4)
        ThresholdMasking(threshold_tokens=0)(history)
    history[2] = user("y" * 4000)
    with token_memo():
        assert ThresholdMasking(threshold_tokens=0)(history) == history
        assert approx_tokens(history) == 1101  # ceil(4402 / 4)


def test_fold_exchange_memo_equals_the_plain_line():
    messages = sample_transcript(12, variant=2).messages
    exchanges = [messages[k:k + 2] for k in range(1, len(messages) - 1, 2)]
    plain = [fold_exchange(e, segment=f"seg-{k:03d}", time_seconds=60.0 * k)
             for k, e in enumerate(exchanges)]
    with token_memo():
        for _ in range(2):
            assert [fold_exchange(e, segment=f"seg-{k:03d}", time_seconds=60.0 * k)
                    for k, e in enumerate(exchanges)] == plain
        # same messages, another segment: another line
        assert fold_exchange(exchanges[0], segment="seg-999", time_seconds=0.0) == \
            plain[0].replace("seg-000", "seg-999")
    labels = [cold_label(e) for e in exchanges]
    with token_memo():
        assert [cold_label(e) for e in exchanges] * 2 == labels + [cold_label(e) for e in exchanges]
        assert cold_label(exchanges[0][:1]) == labels[0]  # the label reads the assistant turn


def test_a_tool_use_given_a_new_input_is_counted_again():
    block = {"type": "tool_use", "id": "t", "name": "grep", "input": {"pattern": "a"}}
    with token_memo():
        before = approx_tokens(block)   # json.dumps of {"pattern": "a"} + 4 + 20 chars
        block["input"] = {"pattern": "a" * 400}
        assert approx_tokens(block) == before + 100


def _outcome(fn, history):
    try:
        return "ok", fn(history)
    except Exception as error:  # the fast path must fail where the plain one does
        return "raise", type(error).__name__


@settings(max_examples=15, deadline=None)
@given(hostile_histories(max_turns=14))
def test_hostile_histories_give_the_plain_answers(history):
    """Parallel calls, results out of order, images, cache markers, crash cuts."""
    histories = [history[:k] for k in range(1, len(history) + 1)]
    snapshot = copy.deepcopy(history)
    for name, fn in sorted(CALLS.items()):
        plain = [_outcome(fn, h) for h in histories]
        with token_memo():
            fast = [_outcome(fn, h) for h in histories]
        assert fast == plain, name
    loose = PAYBACK_OPTIONS[2]
    oracle = [_outcome(lambda h: _reference_payback(h, **loose), h) for h in histories]
    with token_memo():
        assert [_outcome(lambda h: payback_boundary(h, **loose), h) for h in histories] == oracle
    assert history == snapshot
