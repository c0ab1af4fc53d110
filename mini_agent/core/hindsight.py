"""The hindsight bound: the cheapest masking schedule for a session, the whole session known.

Masking an old tool result saves its tokens on every later request but changes the prompt
prefix from that result on, so the next request re-writes everything after it to the cache
(1.25x instead of 0.1x). An online policy must guess when a move pays off; with the whole
session known the best schedule can be computed. A schedule gives each request ``r`` a
boundary ``b_r`` (the oldest ``b_r`` tool results are masked), never decreasing (a masked
result stays masked) and leaving the newest ``keep`` results verbatim. The cost of request
``r`` depends only on ``b_{r-1}`` and ``b_r``:

* stay (``b_r == b_{r-1}``): the previous request's whole prefix is read (0.1x), the
  messages added since are written (1.25x);
* move (``b_r > b_{r-1}``): the prefix up to the first newly masked result is read, the rest
  written;
* nothing is read on the first request, after a gap longer than the cache TTL, or from a
  prefix shorter than the model's minimum cacheable length; a request shorter than that
  minimum is not written either (all of it is billed at 1x).

Dynamic programming over ``(request, boundary)`` with a running minimum over the previous
boundary gives the cheapest schedule in ``O(requests x results)``. Token counts are the
cache simulator's own (:func:`~mini_agent.core.prompt_cache.prefix_boundaries`' per-block
``approx_tokens``, counted directly without hashing when there are no tools), prices and
multipliers the price table's, so the bound moves with them. Reads are idealised (a cache
entry is assumed at the start of every changed block), so no masking policy replayed
through the simulator can cost less. Pure: no IO, inputs never mutated. Taught in
``notebooks/11_evaluating_policies.ipynb``.
Source: the kit's evaluation chapter ("the bound no tool publishes"); Anthropic prompt
caching and pricing docs (write 1.25x, read 0.1x, 5-minute TTL, minimum cacheable length).
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from itertools import accumulate
from typing import Sequence

from mini_agent.core.block_memo import BlockMemo
from mini_agent.core.block_identity import Unsupported
from mini_agent.core.cache import TTL_SECONDS
from mini_agent.core.hindsight_counts import (_block_tokens, _direct_block_tokens,  # noqa: F401
                                              _masked_result_tokens)
from mini_agent.core.mask_placeholder import masked_block
from mini_agent.core.masking import KEEP_RECENT_OBSERVATIONS, mask_old_observations
from mini_agent.core.messages import Message, tool_result_positions
from mini_agent.core.pricing import CACHE_WRITE_5M_MULTIPLIER, model_price
from mini_agent.core.prompt_cache import min_cacheable_tokens
from mini_agent.core.tokens import CHARS_PER_TOKEN, approx_tokens, session_memo


@dataclasses.dataclass(frozen=True)
class HindsightBound:
    """The cheapest masking schedule of one session.

    Attributes: usd: total input cost of the schedule (USD); schedule: boundary per request
    (results masked); request_usd: cost of each request (USD); request_tokens: tokens each
    request sends; moves: requests (1-based) at which the boundary moved.
    """

    usd: float
    schedule: tuple[int, ...]
    request_usd: tuple[float, ...]
    request_tokens: tuple[int, ...]

    @property
    def moves(self) -> tuple[int, ...]:
        """1-based requests where the boundary moved."""
        prev = 0
        out = []
        for r, b in enumerate(self.schedule, 1):
            if b != prev:
                out.append(r)
            prev = b
        return tuple(out)


def _memo_infos(history: list[Message], memo: BlockMemo) -> list | None:
    """``memo.infos(history)``, or None for a message the memo cannot summarise."""
    try:
        return memo.infos(history)
    except Unsupported:
        return None


def _result_positions(history: list[Message], infos: list) -> list[tuple[int, int]]:
    """``tool_result_positions(history)`` read from the memo's summaries (``infos``, parallel
    to ``history``): each user message's tool_result blocks are its ``results`` (a string
    content has none). ``tests/test_hindsight.py`` compares the bounds."""
    return [(i, j) for i, info in enumerate(infos)
            if info.results and history[i].get("role") == "user" for j, _, _ in info.results]


def _memo_counts(history: list[Message], system: str | list | None, tools: list[dict] | None,
                 positions: list[tuple[int, int]], infos: list
                 ) -> tuple[list[int], list[int], list[int], list[int]] | None:
    """:func:`_counts` read from a :class:`~mini_agent.core.block_memo.BlockMemo`'s summaries.

    The memo already holds every block's ``approx_tokens`` (``MessageInfo.tokens``, a string
    content one text block), the tokens :func:`_direct_block_tokens` counts again; so the
    flat block list is the system's then each message's, message ``i``'s first block at the
    running total of the blocks before it (``infos``: ``memo.infos(history)``). Returns None
    for an input this does not model (tools, a system that is not a str): the caller then
    counts. ``tests/test_hindsight.py`` compares it with :func:`_counts` without a memo.
    """
    if tools or not (system is None or isinstance(system, str)):
        return None
    raw = [math.ceil(len(system) / CHARS_PER_TOKEN)] if system else []
    starts = []
    for info in infos:
        # a message without blocks has no first block: the request then counts every block
        # (as ``first_block.get(i, len(raw))`` does in :func:`_counts`; never for a request's
        # last message in practice)
        tokens = info.tokens
        if tokens:
            starts.append(len(raw))
            raw += tokens
        else:
            starts.append(-1)
    if -1 in starts:
        starts = [len(raw) if s < 0 else s for s in starts]
    results = [starts[i] + j for i, j in positions]
    session = session_memo()
    masked = []
    for k, (i, j) in zip(results, positions):
        replacement = masked_block(history[i]["content"][j], session)
        if replacement is None:
            masked.append(raw[k])
            continue
        # approx_tokens of the placeholder block: its string content's characters
        body = replacement.get("content")
        masked.append(math.ceil(len(body) / CHARS_PER_TOKEN)
                      if type(body) is str and type(replacement) is dict and "role" not in
                      replacement and replacement.get("type") == "tool_result"
                      else approx_tokens(replacement))
    return raw, starts, results, masked


def _counts(history: list[Message], system: str | list | None, tools: list[dict] | None,
            positions: list[tuple[int, int]], model: str
            ) -> tuple[list[int], list[int], list[int], list[int]]:
    """Each block's tokens, each message's first block, each result's block and masked tokens.

    Returns ``(raw, starts, results, masked)``: ``raw`` the tokens of every block the
    request of the whole history sends, in order (system, then messages); ``starts[i]`` the
    index in ``raw`` of message ``i``'s first block (``len(raw)`` for a message without
    blocks); ``results[b]`` the index of tool result ``positions[b]``; ``masked[b]`` its
    tokens once masked.
    """
    direct = _direct_block_tokens(history, system, tools)
    if direct is not None:
        raw, paths = direct
        by_path = _masked_result_tokens(history, positions)
        masked = [by_path[("messages", i, j)] for i, j in positions]
    else:
        masked_history = mask_old_observations(history, keep=0)
        base = {"model": model, "max_tokens": 1, "messages": history}
        if system:
            base["system"] = system
        if tools:
            base["tools"] = tools
        raw, paths = _block_tokens(base)
        masked_list, _ = _block_tokens({**base, "messages": masked_history})
        by_path = {p: masked_list[n] for n, p in enumerate(paths)}
        masked = [by_path[("messages", i, j)] for i, j in positions]
    where = {p: n for n, p in enumerate(paths)}
    first_block: dict[int, int] = {}
    for n, p in enumerate(paths):
        if p[0] == "messages":
            first_block.setdefault(p[1], n)
    starts = [first_block.get(i, len(raw)) for i in range(len(history))]
    return raw, starts, [where[("messages", i, j)] for i, j in positions], masked


def _step(cost: list[float], new_cost: list[float], new_back: list[int], top: int,
          now_tokens: int, prev_tokens: int, cum_saving: list[int], prefix: list[int],
          minimum: int, write_x: float, gain_x: float, fresh: bool) -> None:
    """One request of :func:`masking_bound`'s DP (after the first), filled into ``new_*``."""
    inf = float("inf")
    n_prev = len(cost)
    best_move, best_arg = inf, -1        # running min over b' < b of D(b') - gain
    best_plain, plain_arg = inf, -1      # running min of D(b') (uncacheable request)
    for b in range(top + 1):
        t = now_tokens - cum_saving[b]
        # moving from any b' < b: fold b - 1 into the running minimum first
        if 1 <= b <= n_prev:
            before = cost[b - 1]
            if before < inf:
                prev_t = prev_tokens - cum_saving[b - 1]
                p = prefix[b - 1]
                if prev_t < p:
                    p = prev_t
                read = p if not fresh and p >= minimum and prev_t >= minimum else 0
                gain = gain_x * read
                if before - gain < best_move:
                    best_move, best_arg = before - gain, b - 1
                if before < best_plain:
                    best_plain, plain_arg = before, b - 1
        # the cheapest of staying at b and moving here from b' < b; on a tie the
        # smaller previous boundary wins (as ``min`` over (cost, b') pairs would choose)
        value, arg = inf, -1
        if b < n_prev and cost[b] < inf:
            prev_t = prev_tokens - cum_saving[b]
            read = prev_t if not fresh and prev_t >= minimum else 0
            value, arg = cost[b] + (write_x * t - gain_x * read if t >= minimum else t), b
        if t >= minimum:
            if best_arg >= 0 and (arg < 0 or best_move + write_x * t <= value):
                value, arg = best_move + write_x * t, best_arg
        elif plain_arg >= 0 and (arg < 0 or best_plain + t <= value):
            value, arg = best_plain + t, plain_arg
        if arg >= 0:
            new_cost[b], new_back[b] = value, arg


def _steady_step(cost: list[float], new_cost: list[float], new_back: list[int], top: int,
                 now_tokens: int, prev_tokens: int, cum_saving: list[int], prefix: list[int],
                 minimum: int, write_x: float, gain_x: float, fresh: bool = False) -> None:
    """One request of :func:`masking_bound`'s DP in its usual case, filled into ``new_*``.

    The usual case: the cache has not expired, every previous boundary was reachable, and
    this request and the one before hold at least the minimum cacheable length whichever
    boundary they mask to. The general step's branches for an uncacheable request or an
    unreachable boundary then never fire, and this loop is that step without them: the
    same terms in the same order, so the same floats and, on a tie, the same (smaller)
    previous boundary (``fresh`` is always False here). Each boundary ``b`` below the
    previous request's count is decided from the running minimum over ``b' < b`` and then
    folded into it (the general step folds ``b - 1`` before deciding ``b``: the same
    order); the boundaries above it can only be moved to. The running minimum starts at
    infinity, which never beats a (finite) stay. ``tests/test_hindsight.py`` compares the
    bound with and without it.
    """
    best_move, best_arg = float("inf"), -1   # running min over b' < b of D(b') - gain
    b = 0
    # boundaries the previous request had (never more than top + 1: points ascend)
    for before, saved, p in zip(cost, cum_saving, prefix):
        write = write_x * (now_tokens - saved)
        prev_t = prev_tokens - saved
        stay = before + (write - gain_x * prev_t)
        if best_move + write <= stay:
            new_cost[b], new_back[b] = best_move + write, best_arg
        else:
            new_cost[b], new_back[b] = stay, b
        # fold b into the running minimum for the boundaries above it
        if prev_t < p:
            p = prev_t
        moved = before - gain_x * (p if p >= minimum else 0)
        if moved < best_move:
            best_move, best_arg = moved, b
        b += 1
    for b in range(b, top + 1):
        new_cost[b], new_back[b] = best_move + write_x * (now_tokens - cum_saving[b]), best_arg


def masking_bound(messages: Sequence[Message], points: Sequence[int], *, model: str,
                  system: str | list | None = None, tools: list[dict] | None = None,
                  keep: int = KEEP_RECENT_OBSERVATIONS, times: Sequence[float] | None = None,
                  ttl_seconds: float = TTL_SECONDS["5m"],
                  min_tokens: int | None = None, memo: BlockMemo | None = None
                  ) -> HindsightBound:
    """Compute the cheapest masking schedule for requests ``messages[:i]``, ``i`` in ``points``.

    Args:
        messages: the whole history; never mutated.
        points: history length of each request, ascending (see ``request_points``).
        model: prices and the minimum cacheable length come from it.
        system: the system prompt sent with every request (counted, never masked).
        tools: the tool definitions sent with every request (counted, never masked).
        keep: newest tool results every request keeps verbatim.
        times: clock time of each request in seconds (None: no TTL expiry).
        ttl_seconds: cache lifetime; a longer gap between requests reads nothing.
        min_tokens: override the model's minimum cacheable length.
        memo: the session's :class:`~mini_agent.core.block_memo.BlockMemo` holding these
            messages (the explorer's); each block's tokens are read from it instead of
            counted again (the same figures). None: counted here.
    Returns:
        A :class:`HindsightBound`.
    Raises:
        ValueError: keep < 0, points not ascending, or times not parallel to points.
        UnknownModelError: no price for ``model``.
    """
    if keep < 0:
        raise ValueError(f"keep must be >= 0, got {keep}")
    if list(points) != sorted(points):
        raise ValueError("points must be ascending")
    if times is not None and len(times) != len(points):
        raise ValueError(f"{len(times)} times for {len(points)} requests")
    row = model_price(model)
    price = row.input_usd_per_mtok / 1e6
    minimum = min_tokens if min_tokens is not None else min_cacheable_tokens(model)
    read_x, write_x = row.cache_read_multiplier, CACHE_WRITE_5M_MULTIPLIER
    history = list(messages[:points[-1]]) if points else []
    infos = _memo_infos(history, memo) if memo is not None else None
    positions = tool_result_positions(history) if infos is None else \
        _result_positions(history, infos)
    counts = _memo_counts(history, system, tools, positions, infos) if infos is not None \
        else None
    raw, starts, results, masked = counts or _counts(history, system, tools, positions, model)
    saving = [raw[k] - m for k, m in zip(results, masked)]
    cum = [0, *accumulate(raw)]
    cum_saving = [0, *accumulate(saving)]
    peak = list(accumulate(cum_saving, max))  # peak[b] = max(cum_saving[:b + 1])
    # tokens of request r before masking: cum[blocks_at[r]]; results it holds: results_at[r]
    blocks_at = [starts[i] if i < len(starts) else len(raw) for i in points]
    result_messages = [i for i, _ in positions]
    results_at = [bisect.bisect_left(result_messages, i) for i in points]
    # prefix(b): tokens before result b with the results before it masked (all: the whole)
    prefix = [cum[results[b]] - cum_saving[b] for b in range(len(results))] + [cum[-1]]
    # request r sends cum[blocks_at[r]] - cum_saving[b] tokens with the oldest b masked
    inf = float("inf")
    gain_x = write_x - read_x
    cost: list[float] = []
    back: list[list[int]] = []
    for r in range(len(points)):
        top = max(0, results_at[r] - keep)
        fresh = r == 0 or (times is not None and times[r] - times[r - 1] > ttl_seconds)
        now_tokens = cum[blocks_at[r]]
        new_cost = [inf] * (top + 1)
        new_back = [0] * (top + 1)
        if r == 0:
            new_cost[0] = write_x * now_tokens if now_tokens >= minimum else now_tokens
            cost = new_cost
            back.append(new_back)
            continue
        prev_tokens = cum[blocks_at[r - 1]]
        steady = not fresh and inf not in cost and now_tokens - peak[top] >= minimum \
            and prev_tokens - peak[len(cost) - 1] >= minimum
        (_steady_step if steady else _step)(cost, new_cost, new_back, top, now_tokens,
                                            prev_tokens, cum_saving, prefix, minimum,
                                            write_x, gain_x, fresh)
        cost = new_cost
        back.append(new_back)
    if not points:
        return HindsightBound(0.0, (), (), ())
    b = cost.index(min(cost))  # the first cheapest, as min over range(len(cost)) by cost
    schedule = [b]
    for r in range(len(points) - 1, 0, -1):
        b = back[r][b]
        schedule.append(b)
    schedule.reverse()
    per_request, tokens = [], []
    for r, b in enumerate(schedule):
        t = cum[blocks_at[r]] - cum_saving[b]
        tokens.append(t)
        if r == 0:
            per_request.append((write_x * t if t >= minimum else t) * price)
            continue
        fresh = times is not None and times[r] - times[r - 1] > ttl_seconds
        prev_b, prev_t = schedule[r - 1], tokens[r - 1]   # request r - 1's, at prev_b
        p = prev_t if b == prev_b else min(prefix[prev_b], prev_t)
        read = p if not fresh and p >= minimum and prev_t >= minimum else 0
        per_request.append((read_x * read + write_x * (t - read) if t >= minimum else t) * price)
    return HindsightBound(sum(per_request), tuple(schedule), tuple(per_request), tuple(tokens))
