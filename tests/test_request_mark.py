"""The replay hands every policy of a request one history list and marks it
(:func:`mini_agent.core.scan_handle.request_mark`): the kit's policies never mutate it, a
scan checks it once, and the figures are those of the replay without marks."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from test_fast_replay import histories

from mini_agent.core.fast_replay import BlockMemo, ReplayRun, replay_together
from mini_agent.core.history_scan import REQUEST_KEY, scan_for
from mini_agent.core.messages import assistant, user
from mini_agent.core.replay import DEFAULT_POLICIES, GAP_SECONDS, policy_spec
from mini_agent.core.sample_sessions import sample_transcript
from mini_agent.core.scan_handle import ScanHandle, request_mark, request_unmark
from mini_agent.core.tokens import session_memo, token_memo

MODEL = "claude-sonnet-4-5"
SYSTEM = "You are a coding agent.\n" + "rules. " * 900


def _checked(policy, seen: list):
    """``policy``, asserting that it leaves its history list as it got it (the same objects,
    the same length), and recording the history lists it was given."""
    def view(history, ctx):
        before = list(history)
        out = policy(history, ctx)
        assert len(history) == len(before)
        assert all(a is b for a, b in zip(history, before))
        seen.append(history)
        return out
    view.__module__ = policy.__module__   # still the kit's policy: it shares the list
    return view


def _runs(seen: list | None):
    runs = []
    for name in DEFAULT_POLICIES:
        spec = policy_spec(name)
        policy = spec.make({"summarize": None, "system": SYSTEM, "model": MODEL})
        if policy is not None and seen is not None:
            policy = _checked(policy, seen)
        runs.append(ReplayRun(policy, spec.server_edit, spec.resume))
    return runs


def _figures(results):
    return [(r.usage, r.cost_usd, r.total, r.last_text, r.last_view) for r in results]


def _replay(messages, times, seen=None):
    return replay_together(messages, _runs(seen), model=MODEL, system=SYSTEM, times=times,
                           gap_seconds=GAP_SECONDS, memo=BlockMemo(messages))


@pytest.mark.parametrize("variant", [0, 3])
def test_policies_share_one_unmutated_list_and_marked_figures_equal_plain(variant):
    transcript = sample_transcript(14, variant=variant)
    plain = _replay(transcript.messages, transcript.times)        # no token memo: no mark
    seen: list = []
    with token_memo():
        marked = _replay(transcript.messages, transcript.times, seen)
        assert REQUEST_KEY not in session_memo()   # unmarked at the end
        scans = session_memo()["history_scans"].values()
        assert scans and all(scan.request is None for _, scan in scans)
    assert _figures(marked) == _figures(plain)
    policies = sum(run.policy is not None for run in _runs(None))
    assert len(seen) > policies
    for k in range(0, len(seen), policies):   # per request: one list for every policy
        assert all(h is seen[k] for h in seen[k:k + policies])
    assert seen[0] is not seen[policies]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_marked_replay_equals_plain_replay_on_random_histories(history):
    messages, times = history
    plain = _replay(messages, times)
    with token_memo():
        marked = _replay(messages, times, [])
    assert _figures(marked) == _figures(plain)


def test_a_marked_list_is_noted_on_its_scan_once_checked_and_forgotten_when_unmarked():
    history = [user("go"), assistant("ok"), user("more")]
    with token_memo():
        mark = request_mark()
        mark[0] = history
        scan = scan_for(history)
        assert scan.request is history and mark[1] == [scan]
        assert scan_for(history) is scan and mark[1] == [scan]   # noted once
        other = list(history)                 # the same objects, not the marked list
        assert scan_for(other) is scan and scan.request is history
        handle = ScanHandle()
        assert handle.get(history) is scan and handle.get(history) is scan
        longer = mark[0] = history + [assistant("next")]   # the next request's list
        assert scan_for(longer) is scan and scan.request is longer and mark[1] == [scan, scan]
        assert len(scan.messages) == 4 and handle.get(longer) is scan
        diverging = [history[0], assistant("no")]  # not a prefix: a new scan, not noted
        fresh = scan_for(diverging)
        assert fresh is not scan and fresh.request is None
        request_unmark(mark)
        assert scan.request is None and REQUEST_KEY not in session_memo()
        assert handle.get(longer) is scan    # the kept scan, compared message by message
        longer[1] = assistant("changed")     # unmarked: a changed list is compared again
        got = handle.get(longer)
        assert got is not scan and got.messages[1] is longer[1]
    assert request_mark() is None      # no token memo: nothing marked
    request_unmark(None)


def test_a_scan_noted_for_a_list_does_not_vouch_for_another_list():
    history = [user("go"), assistant("ok"), user("more")]
    with token_memo():
        mark = request_mark()
        mark[0] = history
        handle = ScanHandle()
        scan = handle.get(history)
        assert scan.request is history
        swapped = [history[0], assistant("ok"), history[2]]   # equal, another object inside
        got = handle.get(swapped)
        assert got is not scan and all(a is b for a, b in zip(swapped, got.messages))
        request_unmark(mark)


def test_a_policy_from_outside_the_kit_gets_its_own_copy_and_may_mutate_it():
    # a student's policy that pops the history it is given must not change what the kit's
    # policies and the raw run in the same replay see
    messages = sample_transcript(6, variant=2).messages
    given_lists = []

    def greedy(history, ctx):
        given_lists.append(history)
        history.pop()            # the mistake: mutating the input
        return history

    assert greedy.__module__ == __name__          # not a module of the kit
    memo = BlockMemo(messages)
    mask = policy_spec("mask-4").make({"summarize": None, "system": SYSTEM, "model": MODEL})
    runs = [ReplayRun(None, None, False), ReplayRun(mask, None, False),
            ReplayRun(greedy, None, False)]
    together = replay_together(messages, runs, model=MODEL, system=SYSTEM,
                               gap_seconds=GAP_SECONDS, memo=memo)
    alone = replay_together(messages, runs[:2], model=MODEL, system=SYSTEM,
                            gap_seconds=GAP_SECONDS, memo=BlockMemo(messages))
    for a, b in zip(together[:2], alone):
        assert [u["input_tokens"] + u["cache_read_input_tokens"] for u in a.usage] == \
            [u["input_tokens"] + u["cache_read_input_tokens"] for u in b.usage]
    # each request gave the foreign policy a fresh list, one message shorter once popped
    assert len({id(h) for h in given_lists}) == len(given_lists) > 3
