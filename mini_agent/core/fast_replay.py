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
  ``ResumeBreakpoints`` by index (the flat prefix, its markers and the cache's usage are
  :mod:`mini_agent.core.flat_prefix`); ``clear_tool_uses_20250919`` copies only the messages it
  changes.

Inputs it does not model (tools, a list ``system``, request times that go back, a block that
is not a dict) raise :class:`Unsupported`; :func:`replay_usage` then runs the reference, so
callers always get the reference's figures. ``tests/test_fast_replay.py`` checks positions,
usage, cost and retention text against the reference. Pure: no IO, inputs never mutated.
Source: the prompt caching docs as modelled in :mod:`mini_agent.core.prompt_cache` (20-position
lookback, writes at breakpoints above the minimum length, 5-minute TTL refreshed on a hit).
"""

from __future__ import annotations

import dataclasses
import math
from itertools import chain, compress
from operator import attrgetter, itemgetter
from typing import Any, Callable, Sequence

from mini_agent.core.block_memo import BlockMemo, MessageInfo, Unsupported
from mini_agent.core.cache import CLEARED_TOOL_RESULT
from mini_agent.core.flat_prefix import (RESUME_MEMORY_REQUESTS, AnchorIndex,  # noqa: F401
                                         FlatPrefix, breakpoint_marks, prefix_usage,
                                         resume_marks)
from mini_agent.core.messages import Message
from mini_agent.core.pricing import (CACHE_WRITE_1H_MULTIPLIER, CACHE_WRITE_5M_MULTIPLIER,
                                     model_price)
from mini_agent.core.prompt_cache import min_cacheable_tokens
from mini_agent.core.tokens import CHARS_PER_TOKEN
from mini_agent.core.view import ViewContext, check_times

__all__ = ["BlockMemo", "FastReplay", "Unsupported", "fast_replay", "replay_usage"]

_CHARS, _IMAGES = attrgetter("chars"), attrgetter("images")
_USES, _LIVE = attrgetter("uses"), attrgetter("live_results")

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


def fast_replay(messages: list[Message], *, model: str, policy: Callable | None = None,
                server_edit: dict | None = None, system: str | None = None,
                resume: bool = False, times: Sequence[float] | None = None,
                gap_seconds: float = 20.0, memo: BlockMemo | None = None,
                trace: list | None = None) -> FastReplay:
    """Replay a recorded history under one policy and return each request's cache usage.

    The same requests as ``replay_with_cache(messages, model=model, policy=policy,
    server_edit=server_edit, system=system, resume=resume, times=times,
    gap_seconds=gap_seconds)`` (caching on, 5-minute TTL, no tools), the same usage and cost
    per request; see the module doc for how.

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
    if not isinstance(system, str) or not system.strip():
        raise Unsupported("system must be a non-empty str")
    if server_edit is not None:
        _check_edit(server_edit)
        if resume:
            raise Unsupported("a server edit with resume breakpoints")
    if times is not None:
        check_times(messages, times)
    memo = memo or BlockMemo(messages)
    points = memo.request_points(messages)
    if times is not None and any(times[b] < times[a] for a, b in zip(points, points[1:])):
        raise Unsupported("request times that go back")
    system_info, sys_marks = memo.system(system)
    system_body_tokens = sum(system_info.tokens)
    prefix = FlatPrefix(memo, ("root", model), system_info)
    price = model_price(model)
    minimum = min_cacheable_tokens(model)
    entries: dict[int, list] = {}      # prefix id -> [prefix_tokens, expires_at]
    remembered: dict[int, int] = {}   # resume planner: prefix id -> request count
    cleared_copies: dict[tuple[int, tuple[int, ...]], tuple[Message, Message]] = {}
    usages: list[dict[str, Any]] = []
    costs: list[float] = []
    totals = [0, 0, 0, 0, 0]          # input, creation, read, 5m, 1h
    view: list[Message] = []
    before: list[Message] = []           # the policy's previous view and its infos
    before_infos: list[MessageInfo] = []
    anchors = AnchorIndex()
    for n, i in enumerate(points):
        now = times[i] - times[points[0]] if times is not None else n * gap_seconds
        if policy is None:
            view = messages[:i]
        elif times is not None:
            view = policy(messages[:i], ViewContext(times=tuple(times[:i]), now=times[i],
                                                    turn=n + 1))
        else:
            view = policy(messages[:i], ViewContext(turn=n + 1))
        memo.rotate()
        infos = memo.view_infos(view, before, before_infos)
        before, before_infos = list(view), infos  # a copy: a policy may reuse its list
        sent, sent_infos = view, infos
        if server_edit is not None:  # markers are placed before the edit, on ``infos``
            sent, sent_infos = _clear(view, infos, server_edit, system_body_tokens, memo,
                                      cleared_copies)
        same = prefix.update(sent_infos)  # clearing keeps every block: the starts hold for both
        pos, pid, cum = prefix.pos, prefix.pid, prefix.cum
        # without an edit the prefix saw the same infos, so its first new one holds here
        anchored = anchors.update(infos, same if server_edit is None else None)
        marks, second = breakpoint_marks(infos, prefix.starts, sys_marks, anchored)
        if resume:
            marks = resume_marks(marks, second, pid, pos, prefix.pid_index, remembered, n + 1,
                                 sys_marks)
        if trace is not None:
            trace.append([(m, cum[m]) for m in marks])
        usage = prefix_usage(entries, marks, pid, pos, cum, now, minimum)
        usages.append(usage)
        w5 = usage["cache_creation"]["ephemeral_5m_input_tokens"]
        w1 = usage["cache_creation"]["ephemeral_1h_input_tokens"]
        costs.append((usage["input_tokens"] + w5 * CACHE_WRITE_5M_MULTIPLIER
                      + w1 * CACHE_WRITE_1H_MULTIPLIER
                      + usage["cache_read_input_tokens"] * price.cache_read_multiplier
                      ) * price.input_usd_per_mtok / 1e6)
        totals[0] += usage["input_tokens"]
        totals[1] += usage["cache_creation_input_tokens"]
        totals[2] += usage["cache_read_input_tokens"]
        totals[3] += w5
        totals[4] += w1
        view = sent
    total = {"input_tokens": totals[0], "cache_creation_input_tokens": totals[1],
             "cache_read_input_tokens": totals[2], "output_tokens": 0,
             "cache_creation": {"ephemeral_5m_input_tokens": totals[3],
                                "ephemeral_1h_input_tokens": totals[4]}}
    if not points:
        view = []
    return FastReplay(usages, costs, view, memo.text(view), total)


def _check_edit(edit: dict) -> None:
    trigger = edit.get("trigger") or {"type": "input_tokens", "value": 100_000}
    if trigger.get("type") != "input_tokens":
        raise Unsupported("only an input_tokens trigger")
    if (edit.get("keep") or {"type": "tool_uses"}).get("type") != "tool_uses":
        raise Unsupported("keep.type must be tool_uses")
    if edit.get("clear_tool_inputs"):
        raise Unsupported("clear_tool_inputs")


def _clear(view: list[Message], infos: list[MessageInfo], edit: dict, system_tokens: int,
           memo: BlockMemo, copies: dict) -> tuple[list[Message], list[MessageInfo]]:
    """``apply_clear_tool_uses`` on the messages (markers stay where they were placed)."""
    from mini_agent.core.context_edits import DEFAULT_KEEP, DEFAULT_TRIGGER

    trigger = edit.get("trigger") or DEFAULT_TRIGGER
    keep = edit.get("keep") or DEFAULT_KEEP
    chars = sum(map(_CHARS, infos))
    images = sum(map(_IMAGES, infos))
    before = math.ceil(chars / CHARS_PER_TOKEN) + images + system_tokens
    if not before > trigger["value"]:
        return view, infos
    uses = list(chain.from_iterable(map(_USES, infos)))
    excluded = set(edit.get("exclude_tools") or ())
    older = uses[: max(0, len(uses) - int(keep["value"]))]
    targets = ({uid for uid, name in older if name not in excluded} if excluded
               else set(map(itemgetter(0), older)))
    if not targets:
        return view, infos
    new_view, new_infos = list(view), list(infos)
    changed = False
    # only the messages holding a tool_result not cleared yet (a C-level filter)
    for k in compress(range(len(infos)), map(_LIVE, infos)):
        js = tuple([j for j, uid in infos[k].live_results if uid in targets])
        if not js:
            continue
        changed = True
        message = view[k]
        held = copies.get((id(message), js))
        if held is None or held[0] is not message:
            content = list(message["content"])
            for j in js:
                content[j] = {**content[j], "content": CLEARED_TOOL_RESULT}
            copy = {**message, "content": content}
            held = copies[(id(message), js)] = (message, copy, memo.info(copy))
        new_view[k] = held[1]
        new_infos[k] = held[2]
    if not changed:
        return view, infos
    after = (math.ceil(sum(map(_CHARS, new_infos)) / CHARS_PER_TOKEN)
             + sum(map(_IMAGES, new_infos)) + system_tokens)
    least = (edit.get("clear_at_least") or {}).get("value", 0)
    if before - after < least:
        return view, infos
    return new_view, new_infos


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
    try:
        return fast_replay(messages, model=model, policy=policy, server_edit=server_edit,
                           system=system, resume=resume, times=times, gap_seconds=gap_seconds,
                           memo=memo)
    except Unsupported:
        pass
    from mini_agent.core.cache_policies import replay_with_cache
    from mini_agent.core.pricing import sum_usage
    from mini_agent.core.retention import view_text
    records = replay_with_cache(messages, model=model,
                                policy=make_policy() if make_policy else policy,
                                server_edit=server_edit, system=system, resume=resume,
                                times=times, keep_views=True, gap_seconds=gap_seconds)
    last = records[-1]["view"] if records else []
    return FastReplay([r["usage"] for r in records], [r["cost_usd"] for r in records], last,
                      view_text(last), sum_usage(r["usage"] for r in records))
