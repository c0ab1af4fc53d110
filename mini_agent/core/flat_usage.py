"""The prompt cache's usage computed on the fast replay's flattened prefix.

:class:`~mini_agent.core.flat_prefix.FlatPrefix` keeps, per block of a request's prefix, its
cumulative tokens, lookback position and interned chain id; :func:`prefix_usage` reads and
writes the cache entries on those lists and reports what
:class:`~mini_agent.core.prompt_cache.PromptCacheSimulator` reports for the request, without
hashing a block. Pure: no IO.

Source: the prompt caching docs as modelled in :mod:`mini_agent.core.prompt_cache` (20-position
lookback, writes at breakpoints above the minimum length, 5-minute TTL refreshed on a hit).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import compress
from typing import Any

from mini_agent.core.cache import TTL_SECONDS
from mini_agent.core.prompt_cache import LOOKBACK_POSITIONS

NEAR_BLOCKS = 8
"""Blocks before a breakpoint :func:`prefix_usage` checks one by one before scanning the rest."""

TTL_5M_SECONDS = TTL_SECONDS["5m"]
"""How long a cache entry lives after its last write or hit (seconds)."""


def prefix_usage(entries: dict[int, list], marks: list[int], pid: list[int], pos: list[int],
                 cum: list[int], now: float, minimum: int, fresh: int | None = None
                 ) -> dict[str, Any]:
    """Compute ``PromptCacheSimulator.usage`` on the flattened prefix (entries expire lazily).

    Args:
        entries: the cache, prefix id -> ``[prefix tokens, expires at (seconds)]``; updated in
            place (hits refreshed, writes added, 5-minute TTL).
        marks: the flat indices of this request's markers.
        pid: :attr:`FlatPrefix.pid`.
        pos: :attr:`FlatPrefix.pos`.
        cum: :attr:`FlatPrefix.cum` (prefix tokens).
        now: the request's time (seconds since the first request).
        minimum: the model's minimum cacheable prefix (tokens); shorter marks write nothing.
        fresh: a chain id no key of ``entries`` reaches (``len(FlatPrefix.succ)`` when the
            entries were last written: ids are handed out in order); None: not known, every
            block is looked up.

    Returns:
        The usage dict (``input_tokens``, ``cache_creation_input_tokens``,
        ``cache_read_input_tokens``, ``cache_creation`` split 5m/1h), as the simulator reports.
    """
    total = cum[-1] if cum else 0
    hit = -1
    # the longest live entry in any mark's lookback window (the positions within
    # LOOKBACK_POSITIONS of the mark), newest mark first; a window stops at the best hit so far
    # (an older find could not be longer). The nearest blocks are walked in Python (the
    # previous request's write is usually a few blocks back); the rest of the window is found
    # by bisection (``pos`` never decreases) and searched newest first for a prefix id in
    # ``entries`` at C speed, dropping an expired entry found there (time only moves forward).
    if entries:
        get, has = entries.get, entries.__contains__
        # a link's id is handed out after its parent's, so ``pid`` increases along the prefix
        # and the blocks from ``newest`` on (this request's new links) are in no entry
        newest = len(pid) if fresh is None else bisect_left(pid, fresh)
        for bp in reversed(marks):
            if bp <= hit:
                break
            limit = pos[bp] - LOOKBACK_POSITIONS
            p = bp if bp < newest else newest - 1
            stop = p - NEAR_BLOCKS
            if stop < hit:
                stop = hit
            while p > stop and pos[p] > limit:
                entry = get(pid[p])
                if entry is not None and entry[1] > now:
                    hit = p
                    break
                p -= 1
            else:
                if p > hit and pos[p] > limit:
                    lo = max(hit + 1, bisect_right(pos, limit, 0, p))
                    for q in compress(range(p, lo - 1, -1), map(has, reversed(pid[lo:p + 1]))):
                        if entries[pid[q]][1] > now:
                            hit = q
                            break
                        del entries[pid[q]]
    expires = now + TTL_5M_SECONDS
    if hit >= 0:
        read = cum[hit]
        entry = entries.get(pid[hit])   # the hit is refreshed
        if entry is not None and entry[1] > now:
            entry[1] = expires
    else:
        read = 0
    created = 0
    cached_end = read
    # one pass, ascending: a mark before the hit is refreshed, a mark after it writes (each
    # mark its own prefix id, so the order of the two kinds does not matter)
    for bp in marks:
        if bp < hit:
            entry = entries.get(pid[bp])
            if entry is not None and entry[1] > now:
                entry[1] = expires
        elif bp > hit:
            tokens = cum[bp]
            if tokens < minimum:
                continue
            created += tokens - cached_end
            cached_end = tokens
            entries[pid[bp]] = [tokens, expires]
    return {"input_tokens": total - cached_end, "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": created,
                               "ephemeral_1h_input_tokens": 0}}
