"""Tests for mini_agent.core.masking: literal seed behaviours, error paths, and properties."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_agent.core.masking import (
                                     MASK_THRESHOLD_TOKENS, ChunkedMasking, ThresholdMasking, chunked_mask_count,
                                     count_tool_results, is_masked, mask_old_observations, masking_curve, masking_stats,
                                     placeholder, should_mask)
from mini_agent.core.messages import iter_blocks, validate_messages
from mini_agent.core.tokens import approx_tokens
from mini_agent.core.view import ViewContext
from strategies import histories, tiny_png

LONG = "\n".join(f"line {k}: " + "x" * 60 for k in range(1, 11))  # 10 lines, 700+ chars


def exchange(tid: str, output, *, name: str = "read_file", is_error: bool = False,
             thought: str | None = None) -> list[dict]:
    """One assistant tool_use and the user message answering it."""
    content = [{"type": "text", "text": thought}] if thought else []
    content.append({"type": "tool_use", "id": tid, "name": name, "input": {"path": tid}})
    result = {"type": "tool_result", "tool_use_id": tid, "content": output}
    if is_error:
        result["is_error"] = True
    return [{"role": "assistant", "content": content}, {"role": "user", "content": [result]}]


def build(n: int, output: str = LONG, **kwargs) -> list[dict]:
    history = [{"role": "user", "content": "Fix the failing test."}]
    for k in range(1, n + 1):
        history += exchange(f"toolu_{k:02d}", output, thought=f"Step {k}.", **kwargs)
    return history


def results(history: list[dict]) -> list[dict]:
    return [b for _, _, b in iter_blocks(history) if b.get("type") == "tool_result"]


MASKED_10 = "[observation masked — 10 lines omitted]"


# --------------------------------------------------------------------------- literal behaviours

def test_masks_all_but_newest_keep_oldest_first():
    history = build(6)
    view = mask_old_observations(history, keep=4)
    assert [r["content"] for r in results(view)] == [MASKED_10] * 2 + [LONG] * 4
    assert [r["tool_use_id"] for r in results(view)] == [f"toolu_{k:02d}" for k in range(1, 7)]
    assert len(view) == len(history) == 13


def test_default_keep_is_four():
    assert [is_masked(r) for r in results(mask_old_observations(build(5)))] == \
        [True, False, False, False, False]


def test_masked_block_keeps_every_other_key():
    history = build(2, is_error=True)
    history[2]["content"][0]["cache_control"] = {"type": "ephemeral"}
    block = mask_old_observations(history, keep=1)[2]["content"][0]
    assert block == {"type": "tool_result", "tool_use_id": "toolu_01", "content": MASKED_10,
                     "is_error": True, "cache_control": {"type": "ephemeral"}}


def test_assistant_and_user_text_untouched():
    history = build(3)
    history[2]["content"].append({"type": "text", "text": LONG})  # user text beside a result
    view = mask_old_observations(history, keep=0)
    assert view[0] == {"role": "user", "content": "Fix the failing test."}
    assert view[2]["content"][1] == {"type": "text", "text": LONG}
    for i in (1, 3, 5):
        assert view[i] is history[i]  # assistant text and tool_use blocks: the same objects
    assert all(is_masked(r) for r in results(view))


def test_line_count_follows_the_seed():
    assert placeholder("a") == "[observation masked — 1 lines omitted]"
    assert placeholder("a\nb\n") == "[observation masked — 3 lines omitted]"  # split("\n")
    assert placeholder("a\r\nb") == "[observation masked — 2 lines omitted]"
    assert placeholder("") == "[observation masked — 1 lines omitted]"


def test_list_content_with_text_and_image():
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": tiny_png(800, 600)}}
    output = [{"type": "text", "text": "screenshot of\nthe page"}, image,
              {"type": "text", "text": "\nfooter"}]
    history = build(2, output=output)
    view = mask_old_observations(history, keep=1)
    assert results(view)[0]["content"] == "[observation masked — 3 lines omitted]"
    assert results(view)[1]["content"] == output
    # the 640 image tokens (800*600/750) go; 29 text chars become a 38-char placeholder
    assert approx_tokens(history) - approx_tokens(view) == 638


def test_keep_zero_masks_all_and_keep_beyond_count_masks_none():
    history = build(3)
    assert [r["content"] for r in results(mask_old_observations(history, keep=0))] == \
        [MASKED_10] * 3
    for keep in (3, 4, 100):
        view = mask_old_observations(history, keep=keep)
        assert view == history and view is not history


def test_no_tool_results_and_string_content_histories():
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert mask_old_observations(history, keep=0) == history
    assert mask_old_observations([], keep=0) == []


def test_input_not_mutated():
    history = build(6)
    before = copy.deepcopy(history)
    mask_old_observations(history, keep=1)
    assert history == before


def test_exclude_tools_by_name_through_the_matching_tool_use():
    history = [{"role": "user", "content": "go"}]
    history += exchange("t1", LONG, name="read_file")
    history += exchange("t2", LONG, name="grep")
    history += exchange("t3", LONG, name="read_file")
    view = mask_old_observations(history, keep=1, exclude_tools=("read_file",))
    assert [r["content"] for r in results(view)] == [LONG, MASKED_10, LONG]
    assert mask_old_observations(history, keep=1, exclude_tools={"grep", "read_file"}) == history


def test_idempotent_and_already_masked_results_stay():
    history = build(6)
    once = mask_old_observations(history, keep=2)
    assert mask_old_observations(once, keep=2) == once
    # a placeholder among the kept ones is not unmasked, and not re-counted as 1 line
    assert [r["content"] for r in results(mask_old_observations(once, keep=5))] == \
        [MASKED_10] * 4 + [LONG] * 2
    assert [r["content"] for r in results(mask_old_observations(once, keep=0))] == \
        [MASKED_10] * 6


def test_results_shorter_than_the_placeholder_stay_verbatim():
    history = build(3, output="ok")
    assert mask_old_observations(history, keep=0) == history


def test_bad_arguments():
    with pytest.raises(ValueError, match="keep must be >= 0"):
        mask_old_observations(build(1), keep=-1)
    with pytest.raises(TypeError, match="keep must be an int"):
        mask_old_observations(build(1), keep=2.0)
    with pytest.raises(TypeError, match="keep must be an int"):
        mask_old_observations(build(1), keep=True)
    with pytest.raises(TypeError, match="not a str"):
        mask_old_observations(build(1), exclude_tools="read_file")


def test_view_is_valid_for_the_api():
    validate_messages(mask_old_observations(build(8, is_error=True), keep=0))


# --------------------------------------------------------------------------- policies

def test_threshold_policy_masks_only_above_the_threshold():
    history = build(6)
    raw = approx_tokens(history)
    ctx = ViewContext()
    at = ThresholdMasking(keep=4, threshold_tokens=raw)(history, ctx)
    assert at == history and at is not history  # "> threshold", not ">="
    above = ThresholdMasking(keep=4, threshold_tokens=raw - 1)(history, ctx)
    assert above == mask_old_observations(history, keep=4)
    assert ThresholdMasking().threshold_tokens == MASK_THRESHOLD_TOKENS == 8_000


def test_should_mask_is_the_policy_trigger_and_keep_may_be_positional():
    """Exercise 03's signatures: should_mask(messages, threshold_tokens=8000), keep second."""
    history = build(6)
    raw = approx_tokens(history)
    assert [should_mask(history, raw - 1), should_mask(history, raw)] == [True, False]
    assert should_mask(history) is (raw > 8_000)
    assert should_mask([{"role": "user", "content": "y" * 32_004}]) is True
    assert mask_old_observations(history, 2) == mask_old_observations(history, keep=2)


def test_policy_errors():
    with pytest.raises(ValueError):
        ThresholdMasking(keep=-1)
    with pytest.raises(ValueError):
        ThresholdMasking(threshold_tokens=-5)
    with pytest.raises(ValueError, match="chunk"):
        ChunkedMasking(chunk=0)
    with pytest.raises(ValueError):
        ChunkedMasking(keep=-2)
    with pytest.raises(TypeError):
        ChunkedMasking(exclude_tools="grep")


def test_chunked_mask_count():
    assert [chunked_mask_count(r, keep=4, chunk=8) for r in range(0, 30, 3)] == \
        [0, 0, 0, 0, 8, 8, 8, 16, 16, 16]
    assert [chunked_mask_count(r, keep=2, chunk=1) for r in range(5)] == [0, 0, 0, 1, 2]


def test_chunked_boundary_moves_only_in_whole_chunks():
    policy = ChunkedMasking(keep=4, chunk=8, threshold_tokens=0)
    masked_counts = []
    previous = None
    for n in range(1, 30):
        view = policy(build(n), ViewContext())
        masked_counts.append(sum(is_masked(r) for r in results(view)))
        if previous is not None and masked_counts[-1] == masked_counts[-2]:
            # same boundary: the previous request's view is a byte-identical prefix
            assert json.dumps(view[:len(previous)]) == json.dumps(previous)
        previous = view
    assert masked_counts == [0] * 11 + [8] * 8 + [16] * 8 + [24] * 2


def test_chunk_one_equals_threshold_masking():
    history = build(9)
    assert ChunkedMasking(keep=3, chunk=1, threshold_tokens=0)(history) == \
        ThresholdMasking(keep=3, threshold_tokens=0)(history)


# --------------------------------------------------------------------------- stats and curve

def test_masking_stats_literal():
    history = build(6)
    stats = masking_stats(history, keep=4)
    assert stats == {"messages": 13, "raw_tokens": approx_tokens(history),
                     "masked_tokens": approx_tokens(mask_old_observations(history)),
                     "masked_count": 2}
    # results of 690 chars; two become 39-char placeholders: 2 * 651 chars = ~325.5 tokens
    assert stats["raw_tokens"] - stats["masked_tokens"] == 326
    with pytest.raises(ValueError):
        masking_stats(history, keep=-1)


def test_masking_curve_literal():
    history = build(3)
    curve = masking_curve(history, keep=1, threshold_tokens=0)
    assert [r for r, _, _ in curve] == [1, 2, 3, 4]
    assert curve[0] == (1, 6, 6)  # "Fix the failing test." = 21 chars
    assert curve[-1] == (4, approx_tokens(history),
                         approx_tokens(mask_old_observations(history, keep=1)))
    # a threshold above every request leaves view == raw
    assert all(raw == view for _, raw, view in masking_curve(history, threshold_tokens=10**6))


def naive_curve(history, keep, threshold, chunk=1, exclude=()):
    policy = ChunkedMasking(keep=keep, chunk=chunk, threshold_tokens=threshold,
                            exclude_tools=exclude)
    prefixes = [history[:i + 1] for i, m in enumerate(history) if m["role"] == "user"]
    return [(r, approx_tokens(p), approx_tokens(policy(p)))
            for r, p in enumerate(prefixes, 1)]


# --------------------------------------------------------------------------- properties

keeps = st.integers(0, 6)


@settings(max_examples=80, deadline=None)
@given(histories(), keeps)
def test_property_view_is_valid_and_input_unchanged(history, keep):
    before = copy.deepcopy(history)
    view = mask_old_observations(history, keep=keep)
    assert history == before
    validate_messages(view)
    assert len(view) == len(history)


@settings(max_examples=80, deadline=None)
@given(histories(), keeps)
def test_property_estimate_never_increases(history, keep):
    assert approx_tokens(mask_old_observations(history, keep=keep)) <= approx_tokens(history)


@settings(max_examples=80, deadline=None)
@given(histories(), keeps)
def test_property_newest_keep_results_byte_identical(history, keep):
    view = mask_old_observations(history, keep=keep)
    raw_results, view_results = results(history), results(view)
    assert len(raw_results) == len(view_results) == count_tool_results(history)
    newest = slice(max(0, len(raw_results) - keep), None)
    assert json.dumps(view_results[newest]) == json.dumps(raw_results[newest])
    # everything that is not a tool_result's content is unchanged
    strip = [{k: v for k, v in b.items() if k != "content"} if b.get("type") == "tool_result"
             else b for _, _, b in iter_blocks(history)]
    assert strip == [{k: v for k, v in b.items() if k != "content"}
                     if b.get("type") == "tool_result" else b for _, _, b in iter_blocks(view)]


@settings(max_examples=80, deadline=None)
@given(histories(), keeps, st.sets(st.sampled_from(["read_file", "grep", "run_bash"])))
def test_property_idempotent(history, keep, exclude):
    once = mask_old_observations(history, keep=keep, exclude_tools=exclude)
    assert mask_old_observations(once, keep=keep, exclude_tools=exclude) == once


@settings(max_examples=60, deadline=None)
@given(histories(max_turns=10), keeps, st.integers(0, 3000), st.integers(1, 4),
       st.sets(st.sampled_from(["read_file", "grep"])))
def test_property_curve_equals_per_prefix_views(history, keep, threshold, chunk, exclude):
    assert masking_curve(history, keep=keep, threshold_tokens=threshold, chunk=chunk,
                         exclude_tools=exclude) == \
        naive_curve(history, keep, threshold, chunk, tuple(exclude))


@settings(max_examples=60, deadline=None)
@given(histories(max_turns=10), keeps, st.integers(1, 4), st.integers(0, 500))
def test_property_policies_send_valid_smaller_views(history, keep, chunk, threshold):
    before = copy.deepcopy(history)
    for policy in (ThresholdMasking(keep=keep, threshold_tokens=threshold),
                   ChunkedMasking(keep=keep, chunk=chunk, threshold_tokens=threshold)):
        view = policy(history, ViewContext())
        validate_messages(view)
        assert approx_tokens(view) <= approx_tokens(history)
        assert results(view)[max(0, count_tool_results(history) - keep):] == \
            results(history)[max(0, count_tool_results(history) - keep):]
    assert history == before


def _plain_masked_block(block):
    """masked_block's rule in the words of its doc: the placeholder copy when masking pays."""
    from mini_agent.core.mask_placeholder import _saved_chars
    from mini_agent.core.messages import tool_result_text
    if is_masked(block) or _saved_chars(block) <= 0:
        return None
    return {**block, "content": placeholder(tool_result_text(block))}


_CONTENTS = st.one_of(
    st.text(alphabet="ab\n[]— 0123456789", max_size=80),
    st.sampled_from(["[observation masked — 3 lines omitted]", "[observation masked — x",
                     "[" + "y\n" * 40, "", placeholder("a\nb") + "\n"]),
    st.lists(st.fixed_dictionaries({"type": st.sampled_from(["text", "image"]),
                                    "text": st.text(alphabet="c\n", max_size=60)}),
             max_size=3))


@settings(max_examples=300, deadline=None)
@given(_CONTENTS, st.sampled_from(["tool_result", "text"]), st.booleans())
def test_masked_block_equals_its_plain_rule(content, kind, memo):
    from mini_agent.core.mask_placeholder import masked_block
    block = {"type": kind, "tool_use_id": "t", "content": content}
    if kind == "text":
        block["text"] = "z" * 50
    before = copy.deepcopy(block)
    held = {} if memo else None
    got = masked_block(block, held)
    assert got == _plain_masked_block(block) and block == before
    if memo:
        assert masked_block(block, held) is got   # kept: the same copy again
