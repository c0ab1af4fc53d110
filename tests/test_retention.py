"""Tests for mini_agent.core.retention: exact-string retention and automatic facts."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings, strategies as st

from mini_agent.core.retention import (Fact, extract_facts, facts_in_text, retained_facts,
                                       retention_curve, view_text)
from mini_agent.core.masking import mask_old_observations
from strategies import histories, hostile_histories


def history():
    return [
        {"role": "user", "content": "Fix src/app.py: the timeout must be 8443 ms, not 30."},
        {"role": "assistant", "content": [
            {"type": "text", "text": "I will read src/app.py and check load_config()."},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "src/app.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "content": "line 1\nValueError: bad port 99999\nline 3"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "load_config() rejects it; see src/app.py again."},
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2",
                                      "content": "a\nb"}]},
    ]


def test_view_text_covers_text_tool_inputs_and_results():
    text = view_text(history())
    assert "path: src/app.py" in text and "ValueError: bad port 99999" in text
    assert "command: ls" in text


def test_retained_facts_is_exact_and_parallel():
    facts = [Fact("8443 ms", "number"), Fact("ValueError: bad port 99999", "open_problem"),
             Fact("8443ms", "number"), Fact("", "identifier")]
    h = history()
    before = copy.deepcopy(h)
    assert retained_facts(h, facts) == [True, True, False, False]
    assert h == before
    masked = mask_old_observations(h, keep=1)
    assert retained_facts(masked, facts) == [True, False, False, False]


def test_retained_facts_folds_no_unicode_form():
    # full-width digits and the NFD spelling are other strings: a summary that rewrote them
    # changed the identifier (on Linux, cafe\u0301.md and caf\u00e9.md are two files)
    view = [{"role": "user", "content": "port \uff18\uff14\uff14\uff13, file cafe\u0301.md"}]
    facts = [Fact("8443", "number"), Fact("\uff18\uff14\uff14\uff13", "number"),
             Fact("caf\u00e9.md", "identifier"), Fact("cafe\u0301.md", "identifier")]
    assert retained_facts(view, facts) == [False, True, False, True]


@pytest.mark.parametrize("mutant", ["mutant_15_nfkc_folded", "mutant_16_nfc_normalised"])
def test_a_counter_that_folds_unicode_loses_that_check_only(mutant):
    from pathlib import Path

    from mini_agent.grading import checks_module, load_module, run_checks
    path = Path(__file__).resolve().parent / "mutants" / "11" / f"{mutant}.py"
    card = run_checks("11", checks_module("11"), load_module(path))
    assert [c.name for c in card.checks if not c.passed] == [
        "check_retained_facts_no_unicode_folding"]


def test_retention_curve_counts_only_facts_already_stated():
    h = history()
    facts = [Fact("8443 ms", "number", message=0),
             Fact("ValueError: bad port 99999", "open_problem", message=2)]
    views = [h[:1], h[:3], mask_old_observations(h[:5], keep=1)]
    assert retention_curve(views, [1, 3, 5], facts) == [(1, 1), (2, 2), (1, 2)]
    with pytest.raises(ValueError):
        retention_curve(views, [1], facts)


def test_extract_facts_prefers_the_users_numbers_and_names_then_errors():
    facts = extract_facts(history(), limit=4)
    assert [(f.text, f.kind, f.message) for f in facts] == [
        ("8443 ms", "number", 0), ("src/app.py", "identifier", 0),
        ("ValueError: bad port 99999", "open_problem", 2), ("load_config()", "identifier", 1)]
    assert facts[0].proof.startswith("Fix src/app.py")
    assert len(extract_facts(history(), limit=2)) == 2


_TEXT_PARTS = st.sampled_from(["Error", "ValueError", "error", "errors", "FAILED", "failed",
                               "panic", "Exception", "my_Error", "xError", "Errors", " ", "\n",
                               "\r\n", "\r", "\x0b", "\u2028", "  ", "abc", "src/app.py",
                               "parse()", "a.b()", "/", "()", ".", "-", "E", "x" * 12, "8443",
                               "mirror", "rror"])


@given(st.lists(_TEXT_PARTS, max_size=30).map("".join))
@settings(max_examples=500, deadline=None)
def test_the_first_error_line_is_the_plain_scans_answer(text):
    from mini_agent.core import retention
    plain = next((line.strip() for line in text.splitlines()
                  if len(line.strip()) >= 12 and retention._ERROR_RE.search(line)), None)
    assert retention._first_error_line(text) == plain


def test_each_error_hint_is_skipped_only_by_a_letter_of_its_own():
    from mini_agent.core import retention
    assert tuple(hint for hint, _ in retention._HINT_LETTERS) == retention._ERROR_HINTS
    assert all(len(letter) == 1 and letter in hint for hint, letter in retention._HINT_LETTERS)
    # a text with "FAILED" but no "x": the hints without their letter are skipped, not lost
    assert retention._first_error_line("ok\n3 tests FAILED here\n") == "3 tests FAILED here"


@given(st.lists(_TEXT_PARTS, max_size=20).map("".join))
@settings(max_examples=300, deadline=None)
def test_identifiers_are_both_expressions_matches(line):
    from mini_agent.core import retention
    assert retention._identifiers(line) == (retention._PATH_RE.findall(line)
                                            + retention._SYMBOL_RE.findall(line))


def test_extract_facts_takes_the_first_error_line_of_each_result():
    output = "ok line one\nnothing here at all\n  FAILED tests/test_a.py::t - ValueError: x  \nE"
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": output}]}]
    assert [(f.text, f.kind, f.message) for f in extract_facts(messages)] == [
        ("FAILED tests/test_a.py::t - ValueError: x", "open_problem", 2)]


_IDENT_PARTS = st.sampled_from(["src", "/", ".", "py", "-", "_", "a", "1", "()", "(", ")", " ",
                                "\t", "\u3000", "é", "x.y", "main", ";", "\x1c", "README.md",
                                "../", "f()", ".()", "txt2"])


@given(st.lists(_IDENT_PARTS, max_size=16).map("".join))
@settings(max_examples=800, deadline=None)
def test_identifiers_by_word_equal_the_expressions_over_the_whole_line(line):
    from mini_agent.core.retention import _identifiers, _identifiers_in_line
    assert _identifiers(line) == _identifiers_in_line(line)


def test_identifiers_by_word_find_paths_then_symbols():
    from mini_agent.core.retention import _identifiers
    line = "see parse() in src/parser.py and a.b.run() near ./lib/x.txt;"
    assert _identifiers(line) == ["src/parser.py", "./lib/x.txt", "parse()", "a.b.run()"]


_INPUT_VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                          st.text(max_size=8),
                          st.lists(st.integers(), max_size=2),
                          st.dictionaries(st.sampled_from(["b", "a", "cache_control"]),
                                          st.integers(), max_size=2))


@given(st.dictionaries(st.sampled_from(["path", "command", "cache_control", "a", "z"]),
                       _INPUT_VALUES, max_size=4))
@settings(max_examples=300, deadline=None)
def test_canonical_pieces_of_a_flat_input_equal_those_of_the_canonical_copy(tool_input):
    """``message_pieces(canonical=True)`` reads a flat input off its sorted keys: the same
    pieces as from ``_canonical``'s sorted, marker-free copy."""
    from mini_agent.core.retention import _canonical, message_pieces
    message = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "run", "input": tool_input},
        {"type": "text", "text": "after"}]}
    want = ["run", *[f"{k}: {v}" for k, v in (_canonical(tool_input) or {}).items()], "after"]
    assert message_pieces(message, canonical=True) == want


@settings(max_examples=60, deadline=None)
@given(history=hostile_histories(max_turns=12))
def test_every_extracted_fact_is_in_the_text_of_the_history_that_states_it(history):
    """The explorer counts every due fact kept in a last view that is the history's own
    messages without searching its text: each extracted fact is a piece of that text."""
    from mini_agent.core.block_memo import BlockMemo
    facts = extract_facts(history, limit=40)
    for n in {len(history), len(history) // 2}:
        due = [f for f in facts if f.message < n]
        assert all(facts_in_text(view_text(history[:n]), due))
        assert all(facts_in_text(BlockMemo(history).text(history[:n]), due))


def test_fact_built_without_init_is_the_dataclass_fact():
    import pickle

    from mini_agent.core.retention import Fact, _fact
    fast, slow = _fact("src/a.py", "identifier", "see src/a.py", 3), \
        Fact("src/a.py", "identifier", "see src/a.py", 3)
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    assert vars(fast) == vars(slow) and list(vars(fast)) == list(vars(slow))
    assert pickle.loads(pickle.dumps(fast)) == slow
    assert fast != Fact("src/a.py", "identifier", "see src/a.py", 4)


@given(histories(max_turns=5))
@settings(max_examples=100, deadline=None)
def test_message_pieces_of_string_content_equal_those_of_its_text_block(history):
    from mini_agent.core.messages import content_blocks
    from mini_agent.core.retention import message_pieces
    for message in history:
        as_blocks = {**message, "content": content_blocks(message)}
        for canonical in (False, True):
            assert message_pieces(message, canonical=canonical) == \
                message_pieces(as_blocks, canonical=canonical)
    assert message_pieces({"role": "user", "content": "a b"}) == ["a b"]
    assert message_pieces({"role": "user", "content": None}) == []


def test_a_later_hint_found_before_the_first_one_found_moves_the_start():
    from mini_agent.core import retention
    # "rror" is looked for first but the panic line comes earlier: the later, bounded
    # searches must still move the start back to it
    text = "ok\nthread main panic: boom here\nfailed one\nValueError: bad value given\n"
    assert retention._first_error_line(text) == "thread main panic: boom here"
    assert retention._first_error_line("failed to open the file\nmore Error text") == \
        "failed to open the file"
    assert retention._first_error_line("no hint at all, only words\n") is None
