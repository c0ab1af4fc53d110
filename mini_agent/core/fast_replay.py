"""The explorer's fast replay: the same usage as the reference replay, without copying requests.

:func:`~mini_agent.core.cache_policies.replay_with_cache` is the reference: per request it
deep-copies the view, places the breakpoints (:func:`~mini_agent.core.cache.place_breakpoints`),
serialises and hashes every block of the prefix (``prefix_boundaries``) and scans the cache:
``O(n^2)`` serialisations over ``n`` requests. :func:`fast_replay` computes the same usage per
request (to the token, and ``cost_usd`` to the float) from a per-session memo instead:

* each message is summarised once (:class:`~mini_agent.core.block_memo.BlockMemo`): per block
  an interned identity key, its tokens, its lookback position, whether it can be marked; a
  policy's view takes the previous view's summaries for the same objects and for equal
  copies (:mod:`mini_agent.core.block_identity`), so a request costs its new messages;
* a prefix is an interned chain of block keys, so two requests share a cache entry exactly
  when the reference's SHA-256 chains are equal; each request updates the flattened prefix
  from the first message that differs, so a request that appends costs only its new blocks;
* markers follow ``place_breakpoints(canonical=True, anchors=True)`` and the resume marker of
  ``ResumeBreakpoints`` by index (the flat prefix and its markers are
  :mod:`mini_agent.core.flat_prefix`, the cache's usage :mod:`mini_agent.core.flat_usage`);
  ``clear_tool_uses_20250919`` copies only the messages it
  changes (:mod:`mini_agent.core.replay_lane`);
* :func:`replay_together` replays several policies side by side: while two policies send the
  same summaries they are in the same cache state (a :class:`~mini_agent.core.replay_lane.Lane`)
  and each request is stepped once for both; a policy gets its own copy of the state at the
  first request where it differs (``raw``, a server edit below its trigger and a masking
  policy before it masks share every request they agree on).

Inputs it does not model (tools, a list ``system``, request times that go back, a block that
is not a dict) raise :class:`Unsupported`; :func:`replay_usage` then runs the reference, so
callers always get the reference's figures (:func:`replay_runs`: per policy).
``tests/test_fast_replay.py`` checks positions, usage, cost and retention text against the
reference, ``tests/test_shared_replay.py`` each policy replayed side by side against its own
replay. Pure: no IO, inputs never mutated. A policy must not change a message after it
returned it in a view (the kit's policies build new copies instead): each message object
is summarised once, so a change made in place later is not seen (the reference copies
every view and sees it).
Source: the prompt caching docs as modelled in :mod:`mini_agent.core.prompt_cache` (20-position
lookback, writes at breakpoints above the minimum length, 5-minute TTL refreshed on a hit).
"""

from __future__ import annotations

import dataclasses
from itertools import compress
from operator import is_
from typing import Any, Callable, NamedTuple, Sequence

from mini_agent.core.block_identity import same_objects
from mini_agent.core.block_memo import BlockMemo, MessageInfo, Unsupported
from mini_agent.core.flat_prefix import RESUME_MEMORY_REQUESTS, FlatPrefix  # noqa: F401
from mini_agent.core.messages import Message
from mini_agent.core.pricing import model_price
from mini_agent.core.prompt_cache import min_cacheable_tokens
from mini_agent.core.replay_lane import Lane, check_edit, clear_tool_uses
from mini_agent.core.scan_handle import request_mark, request_unmark
from mini_agent.core.view import ViewContext, check_times

__all__ = ["BlockMemo", "FastReplay", "ReplayRun", "Unsupported", "fast_replay",
           "replay_runs", "replay_together", "replay_usage"]


@dataclasses.dataclass
class FastReplay:
    """The result of :func:`fast_replay` (or of the reference, converted).

    Attributes: usage: one usage dict per request (the simulator's shape); cost_usd: the
    input cost of each request (USD, as ``cost_usd(usage, model, include_output=False)``);
    last_view: the messages of the last request (the policy's view, server edit applied; no
    markers, keys as the policy wrote them); last_text: ``view_text`` of the last request as
    the reference sends it (keys sorted), for retention; total: the usages added up
    (``sum_usage``'s shape).
    """

    usage: list[dict[str, Any]]
    cost_usd: list[float]
    last_view: list[Message]
    last_text: str
    total: dict[str, Any]


class ReplayRun(NamedTuple):
    """One policy to replay with :func:`replay_together` (the arguments of :func:`fast_replay`
    that differ between policies).

    Attributes: policy: ``policy(history, ctx) -> view`` or None (send the history as it is);
    server_edit: a ``clear_tool_uses_20250919`` edit dict applied to every request, or None;
    resume: place the resume breakpoint of ``ResumeBreakpoints``; make_policy: builds a fresh
    policy for the reference run when the fast path gives up part-way (None: reuse
    ``policy``; only :func:`replay_runs` uses it).
    """

    policy: Callable | None = None
    server_edit: dict | None = None
    resume: bool = False
    make_policy: Callable[[], Any] | None = None


def fast_replay(messages: list[Message], *, model: str, policy: Callable | None = None,
                server_edit: dict | None = None, system: str | None = None,
                resume: bool = False, times: Sequence[float] | None = None,
                gap_seconds: float = 20.0, memo: BlockMemo | None = None,
                trace: list | None = None) -> FastReplay:
    """Replay a recorded history under one policy and return each request's cache usage.

    The same requests as ``replay_with_cache(messages, model=model, policy=policy,
    server_edit=server_edit, system=system, resume=resume, times=times,
    gap_seconds=gap_seconds)`` (caching on, 5-minute TTL, no tools), the same usage and cost
    per request; see the module doc for how. It is :func:`replay_together` with one run.

    Args:
        messages: the whole recorded history; never mutated.
        model: prices and the minimum cacheable length come from it.
        policy: ``policy(history, ctx) -> view`` or None (send the history as it is).
        server_edit: a ``clear_tool_uses_20250919`` edit dict applied to every request.
        system: the system prompt (a non-empty str).
        resume: place the resume breakpoint of ``ResumeBreakpoints``.
        times: Unix seconds per message (``Transcript.times``); None: ``gap_seconds`` apart.
        gap_seconds: seconds between requests when ``times`` is None.
        memo: the session's :class:`BlockMemo` (share one between the policies of a session).
        trace: a list that receives, per request, ``[(block index, prefix tokens)]`` of each
            breakpoint (block index counts system blocks first, as ``prefix_boundaries``
            does), for tests; None: nothing recorded.

    Returns:
        A :class:`FastReplay`.

    Raises:
        Unsupported: an input the fast path does not model (see the module doc).
        ValueError: ``times`` not parallel to ``messages``.
    """
    traces = None if trace is None else [trace]
    (result,) = replay_together(messages, [ReplayRun(policy, server_edit, resume)],
                                model=model, system=system, times=times,
                                gap_seconds=gap_seconds, memo=memo, traces=traces)
    if isinstance(result, Unsupported):
        raise result
    return result


def replay_together(messages: list[Message], runs: Sequence[ReplayRun], *, model: str,
                    system: str | None, times: Sequence[float] | None = None,
                    gap_seconds: float = 20.0, memo: BlockMemo | None = None,
                    traces: list[list] | None = None) -> list[FastReplay | Unsupported]:
    """Replay one history under several policies at once, sharing the work while they agree.

    Each run's figures are those of :func:`fast_replay` with its arguments (the test
    ``tests/test_shared_replay.py`` compares the two). The policies are asked for their views
    request by request, side by side; from the views' summaries on, a request's usage
    depends only on the summaries and the state the run's previous requests left
    (:class:`~mini_agent.core.replay_lane.Lane`). So all runs start in one lane; at each
    request the runs of a lane whose summaries are the same objects (the view's and the sent
    request's, after any server edit) are stepped once, and a run whose summaries differ from
    its lane's leader gets its own lane, a copy of the state
    (:meth:`~mini_agent.core.replay_lane.Lane.fork`); so do the runs with resume breakpoints
    at a request where the resume marker makes their markers differ from the others'.
    ``raw``, a server edit below its trigger, and a masking policy before it masks (with or
    without resume breakpoints) share one lane.

    Each policy sees its own requests in order (request ``n`` of every policy is asked before
    request ``n + 1`` of any); at each request the kit's policies get one list of the history
    (they never mutate it), any other policy its own copy, and all one frozen
    :class:`~mini_agent.core.view.ViewContext` shared by all. Runs that shared a
    lane share the usage dicts of those requests: treat the results as read-only.

    Args:
        messages: the whole recorded history; never mutated.
        runs: the policies, each a :class:`ReplayRun`.
        model: prices and the minimum cacheable length come from it.
        system: the system prompt (a non-empty str).
        times: Unix seconds per message (``Transcript.times``); None: ``gap_seconds`` apart.
        gap_seconds: seconds between requests when ``times`` is None.
        memo: the session's :class:`BlockMemo` (None: a new one).
        traces: one list per run that receives the run's breakpoints as ``fast_replay``'s
            ``trace`` does; None: nothing recorded.

    Returns:
        Per run, in order, a :class:`FastReplay`, or the :class:`Unsupported` that stopped
        that run alone (a view the fast path does not model, an edit it does not model).

    Raises:
        Unsupported: an input of every run the fast path does not model (the system prompt,
            request times that go back or are NaN).
        ValueError: ``times`` not parallel to ``messages``.
    """
    if not isinstance(system, str) or not system.strip():
        raise Unsupported("system must be a non-empty str")
    if times is not None:
        check_times(messages, times)
    memo = memo or BlockMemo(messages)
    points = memo.request_points(messages)
    if times is not None and any(times[b] < times[a] for a, b in zip(points, points[1:])):
        raise Unsupported("request times that go back")
    if times is not None and any(times[a] != times[a] for a in points):
        raise Unsupported("a request time that is not a number (NaN)")
    system_info, sys_marks = memo.system(system)
    system_tokens = sum(system_info.tokens)
    price, minimum = model_price(model), min_cacheable_tokens(model)
    out: list[Any] = [None] * len(runs)
    # the runs' fields as plain lists: a NamedTuple field is a slower attribute to read
    policies = [run.policy for run in runs]
    # the kit's policies share the request's history list; any other callable gets its own
    # copy, as it may mutate what it is given (a copy is also never marked for the scans)
    own_copy = [p is not None
                and not str(getattr(p, "__module__", None) or "").startswith("mini_agent.")
                for p in policies]
    edits = [run.server_edit for run in runs]
    resumes = [run.resume for run in runs]
    starting: list[int] = []                 # the runs the fast path models
    for r, run in enumerate(runs):
        try:
            if run.server_edit is not None:
                check_edit(run.server_edit)
                if run.resume:
                    raise Unsupported("a server edit with resume breakpoints")
        except Unsupported as error:
            out[r] = error
            continue
        starting.append(r)
    prefix = FlatPrefix(memo, ("root", model), system_info)
    lanes = [(Lane(prefix, sys_marks, minimum, price, None if traces is None else []),
              starting)]
    before: list[list[Message]] = [[] for _ in runs]   # per run: its previous view,
    before_infos: list[list[MessageInfo]] = [[] for _ in runs]   # that view's summaries,
    sent: list[list[Message]] = [[] for _ in runs]     # what it sent last,
    copies: list[dict] = [{} for _ in runs]            # and its cleared copies
    sums: list[list] = [[[], 0, 0] for _ in runs]      # the sums of its last edited infos
    mark = request_mark()   # [the request's history list, the scans that checked one]
    try:
        for n, i in enumerate(points):
            now = times[i] - times[points[0]] if times is not None else n * gap_seconds
            ctx = (ViewContext(times=tuple(times[:i]), now=times[i], turn=n + 1)
                   if times is not None else ViewContext(turn=n + 1))
            memo.rotate()
            # the view of every run without a policy and the history of every policy: one list
            # (no policy mutates its history), marked so that the scan checks it once
            unchanged = messages[:i]
            if mark is not None:
                mark[0] = unchanged
            next_lanes = []
            for lane, members in lanes:
                groups: list[tuple[list, list, list, list[int]]] = []  # view, infos, sent, runs
                for r in members:
                    policy = policies[r]
                    view = (unchanged if policy is None else policy(
                        messages[:i] if own_copy[r] else unchanged, ctx))
                    group = None
                    for held in groups:  # the same message objects as a group's view: the same
                        # summaries (``same_objects`` inlined: a C scan)
                        held_view = held[0]
                        if held_view is view or (len(held_view) == len(view)
                                                 and all(map(is_, held_view, view))):
                            group = held
                            break
                    if group is not None:
                        infos = group[1]
                    else:
                        try:
                            infos = memo.view_infos(view, before[r], before_infos[r])
                        except Unsupported as error:
                            out[r] = error
                            continue
                    # a policy may refill the list it returned: keep a copy of it
                    before[r] = view if policy is None else list(view)
                    before_infos[r] = infos
                    edit = edits[r]
                    if edit is None:
                        sent[r] = view
                        if group is not None and group[2] is infos:
                            group[3].append(r)   # the group sends its view unedited too
                            continue
                        sent_infos = infos
                    else:  # markers are placed before the edit, on ``infos``
                        sent[r], sent_infos = clear_tool_uses(view, infos, edit, system_tokens,
                                                              memo, copies[r], sums[r])
                    # infos compare by identity (``MessageInfo`` has eq=False): a C-level scan;
                    # groups differ pairwise in (infos, sent), so at most one matches
                    for _, held, held_sent, rs in groups:
                        if (held is infos or held == infos) and (held_sent is sent_infos
                                                                 or held_sent == sent_infos):
                            rs.append(r)
                            break
                    else:
                        groups.append((view, infos, sent_infos, [r]))
                # fork before stepping: every group starts from the state the lane had
                owners = [lane]
                for _ in range(len(groups) - 1):
                    owners.append(lane.fork())
                for own, (_, infos, sent_infos, rs) in zip(owners, groups):
                    if len(rs) == 1:   # the usual group: one run
                        resume = None
                        uses_any = uses_all = resumes[rs[0]]
                    else:
                        resume = list(map(resumes.__getitem__, rs))
                        uses_any, uses_all = any(resume), all(resume)
                    marks, resumed = own.place(infos, sent_infos, n + 1, uses_any)
                    if resumed is None or uses_all or resumed == marks:
                        own.send(marks if resumed is None else resumed, now)
                        next_lanes.append((own, rs))
                        continue
                    # the resume marker parts the runs: those without it get their own lane
                    plain = own.fork()
                    own.send(resumed, now)
                    plain.send(marks, now)
                    next_lanes.append((own, list(compress(rs, resume))))
                    next_lanes.append((plain, [r for r, uses in zip(rs, resume) if not uses]))
            lanes = next_lanes
    finally:
        request_unmark(mark)
    texts: list[tuple[list[Message], str]] = []   # last views and their text, counted once
    for lane, members in lanes:
        for r in members:
            view = sent[r] if points else []
            text = next((t for v, t in texts if same_objects(v, view)), None)
            if text is None:
                text = memo.text(view)
                texts.append((view, text))
            out[r] = FastReplay(list(lane.usage), list(lane.cost_usd), view, text,
                                lane.total())
            if traces is not None:
                traces[r].extend(lane.trace)
    return out


def replay_runs(messages: list[Message], runs: Sequence[ReplayRun], *, model: str,
                system: Any, times: Sequence[float] | None = None, gap_seconds: float = 20.0,
                memo: BlockMemo | None = None) -> list[FastReplay]:
    """Run :func:`replay_together`, and the reference replay for each run it does not model.

    Args:
        messages: the whole recorded history; never mutated.
        runs: the policies, each a :class:`ReplayRun` (its ``make_policy`` builds the fresh
            policy a reference run needs when the fast path gave up part-way).
        model: prices and the minimum cacheable length come from it.
        system: the system prompt (the fast path models a non-empty str).
        times: Unix seconds per message; None: ``gap_seconds`` apart.
        gap_seconds: seconds between requests when ``times`` is None.
        memo: the session's :class:`BlockMemo` (None: a new one).

    Returns:
        One :class:`FastReplay` per run, in order, with the reference's figures either way.

    Raises:
        ValueError: ``times`` not parallel to ``messages``.
    """
    try:
        results = replay_together(messages, runs, model=model, system=system, times=times,
                                  gap_seconds=gap_seconds, memo=memo)
    except Unsupported as error:
        results = [error] * len(runs)
    return [_reference(messages, run, model, system, times, gap_seconds)
            if isinstance(result, Unsupported) else result
            for run, result in zip(runs, results)]


def _reference(messages, run: ReplayRun, model, system, times, gap_seconds) -> FastReplay:
    """The reference replay of one run, converted to a :class:`FastReplay`."""
    from mini_agent.core.cache_policies import replay_with_cache
    from mini_agent.core.pricing import sum_usage
    from mini_agent.core.retention import view_text
    records = replay_with_cache(messages, model=model,
                                policy=run.make_policy() if run.make_policy else run.policy,
                                server_edit=run.server_edit, system=system, resume=run.resume,
                                times=times, keep_views=True, gap_seconds=gap_seconds)
    last = records[-1]["view"] if records else []
    return FastReplay([r["usage"] for r in records], [r["cost_usd"] for r in records], last,
                      view_text(last), sum_usage(r["usage"] for r in records))


def replay_usage(messages: list[Message], *, model: str, policy: Callable | None = None,
                 server_edit: dict | None = None, system: Any = None, resume: bool = False,
                 times: Sequence[float] | None = None, gap_seconds: float = 20.0,
                 memo: BlockMemo | None = None, make_policy: Callable[[], Any] | None = None
                 ) -> FastReplay:
    """Run :func:`fast_replay`, or the reference replay when the input is not modelled.

    Args:
        messages: the whole recorded history; never mutated.
        model: prices and the minimum cacheable length come from it.
        policy: ``policy(history, ctx) -> view`` or None (send the history as it is).
        server_edit: a ``clear_tool_uses_20250919`` edit dict applied to every request.
        system: the system prompt (the fast path models a non-empty str).
        resume: place the resume breakpoint of ``ResumeBreakpoints``.
        times: Unix seconds per message; None: ``gap_seconds`` apart.
        gap_seconds: seconds between requests when ``times`` is None.
        memo: the session's :class:`BlockMemo` (None: a new one).
        make_policy: builds a fresh policy for the reference run when the fast path gives up
            part-way (a policy may keep state); None: reuse ``policy``.

    Returns:
        A :class:`FastReplay` with the reference's figures either way.

    Raises:
        ValueError: ``times`` not parallel to ``messages``.
    """
    run = ReplayRun(policy, server_edit, resume, make_policy)
    try:
        return fast_replay(messages, model=model, policy=policy, server_edit=server_edit,
                           system=system, resume=resume, times=times, gap_seconds=gap_seconds,
                           memo=memo)
    except Unsupported:
        return _reference(messages, run, model, system, times, gap_seconds)
