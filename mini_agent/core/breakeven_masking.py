"""Break-even masking: move the mask boundary once the reads it would have saved pay its re-write.

An online masking policy (it decides at each request from the history seen so far, never
from later requests), priced like the hindsight bound (:mod:`mini_agent.core.hindsight`) with
the model's own cache multipliers:

* **rent**: while ``F`` tokens of old tool results could be masked but are not, every
  request reads them from the cache again, ``read * F`` (in base-price tokens);
* **buy**: moving the boundary (mask all but the newest ``keep`` results) while the cache is
  warm re-writes the ``S`` masked tokens after the last cache anchor, costing
  ``(write - read) * S - read * F`` more than staying, once;
* the rule (ski rental's break-even rule): move when ``rent_factor`` times the rent paid
  since the last move exceeds the buy price. The rent paid so far stands in for the
  savings still to come, the session's own request rate giving the horizon (a run that has
  lasted ``n`` requests is expected to last about as long again), so no session length is
  assumed; ``rent_factor = 2`` because the freed tokens grow as results age, so the next
  run's rent is larger than the last one's;
* **cold cache**: at the first request, or after a pause longer than the cache TTL, the
  whole prompt is written anyway and a masked prompt is a smaller write: the move is free,
  the policy always moves then.

The rule replays every past request of the history, so the policy keeps no state and the
same history (with the same times) always gives the same view. Pure: no IO, inputs never
mutated. Compared with :class:`~mini_agent.core.cache_policies.PaybackMasking` (horizon half
the requests since the session began, read multiplier fixed at 0.1, no TTL), it moves once
a run has paid for it, moves for free at a cold cache, and follows the model's read price.
Replayed by ``mini-agent evaluate`` as ``breakeven`` (:mod:`mini_agent.core.replay`) and
measured against the bound in ``benchmarks/policies.py``; tuned there (``rent_factor``
1.7-2.3 tried) on the same shared sessions it is measured on.
Source: Anthropic prompt caching and pricing docs (write 1.25x, read 0.1x or the model's
multiplier, 5-minute TTL, minimum cacheable length); seed 000 (masking breaks the cache;
mask in chunks); Karlin, Manasse, Rudolph and Sleator, "Competitive snoopy caching" (1988),
the break-even (ski rental) rule; the kit's evaluation chapter (the hindsight bound).
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from mini_agent.core.cache import TTL_SECONDS
from mini_agent.core.cache_policies import result_savings
from mini_agent.core.masking import KEEP_RECENT_OBSERVATIONS, mask_old_observations
from mini_agent.core.messages import Message, tool_result_positions
from mini_agent.core.pricing import CACHE_READ_MULTIPLIER, CACHE_WRITE_5M_MULTIPLIER, model_price
from mini_agent.core.prompt_cache import min_cacheable_tokens as model_min_cacheable_tokens
from mini_agent.core.tokens import approx_tokens
from mini_agent.core.view import ViewContext

RENT_FACTOR = 2.0
"""Move when this many times the rent paid since the last move exceeds the move's re-write."""


def breakeven_boundary(history: list[Message], *, times: Sequence[float] | None = None,
                       now: float | None = None, keep: int = KEEP_RECENT_OBSERVATIONS,
                       rent_factor: float = RENT_FACTOR,
                       ttl_seconds: float = TTL_SECONDS["5m"],
                       min_cacheable_tokens: int = 1024, fixed_tokens: int = 0,
                       exclude_tools: tuple[str, ...] = (),
                       write_multiplier: float = CACHE_WRITE_5M_MULTIPLIER,
                       read_multiplier: float = CACHE_READ_MULTIPLIER) -> int:
    """Return how many of the oldest tool results :class:`BreakEvenMasking` masks for ``history``.

    The requests are ``history[:j]`` for each assistant message ``j > 0``, then the whole
    ``history`` (the request being made). At each, in order, the candidate boundary masks
    all but the newest ``keep`` results seen so far and frees ``F > 0`` tokens over the
    current boundary; the rent ``read_multiplier * F`` is added to what the run since the
    last move has paid. The candidate becomes the boundary (and the paid rent restarts at 0)
    when the masked prompt, with ``fixed_tokens``, still holds ``min_cacheable_tokens`` and
    either the cache is cold (first request, or more than ``ttl_seconds`` since the previous
    request) or ``rent_factor * paid > (write_multiplier - read_multiplier) * S -
    read_multiplier * F``, ``S`` being the masked tokens from the last anchor (the message
    of the newest masked result, or the first message before any mask) to the end.
    Tokens: ``approx_tokens`` per message.

    Args:
        history: the messages of the request being made; never mutated.
        times: Unix seconds at which each message was appended, parallel to ``history``
            (``ViewContext.times``); None or not parallel: no expiry is ever seen.
        now: clock time (seconds) of the request being made; None: no expiry before it.
        keep: newest tool results always left verbatim (default 4, seed 000).
        rent_factor: how many times the paid rent must exceed the re-write (default 2.0).
        ttl_seconds: cache lifetime in seconds (default 300, the 5-minute TTL).
        min_cacheable_tokens: the model's minimum cacheable prompt, in tokens.
        fixed_tokens: tokens sent before the messages (system prompt, tools), counted
            toward the minimum only (default 0).
        exclude_tools: tool names whose results are never masked.
        write_multiplier: cache write price over the base input price (1.25 for 5 min).
        read_multiplier: cache read price over the base input price (the model's).

    Returns:
        An int in ``[0, number of tool results]`` that never decreases as the history grows
        (a masked result stays masked).

    Raises:
        ValueError: ``keep < 0``, ``rent_factor <= 0`` or ``ttl_seconds <= 0``.
    """
    if keep < 0:
        raise ValueError(f"keep must be >= 0, got {keep}")
    if rent_factor <= 0 or ttl_seconds <= 0:
        raise ValueError(f"rent_factor and ttl_seconds must be > 0, got {rent_factor}, "
                         f"{ttl_seconds}")
    timed = times is not None and len(times) == len(history)
    results = result_savings(history, tuple(exclude_tools))
    cum_tokens = [0]
    for m in history:
        cum_tokens.append(cum_tokens[-1] + approx_tokens(m))
    cum_saved = [0]
    for _, s in results:
        cum_saved.append(cum_saved[-1] + s)
    ends = [j for j in range(1, len(history)) if history[j].get("role") == "assistant"]
    ends.append(len(history))
    boundary = seen = 0
    paid = 0.0
    for r, end in enumerate(ends):
        cold = r == 0
        if r and timed:
            sent = now if end == len(history) else times[end]
            cold = sent is not None and sent - times[ends[r - 1]] > ttl_seconds
        while seen < len(results) and results[seen][0] < end:
            seen += 1
        candidate = seen - keep
        if candidate <= boundary:
            continue
        freed = cum_saved[candidate] - cum_saved[boundary]
        if freed <= 0:
            continue
        paid += read_multiplier * freed
        if fixed_tokens + cum_tokens[end] - cum_saved[candidate] < min_cacheable_tokens:
            continue  # the masked prompt would be too short to cache at all
        if not cold:
            first = results[boundary - 1][0] if boundary else 0
            first_masked = boundary  # masked results in or after the anchor's message
            while first_masked and results[first_masked - 1][0] >= first:
                first_masked -= 1
            suffix = (cum_tokens[end] - cum_tokens[first]
                      - (cum_saved[candidate] - cum_saved[first_masked]))
            extra = (write_multiplier - read_multiplier) * suffix - read_multiplier * freed
            if rent_factor * paid <= extra:
                continue
        boundary = candidate
        paid = 0.0
    return boundary


@dataclasses.dataclass(frozen=True)
class BreakEvenMasking:
    """View policy: mask all but the newest ``keep`` results when :func:`breakeven_boundary` moves.

    ``policy(history, ctx)`` returns ``mask_old_observations(history, keep=n - b)`` with
    ``b = breakeven_boundary(history, times=ctx.times, now=ctx.now, ...)`` and ``n`` the
    number of tool results (a copy of the history while ``b == 0``). Use it with resume
    breakpoints (``replay_with_cache(resume=True)``) so a move re-reads up to its anchor.
    :meth:`for_model` takes the read multiplier and minimum length from the price table.

    Args:
        keep: newest tool results always left verbatim (default 4).
        rent_factor: how many times the paid rent must exceed the re-write (default 2.0).
        ttl_seconds: cache lifetime in seconds (default 300).
        min_cacheable_tokens: the model's minimum cacheable prompt, in tokens (default 1024).
        fixed_tokens: tokens of the system prompt and tools, counted toward the minimum.
        exclude_tools: tool names whose results are never masked.
        write_multiplier: cache write price over the base input price (default 1.25).
        read_multiplier: cache read price over the base input price (default 0.1).

    Raises:
        ValueError: at construction, for ``keep < 0``, ``rent_factor <= 0`` or
            ``ttl_seconds <= 0``.
    """

    keep: int = KEEP_RECENT_OBSERVATIONS
    rent_factor: float = RENT_FACTOR
    ttl_seconds: float = TTL_SECONDS["5m"]
    min_cacheable_tokens: int = 1024
    fixed_tokens: int = 0
    exclude_tools: tuple[str, ...] = ()
    write_multiplier: float = CACHE_WRITE_5M_MULTIPLIER
    read_multiplier: float = CACHE_READ_MULTIPLIER

    def __post_init__(self) -> None:
        """Check the parameters and freeze ``exclude_tools`` as a tuple.

        Raises:
            ValueError: ``keep < 0``, ``rent_factor <= 0`` or ``ttl_seconds <= 0``.
        """
        if self.keep < 0 or self.rent_factor <= 0 or self.ttl_seconds <= 0:
            raise ValueError("keep >= 0, rent_factor > 0 and ttl_seconds > 0 required")
        object.__setattr__(self, "exclude_tools", tuple(self.exclude_tools))

    @classmethod
    def for_model(cls, model: str, *, system: str | list | None = None,
                  **options) -> "BreakEvenMasking":
        """Build the policy with ``model``'s cache read multiplier and minimum cacheable length.

        Args:
            model: a model id with a row in the price table.
            system: the system prompt sent with every request (a string or text blocks);
                its ``approx_tokens`` become ``fixed_tokens``. None: 0.
            **options: any other field of the policy (``keep``, ``rent_factor``...).

        Returns:
            A :class:`BreakEvenMasking` priced for ``model``.

        Raises:
            UnknownModelError: ``model`` has no price.
        """
        if system is not None:
            texts = [system] if isinstance(system, str) else [b.get("text", "") for b in system]
            options.setdefault("fixed_tokens", sum(approx_tokens(t) for t in texts))
        return cls(read_multiplier=model_price(model).cache_read_multiplier,
                   min_cacheable_tokens=model_min_cacheable_tokens(model), **options)

    def __call__(self, history: list[Message],
                 ctx: ViewContext | None = None) -> list[Message]:
        """Return the view of ``history`` for one request.

        Args:
            history: the messages of the request; never mutated.
            ctx: its times and clock (None: no times, so no expiry is seen).

        Returns:
            A new list: ``history`` with its oldest ``b`` tool results masked.
        """
        ctx = ctx or ViewContext()
        timed = len(ctx.times) == len(history)
        boundary = breakeven_boundary(
            history, times=ctx.times if timed else None, now=ctx.now if timed else None,
            keep=self.keep, rent_factor=self.rent_factor, ttl_seconds=self.ttl_seconds,
            min_cacheable_tokens=self.min_cacheable_tokens, fixed_tokens=self.fixed_tokens,
            exclude_tools=self.exclude_tools, write_multiplier=self.write_multiplier,
            read_multiplier=self.read_multiplier)
        if boundary == 0:
            return list(history)
        total = len(tool_result_positions(history))
        return mask_old_observations(history, keep=total - boundary,
                                     exclude_tools=self.exclude_tools)
