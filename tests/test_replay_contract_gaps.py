"""Odd inputs on which the fast replay must give the reference replay's figures.

A policy that changes a message after returning it, or a summariser with state, is outside
the contract (``core/view.py`` ``ViewPolicy``, ``evaluate_session``'s ``summarize``): those
are documented, not modelled.
"""

from __future__ import annotations

import math

import pytest

from mini_agent.core.cache_policies import replay_with_cache
from mini_agent.core.fast_replay import Unsupported, fast_replay, replay_usage
from mini_agent.core.sample_sessions import sample_transcript

MODEL = "claude-sonnet-4-5"


def test_a_request_time_that_is_not_a_number_gives_the_reference_figures():
    # a NaN time is not caught like a time that goes back (comparisons with NaN are False):
    # the fast path read the cache at request 4 where the reference finds it expired; it now
    # refuses the input, and replay_usage runs the reference
    transcript = sample_transcript(4, variant=1)
    times = list(transcript.times)
    times[5] = math.nan
    system = "S" * 6000
    with pytest.raises(Unsupported, match="NaN"):
        fast_replay(transcript.messages, model=MODEL, system=system, times=times)
    got = replay_usage(transcript.messages, model=MODEL, system=system, times=times)
    want = replay_with_cache(transcript.messages, model=MODEL, system=system, times=times)
    assert got.usage == [r["usage"] for r in want]
    assert [u["cache_read_input_tokens"] for u in got.usage][3] == 0
