"""Prices and usage sums: what a response's ``usage`` costs in USD, and how much of it was cached.

What this module does: holds the per-model price table (USD per million tokens), reads the
token counts out of a ``usage`` (a dict or the SDK's ``Usage`` object), prices them with the
cache multipliers, adds usages up and gives the cache hit rate. What it does not do: decide
what gets cached (``mini_agent.core.cache``), notice cache breaks
(``mini_agent.core.cache_breaks``) or simulate the server's cache
(``mini_agent.core.prompt_cache``). Pure; no function mutates its input. Taught in
``notebooks/05_prompt_caching.ipynb``.

Source:
  Read 2026-12-01.

  * Anthropic pricing, https://platform.claude.com/docs/en/about-claude/pricing : USD per
    million tokens; 5m cache write = 1.25x input, 1h write = 2x, cache hit = 0.1x on most
    models (each model's figure is in :data:`mini_agent.core.models.MODELS`).
  * US-only inference (``inference_geo: "us"``): "billed at 1.1x standard API rates for
    Claude Opus 4.6, Claude Sonnet 4.6, and later models" (support.claude.com, "Enable
    US-only inference"); "A 1.1x pricing multiplier applies" (Claude Platform on AWS, "Data
    residency"); earlier models refuse ``inference_geo`` (data residency docs), so a usage
    that says ``"us"`` is always priced at 1.1x.
  * Anthropic prompt caching docs,
    https://platform.claude.com/docs/en/build-with-claude/prompt-caching :
    ``usage.cache_creation_input_tokens``, ``usage.cache_read_input_tokens``,
    ``usage.input_tokens`` (the uncached part only) and
    ``usage.cache_creation.{ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Iterable, Mapping

from mini_agent.core.models import MODELS, MODELS_AS_OF, UnknownModelError, model_spec

USAGE_TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens",
                    "cache_read_input_tokens")
"""The token counts of a ``usage`` that :func:`sum_usage` adds up."""

WRITE_TTL_KEYS = ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")
"""The keys of ``usage.cache_creation``: cache writes per TTL."""


# --------------------------------------------------------------------------- reading usage

def _is_mapping(value: Any) -> bool:
    """``isinstance(value, Mapping)``, a plain dict (the usual usage) told first: the check
    against the ``Mapping`` ABC costs microseconds, and a dict is a Mapping."""
    return type(value) is dict or isinstance(value, Mapping)


def usage_tokens(usage: Any, key: str) -> int:
    """Read one token count out of a usage.

    Args:
        usage: a usage dict or the SDK's ``Usage`` object.
        key: the field, e.g. ``"cache_read_input_tokens"``.

    Returns:
        ``usage[key]`` as an int; absent or None is 0.

    >>> usage_tokens({"input_tokens": 12, "output_tokens": None}, "output_tokens")
    0
    """
    if _is_mapping(usage):
        value = usage.get(key)
    else:
        value = getattr(usage, key, None)
    return int(value or 0)


def _count(value: Any) -> bool:
    """Tell whether a usage field holds a token count (absent, or a whole number >= 0)."""
    if value is None:
        return True
    if type(value) is int:  # the usual count (exactly int: bool is refused below)
        return value >= 0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value) and value >= 0 and value == int(value)


_INT_ONLY = {int}


def clean_usage(usage: Any) -> dict[str, Any] | None:
    """Keep a recorded usage only when every token count in it is a count.

    A transcript is data from elsewhere: a ``usage`` that is not an object, or a field that
    is a string, negative, fractional, NaN or infinite, would make the whole session's
    report fail or price it below zero, and one without any count would sum to a free
    request. Such a usage counts as missing (the request has no
    usage), so the replays still run and the session gets no recorded row.

    Args:
        usage: one request's usage as the transcript kept it, or None.

    Returns:
        The usage as a plain dict, or None when it is missing, has no count or holds anything
        but counts.
    """
    if type(usage) is dict:
        # the usual usage, a plain dict of four whole counts (exactly int, not bool) and no
        # breakdown, is answered with four look-ups; the checks below return the same copy
        get = usage.get
        a, b, c, d = (get("input_tokens"), get("output_tokens"),
                      get("cache_creation_input_tokens"), get("cache_read_input_tokens"))
        if (type(a) is int and type(b) is int and type(c) is int and type(d) is int
                and a >= 0 and b >= 0 and c >= 0 and d >= 0 and get("cache_creation") is None):
            return dict(usage)
    elif not _is_mapping(usage):
        return None
    counts = [usage.get(key) for key in USAGE_TOKEN_KEYS]
    # the usual usage, four whole counts (exactly int, not bool), is told apart without a
    # call per field; anything else is asked field by field
    if not (set(map(type, counts)) == _INT_ONLY and min(counts) >= 0) and (
            not all(map(_count, counts)) or all(c is None for c in counts)):
        return None
    breakdown = usage.get("cache_creation")
    if breakdown is not None and not (_is_mapping(breakdown) and all(
            _count(breakdown.get(key)) for key in WRITE_TTL_KEYS)):
        return None
    return dict(usage)


def _write_breakdown(usage: Any) -> Any:
    """``usage.cache_creation`` (the writes per TTL) or None, from a dict or an SDK object."""
    if _is_mapping(usage):
        return usage.get("cache_creation")
    return getattr(usage, "cache_creation", None)


# --------------------------------------------------------------------------- prices

@dataclasses.dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens for one model: ``input_usd_per_mtok``, ``output_usd_per_mtok``,
    and ``cache_read_multiplier`` (a cache hit costs that times the input price). Cache writes
    cost 1.25x (5 minutes) and 2x (1 hour) the input price."""

    input_usd_per_mtok: float
    output_usd_per_mtok: float
    cache_read_multiplier: float = 0.1


CACHE_WRITE_5M_MULTIPLIER = 1.25
CACHE_WRITE_1H_MULTIPLIER = 2.0
CACHE_READ_MULTIPLIER = 0.1
"""The cache read multiplier of most models; :func:`model_price` gives each model's own."""

US_INFERENCE_MULTIPLIER = 1.1
"""A usage whose ``inference_geo`` is ``"us"`` (US-only inference) costs this times the price,
every token kind included; ``"global"`` (the default) and any other value cost 1x."""

PRICES_AS_OF = MODELS_AS_OF
"""Date the prices were read from https://platform.claude.com/docs/en/about-claude/pricing."""

PRICES: dict[str, ModelPrice] = {
    model: ModelPrice(spec.input_usd_per_mtok, spec.output_usd_per_mtok,
                      spec.cache_read_multiplier) for model, spec in MODELS.items()}
"""Exact model id -> price, from :data:`mini_agent.core.models.MODELS`."""


@functools.lru_cache(maxsize=256)
def model_price(model: str) -> ModelPrice:
    """Return the price row for ``model``.

    Args:
        model: a model id: its exact id, or the id with a snapshot date
            (``claude-sonnet-4-5-20250929`` -> ``claude-sonnet-4-5``). No other prefix
            matching: ``claude-opus-4-7`` is never priced as ``claude-opus-4``.
    Returns:
        The :class:`ModelPrice` of that model.
    Raises:
        UnknownModelError: the model table has no row for it.

    The answer depends on ``model`` alone (the table is a constant), so the last 256 answers
    are kept: a session asks the same id several times, and a :class:`ModelPrice` is frozen,
    so one shared row is safe. An unknown id raises each time (errors are not kept).
    """
    spec = model_spec(model)
    return ModelPrice(spec.input_usd_per_mtok, spec.output_usd_per_mtok,
                      spec.cache_read_multiplier)


def cost_usd(usage: Any, model: str, *, include_output: bool = True) -> float:
    """Return the USD cost of one response's ``usage`` on ``model``.

    cost = input_tokens * in + cache writes (``cache_creation.ephemeral_5m_input_tokens`` x
    1.25 in + ``ephemeral_1h_input_tokens`` x 2 in; when the breakdown is absent all of
    ``cache_creation_input_tokens`` is priced as 5m) + cache_read_input_tokens x the model's
    read multiplier (0.1 for most) x in + output_tokens x out; prices per million tokens.
    Server-side compaction is billed on top: each ``compaction`` entry of
    ``usage.iterations`` (not in the top-level fields) is priced the same way. A usage with
    ``inference_geo: "us"`` costs :data:`US_INFERENCE_MULTIPLIER` (1.1) times all of that.

    Args:
        usage: a usage dict or the SDK's ``Usage``.
        model: the model id (see :func:`model_price`).
        include_output: False prices the input side only.
    Returns:
        The cost in USD.
    Raises:
        UnknownModelError: no price is known for ``model``.

    >>> round(cost_usd({"input_tokens": 1_000_000}, "claude-sonnet-4-6"), 2)
    3.0
    >>> round(cost_usd({"cache_read_input_tokens": 1_000_000}, "claude-sonnet-4-6"), 2)
    0.3
    """
    return _cost_usd(usage, model_price(model), include_output)


def usages_cost_usd(usages: Iterable[Any], model: str, *, include_output: bool = True
                    ) -> float:
    """Return the USD cost of several responses' usages on ``model``, the price read once.

    Args:
        usages: usage dicts or SDK ``Usage`` objects, in order.
        model: the model id (see :func:`model_price`).
        include_output: False prices the input side only.

    Returns:
        ``sum(cost_usd(u, model, include_output=include_output) for u in usages)``: the same
        float (the same terms added in the same order); 0 when there are none.

    Raises:
        UnknownModelError: no price is known for ``model``.
    """
    price = model_price(model)
    return sum(_cost_usd(u, price, include_output) for u in usages)


def _cost_usd(usage: Any, price: ModelPrice, include_output: bool) -> float:
    """:func:`cost_usd` at a price already looked up."""
    is_map = _is_mapping(usage)
    iterations = usage.get("iterations") if is_map else getattr(usage, "iterations", None)
    extra_usd = sum(_cost_usd(it, price, include_output)
                    for it in iterations if _kind(it) == "compaction") if iterations else 0
    creation = usage_tokens(usage, "cache_creation_input_tokens")
    breakdown = _write_breakdown(usage)
    if breakdown:
        write_1h = usage_tokens(breakdown, "ephemeral_1h_input_tokens")
        write_5m = usage_tokens(breakdown, "ephemeral_5m_input_tokens")
        write_5m += max(0, creation - write_1h - write_5m)
    else:
        write_1h, write_5m = 0, creation
    input_usd = (usage_tokens(usage, "input_tokens")
                 + write_5m * CACHE_WRITE_5M_MULTIPLIER
                 + write_1h * CACHE_WRITE_1H_MULTIPLIER
                 + usage_tokens(usage, "cache_read_input_tokens") * price.cache_read_multiplier
                 ) * price.input_usd_per_mtok / 1e6
    output_usd = usage_tokens(usage, "output_tokens") * price.output_usd_per_mtok / 1e6
    total_usd = input_usd + (output_usd if include_output else 0.0) + extra_usd
    geo = usage.get("inference_geo") if is_map else getattr(usage, "inference_geo", None)
    return total_usd * US_INFERENCE_MULTIPLIER if geo == "us" else total_usd


def _kind(item: Any) -> Any:
    return item.get("type") if _is_mapping(item) else getattr(item, "type", None)


# --------------------------------------------------------------------------- usage sums

def cache_hit_rate(usage: Any) -> float:
    """Compute the share of one usage's input tokens read from the cache.

    Args:
        usage: a usage dict or the SDK's ``Usage`` object.

    Returns:
        read / (read + creation + uncached input); 0.0 when all three are 0.

    >>> cache_hit_rate({"input_tokens": 10, "cache_creation_input_tokens": 10,
    ...                 "cache_read_input_tokens": 80})
    0.8
    """
    read = usage_tokens(usage, "cache_read_input_tokens")
    total = read + usage_tokens(usage, "cache_creation_input_tokens") + \
        usage_tokens(usage, "input_tokens")
    return read / total if total else 0.0


def sum_usage(usages: Iterable[Any]) -> dict[str, Any]:
    """Add up usages field by field, including the ``cache_creation`` breakdown.

    Args:
        usages: usage dicts or SDK ``Usage`` objects; a usage without a breakdown counts all
            its ``cache_creation_input_tokens`` as 5m writes.
    Returns:
        A new usage dict with every key of :data:`USAGE_TOKEN_KEYS` and a
        ``cache_creation`` breakdown, which :func:`cost_usd` and :func:`cache_hit_rate` accept.
        It keeps no ``inference_geo``: price usages that say ``"us"`` (1.1x) with
        :func:`usages_cost_usd`, not ``cost_usd`` of their sum.
    """
    total: dict[str, Any] = {key: 0 for key in USAGE_TOKEN_KEYS}
    total["cache_creation"] = {key: 0 for key in WRITE_TTL_KEYS}
    for usage in usages:
        for key in USAGE_TOKEN_KEYS:
            total[key] += usage_tokens(usage, key)
        breakdown = _write_breakdown(usage)
        if breakdown:
            for key in WRITE_TTL_KEYS:
                total["cache_creation"][key] += usage_tokens(breakdown, key)
        else:
            total["cache_creation"]["ephemeral_5m_input_tokens"] += \
                usage_tokens(usage, "cache_creation_input_tokens")
    return total
