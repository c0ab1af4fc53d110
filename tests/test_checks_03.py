"""Exercise 03's checks catch the typical wrong answers, each failing exactly its checks."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest

from mini_agent.grading import checks_module, collect_checks, find_file, load_module, run_checks

REPO = Path(__file__).resolve().parent.parent
CHECKS_03 = checks_module("03")

ALL_03 = {fn.__name__ for fn in collect_checks(CHECKS_03)}
MASKING_03 = {n for n in ALL_03 if not n.startswith(("check_approx", "check_should"))}


def _positions(messages):
    return [(i, j) for i, m in enumerate(messages)
            if m["role"] == "user" and isinstance(m["content"], list)
            for j, b in enumerate(m["content"]) if b["type"] == "tool_result"]


def _text(block):
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    return "".join(p["text"] for p in content if p["type"] == "text")


def _ph(n):
    return f"[observation masked — {n} lines omitted]"


def masker(*, select=lambda pos, keep: pos[:max(0, len(pos) - keep)], raises=True,
           lines=lambda text: text.count("\n") + 1, mutate=False,
           rebuild=lambda block, ph: {**block, "content": ph},
           mask_user_text=False, mask_assistant_text=False):
    """A mask_old_observations with one knob turned to a typical wrong answer."""
    def mask_old_observations(messages, keep=4):
        if raises and keep < 0:
            raise ValueError("keep < 0")
        out = messages if mutate else copy.deepcopy(messages)
        for i, j in select(_positions(messages), keep):
            block = messages[i]["content"][j]
            out[i]["content"][j] = rebuild(block, _ph(lines(_text(block))))
            if mask_user_text:
                out[i]["content"] = [
                    {"type": "text", "text": _ph(lines(b["text"]))} if b["type"] == "text" else b
                    for b in out[i]["content"]]
            if mask_assistant_text:
                out[i - 1]["content"] = [
                    {"type": "text", "text": _ph(lines(b["text"]))} if b["type"] == "text" else b
                    for b in out[i - 1]["content"]]
        return out
    return mask_old_observations


WRONG_MASKERS = {
    "masks the newest": (masker(select=lambda pos, keep: pos[keep:]),
                         {"check_masks_oldest_keeps_newest"}),
    "mutates the input": (masker(mutate=True), {"check_does_not_mutate_input"}),
    "changes tool_use_id": (masker(rebuild=lambda b, ph: {**b, "tool_use_id": "masked",
                                                          "content": ph}),
                            {"check_keeps_tool_use_id", "check_view_is_valid"}),
    "counts newlines, not lines": (masker(lines=lambda text: text.count("\n")),
                                   {"check_placeholder_line_count", "check_list_content"}),
    "counts characters": (masker(lines=len),
                          {"check_placeholder_line_count", "check_list_content"}),
    "masks user text": (masker(mask_user_text=True), {"check_user_text_untouched"}),
    "masks assistant text": (masker(mask_assistant_text=True), {"check_assistant_untouched"}),
    "drops is_error": (masker(rebuild=lambda b, ph: {"type": "tool_result",
                                                      "tool_use_id": b["tool_use_id"],
                                                      "content": ph}),
                       {"check_keeps_is_error"}),
    "keep=0 masks nothing": (masker(select=lambda pos, keep: pos[:-keep]),
                             {"check_keep_zero_masks_all"}),
    "keep beyond count wraps": (masker(select=lambda pos, keep: pos[:len(pos) - keep]),
                                {"check_keep_beyond_count"}),
    "negative keep accepted": (masker(raises=False), {"check_negative_keep_raises"}),
    "returns the input": (lambda messages, keep=4: list(messages),
                          MASKING_03 - {"check_keep_beyond_count"}),
}


def _failed(impl):
    card = run_checks("03", CHECKS_03, impl)
    return {c.name for c in card.checks if not c.passed}


@pytest.fixture
def solution_03():
    return load_module(find_file("solutions", "03", root=REPO))


def test_the_reference_masker_passes(solution_03):
    solution_03.mask_old_observations = masker()
    assert _failed(solution_03) == set()


@pytest.mark.parametrize("name", sorted(WRONG_MASKERS))
def test_each_wrong_masker_fails_exactly_its_checks(name, solution_03):
    wrong, expected = WRONG_MASKERS[name]
    solution_03.mask_old_observations = wrong
    assert _failed(solution_03) == expected


def _approx(messages, *, overhead=20, rounding=math.ceil):
    chars = 0
    for m in messages:
        for b in ([{"type": "text", "text": m["content"]}] if isinstance(m["content"], str)
                  else m["content"]):
            if b["type"] == "text":
                chars += len(b["text"])
            elif b["type"] == "tool_use":
                chars += len(json.dumps(b["input"])) + len(b["name"]) + overhead
            elif b["type"] == "tool_result":
                chars += len(_text(b))
    return rounding(chars / 4)


def test_wrong_estimates_and_trigger_fail_their_checks(solution_03, monkeypatch):
    reference = solution_03.approx_tokens
    monkeypatch.setattr(solution_03, "approx_tokens", _approx)
    assert _failed(solution_03) == set()
    monkeypatch.setattr(solution_03, "approx_tokens", lambda m: _approx(m, overhead=0))
    assert _failed(solution_03) == {"check_approx_tokens_tool_blocks"}
    monkeypatch.setattr(solution_03, "approx_tokens", lambda m: _approx(m, rounding=math.floor))
    assert _failed(solution_03) == {"check_approx_tokens_text", "check_approx_tokens_tool_blocks"}
    monkeypatch.setattr(solution_03, "approx_tokens", reference)
    monkeypatch.setattr(solution_03, "should_mask",
                        lambda messages, threshold_tokens=8_000:
                        reference(messages) >= threshold_tokens)
    assert _failed(solution_03) == {"check_should_mask_threshold"}


def test_the_kit_masker_passes_the_exercise_checks(solution_03):
    from mini_agent.core.masking import mask_old_observations
    solution_03.mask_old_observations = mask_old_observations
    assert _failed(solution_03) == set()


@pytest.mark.parametrize("name", sorted(WRONG_MASKERS))
def test_failed_03_checks_say_what_was_expected_and_what_came_back(name, solution_03):
    solution_03.mask_old_observations = WRONG_MASKERS[name][0]
    failed = [c for c in run_checks("03", CHECKS_03, solution_03).checks if not c.passed]
    assert failed
    for c in failed:
        if c.detail.startswith("mini_agent.core.messages.MessageValidationError"):
            continue  # the validator names the broken rule and the message index
        assert "expected" in c.detail and "got" in c.detail, (c.name, c.detail)


def test_keep_zero_failure_points_at_the_negative_slice_pitfall(solution_03):
    solution_03.mask_old_observations = WRONG_MASKERS["keep=0 masks nothing"][0]
    card = run_checks("03", CHECKS_03, solution_03)
    (failed,) = [c for c in card.checks if not c.passed]
    assert failed.detail == "3 results, keep=0: masked results: expected 3, got 0"
    assert "positions[:-keep]" in failed.hint and "negative-slice" in failed.hint
    assert "got:  3 results, keep=0: masked results: expected 3, got 0" in card.to_text()
