"""One fast replay's prompt-cache state, stepped request by request and forked when replays part.

:func:`~mini_agent.core.fast_replay.fast_replay` turns each request into message summaries
(:class:`~mini_agent.core.block_memo.MessageInfo`); from there on a request's usage depends
only on those summaries, the request's time and the state the previous requests left: the
flattened prefix (:class:`~mini_agent.core.flat_prefix.FlatPrefix`), the masked results'
indices (:class:`~mini_agent.core.flat_prefix.AnchorIndex`), the cache entries and the resume
planner's memory. A :class:`Lane` holds that state and the usage so far. Two policies whose
requests have had the same summaries and markers so far are in the same state, so
:func:`~mini_agent.core.fast_replay.replay_together` steps them as one lane and gives a
policy its own lane (:meth:`Lane.fork`, a copy of the state) at the first request where its
summaries or markers differ. :func:`clear_tool_uses` is the server edit ``clear_tool_uses_20250919`` on
the summaries, copying only the messages it changes.

Pure: no IO; the state is copied on a fork, never shared between lanes (the chain of prefix ids
is an interning table, shared: equal chains get equal ids in every lane).
Source: the prompt caching docs as modelled in :mod:`mini_agent.core.prompt_cache` (20-position
lookback, writes at breakpoints above the minimum length, 5-minute TTL refreshed on a hit);
the context editing docs as modelled in :mod:`mini_agent.core.context_edits`.
"""

from __future__ import annotations

import math
from itertools import chain, compress
from operator import attrgetter, itemgetter
from typing import Any

from mini_agent.core.block_identity import first_new_info
from mini_agent.core.block_memo import BlockMemo, MessageInfo, Unsupported
from mini_agent.core.cache import CLEARED_TOOL_RESULT
from mini_agent.core.context_edits import DEFAULT_KEEP, DEFAULT_TRIGGER
from mini_agent.core.flat_prefix import AnchorIndex, FlatPrefix, breakpoint_marks, resume_marks
from mini_agent.core.flat_usage import prefix_usage
from mini_agent.core.messages import Message
from mini_agent.core.pricing import CACHE_WRITE_5M_MULTIPLIER, ModelPrice
from mini_agent.core.tokens import CHARS_PER_TOKEN

_CHARS, _IMAGES = attrgetter("chars"), attrgetter("images")
_USES, _LIVE = attrgetter("uses"), attrgetter("live_results")


class Lane:
    """The cache state of one replay (or of several replays while their requests agree).

    A request is sent in two steps: :meth:`place` updates the prefix and places the markers
    (both the plain ones and, when asked, ``ResumeBreakpoints``' with its resume marker), then
    :meth:`send` reads and writes the cache with one of those marker lists. Runs with and
    without resume breakpoints share a lane while the two lists are equal; the resume
    planner's memory is kept whenever a run of the lane uses it.

    Args:
        prefix: a fresh :class:`~mini_agent.core.flat_prefix.FlatPrefix` (system prompt only).
        sys_marks: flat indices of the system prompt's markers.
        minimum: the model's minimum cacheable prefix (tokens).
        price: the model's price row (input USD per million tokens, read multiplier).
        trace: a list that receives each request's ``[(block index, prefix tokens)]`` of its
            breakpoints (tests); None: nothing recorded.
    """

    def __init__(self, prefix: FlatPrefix, sys_marks: list[int], minimum: int,
                 price: ModelPrice, trace: list | None = None) -> None:
        self.prefix = prefix
        self.anchors = AnchorIndex()
        self.entries: dict[int, list] = {}     # prefix id -> [prefix tokens, expires at]
        self.remembered: dict[int, int] = {}   # resume planner: prefix id -> request count
        self.sys_marks, self.minimum, self.price = sys_marks, minimum, price
        self.trace = trace
        self.usage: list[dict[str, Any]] = []
        self.cost_usd: list[float] = []
        self.totals = [0, 0, 0]                # input, creation (all 5m), read
        self.read_multiplier = price.cache_read_multiplier
        self.input_usd = price.input_usd_per_mtok
        self.fresh = 0                         # chain ids from here on are in no entry

    def fork(self) -> Lane:
        """Return a lane in the same state whose later steps leave this one unchanged.

        Returns:
            A copy: the flat lists, cache entries (each ``[tokens, expires]`` copied), resume
            memory, usage lists and trace are copied; the usage dicts themselves (never
            changed once made) and the prefix-id interning table are shared.
        """
        lane = Lane.__new__(Lane)
        lane.prefix = self.prefix.fork()
        lane.anchors = self.anchors.fork()
        lane.entries = {pid: [tokens, expires] for pid, (tokens, expires)
                        in self.entries.items()}
        lane.remembered = dict(self.remembered)    # insertion order is the planner's age
        lane.sys_marks, lane.minimum, lane.price = self.sys_marks, self.minimum, self.price
        lane.trace = None if self.trace is None else list(self.trace)
        lane.usage, lane.cost_usd = list(self.usage), list(self.cost_usd)
        lane.totals = list(self.totals)
        lane.read_multiplier, lane.input_usd = self.read_multiplier, self.input_usd
        lane.fresh = self.fresh
        return lane

    def place(self, infos: list[MessageInfo], sent_infos: list[MessageInfo], count: int,
              resume: bool) -> tuple[list[int], list[int] | None]:
        """Make the prefix describe a new request and place its markers.

        Args:
            infos: the policy's view's summaries (markers are placed on them).
            sent_infos: the summaries of what is sent (``infos`` unless a server edit changed
                messages; an edit keeps every block, so the flat starts hold for both).
            count: the request's number (1-based).
            resume: also place ``ResumeBreakpoints``' markers (and update its memory); pass
                it at every request while a run of this lane uses resume breakpoints.

        Returns:
            ``(marks, resume_marks)``: the sorted flat indices of
            ``place_breakpoints(canonical=True, anchors=True)``'s markers, and of
            ``ResumeBreakpoints``' (None unless ``resume``).
        """
        prefix, anchors = self.prefix, self.anchors
        # the prefix's first new info is the anchors' too when both last saw the same list
        # and this request is sent unedited
        shared = prefix.infos is anchors.infos and sent_infos is infos
        same = prefix.update(sent_infos)
        anchored = anchors.update(infos, same if shared else None)
        marks, second = breakpoint_marks(infos, prefix.starts, self.sys_marks, anchored)
        if not resume:
            return marks, None
        return marks, resume_marks(marks, second, prefix.pid, prefix.pos, self.remembered,
                                   count, self.sys_marks)

    def send(self, marks: list[int], now: float) -> None:
        """Read and write the cache for the placed request; record its usage and cost.

        Args:
            marks: one of the marker lists :meth:`place` returned for this request.
            now: the request's time (seconds since the first request).
        """
        prefix = self.prefix
        cum = prefix.cum
        if self.trace is not None:
            self.trace.append([(m, cum[m]) for m in marks])
        usage = prefix_usage(self.entries, marks, prefix.pid, prefix.pos, cum, now,
                             self.minimum, self.fresh)
        self.fresh = len(prefix.succ)         # every entry's id is below it
        self.usage.append(usage)
        sent, written = usage["input_tokens"], usage["cache_creation_input_tokens"]
        read = usage["cache_read_input_tokens"]
        # cost_usd(usage, model, include_output=False), the same float operations; the 1-hour
        # writes are always 0 here (their term adds 0.0 to a sum that is not -0.0)
        self.cost_usd.append((sent + written * CACHE_WRITE_5M_MULTIPLIER
                              + read * self.read_multiplier) * self.input_usd / 1e6)
        totals = self.totals
        totals[0] += sent
        totals[1] += written
        totals[2] += read

    def total(self) -> dict[str, Any]:
        """Return the usages added up, in ``sum_usage``'s shape.

        Returns:
            ``input_tokens``, ``cache_creation_input_tokens``, ``cache_read_input_tokens``,
            ``output_tokens`` (0) and ``cache_creation`` split 5m/1h, summed over the requests.
        """
        t = self.totals   # every write is a 5-minute one
        return {"input_tokens": t[0], "cache_creation_input_tokens": t[1],
                "cache_read_input_tokens": t[2], "output_tokens": 0,
                "cache_creation": {"ephemeral_5m_input_tokens": t[1],
                                   "ephemeral_1h_input_tokens": 0}}


def check_edit(edit: dict) -> None:
    """Refuse a server edit the fast replay does not model.

    Args:
        edit: a ``clear_tool_uses_20250919`` edit dict.

    Raises:
        Unsupported: a trigger other than input tokens, a keep other than tool uses, or
            ``clear_tool_inputs``.
    """
    trigger = edit.get("trigger") or {"type": "input_tokens", "value": 100_000}
    if trigger.get("type") != "input_tokens":
        raise Unsupported("only an input_tokens trigger")
    if (edit.get("keep") or {"type": "tool_uses"}).get("type") != "tool_uses":
        raise Unsupported("keep.type must be tool_uses")
    if edit.get("clear_tool_inputs"):
        raise Unsupported("clear_tool_inputs")


def clear_tool_uses(view: list[Message], infos: list[MessageInfo], edit: dict,
                    system_tokens: int, memo: BlockMemo, copies: dict,
                    sums: list | None = None) -> tuple[list[Message], list[MessageInfo]]:
    """``apply_clear_tool_uses`` on the messages (markers stay where they were placed).

    Args:
        view: the policy's view; never mutated.
        infos: its summaries.
        edit: a ``clear_tool_uses_20250919`` edit dict (:func:`check_edit` passed).
        system_tokens: the system prompt's tokens (they count towards the trigger).
        memo: the session's :class:`~mini_agent.core.block_memo.BlockMemo`.
        copies: this replay's cleared copies, ``(id(message), cleared block indices) ->
            (message, copy, its info)``; updated in place so a copy is made once.
        sums: ``[infos, chars, images]`` of this replay's previous call, updated in place (start
            with ``[[], 0, 0]``): the characters and image tokens of ``infos`` are those
            plus the messages from the first new info on, minus the old ones from there
            (the same sums as adding up every info); None: add up every info.

    Returns:
        ``(view, infos)`` as they are when the edit does not fire (below the trigger, nothing
        to clear, or less than ``clear_at_least`` cleared), else new lists with the cleared
        messages' copies and their summaries.
    """
    trigger = edit.get("trigger") or DEFAULT_TRIGGER
    keep = edit.get("keep") or DEFAULT_KEEP
    if sums is None:
        chars = sum(map(_CHARS, infos))
        images = sum(map(_IMAGES, infos))
    else:   # the usual request appends to the one before: add its new messages only
        old, chars, images = sums
        d = first_new_info(old, infos)
        for k in range(d, len(old)):
            chars -= old[k].chars
            images -= old[k].images
        for k in range(d, len(infos)):
            chars += infos[k].chars
            images += infos[k].images
        sums[0], sums[1], sums[2] = infos, chars, images
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
