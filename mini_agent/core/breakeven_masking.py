"""Break-even masking: move the mask boundary once the reads it would have saved pay its re-write.

An online masking policy (it decides at each request from the history seen so far, never
from later requests), priced like the hindsight bound (:mod:`mini_agent.core.hindsight`) with
the model's own cache multipliers. At each request the candidate boundary masks all but the
newest ``keep`` tool results, freeing ``F`` tokens:

* **rent**: while those ``F`` tokens stay unmasked, the request reads them from the cache
  again, ``read * F`` (in base-price tokens);
* **buy**: moving the boundary while the cache is warm re-writes what the previous request
  cached after the last cache anchor (``O`` tokens before masking; the prefix before the
  anchor too when it is shorter than the model's minimum cacheable length, since it is not
  read then), costing ``(write - read) * O - write * F`` more than staying, once. The
  messages added since the previous request are written either way, so they are not part
  of the price. Before any mask the anchor is the end of the first message (the task)
  while the resume breakpoints can re-read it (within the TTL of the second request, its
  last read, and :data:`RESUME_MEMORY_REQUESTS` after it), else the start;
* **the rule** (ski rental with a prediction, Purohit, Svitkina and Kumar 2018): the
  session is predicted to last as many requests again as it has so far (the median under
  a scale-free prior). When the rent over that many requests would pay the price, move
  once the rent paid since the last move exceeds ``trust`` (0.6) times the price, else
  once it exceeds the price over ``trust`` (never binding here: the rent paid since the
  last move is at most the predicted). ``trust=1`` is the classic break-even rule, at
  most twice the best choice with hindsight for a fixed price (Karlin et al. 1988); the
  price grows with the session here, so no such bound is kept;
* **free moves**: at the first request, after a pause longer than the cache TTL, or while
  the previous prompt was too short to be cached, nothing cached is lost: the policy moves;
* **minimum length**: a cacheable prompt is never masked below the model's minimum.

``trust`` was chosen on kit-generated sessions (``benchmarks/breakeven_tuning.py``: 240
sessions, 6-160 exchanges, four models, ten shapes; its doc has the table): 0.6 leaves 8
sessions more than 10% above the bound (worst 1.22x, mean 1.021x), the classic rule 10
(1.24x, 1.022x). The bound's own schedule replayed with the kit's breakpoints costs at most
1.043x the bound there: the gap is the rule's timing, worst where text outside the results
dominates (a move's price grows as fast as its rent). The shared real sessions are its
test (``benchmarks/policies.py``).

Incremental: :class:`BreakEvenMasking` keeps the scan of the history it last saw
(:mod:`mini_agent.core.breakeven_scan`) and its view, and extends them when the next history
continues it (the same message objects, the
same times); a history that does not continue it is scanned afresh, so the same history
(with the same times) always gives the same view. Pure: no IO, inputs never mutated.
Replayed by ``mini-agent evaluate`` as ``breakeven`` (:mod:`mini_agent.core.replay`).
Source: Anthropic prompt caching and pricing docs (write 1.25x, read 0.1x or the model's
multiplier, 5-minute TTL, minimum cacheable length); seed 000 (masking breaks the cache);
Karlin, Manasse, Rudolph and Sleator, "Competitive snoopy caching" (1988); Purohit,
Svitkina and Kumar, "Improving online algorithms via ML predictions" (NeurIPS 2018); the
kit's evaluation chapter (the hindsight bound).
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from mini_agent.core.breakeven_scan import (RESUME_MEMORY_REQUESTS, _prices,  # noqa: F401
                                            _Scan, _scan_times)
from mini_agent.core.cache import TTL_SECONDS
from mini_agent.core.masking import KEEP_RECENT_OBSERVATIONS, mask_old_observations
from mini_agent.core.messages import Message
from mini_agent.core.scan_handle import ScanHandle
from mini_agent.core.pricing import CACHE_READ_MULTIPLIER, CACHE_WRITE_5M_MULTIPLIER, model_price
from mini_agent.core.prompt_cache import min_cacheable_tokens as model_min_cacheable_tokens
from mini_agent.core.tokens import approx_tokens
from mini_agent.core.view import ViewContext

RENT_FACTOR = 1.0
"""Move when this many times the rent paid since the last move exceeds the move's re-write."""

TRUST = 0.6
"""Buy at this share of the price when the predicted rent pays it, else at the price over it."""


def breakeven_boundary(history: list[Message], *, times: Sequence[float] | None = None,
                       now: float | None = None, keep: int = KEEP_RECENT_OBSERVATIONS,
                       rent_factor: float = RENT_FACTOR,
                       ttl_seconds: float = TTL_SECONDS["5m"],
                       min_cacheable_tokens: int = 1024, fixed_tokens: int = 0,
                       exclude_tools: tuple[str, ...] = (),
                       write_multiplier: float = CACHE_WRITE_5M_MULTIPLIER,
                       read_multiplier: float = CACHE_READ_MULTIPLIER,
                       trust: float = TRUST) -> int:
    """Return how many of the oldest tool results :class:`BreakEvenMasking` masks for ``history``.

    The requests are ``history[:j]`` for each assistant message ``j > 0``, then the whole
    ``history`` (the request being made), decided in order. At each, the candidate boundary
    masks all but the newest ``keep`` results seen so far (fewer once the unmasked prompt,
    with ``fixed_tokens``, reaches ``min_cacheable_tokens``: the masked one must too) and
    frees ``F > 0`` tokens over the current boundary; the rent ``read_multiplier * F`` is
    added to what the run since the last move has paid. The candidate becomes the boundary
    (and the paid rent restarts at 0) when the cache holds nothing to lose (first request,
    more than ``ttl_seconds`` since the previous request, or a previous prompt shorter than
    ``min_cacheable_tokens``) or when ``rent_factor * paid`` exceeds ``trust`` (or 1 over
    it, see the module doc) times ``(write_multiplier - read_multiplier) * O -
    write_multiplier * F``, ``O`` being the tokens the previous request sent from the last
    anchor (see the module doc) to its end, plus the prefix before the anchor when shorter
    than ``min_cacheable_tokens``. Tokens: ``approx_tokens`` per message. One pass.

    Args:
        history: the messages of the request being made; never mutated.
        times: Unix seconds at which each message was appended, parallel to ``history``
            (``ViewContext.times``); None or not parallel: no expiry is ever seen.
        now: clock time (seconds) of the request being made; None: no expiry before it.
        keep: newest tool results always left verbatim (default 4, seed 000).
        rent_factor: what the paid rent is multiplied by before the comparison (default 1).
        ttl_seconds: cache lifetime in seconds (default 300, the 5-minute TTL).
        min_cacheable_tokens: the model's minimum cacheable prompt, in tokens (default 1024).
        fixed_tokens: tokens sent before the messages (system prompt, tools), counted
            toward the minimum only (default 0).
        exclude_tools: tool names whose results are never masked.
        write_multiplier: cache write price over the base input price (1.25 for 5 min).
        read_multiplier: cache read price over the base input price (the model's; 0.1).
        trust: in ``(0, 1]``, how far the predicted rent moves the price (default 0.6).

    Returns:
        An int in ``[0, number of tool results]`` that never decreases as the history grows
        (a masked result stays masked).

    Raises:
        ValueError: ``keep < 0``, ``rent_factor <= 0``, ``ttl_seconds <= 0`` or ``trust``
            outside ``(0, 1]``.
    """
    prices = _prices(keep, rent_factor, ttl_seconds, min_cacheable_tokens, fixed_tokens,
                     exclude_tools, write_multiplier, read_multiplier, trust)
    times, now = _scan_times(history, times, now)
    scan = _Scan(prices, timed=times is not None)
    scan.advance(history, times)
    return scan.decide(len(history), now)[0]


@dataclasses.dataclass(frozen=True)
class BreakEvenMasking:
    """View policy: mask all but the newest ``keep`` results when :func:`breakeven_boundary` moves.

    ``policy(history, ctx)`` returns ``mask_old_observations(history, keep=n - b)`` with
    ``b = breakeven_boundary(history, times=ctx.times, now=ctx.now, ...)`` and ``n`` the
    number of tool results (a copy of the history while ``b == 0``). Use it with resume
    breakpoints (``replay_with_cache(resume=True)``) so a move re-reads up to its anchor.
    :meth:`for_model` takes the read multiplier and minimum length from the price table.
    It keeps the scan of the last history and its view (not part of its equality) and
    extends both when the next history continues it, so a replay is one pass.

    Args:
        keep: newest tool results always left verbatim (default 4).
        rent_factor: what the paid rent is multiplied by before the comparison (default 1).
        ttl_seconds: cache lifetime in seconds (default 300).
        min_cacheable_tokens: the model's minimum cacheable prompt, in tokens (default 1024).
        fixed_tokens: tokens of the system prompt and tools, counted toward the minimum.
        exclude_tools: tool names whose results are never masked.
        write_multiplier: cache write price over the base input price (default 1.25).
        read_multiplier: cache read price over the base input price (default 0.1).
        trust: in ``(0, 1]``, how far the predicted rent moves the price (default 0.6).

    Raises:
        ValueError: at construction, for ``keep < 0``, ``rent_factor <= 0``,
            ``ttl_seconds <= 0`` or ``trust`` outside ``(0, 1]``.
    """

    keep: int = KEEP_RECENT_OBSERVATIONS
    rent_factor: float = RENT_FACTOR
    ttl_seconds: float = TTL_SECONDS["5m"]
    min_cacheable_tokens: int = 1024
    fixed_tokens: int = 0
    exclude_tools: tuple[str, ...] = ()
    write_multiplier: float = CACHE_WRITE_5M_MULTIPLIER
    read_multiplier: float = CACHE_READ_MULTIPLIER
    trust: float = TRUST
    _scan: list = dataclasses.field(default_factory=list, init=False, repr=False,
                                    compare=False, hash=False)
    _shared: ScanHandle = dataclasses.field(default_factory=ScanHandle, init=False,
                                            repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        """Check the parameters and freeze ``exclude_tools`` as a tuple.

        Raises:
            ValueError: ``keep < 0``, ``rent_factor <= 0``, ``ttl_seconds <= 0`` or
                ``trust`` outside ``(0, 1]``.
        """
        _prices(self.keep, self.rent_factor, self.ttl_seconds, 0, 0, (), 0, 0, self.trust)
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

    def boundary(self, history: list[Message], ctx: ViewContext | None = None) -> int:
        """Return how many of the oldest tool results the view of ``history`` masks.

        Args:
            history: the messages of the request; never mutated.
            ctx: its times and clock (None, or times not parallel: no expiry is seen).

        Returns:
            :func:`breakeven_boundary` of ``history`` with this policy's parameters.
        """
        ctx = ctx or ViewContext()
        times, now = ctx.times, ctx.now   # _scan_times, inlined
        if times is None or len(times) != len(history):
            times = now = None
        # the session's scan, when another policy started one (checked once, for both uses)
        if self.exclude_tools:
            shared = None
        else:
            shared = self._shared.get(history, create=False)
        scan = self._scan[0] if self._scan else None
        if scan is None or not scan.continues(history, times, shared):
            scan = _Scan(_prices(self.keep, self.rent_factor, self.ttl_seconds,
                                 self.min_cacheable_tokens, self.fixed_tokens,
                                 self.exclude_tools, self.write_multiplier,
                                 self.read_multiplier, self.trust), timed=times is not None)
            self._scan[:] = [scan]
        scan.advance(history, times, shared)
        return scan.decision(len(history), now)[0]

    def __call__(self, history: list[Message],
                 ctx: ViewContext | None = None) -> list[Message]:
        """Return the view of ``history`` for one request.

        Args:
            history: the messages of the request; never mutated.
            ctx: its times and clock (None: no times, so no expiry is seen).

        Returns:
            A new list: ``history`` with its oldest ``b`` tool results masked (read-only:
            views at one boundary share their masked messages).
        """
        boundary = self.boundary(history, ctx)
        if boundary == 0:
            return list(history)
        state = self._scan   # [scan] or [scan, (n, boundary, view of history[:n])]
        if len(state) == 2 and state[1][1] == boundary:
            # the scan continued (a fresh one drops the old view), so history[:n] holds the
            # same objects, and no move since: every masked result lies in history[:n]
            n, _, view = state[1]
            return view + history[n:]
        view = mask_old_observations(history, keep=len(state[0].results) - boundary,
                                     exclude_tools=self.exclude_tools)
        state[1:] = [(len(history), boundary, view)]
        return list(view)
