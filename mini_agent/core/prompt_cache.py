"""A prompt-cache simulator that fills ``usage`` the way Anthropic's API documents it.

Plug it into the offline Claude as its usage model
(``offline_client(brain, usage_model=PromptCacheSimulator(), clock=clock)``) or call
:meth:`PromptCacheSimulator.usage` directly when replaying requests (benchmarks). It does not
answer requests, price them (``mini_agent.core.cache.cost_usd`` does) or model latency.
Taught in ``notebooks/05_prompt_caching.ipynb``.

Rules, each from the prompt caching docs
(https://platform.claude.com/docs/en/build-with-claude/prompt-caching, read 2026-11-29)
unless marked ASSUMPTION:
  1. The prefix is tools, then system, then messages, in that order; a change anywhere
     changes every prefix that contains it ("a change at one level invalidates that level and
     everything after it"): tools changed -> nothing is read; system changed -> only a tools
     entry can be read. ``tool_choice`` and ``thinking`` settings sit between system and
     messages, so changing them invalidates the messages cache only.
  2. Bytes matter: a block is identified by its JSON as sent (keys in the order they were
     written), so a different key order or tool order is a different prefix (seed 004).
     ``cache_control`` itself is not part of the identity.
  3. Writes happen only at ``cache_control`` breakpoints (and at the last block when the
     request has a top-level ``cache_control``: automatic caching), for a prefix of at least
     the model's minimum cacheable length (:data:`MIN_CACHEABLE_TOKENS`); shorter prefixes
     are "not cached, even if marked", and their tokens stay in ``input_tokens``.
  4. Reads: for each breakpoint the system checks the block boundaries at the breakpoint and
     up to :data:`LOOKBACK_BLOCKS` blocks before it, and uses the longest prefix found that an
     earlier request wrote. ASSUMPTION: the window is the breakpoint plus 20 earlier
     boundaries (the docs say "approximately 20 blocks").
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
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from typing import Any, Mapping

from mini_agent.core.cache import TTL_SECONDS, strip_cache_control
from mini_agent.core.tokens import CHARS_PER_TOKEN, approx_tokens

MIN_CACHEABLE_TOKENS: dict[str, int] = {
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-haiku-4-5": 4096,
    "claude-sonnet-4-6": 1024,
    "claude-sonnet-4-5": 1024,
    "claude-opus-4-1": 1024,
    "claude-opus-4": 1024,
    "claude-sonnet-4": 1024,
    "claude-haiku-3-5": 2048,
    "claude-3-5-haiku": 2048,
}
"""Minimum cacheable prompt length in tokens per model (prompt caching docs, read
2026-11-29). Note: anthropic-sdk-python issue #1194 reports Sonnet 4.6 caching only from
2,048 tokens in practice; the kit follows the documented 1,024."""

DEFAULT_MIN_CACHEABLE_TOKENS = 1024
"""Used for a model id not in :data:`MIN_CACHEABLE_TOKENS` (the most common documented value)."""

LOOKBACK_BLOCKS = 20
"""Block boundaries checked before each breakpoint for an earlier entry (docs: about 20)."""


def min_cacheable_tokens(model: str | None) -> int:
    """Return the minimum cacheable prefix in tokens for ``model`` (exact id, else the longest
    known id it starts with, else :data:`DEFAULT_MIN_CACHEABLE_TOKENS`)."""
    if not model:
        return DEFAULT_MIN_CACHEABLE_TOKENS
    if model in MIN_CACHEABLE_TOKENS:
        return MIN_CACHEABLE_TOKENS[model]
    matches = [k for k in MIN_CACHEABLE_TOKENS if model.startswith(k + "-")]
    return MIN_CACHEABLE_TOKENS[max(matches, key=len)] if matches else \
        DEFAULT_MIN_CACHEABLE_TOKENS


@dataclasses.dataclass(frozen=True)
class PrefixBoundary:
    """The end of one block of the flattened prompt.

    Attributes: where: ``"tools[2]"``, ``"system[0]"``, ``"messages[4].content[1]"``;
    prefix_hash: SHA-256 of everything up to and including this block; prefix_tokens:
    tokens up to and including it; ttl: the block's ``cache_control`` TTL ("5m" / "1h") or
    None when it is not a breakpoint; path: ``("tools", i)``, ``("system", i)`` or
    ``("messages", i, j)`` (j is 0 for string content).
    """

    where: str
    prefix_hash: str
    prefix_tokens: int
    ttl: str | None
    path: tuple = ()


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
    last block. Returns boundaries oldest first; empty for a request with no blocks.
    """
    chain = hashlib.sha256(str(request.get("model", "")).encode())
    out: list[PrefixBoundary] = []
    tokens = 0

    def add(where: str, identity: str, block_tokens: int, marker: Any, path: tuple) -> None:
        nonlocal tokens
        chain.update(len(identity).to_bytes(8, "big") + identity.encode())
        tokens += block_tokens
        out.append(PrefixBoundary(where, chain.copy().hexdigest(), tokens, _ttl_of(marker),
                                  path))

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
            add(f"messages[{i}].content[{j}]", ident, approx_tokens(block),
                block.get("cache_control") if isinstance(block, Mapping) else None,
                ("messages", i, j))
    if request.get("cache_control") and out and out[-1].ttl is None:
        last = out[-1]
        out[-1] = dataclasses.replace(last, ttl=_ttl_of(request["cache_control"]))
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
        """Return the cache part of ``usage`` for one request at clock time ``now`` (seconds),
        updating the cache (reads refresh, writes add entries). Raises ValueError for an
        unknown ``cache_control.ttl``."""
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
            for p in range(bp, max(-1, bp - LOOKBACK_BLOCKS - 1), -1):
                if bounds[p].prefix_hash in self.entries:
                    hit = max(hit, p)
                    break
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
