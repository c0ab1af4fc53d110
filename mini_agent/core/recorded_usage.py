"""What a recorded session cost as it ran, from the usage its transcript kept.

The explorer replays a session under each policy through the kit's cache rules; the ``raw``
policy is the kit's replay of what the session sent. The transcript itself often says what the
session really cost: Claude Code keeps each response's ``usage`` (uncached input, cache writes,
cache reads), mini-swe-agent keeps OpenAI-style usage the loader maps to the same keys. This
module adds those usages up the way the explorer adds up a policy's, so the report can set the
recording beside the replays: if ``raw`` is far from ``recorded``, the replay is off (the
replay counts message content at about 4 characters per token while Claude counts code and
JSON at 2.3-2.9, and Claude Code places its own cache breakpoints), and every policy's
absolute USD is off by about the same factor; the ratios between policies (``vs_best``) are
what the replays compare.

Counted like a policy row: input side only (output is not a policy's doing), cache writes at
their TTL's price, reads at the model's read multiplier, the same rule for cache breaks.
Only a session whose every request has usage gets a row: a partial sum would look like a
cheap session. Pure: no IO.
Source: Anthropic usage fields (``input_tokens``, ``cache_creation_input_tokens`` with its
``cache_creation`` TTL breakdown, ``cache_read_input_tokens``); the explorer's policy row in
:mod:`mini_agent.core.replay`.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from mini_agent.core.pricing import (  # noqa: F401 (clean_usage: re-exported)
    CACHE_WRITE_1H_MULTIPLIER, CACHE_WRITE_5M_MULTIPLIER, cache_hit_rate, clean_usage, cost_usd,
    model_price, sum_usage, usages_cost_usd)
from mini_agent.core.session_scale import real_input_tokens


def cache_breaks(usages: Sequence[Mapping[str, Any]]) -> int:
    """Count the requests that lost (part of) the cached prefix of the request before.

    A request after the first breaks the cache when the request before it was cached (it
    read or wrote cache) and this one reads fewer tokens from the cache than that request's
    whole cached part.

    Args:
        usages: one usage dict per request, oldest first (missing fields count 0).

    Returns:
        The number of such requests.

    >>> cache_breaks([{"cache_creation_input_tokens": 100},
    ...               {"cache_read_input_tokens": 100, "cache_creation_input_tokens": 20},
    ...               {"cache_read_input_tokens": 50}])
    1
    """
    # each usage read once (the pairwise reference, :func:`_cache_breaks_pairwise`, reads
    # the middle ones twice); ``cached``: the request before's reads plus writes
    count, cached = 0, 0
    for usage in usages:
        get = usage.get
        read = get("cache_read_input_tokens") or 0
        if cached and read < cached:
            count += 1
        cached = read + (get("cache_creation_input_tokens") or 0)
    return count


def _cache_breaks_pairwise(usages: Sequence[Mapping[str, Any]]) -> int:
    """The reference form of :func:`cache_breaks`: each pair of neighbouring requests."""
    count = 0
    for before, cur in zip(usages, usages[1:]):
        cached = ((before.get("cache_read_input_tokens") or 0)
                  + (before.get("cache_creation_input_tokens") or 0))
        if cached and (cur.get("cache_read_input_tokens") or 0) < cached:
            count += 1
    return count


def usage_per_request(usages: Sequence[Mapping[str, Any] | None] | None,
                      requests: int) -> list[Mapping[str, Any]] | None:
    """Take the usage of each of a session's requests, or nothing when one is missing.

    Args:
        usages: the transcript's usage per request, None (or empty) where a request has
            none; None or empty for a file without usage.
        requests: how many requests the session made.

    Returns:
        The first ``requests`` usages, or None when there is no request or some request has
        no usage (a partial sum would look like a cheap session).
    """
    if requests <= 0 or not usages or len(usages) < requests:
        return None
    kept = list(usages[:requests])
    return None if any(not u for u in kept) else kept


def recorded_row(usages: Sequence[Mapping[str, Any] | None], requests: int,
                 model: str) -> dict[str, Any] | None:
    """Sum a session's recorded usage into a row shaped like a policy's.

    Args:
        usages: the transcript's usage per request (``Transcript.usage``), None where a
            request has none.
        requests: how many requests the session made (the explorer's request points); the
            row needs a usage for each of them.
        model: the model to price with (the report's, so the row compares with the
            policies' rows).

    Returns:
        ``{"tokens_sent", "usd", "hit_rate", "cache_breaks"}`` (tokens in the whole input of
        every request, USD of the input side), or None when some request has no usage or
        the session made none.

    Raises:
        UnknownModelError: no price is known for ``model``.
    """
    kept = usage_per_request(usages, requests)
    if kept is None:
        return None
    fast = _plain_row(kept, model)
    if fast is not None:
        return fast
    total = sum_usage(kept)
    return {"tokens_sent": total["input_tokens"] + total["cache_creation_input_tokens"]
            + total["cache_read_input_tokens"],
            "usd": usages_cost_usd(kept, model, include_output=False),
            "hit_rate": cache_hit_rate(total),
            "cache_breaks": cache_breaks(kept)}


def _plain_row(kept: Sequence[Mapping[str, Any]], model: str) -> dict[str, Any] | None:
    """:func:`recorded_row`'s row added up in one pass, for usages that are plain dicts.

    The same figures as ``sum_usage``, ``usages_cost_usd(..., include_output=False)``,
    ``cache_hit_rate`` and :func:`cache_breaks` of :mod:`mini_agent.core.pricing` give (the
    same terms added in the same order, so the same floats), without their per-field calls
    that also read SDK objects: each count is ``int(value or 0)`` as ``usage_tokens`` reads
    it, a ``cache_creation`` breakdown splits the writes as ``_cost_usd`` does. None (ask the
    pricing functions) when a usage is not a plain dict, has a breakdown that is not one,
    carries ``iterations`` (server-side compaction is billed on top) or says
    ``inference_geo: "us"`` (US-only inference, billed at 1.1x).
    ``tests/test_recorded_usage.py`` compares the two.
    """
    price = model_price(model)
    read_x, in_usd = price.cache_read_multiplier, price.input_usd_per_mtok
    fresh = written = read = 0
    costs = []
    for usage in kept:
        if type(usage) is not dict or usage.get("iterations") or \
                usage.get("inference_geo") == "us":
            return None
        breakdown = usage.get("cache_creation")
        if breakdown is not None and type(breakdown) is not dict:
            return None
        uncached = int(usage.get("input_tokens") or 0)
        creation = int(usage.get("cache_creation_input_tokens") or 0)
        reads = int(usage.get("cache_read_input_tokens") or 0)
        if breakdown:
            write_1h = int(breakdown.get("ephemeral_1h_input_tokens") or 0)
            write_5m = int(breakdown.get("ephemeral_5m_input_tokens") or 0)
            write_5m += max(0, creation - write_1h - write_5m)
        else:
            write_1h, write_5m = 0, creation
        costs.append((uncached + write_5m * CACHE_WRITE_5M_MULTIPLIER
                      + write_1h * CACHE_WRITE_1H_MULTIPLIER + reads * read_x) * in_usd / 1e6
                     + 0.0 + 0)  # no output (include_output=False), no iterations
        fresh += uncached
        written += creation
        read += reads
    whole = read + written + fresh
    return {"tokens_sent": fresh + written + read, "usd": sum(costs),
            "hit_rate": read / whole if whole else 0.0, "cache_breaks": cache_breaks(kept)}


def recorded_requests(usages: Sequence[Mapping[str, Any] | None] | None, requests: int,
                      model: str) -> list[dict[str, Any]] | None:
    """Price the file's own usage request by request, as the explorer prices a policy's.

    The per-request form of the report's ``recorded`` row
    (:func:`recorded_row`), by the same rules: input side
    only, a usage that is not all counts is missing (``clean_usage``), and a session with a
    request without usage gets nothing (a partial line would look like a cheap session).
    Summed, ``cost_usd`` gives the row's ``usd`` and ``tokens`` its ``tokens_sent``.

    Args:
        usages: the transcript's usage per request (``Transcript.usage``), None where a
            request has none; None or empty for a file without usage.
        requests: the report's request count (``len(report["requests"])``).
        model: the model the report priced (``report["model"]``).

    Returns:
        One ``{"tokens", "cost_usd", "hit_rate"}`` per request (tokens: uncached input +
        cache writes + cache reads, the whole input the API counted; cost in USD of the
        input side; hit rate: cache reads over that input, 0 to 1), or None when some
        request has no usage or there is no request.

    Raises:
        UnknownModelError: no price is known for ``model``.
    """
    kept = usage_per_request([clean_usage(u) for u in (usages or ())[:requests]], requests)
    if kept is None:
        return None
    return [{"tokens": real_input_tokens(u),
             "cost_usd": cost_usd(u, model, include_output=False),
             "hit_rate": cache_hit_rate(u)} for u in kept]
