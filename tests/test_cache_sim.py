"""Prompt-cache simulator: constructed scenarios with hand-computed usage."""

import math

import pytest

from mini_agent.core.cache import place_breakpoints
from mini_agent.core.clock import ManualClock
from mini_agent.offline import ScriptedBrain, offline_client
from mini_agent.core.prompt_cache import (LOOKBACK_POSITIONS, PromptCacheSimulator,
                                          min_cacheable_tokens, prefix_boundaries)

EPH = {"type": "ephemeral"}
TOOL = {"name": "grep", "description": "d" * 396, "input_schema": {"type": "object"}}
TOOL_TOKENS = math.ceil(len('{"name":"grep","description":"' + "d" * 396
                            + '","input_schema":{"type":"object"}}') / 4)


def text(tokens, ch="a", marker=None):
    block = {"type": "text", "text": ch * (4 * tokens)}
    if marker:
        block["cache_control"] = marker
    return block


def req(system_tokens=2000, user_tokens=100, *, tools=None, sys_ch="s", marker_last=True,
        extra=()):
    messages = [{"role": "user", "content": [text(user_tokens, "u", EPH if marker_last and
                                                  not extra else None)]}]
    for k, block in enumerate(extra):
        messages.append({"role": "assistant" if k % 2 == 0 else "user", "content": [block]})
    body = {"model": "claude-sonnet-4-6", "max_tokens": 10,
            "system": [text(system_tokens, sys_ch, EPH)], "messages": messages}
    if tools:
        body["tools"] = tools
    return body


def usage(read, created, uncached, created_1h=0):
    return {"input_tokens": uncached, "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": created - created_1h,
                               "ephemeral_1h_input_tokens": created_1h}}


def test_first_request_writes_second_reads():
    sim = PromptCacheSimulator()
    assert sim.usage(req(), now=0) == usage(0, 2100, 0)
    assert sim.usage(req(), now=10) == usage(2100, 0, 0)
    assert sim.log[-1]["read_at"] == "messages[0].content[0]"


def test_tokens_after_last_breakpoint_are_uncached_input():
    sim = PromptCacheSimulator()
    assert sim.usage(req(marker_last=False), now=0) == usage(0, 2000, 100)
    assert sim.usage(req(user_tokens=300, marker_last=False), now=1) == usage(2000, 0, 300)


def test_changed_tools_invalidate_everything():
    sim = PromptCacheSimulator()
    tools = [dict(TOOL, cache_control=EPH)]
    sim.usage(req(tools=tools), now=0)
    assert sim.usage(req(tools=tools), now=1) == usage(2100 + TOOL_TOKENS, 0, 0)
    changed = [dict(TOOL, description="e" * 396, cache_control=EPH)]
    assert sim.usage(req(tools=changed), now=2) == usage(0, 2100 + TOOL_TOKENS, 0)


def test_changed_system_keeps_tools_but_invalidates_system_and_messages():
    sim = PromptCacheSimulator(min_tokens=50)
    tools = [dict(TOOL, cache_control=EPH)]
    sim.usage(req(tools=tools), now=0)
    assert sim.usage(req(tools=tools, sys_ch="z"), now=1) == usage(TOOL_TOKENS, 2100, 0)


def test_key_order_is_part_of_the_prefix():
    sim = PromptCacheSimulator()
    tools = [dict(TOOL, cache_control=EPH)]
    reordered = [{"input_schema": TOOL["input_schema"], "name": "grep",
                  "description": TOOL["description"], "cache_control": EPH}]
    sim.usage(req(tools=tools), now=0)
    assert sim.usage(req(tools=reordered), now=1)["cache_read_input_tokens"] == 0


def test_prefix_under_the_minimum_is_never_cached():
    sim = PromptCacheSimulator()
    assert min_cacheable_tokens("claude-sonnet-4-6") == 1024
    assert min_cacheable_tokens("claude-opus-4-6") == 4096
    small = req(system_tokens=500, user_tokens=100)
    assert sim.usage(small, now=0) == usage(0, 0, 600)
    assert sim.usage(small, now=1) == usage(0, 0, 600)
    assert sim.entries == {}
    opus = dict(req(), model="claude-opus-4-6")  # 2,100 < 4,096
    assert sim.usage(opus, now=2) == usage(0, 0, 2100)


def test_expiry_after_ttl_and_refresh_on_hit():
    sim = PromptCacheSimulator()
    sim.usage(req(), now=0)
    assert sim.usage(req(), now=299)["cache_read_input_tokens"] == 2100   # hit refreshes
    assert sim.usage(req(), now=299 + 299)["cache_read_input_tokens"] == 2100
    assert sim.usage(req(), now=598 + 300) == usage(0, 2100, 0)           # exactly 5 min: gone


def test_one_hour_ttl_and_creation_breakdown():
    sim = PromptCacheSimulator()
    body = req()
    body["system"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    assert sim.usage(body, now=0) == usage(0, 2100, 0, created_1h=2000)
    after = sim.usage(body, now=1800)       # the 5m entry is gone, the 1h one lives
    assert after == usage(2000, 100, 0)


def test_lookback_window_is_20_positions_counting_the_breakpoint():
    sim = PromptCacheSimulator()
    sim.usage(req(), now=0)  # entry at messages[0]
    near = [text(1, "x") for _ in range(LOOKBACK_POSITIONS - 1)]
    near[-1] = text(1, "x", EPH)   # 19 positions after the entry: inside the window
    assert sim.usage(req(extra=near), now=1)["cache_read_input_tokens"] == 2100
    sim2 = PromptCacheSimulator()
    sim2.usage(req(), now=0)
    far = [text(1, "x") for _ in range(LOOKBACK_POSITIONS)]
    far[-1] = text(1, "x", EPH)    # 20 positions after: the window (bp and 19 before) misses
    assert sim2.usage(req(extra=far), now=1)["cache_read_input_tokens"] == 2000  # system only


def test_a_run_of_tool_results_is_one_position():
    uses = [{"type": "tool_use", "id": f"t{k}", "name": "grep", "input": {}} for k in range(25)]
    results = [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "r"} for k in range(25)]
    bounds = prefix_boundaries({"model": "m", "messages": [
        {"role": "user", "content": "go"}, {"role": "assistant", "content": uses},
        {"role": "user", "content": results}]})
    assert [b.position for b in bounds][:1] == [0]
    assert {b.position for b in bounds[1:26]} == {1}
    assert {b.position for b in bounds[26:]} == {2}


def test_unknown_ttl_is_refused():
    body = req()
    body["system"][0]["cache_control"] = {"type": "ephemeral", "ttl": "10m"}
    with pytest.raises(ValueError, match="ttl"):
        PromptCacheSimulator().usage(body, now=0)


def test_automatic_caching_marks_last_block():
    bounds = prefix_boundaries({"model": "m", "cache_control": EPH,
                                "messages": [{"role": "user", "content": "hi"}]})
    assert bounds[-1].ttl == "5m"


def test_plugged_into_offline_transport_with_manual_clock():
    clock = ManualClock()
    sim = PromptCacheSimulator()
    client = offline_client(ScriptedBrain(["ok", "ok", "ok"]), usage_model=sim, clock=clock)
    first = [{"role": "user", "content": "q " * 3000}]
    r1 = client.messages.create(**place_breakpoints(
        {"model": "claude-sonnet-4-6", "max_tokens": 50, "system": "rules " * 200,
         "messages": first}, canonical=True, anchors=True))
    second = first + [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}]
    clock.advance(30)
    r2 = client.messages.create(**place_breakpoints(
        {"model": "claude-sonnet-4-6", "max_tokens": 50, "system": "rules " * 200,
         "messages": second}, canonical=True, anchors=True))
    assert r1.usage.cache_read_input_tokens == 0
    assert r2.usage.cache_read_input_tokens == r1.usage.cache_creation_input_tokens > 0
    clock.advance(301)
    r3 = client.messages.create(**place_breakpoints(
        {"model": "claude-sonnet-4-6", "max_tokens": 50, "system": "rules " * 200,
         "messages": second}, canonical=True, anchors=True))
    assert r3.usage.cache_read_input_tokens == 0
