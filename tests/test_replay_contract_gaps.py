"""Inputs on which the fast replay's figures part from the reference replay's.

Each test replays one history with :func:`~mini_agent.core.fast_replay.fast_replay` (or
``evaluate_session``) and with the reference (``replay_with_cache``, ``reference=True``) and
expects the same figures, as the fast replay's docs promise.
"""

from __future__ import annotations

import copy
import math

from mini_agent.core.cache_policies import replay_with_cache
from mini_agent.core.fast_replay import ReplayRun, fast_replay, replay_runs
from mini_agent.core.replay import evaluate_session
from mini_agent.core.sample_sessions import sample_transcript

MODEL = "claude-sonnet-4-5"
SYSTEM = "You are a coding agent. " * 200


def _history(results: int = 4) -> list[dict]:
    messages = [{"role": "user", "content": "task " * 50}]
    for k in range(results):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{k}", "name": "read", "input": {"path": f"f{k}"}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{k}", "content": f"line {k}\n" * 800}]})
    return messages


class MaskOwnCopies:
    """A view policy within the ``ViewPolicy`` contract (a new list each request, the history
    never mutated): it keeps its own copies of the messages and masks the older results in
    those copies, in place."""

    def __init__(self) -> None:
        self.kept: list[dict] = []

    def __call__(self, history, ctx):
        self.kept.extend(copy.deepcopy(history[len(self.kept):]))
        for message in self.kept[:-2]:
            for block in message["content"] if isinstance(message["content"], list) else ():
                if block.get("type") == "tool_result":
                    block["content"] = "[masked]"
        return list(self.kept)


def _sent(usages) -> list[int]:
    return [u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]
            for u in usages]


def test_a_policy_that_edits_its_own_kept_copies_gets_the_reference_figures():
    # the block memo takes a message object it has seen before at its old summary, so the
    # masked copies are priced at their unmasked size: sent [1263, 2673, 4083, 5493]
    # where the reference sends [1263, 2673, 2685, 2697]
    messages = _history()
    want = replay_with_cache(messages, model=MODEL, policy=MaskOwnCopies(), system=SYSTEM)
    got = fast_replay(messages, model=MODEL, policy=MaskOwnCopies(), system=SYSTEM)
    assert _sent(got.usage) == _sent(r["usage"] for r in want)
    assert got.usage == [r["usage"] for r in want]


def test_side_by_side_a_policy_that_edits_its_own_copies_gets_the_reference_figures():
    messages = _history()
    (got,) = replay_runs(messages, [ReplayRun(MaskOwnCopies(), make_policy=MaskOwnCopies)],
                         model=MODEL, system=SYSTEM)
    want = replay_with_cache(messages, model=MODEL, policy=MaskOwnCopies(), system=SYSTEM)
    assert got.usage == [r["usage"] for r in want]


def test_a_request_time_that_is_not_a_number_gives_the_reference_figures():
    # a NaN time is not refused like a time that goes back (comparisons with NaN are False):
    # the fast path reads the cache at request 4 where the reference finds it expired
    transcript = sample_transcript(4, variant=1)
    times = list(transcript.times)
    times[5] = math.nan
    system = "S" * 6000
    got = fast_replay(transcript.messages, model=MODEL, system=system, times=times)
    want = replay_with_cache(transcript.messages, model=MODEL, system=system, times=times)
    assert got.usage == [r["usage"] for r in want]


class CountingSummarizer:
    """A summariser whose text depends on how many summaries it wrote before (a call log;
    any summariser with state)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return f"Summary #{self.calls}: " + "the task is fixing parse(). " * (5 * self.calls)


def test_the_fast_report_equals_the_reference_report_with_a_summariser_that_keeps_state():
    # the fast path asks the policies request by request side by side, the reference one
    # policy after the other: server_compact and summary get different summaries
    transcript = sample_transcript(150, variant=2)
    policies = ("server_compact", "summary")
    fast = evaluate_session(transcript, policies=policies, summarize=CountingSummarizer())
    reference = evaluate_session(transcript, policies=policies, summarize=CountingSummarizer(),
                                 reference=True)
    assert [p["tokens_sent"] for p in fast["policies"]] == \
        [p["tokens_sent"] for p in reference["policies"]]
