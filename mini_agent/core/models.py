"""The model constants the kit shares: the default model, its output cap, and the model table.

``DEFAULT_MODEL`` is the only model id the kit chooses; ``harness/config.py`` lets the
environment (``MINI_AGENT_MODEL``) override it. :data:`MODELS` gives, per exact model id, what
the kit needs to price a request and to answer it offline as the API would: prices, the cache
read multiplier, context window, output ceiling, minimum cacheable prompt length and which
thinking modes the model takes, and whether the API still serves it (a retired model keeps its
row to price recorded transcripts; offline, a request for it is the API's 404). A test
(``tests/test_models.py``) fails when the installed ``anthropic`` SDK marks the default
deprecated, drops it from its model list, lists a model this table lacks, or gives an
end-of-life date before :data:`MODELS_AS_OF` for a model the table does not mark retired
(Claude Sonnet 4.5 on 2026-11-30, Claude Mythos Preview on 2026-06-30). Pure: constants and one
look-up.

Cache reads on Claude Sonnet 5.5 are 0.05x ($0.10) since the price cut of 2026-10-07 (an older
copy of its model page still says $0.20); Opus 5.5 reads at 0.05x, Fable and Mythos 5.1 at
0.025x, Fable and Mythos 5 and every other model at 0.1x.
ASSUMPTIONS, where the sources give no figure: Claude Fable 5.2 and Mythos 5.2 read the cache
at 0.025x like 5.1; Claude Haiku 5.5 is priced at its lower band (prompts up to 100,000
tokens; longer prompts cost $0.50/$2.50) and caches from 1,024 tokens; Claude Sonnet 5.5 and
Opus 5.5 from 1,024 and 512 like Sonnet 5 and Opus 5; Claude Mythos Preview costs $25/$125;
the 5.x models other than those named by the thinking docs refuse manual thinking like
Sonnet 5 and Opus 5.

Source:
    Read 2026-12-01: Anthropic pricing page (platform.claude.com/docs/en/about-claude/
    pricing: "Cache hits and refreshes" per model), the models overview and each model's page
    (context window, max output), the prompt caching docs ("Minimum cacheable prompt
    length"), the thinking docs (which models take ``{"type": "enabled"}`` with a budget).
    Seed 000 (autoContinue uses 2048 output tokens per attempt).
"""

from __future__ import annotations

import dataclasses
import functools
import re

DEFAULT_MODEL = "claude-sonnet-5-5"
"""The model the kit uses unless ``MINI_AGENT_MODEL`` is set: the current Sonnet (models
overview: "Claude Sonnet 5.5 is the current Sonnet model")."""

DEFAULT_MAX_TOKENS = 2048
"""Output cap per request in tokens (seed 000: autoContinue uses 2048 per attempt)."""

MODELS_AS_OF = "2026-12-01"
"""The date the table below was read from the pages named in the module docstring."""


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """One model's prices and limits.

    Attributes:
        input_usd_per_mtok: base input price, USD per million tokens.
        output_usd_per_mtok: output price, USD per million tokens.
        cache_read_multiplier: a cache hit costs this times the input price (0.1 for most
            models; 0.05 for Sonnet and Opus 5.5; 0.025 for Fable and Mythos 5.1).
        context_window_tokens: the largest prompt the model takes.
        max_output_tokens: the ceiling of ``max_tokens``.
        min_cacheable_tokens: a shorter prefix is "not cached, even if marked".
        manual_thinking: accepts ``thinking: {"type": "enabled", "budget_tokens": N}``.
        adaptive_thinking: accepts ``thinking: {"type": "adaptive"}``.
        system_messages: accepts ``role: "system"`` messages after a user message
            (ASSUMPTION for the Opus line from 4.8: see :mod:`mini_agent.core.system_messages`).
        retired: the API no longer serves the model (its end-of-life date, from the SDK's
            deprecation table, is before :data:`MODELS_AS_OF`): a request for it is a 404
            ``not_found_error``. The row stays to price recorded transcripts.
    Cache writes cost 1.25x (5 minutes) and 2x (1 hour) the input price for every model.
    """

    input_usd_per_mtok: float
    output_usd_per_mtok: float
    cache_read_multiplier: float = 0.1
    context_window_tokens: int = 1_000_000
    max_output_tokens: int = 128_000
    min_cacheable_tokens: int = 1024
    manual_thinking: bool = False
    adaptive_thinking: bool = True
    system_messages: bool = False
    retired: bool = False


_OLD = dict(manual_thinking=True, adaptive_thinking=False, context_window_tokens=200_000)
_GONE = dict(_OLD, retired=True)

MODELS: dict[str, ModelSpec] = {
    # current lineup
    "claude-fable-5-2": ModelSpec(8.0, 40.0, 0.025, min_cacheable_tokens=512),
    "claude-mythos-5-2": ModelSpec(8.0, 40.0, 0.025, min_cacheable_tokens=512),
    "claude-fable-5-1": ModelSpec(10.0, 50.0, 0.025, min_cacheable_tokens=512),
    "claude-mythos-5-1": ModelSpec(10.0, 50.0, 0.025, min_cacheable_tokens=512),
    "claude-opus-5-5": ModelSpec(4.0, 20.0, 0.05, min_cacheable_tokens=512, system_messages=True),
    "claude-sonnet-5-5": ModelSpec(2.0, 10.0, 0.05, min_cacheable_tokens=1024),
    "claude-haiku-5-5": ModelSpec(0.10, 0.50, 0.1, min_cacheable_tokens=1024),
    # legacy, still served
    "claude-fable-5": ModelSpec(10.0, 50.0, 0.1, min_cacheable_tokens=512),
    "claude-mythos-5": ModelSpec(10.0, 50.0, 0.1, min_cacheable_tokens=512),
    "claude-opus-5": ModelSpec(5.0, 25.0, 0.1, min_cacheable_tokens=512, system_messages=True),
    "claude-sonnet-5": ModelSpec(2.0, 10.0, 0.1, min_cacheable_tokens=1024),
    "claude-opus-4-8": ModelSpec(5.0, 25.0, 0.1, min_cacheable_tokens=1024, system_messages=True),
    "claude-opus-4-7": ModelSpec(5.0, 25.0, 0.1, min_cacheable_tokens=2048),
    "claude-opus-4-6": ModelSpec(5.0, 25.0, 0.1, min_cacheable_tokens=4096,
                                 manual_thinking=True),
    "claude-sonnet-4-6": ModelSpec(3.0, 15.0, 0.1, max_output_tokens=64_000,
                                   min_cacheable_tokens=1024, manual_thinking=True),
    "claude-haiku-4-5": ModelSpec(1.0, 5.0, 0.1, max_output_tokens=64_000,
                                  min_cacheable_tokens=4096, **_OLD),
    "claude-opus-4-5": ModelSpec(5.0, 25.0, 0.1, max_output_tokens=64_000,
                                 min_cacheable_tokens=4096, **_OLD),
    # retired (a request is a 404): kept to price recorded transcripts
    "claude-sonnet-4-5": ModelSpec(3.0, 15.0, 0.1, max_output_tokens=64_000,
                                   min_cacheable_tokens=1024, **_GONE),
    "claude-mythos-preview": ModelSpec(25.0, 125.0, 0.1, min_cacheable_tokens=2048,
                                       manual_thinking=True, retired=True),
    "claude-opus-4-1": ModelSpec(15.0, 75.0, 0.1, max_output_tokens=32_000, **_GONE),
    "claude-opus-4": ModelSpec(15.0, 75.0, 0.1, max_output_tokens=32_000, **_GONE),
    "claude-sonnet-4": ModelSpec(3.0, 15.0, 0.1, max_output_tokens=64_000, **_GONE),
    "claude-haiku-3-5": ModelSpec(0.8, 4.0, 0.1, max_output_tokens=8192,
                                  min_cacheable_tokens=2048, **_GONE),
    "claude-3-5-haiku": ModelSpec(0.8, 4.0, 0.1, max_output_tokens=8192,
                                  min_cacheable_tokens=2048, **_GONE),
}
"""Exact model id -> :class:`ModelSpec` (see the module docstring for sources and assumptions)."""

_DATE_SUFFIX = re.compile(r"[-@]\d{8}$")


class UnknownModelError(KeyError):
    """No row for a model id (the message lists the known ones)."""


@functools.lru_cache(maxsize=256)
def model_spec(model: str) -> ModelSpec:
    """Return the model table's row for ``model``.

    Args:
        model: an exact id, or an id with a ``-YYYYMMDD`` or ``@YYYYMMDD`` snapshot date
            (``claude-haiku-4-5-20251001`` -> ``claude-haiku-4-5``). No other prefix matching:
            ``claude-opus-4-7`` is never priced as ``claude-opus-4``.

    Returns:
        The :class:`ModelSpec` row.

    Raises:
        UnknownModelError: no row for that id.

    >>> model_spec("claude-sonnet-4-5-20250929").input_usd_per_mtok
    3.0

    The answer depends on ``model`` alone (the table is a constant), so the last 256 answers
    are kept (a dated id costs a regex otherwise); an unknown id raises each time.
    """
    if model in MODELS:
        return MODELS[model]
    undated = _DATE_SUFFIX.sub("", model or "")
    if undated in MODELS:
        return MODELS[undated]
    raise UnknownModelError(f"no price for model {model!r} (no row in the kit's model table); "
                            f"known: {', '.join(sorted(MODELS))} (a dated id such as "
                            f"claude-sonnet-4-5-20250929 is priced as its model)")
