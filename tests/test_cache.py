"""Tests for mini_agent.core.cache (system split, breakpoints, serialization),
mini_agent.core.cache_breaks (fingerprints, the detector) and mini_agent.core.pricing."""

import functools
import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from mini_agent.core.cache import (DYNAMIC_BOUNDARY, build_system_blocks, place_breakpoints,
                                   request_bytes, split_system_prompt)
from mini_agent.core.cache_breaks import (CacheBreakDetector, static_system_text,
                                          system_fingerprint, tools_fingerprint)
from mini_agent.core.pricing import UnknownModelError, cache_hit_rate, cost_usd, sum_usage
from mini_agent.core.messages import count_cache_control, validate_messages

kit_breakpoints = functools.partial(place_breakpoints, canonical=True, anchors=True)
"""The kit's placement: canonical bytes and the two extra anchors."""

TOOLS = [{"name": "read_file", "description": "Read", "input_schema": {
             "type": "object", "properties": {"path": {"type": "string"}}}},
         {"name": "grep", "description": "Search", "input_schema": {"type": "object"}}]


def test_split_system_prompt():
    assert split_system_prompt("A" + DYNAMIC_BOUNDARY + "B" + DYNAMIC_BOUNDARY + "C") == \
        ("A", "B" + DYNAMIC_BOUNDARY + "C")
    assert split_system_prompt("") == ("", "")


def test_system_blocks_marker_on_static_only():
    blocks = build_system_blocks("static rules\n" + DYNAMIC_BOUNDARY + "\nnow: 12:00")
    assert blocks == [{"type": "text", "text": "static rules\n",
                       "cache_control": {"type": "ephemeral"}},
                      {"type": "text", "text": "\nnow: 12:00"}]
    assert build_system_blocks(DYNAMIC_BOUNDARY + "only dynamic") == \
        [{"type": "text", "text": "only dynamic"}]
    assert build_system_blocks("x", ttl="1h")[0]["cache_control"] == \
        {"type": "ephemeral", "ttl": "1h"}
    with pytest.raises(ValueError):
        build_system_blocks("x", ttl="10m")


def _conversation(turns):
    msgs = [{"role": "user", "content": "fix the bug"}]
    for k in range(turns):
        msgs.append({"role": "assistant", "content": [
            {"type": "text", "text": f"step {k}"},
            {"type": "tool_use", "id": f"t{k}", "name": "grep", "input": {"q": str(k)}}]})
        msgs.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{k}", "content": f"out {k}"}]})
    return msgs


def test_breakpoints_layout():
    req = {"model": "m", "system": "S" + DYNAMIC_BOUNDARY + "D", "tools": TOOLS,
           "messages": _conversation(3)}
    out = kit_breakpoints(req)
    assert [t["name"] for t in out["tools"]] == ["grep", "read_file"]
    assert "cache_control" in out["tools"][-1] and "cache_control" not in out["tools"][0]
    assert [("cache_control" in b) for b in out["system"]] == [True, False]
    assert out["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert out["messages"][-3]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert count_cache_control([out["tools"], out["system"], out["messages"]]) == 4
    assert "cache_control" not in json.dumps(req)  # input untouched
    validate_messages(out["messages"], system=out["system"], tools=out["tools"])


def test_breakpoints_skip_empty_and_thinking_blocks():
    msgs = [{"role": "user", "content": [{"type": "text", "text": "hi"},
                                         {"type": "text", "text": "  "}]}]
    out = kit_breakpoints({"model": "m", "messages": msgs})
    assert out["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in out["messages"][0]["content"][1]


def test_breakpoints_rejects_short_static_ttl():
    with pytest.raises(ValueError, match="longer-TTL"):
        kit_breakpoints({"model": "m", "messages": _conversation(1)}, ttl="1h",
                                static_ttl="5m")
    out = kit_breakpoints({"model": "m", "tools": TOOLS, "messages": _conversation(1)},
                                  ttl="5m", static_ttl="1h")
    assert out["tools"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


blocks = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=5)),
    st.builds(lambda t: {"type": "thinking", "thinking": t, "signature": "s"}, st.text(max_size=5)))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(blocks, min_size=1, max_size=4), min_size=1, max_size=8),
       st.sampled_from([None, "s", "a" + DYNAMIC_BOUNDARY + "b", DYNAMIC_BOUNDARY]),
       st.booleans())
def test_never_more_than_four_markers_nor_on_empty_text(contents, system, with_tools):
    msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": c}
            for i, c in enumerate(contents)]
    req = {"model": "m", "messages": msgs}
    if system is not None:
        req["system"] = system
    if with_tools:
        req["tools"] = TOOLS
    out = kit_breakpoints(req)
    parts = [out.get("tools", []), out.get("system", []), out["messages"]]
    assert count_cache_control(parts) <= 4
    for part in (out.get("system") or []), *[m["content"] for m in out["messages"]]:
        for b in part if isinstance(part, list) else []:
            if "cache_control" in b:
                assert b["type"] != "thinking"
                assert b["type"] != "text" or b["text"].strip()
    assert out == kit_breakpoints(out)  # idempotent


system_blocks = st.builds(
    lambda t, marked: {"type": "text", "text": t,
                       **({"cache_control": {"type": "ephemeral"}} if marked else {})},
    st.sampled_from(["Rules.", "", " ", "\n\t", "規則。", "now: 10:00"]), st.booleans())
contents = st.one_of(st.sampled_from(["", "  ", "go", "ポート"]),
                     st.lists(blocks, min_size=1, max_size=3))


@settings(max_examples=120, deadline=None)
@given(st.lists(system_blocks, min_size=1, max_size=4),
       st.lists(contents, min_size=1, max_size=5), st.booleans())
def test_no_marker_on_empty_text_is_marked_kept_or_created(system, contents, anchors):
    """The API: "cache_control cannot be set for empty text blocks" (issue 10)."""
    msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": c}
            for i, c in enumerate(contents)]
    req = {"model": "m", "system": system, "messages": msgs}
    out = place_breakpoints(req, canonical=True, anchors=anchors)
    for block in out["system"] + [b for m in out["messages"]
                                  if isinstance(m["content"], list) for b in m["content"]]:
        if "cache_control" in block:
            assert block["type"] != "thinking"
            assert block["type"] != "text" or block["text"].strip()
    for before, after in zip(msgs, out["messages"]):   # no block created nor dropped
        if isinstance(before["content"], str) and not before["content"].strip():
            assert after["content"] == before["content"]
        elif isinstance(before["content"], list):
            assert len(after["content"]) == len(before["content"])
    marked = [i for i, b in enumerate(system) if "cache_control" in b]
    end = marked[-1] if marked else len(system) - 1
    got = [i for i, b in enumerate(out["system"]) if "cache_control" in b]
    expected = [i for i in range(end + 1) if system[i]["text"].strip()][-1:]
    assert got == expected      # the end of the static part, or the last non-empty before it


def test_serialization_is_byte_stable_for_shuffled_keys_and_tools():
    shuffled = [{"input_schema": {"properties": {"path": {"type": "string"}},
                                  "type": "object"}, "description": "Read", "name": "read_file"},
                {"name": "grep", "input_schema": {"type": "object"}, "description": "Search"}]
    a = kit_breakpoints({"model": "m", "tools": TOOLS, "messages": _conversation(2)})
    b = kit_breakpoints({"messages": _conversation(2), "tools": shuffled[::-1],
                                 "model": "m"})
    assert request_bytes(a) == request_bytes(b)


def test_serialization_is_stable_across_hash_seeds():
    code = ("from mini_agent.core.cache import place_breakpoints, request_bytes\n"
            "tools = {n: {'name': n, 'description': n, 'input_schema': {'type': 'object'}}"
            " for n in {'zeta', 'alpha', 'mid', 'beta'}}\n"
            "req = {'model': 'm', 'tools': list(tools.values()), 'messages': "
            "[{'role': 'user', 'content': 'hi'}]}\n"
            "import hashlib; print(hashlib.sha256(request_bytes(place_breakpoints(req, "
            "canonical=True)))"
            ".hexdigest())")
    digests = set()
    for seed in ("1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        digests.add(subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                   capture_output=True, text=True).stdout)
    assert len(digests) == 1


# --------------------------------------------------------------------------- detector

def _detector_pair(first_read, second_read, *, finer_causes=True, **second):
    det = CacheBreakDetector(finer_causes=finer_causes)
    base = {"system": "rules" + DYNAMIC_BOUNDARY + "t=1", "tools": TOOLS,
            "messages": _conversation(2)}
    det.record(base, now=0.0)
    det.check_response({"cache_read_input_tokens": first_read})
    det.record({**base, **{k: v for k, v in second.items() if k != "now"}},
               now=second.get("now", 10.0))
    return det.check_response({"cache_read_input_tokens": second_read})


def test_detector_threshold_boundaries():
    assert _detector_pair(100_000, 98_000) is None          # drop exactly 2,000 (2%)
    assert _detector_pair(40_000, 38_000) is None           # exactly 2,000 and exactly 5%
    assert _detector_pair(50_000, 47_500) is None           # exactly 5% (2,500 tokens)
    assert _detector_pair(1_000, 0) is None                 # 100% but only 1,000 tokens
    assert _detector_pair(100_000, 97_000) is None          # 3,000 but only 3%
    report = _detector_pair(40_000, 37_999)                 # 2,001 and > 5%
    assert report == {"dropped_tokens": 2_001, "causes": ["unknown"], "request_index": 1,
                      "previous_read_tokens": 40_000, "read_tokens": 37_999}


def test_detector_causes():
    changed_tools = [dict(TOOLS[0], description="Read a file"), TOOLS[1]]
    assert _detector_pair(50_000, 0, tools=changed_tools)["causes"] == ["tools_changed"]
    assert _detector_pair(50_000, 0, tools=TOOLS[::-1])["causes"] == ["serialization_changed"]
    assert _detector_pair(50_000, 0, system="other" + DYNAMIC_BOUNDARY + "t=1")["causes"] == \
        ["system_prompt_changed"]
    # the dynamic part may change freely: not a system change
    assert _detector_pair(50_000, 0, system="rules" + DYNAMIC_BOUNDARY + "t=2")["causes"] == \
        ["unknown"]
    masked = _conversation(2)
    masked[2] = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t0",
                                              "content": "[masked]"}]}
    assert _detector_pair(50_000, 0, messages=masked)["causes"] == ["messages_changed"]
    assert _detector_pair(50_000, 0, now=10.0 + 301)["causes"] == ["ttl_expired"]
    # appending messages is not a change
    assert _detector_pair(50_000, 0, messages=_conversation(3))["causes"] == ["unknown"]


def test_detector_names_only_the_seeds_causes_by_default():
    """Exercise 05.3: without finer_causes, what the kit names finer is "unknown"."""
    masked = _conversation(2)
    masked[2] = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t0",
                                              "content": "[masked]"}]}
    for second in ({"tools": TOOLS[::-1]}, {"messages": masked}, {"now": 10.0 + 301}):
        assert _detector_pair(50_000, 0, finer_causes=False, **second)["causes"] == ["unknown"]
    both = _detector_pair(50_000, 0, finer_causes=False, tools=TOOLS[:1],
                          system="other" + DYNAMIC_BOUNDARY)
    assert both["causes"] == ["system_prompt_changed", "tools_changed"]


def test_detector_record_request_takes_system_and_tools():
    det = CacheBreakDetector()
    det.record_request("rules", TOOLS)
    assert det.check_response({"cache_read_input_tokens": 50_000}) is None
    det.record_request("rules" + DYNAMIC_BOUNDARY + "t=2", TOOLS[::-1])
    assert det.check_response({"cache_read_input_tokens": 0})["causes"] == ["unknown"]
    assert [b["dropped_tokens"] for b in det.breaks] == [50_000]


def test_system_fingerprint_hashes_the_static_part():
    import hashlib
    assert system_fingerprint("Rules." + DYNAMIC_BOUNDARY + "now") == \
        hashlib.sha256(b"Rules.").hexdigest() == system_fingerprint("Rules.")
    assert system_fingerprint("Rules.\n" + DYNAMIC_BOUNDARY) != system_fingerprint("Rules.")


def test_place_breakpoints_by_default_keeps_the_request_as_given():
    """Exercise 05.4: tools keep their order, no anchors; the caller's system marker stays."""
    system = [{"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}},
              {"type": "text", "text": "now: 10:00"}]
    req = {"model": "m", "tools": TOOLS, "system": system, "messages": _conversation(3)}
    out = place_breakpoints(req)
    assert [t["name"] for t in out["tools"]] == ["read_file", "grep"]
    assert "cache_control" in out["tools"][-1] and "cache_control" in out["system"][0]
    assert "cache_control" not in out["system"][1]
    marked = [i for i, m in enumerate(out["messages"]) if "cache_control" in json.dumps(m)]
    assert marked == [len(out["messages"]) - 1]
    assert count_cache_control([out["tools"], out["system"], out["messages"]]) == 3


def test_detector_without_record_returns_none():
    assert CacheBreakDetector().check_response({"cache_read_input_tokens": 5}) is None


def test_static_system_text_of_blocks():
    blocks = build_system_blocks("S" + DYNAMIC_BOUNDARY + "D")
    assert static_system_text(blocks) == "S"
    assert tools_fingerprint(TOOLS) == tools_fingerprint(TOOLS[::-1])


# --------------------------------------------------------------------------- prices

def test_cost_usd_uses_multipliers_and_breakdown():
    usage = {"input_tokens": 1_000_000, "cache_creation_input_tokens": 2_000_000,
             "cache_read_input_tokens": 10_000_000, "output_tokens": 100_000,
             "cache_creation": {"ephemeral_5m_input_tokens": 1_000_000,
                                "ephemeral_1h_input_tokens": 1_000_000}}
    # 3 + 3.75 + 6 + 3 (reads) + 1.5 (output)
    assert cost_usd(usage, "claude-sonnet-4-6") == pytest.approx(17.25)
    assert cost_usd(usage, "claude-sonnet-4-5-20250929", include_output=False) == \
        pytest.approx(15.75)
    assert cost_usd({"cache_creation_input_tokens": 1_000_000}, "claude-opus-4-6") == \
        pytest.approx(6.25)
    with pytest.raises(UnknownModelError):
        cost_usd(usage, "gpt-4")


def test_hit_rate_and_sum():
    assert cache_hit_rate({}) == 0.0
    total = sum_usage([{"input_tokens": 10, "cache_read_input_tokens": 30},
                       {"cache_creation_input_tokens": 60}])
    assert cache_hit_rate(total) == pytest.approx(0.3)
    assert total["cache_creation"]["ephemeral_5m_input_tokens"] == 60


# --------------------------------------------------------------------------- TTL order

def _ttls(request):
    from mini_agent.core.wire_rules import cache_markers
    parts = [request.get("tools") or [], request.get("system") or [], request["messages"]]
    return [m.get("ttl", "5m") for m in cache_markers(parts)]


@pytest.mark.parametrize("ttl, static_ttl, system_ttl, expected", [
    ("1h", "1h", None, ["1h", "1h", "1h", "1h"]),
    ("1h", "1h", "5m", ["1h", "5m", "5m", "5m"]),   # the caller's 5m system marker wins after it
    ("5m", "1h", None, ["1h", "1h", "5m", "5m"]),
    ("1h", None, "5m", ["1h", "5m", "5m", "5m"]),
])
def test_breakpoints_never_put_a_longer_ttl_after_a_shorter_one(ttl, static_ttl, system_ttl,
                                                                 expected):
    system = [{"type": "text", "text": "rules"}]
    if system_ttl:
        system[0]["cache_control"] = {"type": "ephemeral"}
    messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                {"role": "user", "content": "c"}]
    request = {"model": "m", "max_tokens": 8, "system": system, "messages": messages,
               "tools": [{"name": "t", "description": "d", "input_schema": {"type": "object"}}]}
    out = kit_breakpoints(request, ttl=ttl, static_ttl=static_ttl)
    assert _ttls(out) == expected
    validate_messages(out["messages"], system=out["system"], tools=out["tools"])
    assert "ttl" not in system[0].get("cache_control", {})  # the caller's request untouched


def test_validate_messages_refuses_a_longer_ttl_after_a_shorter_one():
    from mini_agent.core.messages import MessageValidationError
    messages = [{"role": "user", "content": [
        {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "b", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}]
    with pytest.raises(MessageValidationError) as info:
        validate_messages(messages)
    assert info.value.rule == "cache_ttl_order"
    with pytest.raises(MessageValidationError, match="cache_control must be"):
        validate_messages([{"role": "user", "content": [
            {"type": "text", "text": "a", "cache_control": {"type": "ephemeral", "ttl": "2h"}}]}])
