"""Graded checks for exercise 05 (prompt caching); ``impl`` is the module under test.

Each check targets a typical mistake: non-canonical tool JSON (order or key order changes
the fingerprint), hashing the dynamic part of the system prompt, OR instead of AND on the
two thresholds, >= instead of > at the boundaries, forgetting to update the previous read,
a fifth breakpoint, a marker on an empty text block, mutating the request.
"""

from __future__ import annotations

import copy

from mini_agent.grading import check
from mini_agent.core.messages import count_cache_control

BOUNDARY = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__"
TOOLS = [{"name": "read_file", "description": "Read a file",
          "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
         {"name": "grep", "description": "Search", "input_schema": {"type": "object"}}]
SAME_TOOLS_OTHER_BYTES = [
    {"input_schema": {"type": "object"}, "description": "Search", "name": "grep"},
    {"input_schema": {"properties": {"path": {"type": "string"}}, "type": "object"},
     "description": "Read a file", "name": "read_file", "cache_control": {"type": "ephemeral"}}]


def pair(impl, first_read, second_read, *, system2=None, tools2=None):
    det = impl.CacheBreakDetector()
    det.record_request("You are careful." + BOUNDARY + "time 10:00", TOOLS)
    det.check_response({"cache_read_input_tokens": first_read})
    det.record_request(system2 or "You are careful." + BOUNDARY + "time 10:00", tools2 or TOOLS)
    return det.check_response({"cache_read_input_tokens": second_read})


@check(points=2, hint="Sort tools by name, sort keys (json.dumps(sort_keys=True)) and drop "
                      "cache_control before hashing: same tool set, same fingerprint.")
def check_tools_fingerprint_is_canonical(impl):
    a = impl.tools_fingerprint(TOOLS)
    assert a == impl.tools_fingerprint(SAME_TOOLS_OTHER_BYTES), \
        "same tools in another order / key order / with a marker gave another fingerprint"
    assert len(a) == 64 and int(a, 16) >= 0, "expected a SHA-256 hex digest"
    changed = [dict(TOOLS[0], description="Read a whole file"), TOOLS[1]]
    assert impl.tools_fingerprint(changed) != a, "a changed description must change it"


@check(points=2, hint="Hash only the static part: split_system_prompt(system)[0].")
def check_system_fingerprint_ignores_dynamic_part(impl):
    a = impl.system_fingerprint("Rules." + BOUNDARY + "now: 10:00")
    assert a == impl.system_fingerprint("Rules." + BOUNDARY + "now: 10:01"), \
        "the dynamic part (after the boundary) changed the fingerprint"
    assert a != impl.system_fingerprint("Other rules." + BOUNDARY + "now: 10:00")
    assert impl.system_fingerprint("Rules.") == a, "no boundary: the whole prompt is static"


@check(points=2, hint="A break needs BOTH: drop > 2,000 tokens AND drop > 5% of the previous "
                      "read (strictly greater).")
def check_break_thresholds_use_and(impl):
    assert pair(impl, 1_000, 0) is None, "a 1,000-token drop is not a break (even at 100%)"
    assert pair(impl, 100_000, 97_000) is None, "a 3% drop is not a break (even 3,000 tokens)"
    assert pair(impl, 40_000, 38_000) is None, "exactly 2,000 tokens and 5% is not a break"
    assert pair(impl, 50_000, 47_500) is None, "exactly 5% is not a break"
    report = pair(impl, 40_000, 37_999)
    assert report is not None, "2,001 tokens and 5.0025% is a break"
    assert report["dropped"] == 2_001


@check(points=2, hint="Compare the fingerprints of the two requests to name the cause; "
                      "'unknown' only when neither changed.")
def check_break_causes(impl):
    assert pair(impl, 50_000, 0)["causes"] == ["unknown"]
    assert pair(impl, 50_000, 0, system2="New rules." + BOUNDARY + "x")["causes"] == \
        ["system_prompt_changed"]
    assert pair(impl, 50_000, 0, system2="You are careful." + BOUNDARY + "time 11:00"
                )["causes"] == ["unknown"], "a change after the boundary is not a system change"
    changed = [TOOLS[0], dict(TOOLS[1], description="Search files")]
    assert pair(impl, 50_000, 0, tools2=changed)["causes"] == ["tools_changed"]
    assert pair(impl, 50_000, 0, tools2=SAME_TOOLS_OTHER_BYTES)["causes"] == ["unknown"]
    both = pair(impl, 50_000, 0, system2="New." + BOUNDARY, tools2=changed)["causes"]
    assert both == ["system_prompt_changed", "tools_changed"]


@check(points=1, hint="Always store the latest read as the new 'previous', break or not; "
                      "return None when nothing was recorded.")
def check_detector_state(impl):
    det = impl.CacheBreakDetector()
    assert det.check_response({"cache_read_input_tokens": 10}) is None
    for read, expected in ((50_000, None), (10_000, True), (10_000, None), (60_000, None),
                           (0, True)):
        det.record_request("S", TOOLS)
        got = det.check_response({"cache_read_input_tokens": read})
        assert (got is not None) == bool(expected), f"read {read}: got {got}"


def request():
    return {"tools": copy.deepcopy(TOOLS),
            "system": [{"type": "text", "text": "Rules.", "cache_control": {"type": "ephemeral"}},
                       {"type": "text", "text": "now: 10:00"}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "hi",
                                              "cache_control": {"type": "ephemeral"}}]},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": [{"type": "text", "text": "fix it"},
                                             {"type": "text", "text": "   "}]}]}


@check(points=2, hint="Remove old markers first, then mark: last tool, last system block, last "
                      "non-empty block of the last message. Never more than 4.")
def check_breakpoints_placed(impl):
    req = request()
    before = copy.deepcopy(req)
    out = impl.place_breakpoints(req)
    assert req == before, "the input request was mutated"
    assert count_cache_control([out.get("tools"), out.get("system"), out["messages"]]) <= 4, \
        "more than 4 cache_control markers"
    assert "cache_control" in out["tools"][-1] and "cache_control" not in out["tools"][0]
    assert "cache_control" in out["system"][-1]
    last = out["messages"][-1]["content"]
    assert "cache_control" in last[0], "mark the last NON-EMPTY block of the last message"
    assert "cache_control" not in last[1], "never mark an empty text block"
    assert "cache_control" not in out["messages"][0]["content"][0], "old markers must go"


@check(points=1, hint="A string content becomes [{'type': 'text', 'text': ...}] with the marker.")
def check_breakpoints_on_string_content(impl):
    out = impl.place_breakpoints({"messages": [{"role": "user", "content": "hello"}]})
    assert out["messages"][0]["content"] == [
        {"type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}]
    assert "tools" not in out and "system" not in out
