"""Tests for mini_agent.core.tier_forms and the timeline clock: each fast path equals its plain function."""

from __future__ import annotations

import copy
import math
import re

from hypothesis import given, settings, strategies as st

from mini_agent.core.exchange_memo import chars_of, split_exchanges
from mini_agent.core.masking import mask_old_observations
from mini_agent.core.tier_forms import cold_form, segment_id, warm_a_counted, warm_a_form, warm_b_form
from mini_agent.core.timeline import (_HEAD_CHARS, _first_sentence, _fold, _first_sentence_whole, _line_count,
                                      _utc_clock, _utc_clock_datetime, cold_label, fold_exchange)
from mini_agent.core.messages import tool_result_text
from mini_agent.core.tokens import approx_tokens, token_memo
from strategies import histories, hostile_histories


def _plain_warm_a(part):
    masked = mask_old_observations(part, keep=0)
    chars, images = chars_of(masked)
    return masked, math.ceil(chars / 4) + images, (chars, images)


@settings(max_examples=60, deadline=None)
@given(st.one_of(histories(max_turns=6), hostile_histories(max_turns=12)), st.booleans())
def test_warm_a_form_equals_masking_the_exchange_and_counting_it(history, in_memo):
    before = copy.deepcopy(history)
    for s, e in split_exchanges(history):
        part = history[s:e]
        if in_memo:
            with token_memo():
                approx_tokens(part)  # the originals' counts remembered, as in a replay
                fast = warm_a_form(part)
        else:
            fast = warm_a_form(part)
        plain = _plain_warm_a(part)
        assert fast == plain
        # given the exchange's counts (as the lifecycle reads them from a scan): the same
        with token_memo():
            counted = warm_a_counted(part, *chars_of(part))
        assert counted == plain
        assert [a is b for a, b in zip(counted[0], part)] == [a is b for a, b in
                                                              zip(plain[0], part)]
        # unchanged messages are the exchange's own objects, as mask_old_observations keeps them
        assert [a is b for a, b in zip(fast[0], part)] == [a is b for a, b in zip(plain[0], part)]
    assert history == before


def test_warm_a_form_masks_a_result_and_counts_the_placeholder():
    part = [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "ls",
                                               "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                          "content": "x\n" * 99 + "x"},
                                         {"type": "text", "text": "go on"}]}]
    masked, tokens, (chars, images) = warm_a_form(part)
    assert masked[0] is part[0]
    assert masked[1]["content"][0]["content"] == "[observation masked — 100 lines omitted]"
    assert masked[1]["content"][1] is part[1]["content"][1]
    # tool_use: len("{}") + len("ls") + 20 = 24; placeholder 40; "go on" 5
    assert (chars, images) == (24 + 40 + 5, 0) and tokens == math.ceil(69 / 4)


def test_warm_b_and_cold_forms():
    part = [{"role": "assistant", "content": [
                {"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": "a", "name": "read_file", "input": {"path": "a.py"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a",
                                          "content": "1\n2"}]}]
    line, n = warm_b_form(part, 46, 52200.0)
    assert line == "[14:30] read_file (seg-047): a.py 2 lines; Reading it." == fold_exchange(
        part, segment="seg-047", time_seconds=52200.0)
    assert n == approx_tokens(line)
    assert cold_form(part, 6) == ("seg-007", "read_file a.py", "seg-007: read_file a.py",
                                  approx_tokens("seg-007: read_file a.py"))
    assert cold_label(part) == "read_file a.py" and segment_id(7) == "seg-007"


EDGES = [0, 0.0, 59.9999995, 59.9999994, 86399.9999995, 3599.4999995, 1_767_225_600,
         1_700_000_000.4999995, 8_589_934_591.9999995, 2 ** 33, -1, -0.5, -59.9999995,
         float("nan"), True, 1e12]


def _either(f, t):
    try:
        return f(t)
    except (ValueError, OverflowError, OSError) as error:
        return type(error)


def test_utc_clock_equals_datetime_at_the_rounding_edges():
    for t in EDGES:
        assert _either(_utc_clock, t) == _either(_utc_clock_datetime, t), t
    assert _utc_clock(59.9999995) == "00:01" and _utc_clock(59.9999994) == "00:00"


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.floats(0, 2 ** 34), st.integers(0, 2 ** 34),
                 st.builds(lambda s, f: s + f, st.integers(0, 2 ** 33),
                           st.sampled_from([0.9999995, 0.99999949, 0.4999995, 5e-7, 0.0]))))
def test_utc_clock_equals_datetime(t):
    assert _either(_utc_clock, t) == _either(_utc_clock_datetime, t)


_WORDS = st.text(st.sampled_from("ab.!? \n\t\u00a0\u2003\u2028\x1f\x85\u200bé"), max_size=40)


@settings(max_examples=400, deadline=None)
@given(st.lists(_WORDS, max_size=60).map("".join),
       st.sampled_from([1, 2, 3, 60, 90, _HEAD_CHARS - 1, _HEAD_CHARS, _HEAD_CHARS + 5]))
def test_first_sentence_reads_a_head_equal_to_the_whole_text(text, limit):
    assert _first_sentence(text, limit) == _first_sentence_whole(text, limit)


@settings(max_examples=400, deadline=None)
@given(st.text(st.sampled_from("ab.!? ~\t\n\x0b\x1f\x7f"), max_size=120),
       st.sampled_from([1, 2, 3, 60, 90]))
def test_first_sentence_of_ascii_text_equals_the_whole_text(text, limit):
    # printable ASCII with single inner spaces is taken without a split: the same sentence
    assert _first_sentence(text, limit) == _first_sentence_whole(text, limit)


def test_the_only_printable_ascii_whitespace_is_the_space():
    assert [c for c in range(128) if chr(c).isprintable() and not chr(c).split()] == [32]


def test_first_sentence_at_the_head_edges():
    for n in range(_HEAD_CHARS - 95, _HEAD_CHARS + 3):
        for text in ("a" * n + ". b", " " * n + "x. y", " " * n + "x" * 95, "a " * n + "b",
                     "ab" * n + "! c", " " * (n - 5) + "a." + " " * 10 + "b"):
            for limit in (60, 90):
                assert _first_sentence(text, limit) == _first_sentence_whole(text, limit)
    assert _first_sentence("  Found  bug.\nMore " + "x" * 2000) == "Found bug."
    assert _first_sentence("x" * 2000) == "x" * 89 + "…"


def test_str_split_and_the_sentence_pattern_agree_on_whitespace():
    # what lets _first_sentence find ". " instead of matching the pattern
    space = re.compile(r"\s")
    assert all((not chr(c).split()) == bool(space.fullmatch(chr(c))) for c in range(0x110000))


@settings(max_examples=60, deadline=None)
@given(st.one_of(histories(max_turns=6), hostile_histories(max_turns=12)), st.booleans())
def test_line_count_read_from_the_masked_copy_equals_counting(history, warm_a_first):
    before = copy.deepcopy(history)
    plain = [fold_exchange(history[s:e], segment="seg-001", time_seconds=60.0)
             for s, e in split_exchanges(history)]
    with token_memo():
        if warm_a_first:  # as in a replay: the Warm-A form masked the results first
            for s, e in split_exchanges(history):
                warm_a_form(history[s:e])
        for m in history:
            for b in m["content"] if isinstance(m.get("content"), list) else ():
                if b.get("type") == "tool_result":
                    assert _line_count(b) == tool_result_text(b).count("\n") + 1
        fast = [fold_exchange(history[s:e], segment="seg-001", time_seconds=60.0)
                for s, e in split_exchanges(history)]
    assert fast == plain
    assert history == before


@settings(max_examples=40, deadline=None)
@given(st.one_of(histories(max_turns=6), hostile_histories(max_turns=12)),
       st.floats(0, 2e9), st.booleans())
def test_warm_b_form_is_the_folded_line_and_its_tokens(history, when, in_memo):
    for k, (s, e) in enumerate(split_exchanges(history)):
        part = history[s:e]
        line = fold_exchange(part, segment=segment_id(k + 1), time_seconds=when)
        if in_memo:
            with token_memo():
                assert warm_b_form(part, k, when) == (line, approx_tokens(line))
        else:
            assert warm_b_form(part, k, when) == (line, approx_tokens(line))


@settings(max_examples=150, deadline=None)
@given(st.one_of(histories(max_turns=6), hostile_histories(max_turns=6)),
       st.lists(st.sampled_from(["read_file", "grep", "", "run_bash"]), max_size=3))
def test_the_folded_line_names_each_tool_once_in_order(history, names):
    """The tools of the line: ``"+".join(dict.fromkeys(names)) or "reply"``, one tool or many."""
    uses = [{"type": "tool_use", "id": f"u{k}", "name": name, "input": {}}
            for k, name in enumerate(names)]
    for s, e in split_exchanges(history):
        part = [*history[s:e], {"role": "assistant", "content": uses}]
        tools = "+".join(dict.fromkeys(
            b.get("name", "?") for m in part if isinstance(m.get("content"), list)
            for b in m["content"] if b.get("type") == "tool_use")) or "reply"
        try:
            line = _fold(part, "seg-001", 0.0)
        except (AttributeError, TypeError, KeyError):
            continue  # a hostile block the plain fold refuses as well
        assert line.startswith(f"[00:00] {tools} (seg-001): ")
