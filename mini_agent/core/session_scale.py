"""The calibrated estimate's per-session correction, learned as the session's usage arrives.

The calibration table (:mod:`.calibration`) says how many tokens each content kind costs on
Claude's tokenizer; a session counted by another tokenizer (DeepSeek's, through
mini-swe-agent) spends fewer tokens on the same code and paths (0.71-0.89 of the table's
count on the four shared DeepSeek sessions), and even Claude Code sessions drift 0.89-1.16
from it (reminders and ids the transcript does not show). A single fixed overhead learned
from the first request then misses by 13-35% on DeepSeek sessions.

:class:`SessionScale` models a session's real input as ``overhead + scale * content``, where
``content`` is the table's estimate of the messages the request sends. The first request with
usage (the anchor) fixes the line's height; every later request with usage moves its slope to
the growth seen since the anchor, ``scale = (real growth + w) / (content growth + w)``: the
table's scale 1.0 counts as ``w`` tokens of growth (:data:`PRIOR_WEIGHT_TOKENS`), so a session
starts at the table and follows its own tokenizer once a few results have arrived. The
estimate of request k uses only the usage of requests before k. State: two points (anchor and
latest), so each update and each estimate is O(1). Measured on the 12 shared sessions with
usage: median error per request 0.1-0.3% (table alone: 0.6-6.6% Claude Code, 12.7-34.5%
DeepSeek); the estimate is one request ahead of the usage it has seen, so a harder test
freezes the line after half a session's requests: 0.1-3.2% on the second half
(``benchmarks/estimate_scale.py``).

What it does not do: know anything about a request it has not been shown, or fit per content
kind (a session holds too few requests for six coefficients; the table keeps the kinds'
proportions). Pure: no IO.
Source: Anthropic usage fields (``input_tokens + cache_creation_input_tokens +
cache_read_input_tokens`` is the whole input); DeepSeek usage (``prompt_tokens``) in the
shared mini-swe-agent trajectories; ratio estimator with a prior weight (a pseudo-count).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

PRIOR_WEIGHT_TOKENS = 100.0
"""How many tokens of observed growth the table's scale 1.0 is worth. Chosen by leave-one-out
over the 12 shared sessions with usage (grid 0-4,000 tokens; 11 folds picked 100, one 200;
held-out median errors 0.1-0.3%), printed by ``benchmarks/estimate_scale.py`` table 3.
Larger values (1,000-2,000) keep DeepSeek sessions at 1-5% instead of 0.1-0.3%; 0 lets one
noisy first result set the slope (0.3-0.7%)."""

SCALE_BOUNDS = (0.25, 4.0)
"""The scale never leaves this range (a guard against a tiny or shrinking content growth;
tokenizers differ far less than 4x). The shared sessions use 0.70-1.21."""


def real_input_tokens(usage: Mapping[str, Any] | None) -> int | None:
    """Return a request's whole real input, as the API counted it.

    Args:
        usage: the recorded usage dict of one request, or None.

    Returns:
        ``input_tokens + cache_creation_input_tokens + cache_read_input_tokens`` (missing
        fields count 0), or None when there is no usage.
    """
    if not usage:
        return None
    get = usage.get  # the three fields added in order, as sum() over them would (no generator)
    return (int(get("input_tokens") or 0) + int(get("cache_creation_input_tokens") or 0)
            + int(get("cache_read_input_tokens") or 0))


class SessionScale:
    """A session's ``overhead + scale * content`` line, updated with each request's usage.

    Args:
        prior_overhead: overhead tokens before any usage (system prompt and tools estimated
            from their text, or 0 when the transcript holds none).
        prior_weight_tokens: :data:`PRIOR_WEIGHT_TOKENS` by default; 0 trusts the first
            growth alone, a large value keeps the table's scale 1.0.

    Attributes: ``anchor`` and ``latest``: ``(content, real)`` of the first and the newest
    request with usage (None before any), the only state kept; ``scale``: real tokens per
    table token of content growth since the anchor, ``(real growth + w) / (content growth +
    w)`` clipped to :data:`SCALE_BOUNDS` (1.0 before two requests with usage, and while the
    denominator is not positive).
    """

    def __init__(self, prior_overhead: float = 0.0, *,
                 prior_weight_tokens: float = PRIOR_WEIGHT_TOKENS) -> None:
        self.prior_overhead = prior_overhead
        self.prior_weight_tokens = prior_weight_tokens
        self.anchor: tuple[float, int] | None = None
        self.latest: tuple[float, int] | None = None
        self.scale = 1.0

    def observe(self, content_tokens: float, real_tokens: int) -> None:
        """Take one request's real input into the line (call it after estimating that request).

        Args:
            content_tokens: the table's estimate of the request's messages (no overhead).
            real_tokens: the request's whole real input as the API counted it.
        """
        if self.anchor is None:
            self.anchor = (content_tokens, real_tokens)
        self.latest = (content_tokens, real_tokens)
        w = self.prior_weight_tokens
        grown = content_tokens - self.anchor[0] + w
        low, high = SCALE_BOUNDS
        self.scale = 1.0 if grown <= 0 else \
            min(high, max(low, (real_tokens - self.anchor[1] + w) / grown))

    @property
    def overhead(self) -> float:
        """Tokens the session adds to every request beyond its messages.

        Returns:
            ``real - scale * content`` at the anchor (the line passes through it; negative
            when the anchor's own content was overestimated), or ``prior_overhead``.
        """
        if self.anchor is None:
            return self.prior_overhead
        return self.anchor[1] - self.scale * self.anchor[0]

    def tokens(self, content_tokens: float) -> float:
        """Estimate a request's whole input from the table's estimate of its messages.

        Args:
            content_tokens: the table's estimate of the messages (any view of the history).

        Returns:
            ``overhead + scale * content_tokens`` (a float; round it for display).
        """
        if self.anchor is None:
            return self.prior_overhead + content_tokens
        return self.anchor[1] + self.scale * (content_tokens - self.anchor[0])


def scaled_estimates(content: Sequence[float], reals: Sequence[int | None], overhead: float,
                     *, adapt: bool = True) -> list[tuple[int, float]]:
    """Estimate every request of a session, each from the usage of the requests before it.

    Up to the first request with usage (the anchor) the estimate is ``content + overhead``;
    after it, a :class:`SessionScale` that has observed every earlier request with usage.

    Args:
        content: the table's estimate of each request's messages, oldest first.
        reals: each request's real input (None: not recorded), parallel to ``content``.
        overhead: the anchor's overhead at the table's scale (real minus content, kept >= 0
            by the caller), added to the requests up to the anchor.
        adapt: False: ``content + overhead`` for every request (the table alone).

    Returns:
        ``(estimated tokens, scale used)`` per request (scale 1.0 up to the anchor).
    """
    if not adapt:
        return [(round(c + overhead), 1.0) for c in content]
    line, out, anchor = SessionScale(overhead), [], None
    for c, real in zip(content, reals):
        if anchor is None:
            out.append((round(c + overhead), 1.0))
        else:  # line.tokens(c), inlined: the explorer estimates every request of every file
            out.append((round(anchor[1] + line.scale * (c - anchor[0])), line.scale))
        if real is not None:
            line.observe(c, real)  # after estimating this request: only later ones use it
            anchor = line.anchor
    return out
