"""Payback masking's replay over a history scan, kept per prefix and resumed request by request.

What this module does: :func:`scan_boundary` answers
:func:`~mini_agent.core.cache_policies.payback_boundary` for a history covered by the
session's :class:`~mini_agent.core.history_scan.HistoryScan` from a :class:`_PaybackSteps`
kept in the scan (``scan.derived``), so a growing history resumes where the previous request
stopped. What it does not do: check arguments or handle ``exclude_tools`` (the caller does).
Pure: no IO, inputs never mutated.
Source: the rule of :func:`~mini_agent.core.cache_policies.payback_boundary` (seed 000,
seed 004, Anthropic pricing).
"""

from __future__ import annotations

from mini_agent.core.history_scan import HistoryScan


def scan_boundary(scan: HistoryScan, k: int, params: tuple) -> int:
    """Return ``payback_boundary(scan.messages[:k], ...)`` from the steps kept in ``scan``.

    Args:
        scan: the session's scan, covering the history of the request.
        k: the history's length.
        params: ``(keep, horizon_ratio, min_free_tokens, min_cacheable_tokens,
            min_free_ratio, write_multiplier, read_multiplier)``, as ``payback_boundary``
            takes them (no tool excluded).

    Returns:
        How many of the oldest tool results the view masks.
    """
    steps = scan.derived.get(("payback", params))
    if steps is None:
        steps = scan.derived[("payback", params)] = _PaybackSteps(scan, scan.cum_saved, params)
    return steps.boundary(k)


class _PaybackSteps:
    """:func:`payback_boundary`'s replay kept per prefix: ``bounds[t]`` is the boundary after
    ``messages[:t]`` (a function of that prefix only, so a longer history resumes from the
    last entry). Token sums are differences of int prefix sums, equal to the sums they replace.
    """

    def __init__(self, scan: HistoryScan, cum_saved: list[int], params: tuple) -> None:
        self.scan, self.cum_saved, self.params, self.bounds = scan, cum_saved, params, [0]

    def boundary(self, k: int) -> int:
        (keep, horizon_ratio, min_free_tokens, min_cacheable_tokens, min_free_ratio,
         write_multiplier, read_multiplier) = self.params
        scan, saved, bounds = self.scan, self.cum_saved, self.bounds
        cum_tokens, users, upto = scan.cum_tokens, scan.cum_users, scan.results_upto
        b = bounds[-1]
        for t in range(len(bounds) - 1, k):
            requests = users[t + 1]
            if requests == users[t]:  # not a user message: no request ends here
                bounds.append(b)
                continue
            candidate = max(b, upto[t + 1] - keep)
            freed = saved[candidate] - saved[b]
            # no move, too little freed, or a masked view too short to cache at all
            if candidate <= b or freed < min_free_tokens or \
                    cum_tokens[t + 1] - saved[candidate] < min_cacheable_tokens:
                bounds.append(b)
                continue
            # the cache is read up to the previous boundary's anchor (the message of the
            # newest masked result, see place_breakpoints' anchors), or only up to the
            # system prompt before any mask; results in or after it were already masked
            first = scan.positions[b - 1][0] if b else 0
            masked_before = saved[b] - saved[upto[first]]
            suffix = cum_tokens[t + 1] - cum_tokens[first] - masked_before - freed
            extra = (write_multiplier - read_multiplier) * suffix - read_multiplier * freed
            if not freed < min_free_ratio * suffix and \
                    read_multiplier * freed * horizon_ratio * requests > extra:
                b = candidate   # (a ratio too low frees too little: clear_at_least)
            bounds.append(b)
        return bounds[k]
