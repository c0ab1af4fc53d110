"""The fast replay gives the reference replay's figures: usage, cost, retention text."""

from __future__ import annotations

import copy
import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from mini_agent.core.cache_policies import replay_with_cache
from mini_agent.core.context_edits import clear_tool_uses_edit
from mini_agent.core.fast_replay import BlockMemo, Unsupported, fast_replay, replay_usage
from mini_agent.core.masking import placeholder
from mini_agent.core.replay import (DEFAULT_POLICIES, GAP_SECONDS, evaluate_session,
                                    policy_spec)
from mini_agent.core.retention import view_text
from mini_agent.core.sample_sessions import sample_transcript

MODEL = "claude-sonnet-4-5"


def _reference(messages, *, policy_name=None, spec=None, system, times=None, model=MODEL,
               server_edit=None, resume=False, policy=None):
    records = replay_with_cache(messages, model=model, policy=policy, server_edit=server_edit,
                                system=system, resume=resume, times=times, keep_views=True,
                                gap_seconds=GAP_SECONDS)
    return ([r["usage"] for r in records], [r["cost_usd"] for r in records],
            view_text(records[-1]["view"]) if records else "")


def _reference_breakpoints(messages, *, policy, system, server_edit=None, resume=False,
                           times=None, model=MODEL):
    """Per request, ``[(block index, prefix tokens)]`` of each breakpoint of the request the
    reference sends (the loop of ``replay_with_cache``, stopped before the simulator)."""
    from mini_agent.core.cache import place_breakpoints
    from mini_agent.core.cache_policies import ResumeBreakpoints, request_points
    from mini_agent.core.context_edits import apply_clear_tool_uses
    from mini_agent.core.prompt_cache import prefix_boundaries
    from mini_agent.core.view import ViewContext
    planner = ResumeBreakpoints() if resume else None
    out = []
    for n, i in enumerate(request_points(messages)):
        ctx = (ViewContext(times=tuple(times[:i]), now=times[i], turn=n + 1) if times
               else ViewContext(turn=n + 1))
        view = policy(messages[:i], ctx) if policy else list(messages[:i])
        request = {"model": model, "max_tokens": 1024, "messages": view, "system": system}
        request = planner(request) if planner else place_breakpoints(
            request, canonical=True, anchors=True)
        if server_edit is not None:
            request, _ = apply_clear_tool_uses(request, server_edit)
        out.append([(k, b.prefix_tokens) for k, b in enumerate(prefix_boundaries(request))
                    if b.ttl is not None])
    return out


def _assert_same(messages, *, system, make_policy=lambda: None, server_edit=None,
                 resume=False, times=None, model=MODEL, memo=None):
    usage, cost, text = _reference(messages, policy=make_policy(), server_edit=server_edit,
                                   system=system, resume=resume, times=times, model=model)
    trace = []
    fast = fast_replay(messages, model=model, policy=make_policy(), server_edit=server_edit,
                       system=system, resume=resume, times=times, gap_seconds=GAP_SECONDS,
                       memo=memo, trace=trace)
    assert trace == _reference_breakpoints(messages, policy=make_policy(), system=system,
                                           server_edit=server_edit, resume=resume,
                                           times=times, model=model)
    for n, (want, got) in enumerate(zip(usage, fast.usage)):
        assert got == want, f"request {n + 1}"
    assert len(fast.usage) == len(usage)
    assert fast.cost_usd == cost          # the same floats, not just close ones
    assert fast.last_text == text
    return usage


@pytest.mark.parametrize("variant", [0, 3, 5])
def test_every_policy_matches_the_reference_on_generated_sessions(variant):
    transcript = sample_transcript(9, variant=variant)
    messages, times = transcript.messages, transcript.times
    system = "You are a coding agent.\n" + "rules. " * 900
    memo = BlockMemo(messages)
    reads = 0
    for name in DEFAULT_POLICIES:
        spec = policy_spec(name)
        context = {"summarize": None, "system": system, "model": MODEL}
        usage = _assert_same(messages, system=system, make_policy=lambda: spec.make(context),
                             server_edit=spec.server_edit, resume=spec.resume, times=times,
                             memo=memo)
        reads += sum(u["cache_read_input_tokens"] for u in usage)
    assert reads > 0  # the cache was exercised, not only cold requests


# --------------------------------------------------------------------------- random histories

@st.composite
def histories(draw):
    """A tool-using history with parallel calls, thinking, empty texts, masked and cleared
    results, string and list content, and times with pauses longer than the 5-minute TTL."""
    steps = draw(st.integers(1, 9))
    text = st.text(alphabet="abc de/\n.{}\"日本", max_size=30)
    messages = [{"role": "user", "content": draw(text) or "start"}]
    times = [1_000.0]
    uid = 0
    for _ in range(steps):
        content = []
        if draw(st.booleans()):
            content.append({"type": "thinking", "thinking": draw(text), "signature": "s"})
        if draw(st.booleans()):
            content.append({"type": "text", "text": draw(st.sampled_from(["", " ", "ok"]))})
        calls = draw(st.integers(0, 3))
        ids = []
        for _ in range(calls):
            uid += 1
            ids.append(f"t{uid}")
            content.append({"type": "tool_use", "id": f"t{uid}", "name":
                            draw(st.sampled_from(["read", "bash", "grep"])),
                            "input": {"path": draw(text), "n": draw(st.integers(0, 99))}})
        if not content:
            content = draw(st.sampled_from(["done", "  ", [{"type": "text", "text": "x"}]]))
        messages.append({"role": "assistant", "content": content})
        times.append(times[-1] + draw(st.sampled_from([1.0, 30.0, 299.0, 301.0, 4000.0])))
        if ids:
            results = []
            for tid in ids:
                size = draw(st.sampled_from([0, 10, 900, 5000, 12000]))
                body = draw(st.sampled_from(["plain", "list", "masked", "cleared"]))
                out = ("x" * size + draw(text))
                if body == "list":
                    out = [{"type": "text", "text": out}, {"type": "text", "text": "tail"}]
                elif body == "masked":
                    out = placeholder(out)
                elif body == "cleared":
                    out = "[Old tool result content cleared]"
                block = {"type": "tool_result", "tool_use_id": tid, "content": out}
                if draw(st.integers(0, 9)) == 0:
                    block["cache_control"] = {"type": "ephemeral"}
                results.append(block)
            if draw(st.booleans()):
                results.append({"type": "text", "text": draw(text)})
            messages.append({"role": "user", "content": results})
        else:
            # whitespace blocks carry no marker and each takes a lookback position, so the
            # previous write is found only through the 20-position lookback (or not at all)
            blanks = [{"type": "text", "text": " "}] * draw(st.integers(0, 24))
            messages.append({"role": "user", "content": draw(st.sampled_from(
                [draw(text) or "go on", blanks or "go on", blanks + [{"type": "text",
                                                                    "text": "go"}]]))})
        times.append(times[-1] + draw(st.sampled_from([0.5, 5.0, 400.0])))
    messages.append({"role": "assistant", "content": "end"})
    times.append(times[-1] + 1.0)
    return messages, times


POLICIES = {
    "raw": (lambda: None, None, False),
    "mask-1": (lambda: policy_spec("mask-1").make({}), None, False),
    "chunked-2": (lambda: policy_spec("chunked-2").make({}), None, False),
    "payback": (lambda: policy_spec("payback").make({}), None, True),
    "breakeven": (lambda: policy_spec("breakeven").make({"model": MODEL, "system": "S" * 4000}),
                  None, True),
    "micro_compact": (lambda: policy_spec("micro_compact").make({}), None, False),
    "mask-1+resume": (lambda: policy_spec("mask-1").make({}), None, True),
    "raw+resume": (lambda: None, None, True),
    "server_clear": (lambda: None, clear_tool_uses_edit(trigger_input_tokens=1_500, keep=1,
                                                        clear_at_least_tokens=200), False),
    "server_clear_all": (lambda: None, clear_tool_uses_edit(trigger_input_tokens=0, keep=0),
                         False),
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.sampled_from(sorted(POLICIES)), st.booleans(),
       st.sampled_from(["claude-sonnet-4-5", "claude-opus-4-7", "claude-haiku-4-5"]),
       st.sampled_from([100, 4_000, 9_000]))
def test_random_histories_match_the_reference(history, name, timed, model, system_chars):
    messages, times = history
    before = copy.deepcopy(messages)
    make, edit, resume = POLICIES[name]
    _assert_same(messages, system="S" * system_chars, make_policy=make, server_edit=edit,
                 resume=resume, times=times if timed else None, model=model)
    assert messages == before  # never mutated


@pytest.mark.parametrize("variant", [0, 1])
def test_a_resume_breakpoint_is_placed_and_read_as_in_the_reference(variant):
    """Chunks of 8 masked at once: the first changed result lies more than 20 positions before
    the new mask anchor, so ResumeBreakpoints marks the remembered prefix before it and drops
    the previous turn's marker to stay at 4."""
    from mini_agent.core.cache_policies import ResumeBreakpoints
    transcript = sample_transcript(30, variant=variant)
    placed = []
    original = ResumeBreakpoints.__call__

    def spy(self, request):
        out = original(self, request)
        placed.append(self.resumed_at[-1])
        return out
    ResumeBreakpoints.__call__ = spy
    try:
        usage = _assert_same(transcript.messages, system="S" * 8000, resume=True,
                             times=transcript.times,
                             make_policy=lambda: policy_spec("chunked-8").make({}))
    finally:
        ResumeBreakpoints.__call__ = original
    assert any(placed)  # the case is exercised
    assert any(u["cache_read_input_tokens"] for u in usage)


def _blank_turn_history(blanks: int) -> list[dict]:
    return [{"role": "user", "content": "task " * 1500},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": " "}] * blanks},
            {"role": "assistant", "content": " "},
            {"role": "user", "content": "next"},
            {"role": "assistant", "content": "end"}]


def test_the_lookback_window_ends_where_the_reference_ends_it():
    """The third request can read the first request's write only through the lookback: it is
    found while it lies fewer than 20 positions before the last breakpoint, then not."""
    reads = []
    for blanks in range(12, 22):
        usage = _assert_same(_blank_turn_history(blanks), system="S" * 100)
        reads.append(usage[-1]["cache_read_input_tokens"] > 0)
    assert True in reads and False in reads and reads == sorted(reads, reverse=True)


def test_the_server_edit_fires_above_its_trigger_exactly_as_the_reference():
    from mini_agent.core.cache import build_system_blocks
    from mini_agent.core.cache_policies import request_points
    from mini_agent.core.tokens import approx_request_tokens
    messages = sample_transcript(4).messages
    system = "S" * 400
    sizes = [approx_request_tokens(messages=messages[:i], system=build_system_blocks(system))
             for i in request_points(messages)]
    cleared = set()
    for trigger in (sizes[-1] - 1, sizes[-1], sizes[-2] - 1):
        usage = _assert_same(messages, system=system, server_edit=clear_tool_uses_edit(
            trigger_input_tokens=trigger, keep=0))
        cleared.add(sum(u["input_tokens"] + u["cache_creation_input_tokens"]
                        + u["cache_read_input_tokens"] for u in usage))
    assert len(cleared) == 3  # each trigger clears at a different request


# --------------------------------------------------------------------------- fallback, report

def test_inputs_it_does_not_model_fall_back_to_the_reference():
    transcript = sample_transcript(4)
    system = [{"type": "text", "text": "S" * 9000}]
    with pytest.raises(Unsupported):
        fast_replay(transcript.messages, model=MODEL, system=system)
    got = replay_usage(transcript.messages, model=MODEL, system=system)
    usage, cost, text = _reference(transcript.messages, system=system)
    assert got.usage == usage and got.cost_usd == cost and got.last_text == text


def test_times_that_go_back_fall_back_with_a_fresh_policy():
    transcript = sample_transcript(5)
    times = list(transcript.times)
    times[5], times[7] = times[7] + 1000, times[5]
    made = []

    def make():
        made.append(policy_spec("mask-2").make({}))
        return made[-1]
    got = replay_usage(transcript.messages, model=MODEL, system="S" * 9000, times=times,
                       policy=make(), make_policy=make)
    usage, cost, _ = _reference(transcript.messages, system="S" * 9000, times=times,
                                policy=policy_spec("mask-2").make({}))
    assert got.usage == usage and got.cost_usd == cost and len(made) == 2


def test_the_explorer_report_is_the_same_with_and_without_the_fast_replay():
    transcript = sample_transcript(8, variant=2)
    fast = evaluate_session(transcript)
    slow = evaluate_session(transcript, reference=True)
    assert fast == slow
    assert [p["name"] for p in fast["policies"]] == list(DEFAULT_POLICIES)


def test_fresh_blocks_are_remembered_by_content_and_value_types():
    """A policy's new placeholder block is summarised once per content, but True and 1 (or
    0.0 and -0.0) are different JSON, so they must not share an identity."""
    memo = BlockMemo()
    one = {"type": "tool_result", "tool_use_id": "t", "content": "x", "is_error": True}
    same = dict(one)
    other = {**one, "is_error": 1}
    floats = [{**one, "n": 0.0}, {**one, "n": -0.0}]
    assert memo._block(one) == memo._block(same)
    assert memo._block(one)[0] != memo._block(other)[0]
    assert memo._block(floats[0])[0] != memo._block(floats[1])[0]
    assert memo._block({**one, "content": [{"type": "text", "text": "x"}]})[0] != \
        memo._block(one)[0]


# ------------------------------------------------------ stand-ins for the JSON the cache sees

TRICKY_BLOCKS = [
    {"type": "tool_result", "tool_use_id": "t", "content": "x", "is_error": True},
    {"type": "tool_result", "tool_use_id": "t", "content": "x", "is_error": 1},
    {"type": "tool_result", "tool_use_id": "t", "content": "x", "is_error": 1.0},
    {"type": "tool_result", "tool_use_id": "t", "content": "x", "is_error": None},
    {"type": "tool_result", "tool_use_id": "t", "content": "x", "is_error": "1"},
    {"is_error": True, "content": "x", "tool_use_id": "t", "type": "tool_result"},
    {"type": "text", "text": "a", "n": 0.0}, {"type": "text", "text": "a", "n": -0.0},
    {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
    {"type": "text", "text": "a"}, {"text": "a", "type": "text"},
    {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "x"}]},
]


def test_flat_keys_are_equal_exactly_when_the_canonical_json_is():
    from mini_agent.core.block_identity import canonical_identity, flat_key
    for a in TRICKY_BLOCKS:
        for b in TRICKY_BLOCKS:
            ka, kb = flat_key(a), flat_key(b)
            if ka is not None and kb is not None:
                assert (ka == kb) == (canonical_identity(a) == canonical_identity(b)), (a, b)
    assert flat_key(TRICKY_BLOCKS[2]) is None and flat_key(TRICKY_BLOCKS[-1]) is None


def test_same_message_never_says_same_for_a_different_json():
    from mini_agent.core.block_identity import canonical_identity, same_message
    for a in TRICKY_BLOCKS:
        for b in TRICKY_BLOCKS:
            ma, mb = ({"role": "user", "content": [dict(x)]} for x in (a, b))
            if same_message(ma, mb):
                assert canonical_identity(a) == canonical_identity(b), (a, b)
    masked = {"type": "tool_result", "tool_use_id": "t", "content": placeholder("a\nb"),
              "is_error": False}
    assert same_message({"role": "user", "content": [masked]},
                        {"role": "user", "content": [dict(masked)]})  # the usual copy


def test_a_policy_flipping_true_and_1_between_requests_matches_the_reference():
    """Equal copies (``True == 1``) at the same index of consecutive views dump apart: the
    replay must not take the previous request's summary for them."""
    messages = sample_transcript(6, variant=1).messages

    def make():
        calls = [0]

        def flip(history, ctx):
            calls[0] += 1
            flag = True if calls[0] % 2 else 1
            view = []
            for m in history:
                if isinstance(m["content"], list) and any(
                        b.get("type") == "tool_result" for b in m["content"]):
                    m = {**m, "content": [{**b, "content": "short", "is_error": flag}
                                          if b.get("type") == "tool_result" else b
                                          for b in m["content"]]}
                view.append(m)
            return view
        return flip

    _assert_same(messages, system="S" * 9000, make_policy=make)


def test_view_infos_and_first_new_info_agree_with_the_plain_versions():
    from mini_agent.core.block_identity import first_new_info
    messages = sample_transcript(10, variant=4).messages
    memo = BlockMemo(messages)
    mask = policy_spec("mask-2").make({})
    from mini_agent.core.view import ViewContext
    before, before_infos = [], []
    for n, i in enumerate(range(2, len(messages), 2)):
        view = mask(messages[:i], ViewContext(turn=n + 1))
        infos = memo.view_infos(view, before, before_infos)
        plain = BlockMemo(messages).infos(view)
        assert [dataclasses.astuple(x) for x in infos] == \
            [dataclasses.astuple(x) for x in plain]
        same = next((k for k, (x, y) in enumerate(zip(before_infos, infos)) if x is not y),
                    min(len(before_infos), len(infos)))
        assert first_new_info(before_infos, infos) == same
        before, before_infos = view, infos
    lists = [[object() for _ in range(9)] for _ in range(2)]
    for cut in range(10):
        assert first_new_info(lists[0], lists[0][:cut] + lists[1][cut:]) == min(cut, 9)


def test_a_policy_that_returns_one_list_it_keeps_growing_matches_the_reference():
    """The replay compares each view with the previous one: it must hold its own copy."""
    messages = sample_transcript(5, variant=2).messages

    def make():
        kept: list = []

        def grow(history, ctx):
            kept[:] = history   # the same list object every time, refilled in place
            return kept
        return grow

    _assert_same(messages, system="S" * 9000, make_policy=make)


@pytest.mark.parametrize("variant", [0, 2, 6])
def test_the_flat_prefix_holds_each_blocks_sums_and_chain_ids(variant):
    """``FlatPrefix`` (one-block messages on their own path) against a block-by-block walk:
    cumulative tokens, lookback positions, message starts and chain ids."""
    from mini_agent.core.flat_prefix import FlatPrefix
    messages = sample_transcript(12, variant=variant).messages
    memo = BlockMemo(messages)
    system_info, _ = memo.system("S" * 9000)
    infos = memo.infos(messages)
    prefix = FlatPrefix(memo, ("root", MODEL), system_info)
    prefix.update(infos[: len(infos) // 2])
    prefix.update(infos)                               # appends the second half
    from flat_walk import flat_walk
    walked = flat_walk([system_info, *infos], {("root", MODEL): 0}, 0)
    assert (prefix.cum, prefix.pos, prefix.pid, prefix.starts) == walked
    assert {len(info.keys) for info in infos} >= {1, 2}   # both paths ran


@pytest.mark.parametrize("variant", [0, 3])
def test_the_flat_prefix_hands_out_the_ids_a_lookup_per_block_would(variant):
    """``FlatPrefix._extend`` stops looking links up after the first new one: its chain ids
    and table equal ``chain.setdefault`` block by block, over requests that change a message
    in the middle, return to an earlier view (old ids again) and append."""
    from mini_agent.core.flat_prefix import FlatPrefix
    messages = sample_transcript(12, variant=variant).messages
    memo = BlockMemo(messages)
    system_info, _ = memo.system("S" * 9000)
    infos = memo.infos(messages)
    middle = len(infos) // 2
    changed = [*infos[:middle], memo.info({"role": "user", "content": "changed"}),
               *infos[middle + 1:]]
    prefix = FlatPrefix(memo, ("root", MODEL), system_info)
    chain = {("root", MODEL): 0}
    for view in (infos[:middle + 2], changed[:middle + 2], infos[:middle + 2], changed,
                 infos, infos[:middle], changed):
        prefix.update(view)
        pid, parent = [], 0
        for info in [system_info, *view]:
            for key in info.keys:
                parent = chain.setdefault((parent, key), len(chain))
                pid.append(parent)
        assert prefix.pid == pid
        assert prefix.links() == chain
