"""Replaying policies side by side (sharing the work while they agree) gives each policy the
figures of its own replay: usage, cost, totals, breakpoints and retention text."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from test_fast_replay import histories

from mini_agent.core.context_edits import clear_tool_uses_edit
from mini_agent.core.fast_replay import (BlockMemo, ReplayRun, Unsupported, fast_replay,
                                         replay_runs, replay_together, replay_usage)
from mini_agent.core.replay import DEFAULT_POLICIES, GAP_SECONDS, policy_spec
from mini_agent.core.replay_lane import Lane
from mini_agent.core.sample_sessions import sample_transcript

MODEL = "claude-sonnet-4-5"


def diverging(at: int, then):
    """A policy that sends the history as it is until request ``at`` (1-based), then
    ``then``'s view: its requests are raw's up to there."""
    def view(history, ctx):
        return then(history, ctx) if ctx.turn >= at else history
    return view


def _alone(messages, run: ReplayRun, *, system, times, model=MODEL):
    """One run replayed by itself (no other policy to share with), and its breakpoints."""
    trace: list = []
    result = fast_replay(messages, model=model, policy=run.policy, server_edit=run.server_edit,
                         system=system, resume=run.resume, times=times,
                         gap_seconds=GAP_SECONDS, memo=BlockMemo(messages), trace=trace)
    return result, trace


def _assert_together_equals_alone(messages, makers, *, system, times, model=MODEL):
    runs = [make() for make in makers]
    traces: list[list] = [[] for _ in runs]
    together = replay_together(messages, runs, model=model, system=system, times=times,
                               gap_seconds=GAP_SECONDS, memo=BlockMemo(messages), traces=traces)
    for k, make in enumerate(makers):
        alone, trace = _alone(messages, make(), system=system, times=times, model=model)
        got = together[k]
        assert got.usage == alone.usage, k
        assert got.cost_usd == alone.cost_usd, k      # the same floats
        assert got.total == alone.total and got.last_text == alone.last_text, k
        assert got.last_view == alone.last_view, k
        assert traces[k] == trace, k
    return together


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.integers(1, 12), st.integers(0, 3_000), st.booleans(),
       st.sampled_from([100, 4_000, 9_000]))
def test_random_histories_give_each_policy_its_own_replay(history, at, trigger, timed,
                                                           system_chars):
    """raw twice, a policy that diverges from raw at a random request (with and without the
    resume breakpoint), server edits that fire at a random size, the mask policies."""
    messages, times = history
    before = copy.deepcopy(messages)
    mask = lambda: policy_spec("mask-1").make({})  # noqa: E731
    makers = [
        lambda: ReplayRun(None),
        lambda: ReplayRun(diverging(at, mask())),
        lambda: ReplayRun(None),
        lambda: ReplayRun(None, clear_tool_uses_edit(trigger_input_tokens=trigger, keep=1)),
        lambda: ReplayRun(diverging(at, mask()), clear_tool_uses_edit(
            trigger_input_tokens=trigger, keep=0)),
        lambda: ReplayRun(diverging(at, mask()), resume=True),
        lambda: ReplayRun(None, resume=True),
        lambda: ReplayRun(policy_spec("chunked-2").make({})),
        lambda: ReplayRun(policy_spec("payback").make({}), resume=True),
    ]
    _assert_together_equals_alone(messages, makers, system="S" * system_chars,
                                  times=times if timed else None)
    assert messages == before  # never mutated


@pytest.mark.parametrize("variant", [0, 3])
def test_the_explorer_policies_side_by_side_match_their_own_replays(variant):
    transcript = sample_transcript(14, variant=variant)
    system = "You are a coding agent.\n" + "rules. " * 900
    context = {"summarize": None, "system": system, "model": MODEL}
    makers = []
    for name in DEFAULT_POLICIES:
        spec = policy_spec(name)
        makers.append(lambda spec=spec: ReplayRun(spec.make(context), spec.server_edit,
                                                  spec.resume))
    _assert_together_equals_alone(transcript.messages, makers, system=system,
                                  times=transcript.times)


def test_runs_that_agree_are_stepped_once(monkeypatch):
    """Two raw runs, raw with resume breakpoints, and a policy that turns away at request 4:
    requests are sent once while all agree, then twice; a run that always agrees never gets
    a lane of its own (on this history the resume marker is never needed)."""
    messages = sample_transcript(6, variant=1).messages
    sends, forks = [0], [0]
    send, fork = Lane.send, Lane.fork
    monkeypatch.setattr(Lane, "send", lambda self, *a: (sends.__setitem__(0, sends[0] + 1),
                                                         send(self, *a))[1])
    monkeypatch.setattr(Lane, "fork", lambda self: (forks.__setitem__(0, forks[0] + 1),
                                                    fork(self))[1])
    runs = [ReplayRun(None), ReplayRun(None), ReplayRun(None, resume=True),
            ReplayRun(diverging(4, policy_spec("mask-1").make({})))]
    out = replay_together(messages, runs, model=MODEL, system="S" * 9000)
    requests = len(out[0].usage)
    assert requests == 8
    assert out[0].usage[3:] != out[3].usage[3:] and out[0].usage[:3] == out[3].usage[:3]
    assert out[2].usage == out[0].usage
    assert sends[0] == 3 + 2 * (requests - 3)
    assert forks[0] == 1  # the diverging run's lane


def test_a_run_the_fast_path_does_not_model_falls_back_alone():
    """A view holding a marked block with a tuple inside (JSON sends it as a list; the fast
    path does not model it) stops that run only; replay_runs gives it the reference's figures
    from a fresh policy."""
    transcript = sample_transcript(5, variant=2)
    messages, system = transcript.messages, "S" * 9000

    def odd(history, ctx):
        odd_block = {"type": "text", "text": "x", "tags": ("a",),
                     "cache_control": {"type": "ephemeral"}}
        return history if ctx.turn < 3 else history + [{"role": "user",
                                                        "content": [odd_block]}]
    made = []

    def make():
        made.append(odd)
        return odd
    edit = clear_tool_uses_edit(trigger_input_tokens=0, keep=0)
    runs = [ReplayRun(None), ReplayRun(odd, make_policy=make), ReplayRun(None, resume=True),
            ReplayRun(None, edit, resume=True)]
    together = replay_together(messages, runs, model=MODEL, system=system)
    assert isinstance(together[1], Unsupported) and isinstance(together[3], Unsupported)
    assert together[0].usage == fast_replay(messages, model=MODEL, system=system).usage
    got = replay_runs(messages, runs, model=MODEL, system=system)
    want = replay_usage(messages, model=MODEL, system=system, policy=odd)
    assert got[1].usage == want.usage and got[1].cost_usd == want.cost_usd and made
    assert got[1].last_text == want.last_text
    assert got[2].usage == together[2].usage
    assert got[3].usage == replay_usage(messages, model=MODEL, system=system,
                                        server_edit=edit, resume=True).usage


def test_runs_part_where_the_resume_marker_is_placed():
    """Chunks of 8 masked at once, with and without resume breakpoints: the two send the
    same views, so they share a lane until ResumeBreakpoints adds its marker; from there
    each has the figures of its own replay."""
    transcript = sample_transcript(30, variant=0)
    chunked = lambda: policy_spec("chunked-8").make({})  # noqa: E731
    makers = [lambda: ReplayRun(chunked()), lambda: ReplayRun(chunked(), resume=True)]
    together = _assert_together_equals_alone(transcript.messages, makers, system="S" * 8000,
                                             times=transcript.times)
    plain, resumed = together[0].usage, together[1].usage
    parted = next(k for k, (a, b) in enumerate(zip(plain, resumed)) if a != b)
    assert 0 < parted < len(plain) - 1


@pytest.mark.parametrize("variant", [0, 3])
def test_skipping_new_chain_ids_finds_the_same_cache_hits(monkeypatch, variant):
    """``prefix_usage`` given ``fresh`` (skip this request's new links) against the plain
    scan of every block: the same usage and the same live entries, request by request."""
    import mini_agent.core.replay_lane as replay_lane
    from mini_agent.core.flat_usage import prefix_usage
    calls = []

    def both(entries, marks, pid, pos, cum, now, minimum, fresh):
        plain_entries = {k: list(v) for k, v in entries.items()}
        plain = prefix_usage(plain_entries, marks, pid, pos, cum, now, minimum)
        got = prefix_usage(entries, marks, pid, pos, cum, now, minimum, fresh)
        assert got == plain
        assert ({k: v for k, v in entries.items() if v[1] > now}
                == {k: v for k, v in plain_entries.items() if v[1] > now})
        calls.append(fresh is not None and pid[-1] >= fresh)   # blocks it could skip
        return got

    monkeypatch.setattr(replay_lane, "prefix_usage", both)
    transcript = sample_transcript(14, variant=variant)
    specs = [policy_spec(name) for name in DEFAULT_POLICIES]
    runs = [ReplayRun(spec.make({"summarize": None, "system": "S", "model": MODEL}),
                      spec.server_edit, spec.resume) for spec in specs]
    replay_together(transcript.messages, runs, model=MODEL, system="S" * 9000,
                    gap_seconds=GAP_SECONDS)
    assert sum(calls) > len(calls) // 2   # most requests had new links to skip
