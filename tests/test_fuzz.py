"""Fuzz, small budget: generated histories through every transformation and view policy,
hostile hook output and damaged session files, all checked against ``api_rules``.

The large budget is ``python benchmarks/fuzz.py`` (it prints the pairs checked and the
failures). Here a seeded run and a few hypothesis examples keep the suite well under a
minute; a failure prints the target, the broken rule and the history that broke it.
"""

from __future__ import annotations

import json
import random

from api_rules import continued, request_problems
from fuzz_targets import Fuzz, run
from hypothesis import given, settings
from strategies import HypothesisSource, hostile_histories


def _report(fuzz: Fuzz) -> str:
    return "\n".join(f"{target}: {problem}\n  {json.dumps(history, ensure_ascii=False)[:600]}"
                     for target, problem, history in fuzz.failures)


def test_seeded_fuzz_finds_no_request_the_api_would_refuse():
    fuzz = run(seed=14, histories=12, max_turns=12, files_every=2)
    assert fuzz.pairs >= 12 * 20
    assert fuzz.failure_count == 0, _report(fuzz)


@settings(max_examples=12, deadline=None)
@given(hostile_histories(max_turns=10), __import__("hypothesis").strategies.data())
def test_hypothesis_histories_through_every_target(history, data):
    fuzz = Fuzz(HypothesisSource(data.draw))
    fuzz.history(history)
    fuzz.pieces(history)
    fuzz.hook_output(random.Random(len(history)))
    assert fuzz.failure_count == 0, _report(fuzz)


def test_the_independent_checker_catches_what_the_issue_found():
    ask = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "grep",
                                             "input": {}}]}
    cases = {
        "cache TTLs out of order": {"messages": [{"role": "user", "content": [
            {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "b", "cache_control": {"type": "ephemeral",
                                                            "ttl": "1h"}}]}]},
        "text content blocks must be non-empty": {"messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "text", "text": "\n\n"}]},
            {"role": "user", "content": "next"}]},
        "trailing whitespace": {"messages": [{"role": "user", "content": "go"},
                                             {"role": "assistant", "content": "Sure.\n"}]},
        "not a text/image/document block": {"messages": [
            {"role": "user", "content": "go"}, ask,
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                          "content": [{"type": "bogus"}]}]}]},
        "invalid cache_control": {"messages": [{"role": "user", "content": [
            {"type": "text", "text": "a", "cache_control": {"type": "ephemerax"}}]}]},
        "tool_use without a tool_result": {"messages": [{"role": "user", "content": "go"},
                                                        ask, {"role": "user", "content": "x"}]},
    }
    for expected, body in cases.items():
        problems = request_problems(body)
        assert any(expected in p for p in problems), (expected, problems)
    assert request_problems({"messages": continued([{"role": "user", "content": "go"},
                                                    ask])}) == []
