"""A prompt-cache simulator that fills ``usage`` the way Anthropic's API documents it.

Plug it into the offline Claude as its usage model
(``offline_client(brain, usage_model=PromptCacheSimulator(), clock=clock)``) or call
:meth:`PromptCacheSimulator.usage` directly when replaying requests (benchmarks). It does not
answer requests, price them (``mini_agent.core.pricing.cost_usd`` does) or model latency.
Taught in ``notebooks/05_prompt_caching.ipynb``.

Rules, each from the prompt caching docs
(https://platform.claude.com/docs/en/build-with-claude/prompt-caching, read 2026-12-01)
unless marked ASSUMPTION:
  1. The prefix is tools, then system, then messages, in that order; a change anywhere
     changes every prefix that contains it ("a change at one level invalidates that level and
     everything after it"): tools changed -> nothing is read; system changed -> only a tools
     entry can be read. ``tool_choice`` and ``thinking`` settings sit between system and
     messages, so changing them invalidates the messages cache only.
  2. Bytes matter: a block is identified by its JSON as sent (keys in the order they were
     written), so a different key order or tool order is a different prefix (seed 004).
     ``cache_control`` itself is not part of the identity.
  3. Writes happen only at ``cache_control`` breakpoints (and, when the request has a
     top-level ``cache_control``, at the last cacheable block: automatic caching, placed by
     :func:`mini_agent.core.request_rules.place_automatic_cache_control`), for a prefix of at
     least the model's minimum cacheable length (``min_cacheable_tokens`` in
     :data:`mini_agent.core.models.MODELS`); shorter prefixes are "not cached, even if
     marked", and their tokens stay in ``input_tokens``.
  4. Reads: for each breakpoint the system checks the block boundaries in a window of
     :data:`LOOKBACK_POSITIONS` positions *counting the breakpoint itself* (the breakpoint
     and the 19 positions before it) and uses the longest prefix found that an earlier
     request wrote. A run of consecutive ``tool_use`` blocks, or of ``tool_result`` blocks,
     in one message counts as one position, so a wide parallel turn costs 2 positions.
     ASSUMPTION: every block boundary inside such a run can still be read (the docs count
     positions; they do not say a run hides its inner boundaries).
  5. TTL: an entry lives 5 minutes ("5m", default) or 1 hour (``"ttl": "1h"``) after it
     was written or last read; each hit refreshes it. ASSUMPTION: a hit also refreshes
     this request's other breakpoints that lie inside the read prefix.
  6. Usage: ``cache_read_input_tokens`` = the read prefix; ``cache_creation_input_tokens`` =
     tokens from the end of the read prefix to the last breakpoint written, split by the TTL
     of the breakpoint that closes each span into ``cache_creation.ephemeral_5m_input_tokens``
     / ``ephemeral_1h_input_tokens``; ``input_tokens`` = the rest (after the last cached
     breakpoint): the three add up to the request's total input.
  Tokens: ``mini_agent.core.tokens`` estimates per block (chars/4, rounded up per block; tools by
  the length of their JSON), so totals can exceed ``approx_request_tokens`` by less than one
  token per block. ASSUMPTION: no hidden tool-use system prompt tokens are added.

Source: Anthropic prompt caching docs (rules 1-6 above, read 2026-12-01); seed 004 (key order
and tool order change the bytes).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from typing import Any, Mapping

from mini_agent.core.cache import TTL_SECONDS, strip_cache_control
from mini_agent.core.models import UnknownModelError, model_spec
from mini_agent.core.request_rules import place_automatic_cache_control
from mini_agent.core.tokens import CHARS_PER_TOKEN, approx_tokens

DEFAULT_MIN_CACHEABLE_TOKENS = 1024
"""Used for a model id the table does not know (the most common documented value)."""

LOOKBACK_POSITIONS = 20
"""Positions checked per breakpoint, the breakpoint itself included: an entry 19 positions
before the breakpoint is found, one 20 positions before is not (prompt caching docs)."""

LOOKBACK_BLOCKS = LOOKBACK_POSITIONS
"""Former name of :data:`LOOKBACK_POSITIONS`."""

RUN_TYPES = frozenset({"tool_use", "tool_result"})
"""Block types whose consecutive runs in one message count as one lookback position."""


def min_cacheable_tokens(model: str | None) -> int:
    """Return the minimum cacheable prefix of a model, in tokens.

    Args:
        model: a model id (snapshot dates allowed); None or unknown: the default.

    Returns:
        Its ``min_cacheable_tokens`` row in :data:`mini_agent.core.models.MODELS`, else
        :data:`DEFAULT_MIN_CACHEABLE_TOKENS`.

    >>> min_cacheable_tokens("claude-opus-4-7"), min_cacheable_tokens("claude-opus-5")
    (2048, 512)
    """
    try:
        return model_spec(model or "").min_cacheable_tokens
    except UnknownModelError:
        return DEFAULT_MIN_CACHEABLE_TOKENS


@dataclasses.dataclass(frozen=True)
class PrefixBoundary:
    """The end of one block of the flattened prompt.

    Attributes: where: ``"tools[2]"``, ``"system[0]"``, ``"messages[4].content[1]"``;
    prefix_hash: SHA-256 of everything up to and including this block; prefix_tokens:
    tokens up to and including it; ttl: the block's ``cache_control`` TTL ("5m" / "1h") or
    None when it is not a breakpoint; path: ``("tools", i)``, ``("system", i)`` or
    ``("messages", i, j)`` (j is 0 for string content); position: the lookback position
    (consecutive tool_use or tool_result blocks of one message share one).
    """

    where: str
    prefix_hash: str
    prefix_tokens: int
    ttl: str | None
    path: tuple = ()
    position: int = 0


def _ttl_of(marker: Any) -> str | None:
    if not marker:
        return None
    return marker.get("ttl", "5m") if isinstance(marker, Mapping) else "5m"


def _identity(block: Any) -> str:
    return json.dumps(strip_cache_control(block), ensure_ascii=False, separators=(",", ":"))


def prefix_boundaries(request: Mapping[str, Any]) -> list[PrefixBoundary]:
    """Flatten a ``/v1/messages`` body into block boundaries, in cache order.

    Order: each tool definition, each system block (a string system is one block), then each
    content block of each message (string content is one text block). The hash chain starts
    from the model id (caches are per model) and takes in ``tool_choice`` and ``thinking``
    between system and messages. A top-level ``cache_control`` (automatic caching) marks the
    last cacheable block.

    Args:
        request: the body as sent (``model``, ``tools``, ``system``, ``messages``...); never
            mutated.

    Returns:
        One :class:`PrefixBoundary` per block, oldest first; empty for a request with no
        blocks.
    """
    request = place_automatic_cache_control(request)
    chain = hashlib.sha256(str(request.get("model", "")).encode())
    out: list[PrefixBoundary] = []
    tokens = 0
    position = -1
    run: tuple | None = None   # (message index, block type) of the run being counted

    def add(where: str, identity: str, block_tokens: int, marker: Any, path: tuple,
            run_key: tuple | None = None) -> None:
        nonlocal tokens, position, run
        chain.update(len(identity).to_bytes(8, "big") + identity.encode())
        tokens += block_tokens
        if run_key is None or run_key != run:
            position += 1
        run = run_key
        out.append(PrefixBoundary(where, chain.copy().hexdigest(), tokens, _ttl_of(marker),
                                  path, position))

    for i, tool in enumerate(request.get("tools") or []):
        ident = "tool:" + _identity(tool)
        add(f"tools[{i}]", ident, math.ceil((len(ident) - 5) / CHARS_PER_TOKEN),
            tool.get("cache_control"), ("tools", i))
    system = request.get("system")
    if isinstance(system, str) and system:
        system = [{"type": "text", "text": system}]
    for i, block in enumerate(system or []):
        add(f"system[{i}]", "system:" + _identity(block), approx_tokens(block),
            block.get("cache_control"), ("system", i))
    settings = {k: request[k] for k in ("tool_choice", "thinking") if k in request}
    chain.update(("settings:" + json.dumps(settings, sort_keys=True)).encode())
    for i, message in enumerate(request.get("messages") or []):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for j, block in enumerate(blocks or []):
            ident = f"{message.get('role')}:{int(j == 0)}:" + _identity(block)
            kind = block.get("type") if isinstance(block, Mapping) else None
            add(f"messages[{i}].content[{j}]", ident, approx_tokens(block),
                block.get("cache_control") if isinstance(block, Mapping) else None,
                ("messages", i, j), (i, kind) if kind in RUN_TYPES else None)
    return out


@dataclasses.dataclass
class CacheEntry:
    """One cached prefix: its ``prefix_tokens``, ``ttl`` ("5m" | "1h") and ``expires_at``
    (clock seconds)."""

    prefix_tokens: int
    ttl: str
    expires_at: float


class PromptCacheSimulator:
    """Anthropic's prompt cache, offline: the transport's ``usage_model``.

    ``usage(request, now=...)`` applies the rules in this module's docstring and returns
    ``{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
    "cache_creation": {"ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"}}``.
    State: ``entries`` (prefix hash -> :class:`CacheEntry`) and ``log`` (one dict per
    request: ``now``, ``usage``, ``read_at`` and ``written_at`` (block names), ``total_tokens``).
    Time comes from the caller (the transport passes its clock's ``now()``), so a notebook
    can advance a ``ManualClock`` past the TTL and watch entries expire.
    Args: min_tokens: override the model's minimum cacheable length (tests, demos).
    """

    def __init__(self, *, min_tokens: int | None = None) -> None:
        self.min_tokens = min_tokens
        self.entries: dict[str, CacheEntry] = {}
        self.log: list[dict[str, Any]] = []

    def reset(self) -> None:
        """Forget every entry and the log (a cold cache)."""
        self.entries.clear()
        self.log.clear()

    def usage(self, request: Mapping[str, Any], *, now: float) -> dict[str, Any]:
        """Return the cache part of ``usage`` for one request, updating the cache.

        Reads refresh the entries they hit; writes add entries; expired entries are dropped.

        Args:
            request: the body as sent, breakpoints placed; never mutated.
            now: clock time in seconds (entries expire ``TTL`` seconds after their last use).

        Returns:
            ``{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
            "cache_creation": {"ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"}}``.

        Raises:
            ValueError: a ``cache_control.ttl`` other than "5m" or "1h".
        """
        self.entries = {h: e for h, e in self.entries.items() if e.expires_at > now}
        bounds = prefix_boundaries(request)
        total = bounds[-1].prefix_tokens if bounds else 0
        breakpoints = [i for i, b in enumerate(bounds) if b.ttl is not None]
        for i in breakpoints:
            if bounds[i].ttl not in TTL_SECONDS:
                raise ValueError(f"{bounds[i].where}: cache_control.ttl must be one of "
                                 f"{sorted(TTL_SECONDS)}, got {bounds[i].ttl!r}")
        hit = -1
        for bp in breakpoints:
            p = bp
            while p >= 0 and bounds[bp].position - bounds[p].position < LOOKBACK_POSITIONS:
                if bounds[p].prefix_hash in self.entries:
                    hit = max(hit, p)
                    break
                p -= 1
        read = bounds[hit].prefix_tokens if hit >= 0 else 0
        if hit >= 0:
            for p in [hit] + [bp for bp in breakpoints if bp < hit]:
                entry = self.entries.get(bounds[p].prefix_hash)
                if entry is not None:
                    entry.expires_at = now + TTL_SECONDS[entry.ttl]
        minimum = self.min_tokens if self.min_tokens is not None else \
            min_cacheable_tokens(request.get("model"))
        creation = {"5m": 0, "1h": 0}
        cached_end = read
        written = []
        for bp in breakpoints:
            bound = bounds[bp]
            if bp <= hit or bound.prefix_tokens < minimum:
                continue
            creation[bound.ttl] += bound.prefix_tokens - cached_end
            cached_end = bound.prefix_tokens
            self.entries[bound.prefix_hash] = CacheEntry(
                bound.prefix_tokens, bound.ttl, now + TTL_SECONDS[bound.ttl])
            written.append(bound.where)
        usage = {
            "input_tokens": total - cached_end,
            "cache_creation_input_tokens": creation["5m"] + creation["1h"],
            "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": creation["5m"],
                               "ephemeral_1h_input_tokens": creation["1h"]},
        }
        self.log.append({"now": now, "usage": usage, "total_tokens": total,
                         "read_at": bounds[hit].where if hit >= 0 else None,
                         "written_at": written})
        return usage
