"""Cache-aware masking: move the mask boundary only when the tokens it frees pay for the cache.

With prompt caching on, a request costs about 0.1x for the prefix it reads from the cache
and 1.25x for what it writes. Masking an old tool result changes the prefix from that
result on, so everything after it is written again (1.25x instead of 0.1x) once; from then
on every request reads fewer tokens (saving 0.1x of the freed tokens each time).
:class:`PaybackMasking` replays that trade-off over the history it is given and moves the
boundary (masks all but the newest ``keep`` results) only at requests where the expected
saving over a horizon beats the one-off re-write.

The plain policies (:class:`~mini_agent.core.masking.ThresholdMasking`,
:class:`~mini_agent.core.masking.ChunkedMasking`) live in :mod:`mini_agent.core.masking`; naive per-turn
masking is ``ThresholdMasking(threshold_tokens=0)``. Pure: no IO, inputs never mutated; the
boundary is a function of the history (in a token memo a growing history resumes the replay
where the previous request stopped: the same view). Taught in ``notebooks/05_prompt_caching.ipynb``.
Source: seed 000 (masking breaks the cache; mask only when big or in fixed chunks), seed
004 and the context editing docs (``clear_at_least``: clear enough to make the
invalidation worthwhile), Anthropic pricing (read 2026-11-29: write 1.25x, read 0.1x).
"""

from __future__ import annotations

import dataclasses
from itertools import accumulate
from typing import Sequence

from mini_agent.core.history_scan import HistoryScan, scan_for
from mini_agent.core.masking import KEEP_RECENT_OBSERVATIONS, mask_old_observations, placeholder
from mini_agent.core.messages import Message, tool_names_by_id, tool_result_positions, tool_result_text
from mini_agent.core.payback_steps import _PaybackSteps, scan_boundary
from mini_agent.core.pricing import CACHE_READ_MULTIPLIER, CACHE_WRITE_5M_MULTIPLIER
from mini_agent.core.scan_handle import ScanHandle
from mini_agent.core.tokens import approx_tokens
from mini_agent.core.view import ViewContext, check_times


def result_savings(history: list[Message], exclude_tools: tuple[str, ...]
                   ) -> list[tuple[int, int]]:
    """Count what masking each tool result would save, for the masking policies' decisions.

    Args:
        history: the full history (never mutated).
        exclude_tools: tools whose results are never masked (they save 0).

    Returns:
        ``(message_index, tokens_saved_if_masked)`` per tool_result, oldest first; approx
        tokens of the result minus its placeholder's, at least 0.
    """
    scan = None if exclude_tools else scan_for(history)
    if scan is not None:  # inside a token memo: the rows the session's scan counted once
        return scan.rows[:scan.results_upto[len(history)]]
    names = tool_names_by_id(history) if exclude_tools else {}
    out = []
    for i, j in tool_result_positions(history):
        block = history[i]["content"][j]
        saved = approx_tokens(block) - approx_tokens(placeholder(tool_result_text(block)))
        if names.get(block.get("tool_use_id")) in exclude_tools:
            saved = 0
        out.append((i, max(0, saved)))
    return out


def payback_boundary(history: list[Message], *, keep: int = KEEP_RECENT_OBSERVATIONS,
                     horizon_ratio: float = 0.5, min_free_tokens: int = 2_000,
                     exclude_tools: tuple[str, ...] = (), min_cacheable_tokens: int = 1024,
                     min_free_ratio: float = 2.0,
                     write_multiplier: float = CACHE_WRITE_5M_MULTIPLIER,
                     read_multiplier: float = CACHE_READ_MULTIPLIER) -> int:
    """Return how many of the oldest tool results :class:`PaybackMasking` masks for ``history``.

    Replay, at every past request (each user message ends one): the candidate boundary masks
    all but the newest ``keep`` results; it frees ``F`` tokens; the view after the last stable
    cache anchor (the message of the newest already-masked result, where
    ``place_breakpoints(anchors=True)`` puts a breakpoint, or the first message before any
    mask) to the end (``S`` tokens, after masking) must be re-written. Move when
    ``read_multiplier * F * h > (write_multiplier - read_multiplier) * S - read_multiplier * F``
    and ``F >= min_free_tokens`` and ``F >= min_free_ratio * S`` (free a lot at once, the
    API's ``clear_at_least`` idea) and the masked view still holds at least
    ``min_cacheable_tokens`` (below the model's minimum nothing is cached), with horizon
    ``h = horizon_ratio * requests so far`` (the session is expected to last half as long
    again). Defaults (0.5 and 2.0) are the most conservative pair tried in
    ``benchmarks/cache_policies.py``: the only one that never lost to caching alone on the
    shared trajectories. Tokens: ``approx_tokens`` per message.

    Args:
        history: the messages of the request being made; never mutated.
        keep: newest tool results always left verbatim (default 4, seed 000).
        horizon_ratio: later requests expected per request so far (default 0.5).
        min_free_tokens: smallest saving worth a move, in tokens (default 2,000).
        exclude_tools: tool names whose results are never masked.
        min_cacheable_tokens: the model's minimum cacheable prompt, in tokens (default 1024).
        min_free_ratio: a move must free at least this many times the tokens it re-writes
            (default 2.0).
        write_multiplier: cache write price over the base input price (default 1.25).
        read_multiplier: cache read price over the base input price (default 0.1, whatever
            the model; :class:`~mini_agent.core.breakeven_masking.BreakEvenMasking` takes the
            model's).

    Returns:
        An int in ``[0, number of tool results]``; it never decreases as the history grows
        (a masked result stays masked).

    Raises:
        ValueError: ``keep < 0`` or ``horizon_ratio <= 0``.
    """
    if keep < 0:
        raise ValueError(f"keep must be >= 0, got {keep}")
    if horizon_ratio <= 0:
        raise ValueError(f"horizon_ratio must be > 0, got {horizon_ratio}")
    exclude_tools = tuple(exclude_tools)
    params = (keep, horizon_ratio, min_free_tokens, min_cacheable_tokens, min_free_ratio,
              write_multiplier, read_multiplier)
    scan = None if exclude_tools else scan_for(history)
    if scan is None:  # no memo, or exclusions: scan this history alone
        scan = HistoryScan()
        scan.extend(history)
        saved = scan.cum_saved if not exclude_tools else list(accumulate(
            (s for _, s in result_savings(history, exclude_tools)), initial=0))
        return _PaybackSteps(scan, saved, params).boundary(len(history))
    # inside a token memo: resume the session's replay where the last request stopped
    return scan_boundary(scan, len(history), params)


@dataclasses.dataclass(frozen=True)
class PaybackMasking:
    """View policy: mask all but the newest ``keep`` results, but only when it pays off.

    ``policy(history, ctx) -> view`` = ``mask_old_observations(history, keep=n - b)`` with
    ``b = payback_boundary(history, ...)`` and n the number of tool results. The boundary
    jumps rarely and by a lot, so the cached prefix stays stable in between (seed 000's
    chunked boundary, with the chunk size chosen by the prices instead of a constant).
    Args: see :func:`payback_boundary`. Raises ValueError at construction for bad values.
    """

    keep: int = KEEP_RECENT_OBSERVATIONS
    horizon_ratio: float = 0.5
    min_free_tokens: int = 2_000
    exclude_tools: tuple[str, ...] = ()
    min_cacheable_tokens: int = 1024
    min_free_ratio: float = 2.0
    _scans: ScanHandle = dataclasses.field(default_factory=ScanHandle, init=False,
                                           repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.keep < 0 or self.horizon_ratio <= 0 or self.min_free_tokens < 0:
            raise ValueError("keep >= 0, horizon_ratio > 0 and min_free_tokens >= 0 required")
        object.__setattr__(self, "exclude_tools", tuple(self.exclude_tools))

    def __call__(self, history: list[Message],
                 ctx: ViewContext | None = None) -> list[Message]:
        scan = None if self.exclude_tools else self._scans.get(history)
        if scan is not None:  # inside a token memo: payback_boundary's and the mask's fast
            # paths on the scan this policy holds (masked_view(history, 0) copies history)
            return scan.masked_view(history, scan_boundary(scan, len(history), (
                self.keep, self.horizon_ratio, self.min_free_tokens, self.min_cacheable_tokens,
                self.min_free_ratio, CACHE_WRITE_5M_MULTIPLIER, CACHE_READ_MULTIPLIER)))
        boundary = payback_boundary(history, keep=self.keep, horizon_ratio=self.horizon_ratio,
                                    min_free_tokens=self.min_free_tokens,
                                    exclude_tools=self.exclude_tools,
                                    min_cacheable_tokens=self.min_cacheable_tokens,
                                    min_free_ratio=self.min_free_ratio)
        if boundary == 0:
            return list(history)
        total = len(tool_result_positions(history))
        return mask_old_observations(history, keep=total - boundary,
                                     exclude_tools=self.exclude_tools)


# --------------------------------------------------------------------------- breakpoints with memory

class ResumeBreakpoints:
    """A ``prepare_request`` callable: the kit's :func:`~mini_agent.core.cache.place_breakpoints`
    (``canonical=True, anchors=True``) plus a "resume" breakpoint at the longest prefix an earlier request of this session marked.

    When a mask boundary jumps, the block right before the first changed block is usually
    more than 20 blocks before every new breakpoint, so the API's lookback would miss the
    old entry and the request would re-write everything after the system prompt. This
    object remembers the prefix hashes of the breakpoints it placed (the same byte prefix
    identity the cache uses, :func:`~mini_agent.core.prompt_cache.prefix_boundaries`) and,
    when the longest remembered prefix still present is not within the lookback of another
    breakpoint, marks it. Over budget, markers are dropped in this order: the previous
    turn's, the tools', the system's (the last message, the mask anchor and the resume point
    are kept). Still at most 4 markers; never on an empty text or thinking block.
    Args: ttl, static_ttl: as place_breakpoints; memory_requests: how many recent
    requests' breakpoints are remembered (older entries have likely expired).
    State: one session's marked prefixes (use one object per session).
    """

    def __init__(self, *, ttl: str = "5m", static_ttl: str | None = None,
                 memory_requests: int = 32) -> None:
        self.ttl = ttl
        self.static_ttl = static_ttl
        self.memory_requests = memory_requests
        self._marked: dict[str, int] = {}
        self._count = 0
        self.resumed_at: list[str | None] = []

    def __call__(self, request_kwargs: dict) -> dict:
        from mini_agent.core.cache import MAX_CACHE_CONTROL_MARKERS, cache_control, place_breakpoints
        from mini_agent.core.wire_rules import shorten_later_ttls
        from mini_agent.core.prompt_cache import LOOKBACK_POSITIONS, prefix_boundaries

        self._count += 1
        out = place_breakpoints(request_kwargs, ttl=self.ttl, static_ttl=self.static_ttl,
                                canonical=True, anchors=True)
        bounds = prefix_boundaries(out)
        marked = [i for i, b in enumerate(bounds) if b.ttl is not None]
        recent = {h for h, n in self._marked.items() if self._count - n <= self.memory_requests}
        resume = max((i for i, b in enumerate(bounds) if b.prefix_hash in recent), default=None)
        resumed = None
        if resume is not None and not any(
                0 <= bounds[bp].position - bounds[resume].position < LOOKBACK_POSITIONS
                for bp in marked if bp >= resume):
            _set_marker(out, bounds[resume].path, cache_control(self.ttl))
            resumed = bounds[resume].where
            last = len(out["messages"]) - 1
            drop_order = [p for p in (_marker_paths(out)) if p[0] == "messages"
                          and p[1] == last - 2 and p != bounds[resume].path]
            drop_order += [p for p in _marker_paths(out) if p[0] == "tools"]
            drop_order += [p for p in _marker_paths(out) if p[0] == "system"]
            while len(_marker_paths(out)) > MAX_CACHE_CONTROL_MARKERS and drop_order:
                _set_marker(out, drop_order.pop(0), None)
        shorten_later_ttls([out.get("tools") or [], out.get("system") or [],
                            out["messages"]])
        self.resumed_at.append(resumed)
        for b in prefix_boundaries(out):
            if b.ttl is not None:
                self._marked[b.prefix_hash] = self._count
        return out


def _marker_paths(request: dict) -> list[tuple]:
    paths = [("tools", i) for i, t in enumerate(request.get("tools") or [])
             if t.get("cache_control")]
    system = request.get("system")
    if isinstance(system, list):
        paths += [("system", i) for i, b in enumerate(system) if b.get("cache_control")]
    for i, m in enumerate(request.get("messages") or []):
        if isinstance(m.get("content"), list):
            paths += [("messages", i, j) for j, b in enumerate(m["content"])
                      if b.get("cache_control")]
    return paths


def _set_marker(request: dict, path: tuple, marker: dict | None) -> None:
    """Set (or with None remove) ``cache_control`` on the block at ``path``, in place."""
    if path[0] == "tools":
        block = request["tools"][path[1]]
    elif path[0] == "system":
        block = request["system"][path[1]]
    else:
        message = request["messages"][path[1]]
        if isinstance(message["content"], str):
            message["content"] = [{"type": "text", "text": message["content"]}]
        block = message["content"][path[2]]
    if marker is None:
        block.pop("cache_control", None)
    else:
        block["cache_control"] = marker


# --------------------------------------------------------------------------- replay

def request_points(messages: list[Message]) -> list[int]:
    """Return the history length of each request a recorded conversation made.

    Each assistant message answers the request made of everything before it, so ``i`` is a
    point when ``messages[i]`` is an assistant message (``i > 0``). Example: user,
    assistant, user, assistant -> ``[1, 3]``.

    Args:
        messages: the recorded conversation, oldest first.

    Returns:
        The ascending indices ``i`` such that ``messages[:i]`` was one request.
    """
    return [i for i, m in enumerate(messages) if m.get("role") == "assistant" and i > 0]


def replay_with_cache(messages: list[Message], *, model: str, policy=None,
                      caching: bool = True, server_edit: dict | None = None,
                      system: str | list | None = None, tools: list[dict] | None = None,
                      gap_seconds: float = 20.0, ttl: str = "5m",
                      simulator=None, resume: bool = False, detector=None,
                      times: Sequence[float] | None = None,
                      keep_views: bool = False) -> list[dict]:
    """Replay a recorded history request by request and return one record per request.

    Each request sends ``policy(messages[:i], ctx)`` (or the full prefix when policy is None);
    with ``caching`` it goes through :func:`~mini_agent.core.cache.place_breakpoints`
    (``canonical=True, anchors=True``); with ``resume`` it goes through a
    :class:`ResumeBreakpoints` instead; with ``server_edit`` the offline server-side edit is
    applied to it; then the prompt-cache simulator fills ``usage``. Requests are
    ``gap_seconds`` apart on the simulator's clock (0, gap, 2*gap...); with ``times``
    request ``messages[:i]`` is sent at ``times[i]`` instead (the clock starts at 0 on the
    first request, so a long pause expires the cache) and the policy's ``ViewContext``
    carries those times.

    Args:
        messages: the recorded history; never mutated.
        model: model id for prices and the minimum cacheable length.
        policy: view policy ``(history, ctx) -> view``; None sends the whole history.
        caching: place cache breakpoints (default True).
        server_edit: a ``clear_tool_uses_20250919`` edit dict applied offline, or None.
        system: the system prompt sent with every request.
        tools: the tool definitions sent with every request.
        gap_seconds: seconds between requests when ``times`` is None (default 20).
        ttl: cache lifetime of the breakpoints, ``"5m"`` or ``"1h"``.
        simulator: a :class:`~mini_agent.core.prompt_cache.PromptCacheSimulator` (default:
            a new one).
        resume: use :class:`ResumeBreakpoints` (re-read up to a moved mask's anchor).
        detector: a :class:`~mini_agent.core.cache_breaks.CacheBreakDetector` that sees every
            request (as sent, after any edit) and usage; its report lands in ``"break"``.
        times: Unix seconds per message (``Transcript.times``), or None.
        keep_views: also return each request's messages as sent.

    Returns:
        ``[{"request", "raw_tokens", "view_tokens", "usage", "cost_usd", "hit_rate",
        "applied_edits", "break"}]`` (input cost only: outputs are the same under every
        policy), plus ``"view"`` (the messages as sent) when ``keep_views``.

    Raises:
        ValueError: ``times`` is not parallel to ``messages``.
    """
    from mini_agent.core.cache import place_breakpoints
    from mini_agent.core.pricing import cache_hit_rate, cost_usd
    from mini_agent.core.prompt_cache import PromptCacheSimulator
    from mini_agent.core.context_edits import apply_clear_tool_uses

    sim = simulator or PromptCacheSimulator()
    planner = ResumeBreakpoints(ttl=ttl) if resume else None
    if times is not None:
        check_times(messages, times)
    points = request_points(messages)
    records = []
    for n, i in enumerate(points):
        history = messages[:i]
        if times is not None:
            now = times[i] - times[points[0]]
            ctx = ViewContext(times=tuple(times[:i]), now=times[i], turn=n + 1)
        else:
            now, ctx = n * gap_seconds, ViewContext(turn=n + 1)
        view = policy(history, ctx) if policy else list(history)
        request: dict = {"model": model, "max_tokens": 1024, "messages": view}
        if system:
            request["system"] = system
        if tools:
            request["tools"] = tools
        if caching:
            request = planner(request) if planner else place_breakpoints(
                request, ttl=ttl, canonical=True, anchors=True)
        applied = None
        if server_edit is not None:
            request, applied = apply_clear_tool_uses(request, server_edit)
        usage = sim.usage(request, now=now)
        found = None
        if detector is not None:
            detector.record(request, now=now)
            found = detector.check_response(usage)
        records.append({"break": found, "request": n + 1, "raw_tokens": approx_tokens(history),
                        "view_tokens": approx_tokens(request["messages"]), "usage": usage,
                        "cost_usd": cost_usd(usage, model, include_output=False),
                        "hit_rate": cache_hit_rate(usage), "applied_edits": applied})
        if keep_views:
            records[-1]["view"] = request["messages"]
    return records
