"""Graded checks for exercise 08 (tiers, timeline lines, eviction order); ``impl`` is the module.

Typical mistakes caught: off-by-one tier boundaries, local time instead of UTC, counting lines
wrongly, a timeline line that is not in the seed's shape, ordering the cold store by timestamp
(ties reorder, a stepped-back clock evicts the wrong segment), sorting the input in place.
"""

from __future__ import annotations

import copy

from mini_agent.grading import check

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def exchange(name="read_file", inp=None, result="a\nb\nc", text="found bug in parse()"):
    return [{"role": "assistant", "content": [
                {"type": "text", "text": text},
                {"type": "tool_use", "id": "toolu_1", "name": name,
                 "input": inp if inp is not None else {"path": "src/app.py"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": result}]}]


@check(points=2, hint="Ages start at 0 for the newest exchange; use < at each boundary.")
def check_tier_boundaries(impl):
    got = [impl.tier_for_age(a, hot_turns=2, warm_a_turns=4, warm_b_turns=6) for a in range(8)]
    assert got == ["hot", "hot", "warm_a", "warm_a", "warm_b", "warm_b", "cold", "cold"], got


@check(points=1, hint="A negative age is a programming error: raise ValueError.")
def check_tier_negative_age(impl):
    try:
        impl.tier_for_age(-1)
    except ValueError:
        return
    raise AssertionError("no ValueError for age -1")


@check(points=3, hint="[HH:MM] tool (seg-id): input N lines; reasoning: time in UTC, N = "
                      "newlines + 1.")
def check_timeline_line_seed_shape(impl):
    line = impl.timeline_line(exchange(result="x\n" * 119 + "x"), segment="seg-047",
                              time_seconds=T0 + 14 * 3600 + 30 * 60 + 59)
    assert line == "[14:30] read_file (seg-047): src/app.py 120 lines; found bug in parse()", line


@check(points=1, hint="Use pattern or command when there is no path; keep only the first "
                      "line of the reasoning.")
def check_timeline_line_other_inputs(impl):
    line = impl.timeline_line(exchange("run_bash", {"command": "pytest -q"}, "1 failed",
                                       "tests fail\nmore thoughts"),
                              segment="seg-003", time_seconds=T0 + 65)
    assert line == "[00:01] run_bash (seg-003): pytest -q 1 lines; tests fail", line


@check(points=1, hint="No tool_use: the tool is `reply` and only the reasoning follows.")
def check_timeline_line_reply(impl):
    line = impl.timeline_line([{"role": "assistant", "content": "All tests pass."}],
                              segment="seg-009", time_seconds=T0 + 23 * 3600)
    assert line == "[23:00] reply (seg-009): All tests pass.", line


@check(points=2, hint="Timestamps tie: order by the insertion sequence `seq`, not by time.")
def check_eviction_ties_keep_insertion_order(impl):
    segs = [{"id": "seg-b", "time": T0, "seq": 1}, {"id": "seg-a", "time": T0, "seq": 2},
            {"id": "seg-c", "time": T0, "seq": 3}]
    assert impl.eviction_order(segs) == ["seg-b", "seg-a", "seg-c"]


@check(points=2, hint="A clock can step back: a later insertion with an earlier time is still "
                      "evicted later. Sort by seq only, and copy before sorting.")
def check_eviction_not_by_time(impl):
    segs = [{"id": "seg-3", "time": T0 + 5, "seq": 3}, {"id": "seg-1", "time": T0 + 10, "seq": 1},
            {"id": "seg-2", "time": T0 - 50, "seq": 2}]
    before = copy.deepcopy(segs)
    assert impl.eviction_order(segs) == ["seg-1", "seg-2", "seg-3"]
    assert segs == before, "the input list was reordered in place"
