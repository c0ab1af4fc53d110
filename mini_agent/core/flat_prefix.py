"""The fast replay's flattened prefix: interned block chains, breakpoints and cache usage.

:func:`~mini_agent.core.fast_replay.fast_replay` keeps, instead of a copied request, one flat
list per block of the prefix: its cumulative tokens, its lookback position and the interned id
of the chain of block keys ending there (:class:`FlatPrefix`). On those lists this module
places the markers :func:`~mini_agent.core.cache.place_breakpoints` would place
(:func:`breakpoint_marks`) and the resume marker of ``ResumeBreakpoints`` (:func:`resume_marks`);
:mod:`mini_agent.core.flat_usage` computes on them what
:class:`~mini_agent.core.prompt_cache.PromptCacheSimulator` reports. Pure: no IO.

Source: the prompt caching docs as modelled in :mod:`mini_agent.core.prompt_cache` (20-position
lookback, writes at breakpoints above the minimum length, 5-minute TTL refreshed on a hit).
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import compress, islice

from mini_agent.core.block_identity import first_new_info
from mini_agent.core.block_memo import BlockMemo, MessageInfo
from mini_agent.core.messages import MAX_CACHE_CONTROL_MARKERS
from mini_agent.core.prompt_cache import LOOKBACK_POSITIONS

RESUME_MEMORY_REQUESTS = 32
"""Requests a resume breakpoint is remembered for (``ResumeBreakpoints``' default)."""

_NO_BLOCKS = range(0)
"""The flat range :func:`breakpoint_marks` returns when there is no message before the previous."""


class FlatPrefix:
    """The flattened prefix of the previous request, updated from the first changed message.

    One entry per block of the prefix (system blocks first): ``cum`` the prefix tokens up to and
    including the block, ``pos`` its lookback position, ``pid`` the interned id of the chain of
    block keys ending there (two requests share a cache entry exactly when their ids are
    equal); ``starts`` the flat index where each message begins (a chain id sits at one depth
    only: its block count, system blocks included).

    Args:
        memo: the session's :class:`~mini_agent.core.block_memo.BlockMemo`.
        root: the key every chain starts from (``("root", model)``: caches are per model).
        system_info: the system prompt's :class:`~mini_agent.core.block_memo.MessageInfo`.
    """

    def __init__(self, memo: BlockMemo, root: tuple, system_info: MessageInfo) -> None:
        self.memo = memo
        # the interning table of links (parent id, block key) -> id, kept in two parts: a
        # link whose parent is the id handed out just before it (the usual: a run of new
        # blocks) is ``succ[id] == key``; any other link is in ``chain``. ``len(succ)`` is
        # the number of ids handed out (the root's included).
        self.root = 0
        self.chain: dict[tuple, int] = {root: self.root}
        self.succ: list[int | None] = [None]
        self.infos: list[MessageInfo] = []   # the messages' infos (system prompt not included)
        self.starts: list[int] = []
        self.cum: list[int] = []
        self.pos: list[int] = []
        self.pid: list[int] = []
        self.system_info = system_info
        self._extend([system_info], 0)       # the same for every request

    def fork(self) -> FlatPrefix:
        """Return a copy whose updates leave this prefix unchanged.

        Returns:
            A :class:`FlatPrefix` with copies of the flat lists; the memo and the prefix-id
            interning table (``chain`` and ``succ``: a chain's id is the same in every copy)
            are shared.
        """
        other = FlatPrefix.__new__(FlatPrefix)
        other.memo, other.chain, other.root = self.memo, self.chain, self.root
        other.succ = self.succ
        other.system_info = self.system_info
        other.infos = self.infos                 # never changed in place, only replaced
        other.starts, other.cum = self.starts.copy(), self.cum.copy()
        other.pos, other.pid = self.pos.copy(), self.pid.copy()
        return other

    def links(self) -> dict[tuple, int]:
        """Return the whole interning table as one dict, for tests.

        Returns:
            ``{(parent id, block key): id}`` for every link handed out (and the root key),
            in the order the ids were handed out: what ``chain.setdefault(link, len(chain))``
            block by block builds.
        """
        table = dict(self.chain)
        table.update(((i - 1, key), i) for i, key in enumerate(self.succ) if key is not None)
        return dict(sorted(table.items(), key=lambda item: item[1]))

    def lookup(self, parent: int, key: int) -> int | None:
        """Return the id of the link ``(parent, key)``, or None when it was never handed out.

        Args:
            parent: the chain id of the block before.
            key: the block's interned key.

        Returns:
            The link's chain id, or None.
        """
        child = parent + 1
        if child < len(self.succ) and self.succ[child] == key:
            return child
        return self.chain.get((parent, key))

    def update(self, infos: list[MessageInfo]) -> int:
        """Make the flat lists describe a new request, recomputing from its first new message.

        Args:
            infos: one :class:`~mini_agent.core.block_memo.MessageInfo` per message the request
                sends (the system prompt's blocks stay in front).

        Returns:
            The index of the first info that is not the same object as the previous
            request's (``first_new_info``; :meth:`AnchorIndex.update` can reuse it).
        """
        old = self.infos
        # the same info objects (C-level), then equal keys (a policy's fresh copy)
        same = d = first_new_info(old, infos)
        limit = len(old) if len(old) < len(infos) else len(infos)
        while d < limit and (old[d] is infos[d] or old[d].keys == infos[d].keys):
            d += 1
        starts = self.starts             # starts[0] is the system prompt's
        if d + 1 < len(starts):          # else the request only appends
            cut = starts[d + 1]
            del self.cum[cut:], self.pos[cut:], self.pid[cut:], starts[d + 1:]
        self._extend(infos, d)
        self.infos = infos
        return same

    def _extend(self, infos: list[MessageInfo], first: int) -> None:
        """Append the blocks of ``infos[first:]`` to the flat lists.

        Links are looked up (:meth:`lookup`) block by block until the first new one. Once one
        link is new, so is every link after it (a link names its parent's id, and the parent's
        id was just handed out), so from there on each block gets the next id and its link is
        recorded as ``succ[id] = key``, a whole message at a time, without lookups: the same
        ids as ``chain.setdefault(link, len(chain))`` block by block. A one-block message
        (the usual) skips the per-block ``zip``: its block is at the message's first
        position, offset 0. ``tests/test_flat_prefix.py`` and ``tests/test_fast_replay.py``
        compare the lists and the table with that block-by-block recomputation.
        """
        cum_list, pos_list, pid_list, starts = self.cum, self.pos, self.pid, self.starts
        cum = cum_list[-1] if cum_list else 0
        next_pos = (pos_list[-1] + 1) if pos_list else 0
        parent = pid_list[-1] if pid_list else self.root
        succ = self.succ
        lookup = self.lookup
        rest = islice(infos, first, None)
        for info in rest:                         # links looked up until a new one
            starts.append(len(cum_list))
            keys = info.keys
            if len(keys) == 1:                    # the usual message: one block, offset 0
                cum += info.tokens[0]
                cum_list.append(cum)
                pos_list.append(next_pos)
                next_pos += 1
                found = lookup(parent, keys[0])
                if found is None:
                    parent = self._hand_out(parent, keys[0])
                    pid_list.append(parent)
                    break
                parent = found
                pid_list.append(parent)
                continue
            new = False
            for key, tok, off in zip(keys, info.tokens, info.offsets):
                cum += tok
                cum_list.append(cum)
                pos_list.append(next_pos + off)
                if new:                           # the link before was new: so is this one
                    succ.append(key)
                    parent += 1
                else:
                    found = lookup(parent, key)
                    if found is None:
                        parent = self._hand_out(parent, key)
                        new = True
                    else:
                        parent = found
                pid_list.append(parent)
            next_pos += info.positions
            if new:
                break
        else:
            return
        first_id = len(succ)
        for info in rest:                         # every link new: ids in order, no lookups
            starts.append(len(cum_list))
            tokens = info.tokens
            if len(tokens) == 1:
                cum += tokens[0]
                cum_list.append(cum)
                pos_list.append(next_pos)
                next_pos += 1
            elif len(tokens) == 2:               # text and a tool call: unrolled
                first_tok, second_tok = tokens
                first_off, second_off = info.offsets
                cum += first_tok
                cum_list.append(cum)
                cum += second_tok
                cum_list.append(cum)
                pos_list.append(next_pos + first_off)
                pos_list.append(next_pos + second_off)
                next_pos += info.positions
            else:
                for tok in tokens:
                    cum += tok
                    cum_list.append(cum)
                for off in info.offsets:
                    pos_list.append(next_pos + off)
                next_pos += info.positions
            succ.extend(info.keys)
        pid_list.extend(range(first_id, len(succ)))

    def _hand_out(self, parent: int, key: int) -> int:
        """Record the new link ``(parent, key)`` and return its id (the next one)."""
        succ = self.succ
        new_id = len(succ)
        if parent == new_id - 1:
            succ.append(key)
        else:
            self.chain[(parent, key)] = new_id
            succ.append(None)
        return new_id


class AnchorIndex:
    """The messages of a request whose info has an ``anchor``, kept from request to request.

    :func:`breakpoint_marks` needs the newest masked or cleared result before the last
    message; scanning every message for it costs a Python step per message per request.
    This keeps the sorted indices and rescans only from the first info that changed.
    """

    def __init__(self) -> None:
        self.infos: list[MessageInfo] = []
        self.at: list[int] = []

    def fork(self) -> AnchorIndex:
        """Return a copy whose updates leave this index unchanged.

        Returns:
            An :class:`AnchorIndex` holding the same infos and a copy of the indices.
        """
        other = AnchorIndex()
        other.infos, other.at = self.infos, self.at.copy()
        return other

    def update(self, infos: list[MessageInfo], same: int | None = None) -> list[int]:
        """Describe a new request.

        Args:
            infos: the request's message infos (system prompt not included).
            same: ``first_new_info`` of the previous and these infos when the caller knows
                it (:meth:`FlatPrefix.update` returns it); None: computed here.

        Returns:
            The ascending indices ``k`` with ``infos[k].anchor is not None``.
        """
        d = first_new_info(self.infos, infos) if same is None else same
        at = self.at
        if at and at[-1] >= d:
            del at[bisect_left(at, d):]
        for k in range(d, len(infos)):   # usually the few new messages
            if infos[k].anchor is not None:
                at.append(k)
        self.infos = infos
        return at


def breakpoint_marks(infos: list[MessageInfo], starts: list[int], system_marks: list[int],
                     anchored: list[int] | None = None) -> tuple[list[int], range]:
    """Place ``place_breakpoints(canonical=True, anchors=True)``'s markers on the flat prefix.

    Args:
        infos: the messages' infos, in order (system prompt not included).
        starts: :attr:`FlatPrefix.starts` (index 0 is the system prompt).
        system_marks: flat indices of the system prompt's markers.
        anchored: :meth:`AnchorIndex.update` of ``infos`` (None: scan ``infos`` for them).

    Returns:
        ``(marks, second)``: the sorted flat indices of the markers (at most
        ``MAX_CACHE_CONTROL_MARKERS``), and the flat range of the message before the previous
        one (the resume planner drops from it first).
    """
    marks = list(system_marks)           # ascending, all in the system prompt's blocks
    budget = MAX_CACHE_CONTROL_MARKERS - len(system_marks)
    n = len(infos)
    if not n or budget <= 0:
        return marks, _NO_BLOCKS
    # a message's marks lie in its blocks: the last message's comes last, after the newest
    # masked result's and the one of the message before the previous one (these two may
    # coincide), so the sorted list is built without sorting
    last = n - 1
    top = infos[last].markable
    if top is not None:
        top += starts[n]
        budget -= 1
    near = None
    if budget > 0 and anchored != []:  # the newest masked or cleared result before the last
        if anchored is None:
            anchored = [i for i in range(last) if infos[i].anchor is not None]
        # ascending indices below ``n``: only the newest may be ``last`` itself
        i = anchored[-1] if anchored else None
        if i == last:
            i = anchored[-2] if len(anchored) > 1 else None
        if i is not None:
            near = starts[i + 1] + infos[i].anchor
            budget -= 1
    if last >= 2:
        start = starts[last - 1]
        info = infos[last - 2]
        second = range(start, start + len(info.keys))
        far = info.markable
        if budget > 0 and far is not None:
            far += start
            if near is None or near == far:
                marks.append(far)
            elif near < far:
                marks += (near, far)
            else:
                marks += (far, near)
            near = None
    else:
        second = _NO_BLOCKS
    if near is not None:
        marks.append(near)
    if top is not None:
        marks.append(top)
    return marks, second


def resume_marks(marks: list[int], second: range, pid: list[int], pos: list[int],
                 remembered: dict[int, int], count: int, sys_marks: list[int]) -> list[int]:
    """Add ``ResumeBreakpoints``' marker: the longest remembered prefix out of every lookback.

    Args:
        marks: the flat indices from :func:`breakpoint_marks`.
        second: the flat range :func:`breakpoint_marks` returned (dropped from first).
        pid: :attr:`FlatPrefix.pid`.
        pos: :attr:`FlatPrefix.pos`.
        remembered: prefix id -> request count it was last marked at, oldest first; updated
            in place (entries older than :data:`RESUME_MEMORY_REQUESTS` requests are
            forgotten). Start it empty and let only this function change it.
        count: this request's number (1-based).
        sys_marks: flat indices of the system prompt's markers (dropped after ``second``).

    Returns:
        The sorted marker indices, still at most ``MAX_CACHE_CONTROL_MARKERS``.
    """
    while remembered:  # oldest first: a prefix marked again is moved to the end below
        h, c = next(iter(remembered.items()))
        if count - c <= RESUME_MEMORY_REQUESTS:
            break
        del remembered[h]
    # the longest remembered prefix this request holds (a chain id sits at one depth only, so
    # this is the largest such depth): scan back from the end, C-level
    resume = next(compress(range(len(pid) - 1, -1, -1), map(remembered.__contains__,
                                                              reversed(pid))), None)
    if resume is not None:
        at = pos[resume]
        for bp in marks:   # a mark whose lookback reaches the resume point already reads it
            if bp >= resume and pos[bp] - at < LOOKBACK_POSITIONS:
                resume = None
                break
    if resume is not None:
        marks = sorted({*marks, resume})
        # drop order: the previous turn's marker (never the resume point), then the system's
        drop = [m for m in marks if m in second and m != resume] + list(sys_marks)
        while len(marks) > MAX_CACHE_CONTROL_MARKERS and drop:
            gone = drop.pop(0)
            if gone in marks:
                marks.remove(gone)
    for bp in marks:
        remembered.pop(pid[bp], None)
        remembered[pid[bp]] = count
    return marks
