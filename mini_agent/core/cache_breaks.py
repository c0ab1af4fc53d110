"""Cache breaks: fingerprint what each request sends, notice when cache reads drop, name the cause.

What this module does: fingerprints the parts of a request that make up the cached prefix
(the STATIC system text, the tool set, each message) and, with :class:`CacheBreakDetector`,
compares ``cache_read_input_tokens`` across responses; a drop of more than 2,000 tokens AND
more than 5% of the previous read is a break, and the fingerprints that changed name its
cause. What it does not do: place breakpoints (``mini_agent.core.cache``), price tokens
(``mini_agent.core.pricing``) or simulate the server's cache (``mini_agent.core.prompt_cache``).
Pure: the detector keeps only the previous request's fingerprints; the clock is an argument.
Taught in ``notebooks/05_prompt_caching.ipynb``.

Sources (read 2026-11-29):
  * Seed 002_4516104fd432e704.txt, section 4 (promptCache.ts: CacheBreakDetector with
    recordRequest / checkResponse, toolsHash, the 2,000-token AND 5% rule).
  * Seed 004_b74ef821c58ee4ec.txt ("prompt cache and context layout": key order and tool
    order break the cache).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any, Iterable, Mapping

from mini_agent.core.cache import (TTL_SECONDS, canonical_json, canonical_tools,
                                   split_system_prompt, strip_cache_control)
from mini_agent.core.pricing import usage_tokens

BREAK_MIN_DROP_TOKENS = 2_000
"""A cache break needs a drop in ``cache_read_input_tokens`` of MORE than this (seed 002)."""
BREAK_MIN_DROP_RATIO = 0.05
"""... AND more than this fraction of the previous read (seed 002)."""

BREAK_CAUSES = ("system_prompt_changed", "tools_changed", "serialization_changed",
                "messages_changed", "ttl_expired", "unknown")
"""Cause names. The seed has system_prompt_changed, tools_changed, unknown; the kit adds
serialization_changed (same tool set, different bytes: order or key order),
messages_changed (an earlier message was masked, compacted or dropped) and ttl_expired
(the gap since the previous request exceeds the TTL)."""


# --------------------------------------------------------------------------- fingerprints

def sha256_hex(text: str) -> str:
    """Return the SHA-256 hex digest of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tools_fingerprint(tools: Iterable[Mapping[str, Any]] | None) -> str:
    """SHA-256 of the canonical JSON of ``tools`` (sorted by name, keys sorted, no markers).

    Two tool lists that differ only in order, key order or ``cache_control`` have the same
    fingerprint: the *tool set* did not change. Source: seed 002 (toolsHash), made canonical.
    """
    return sha256_hex(canonical_json(strip_cache_control(canonical_tools(tools or []))))


def raw_tools_fingerprint(tools: Iterable[Mapping[str, Any]] | None) -> str:
    """SHA-256 of ``tools`` as the SDK would serialise them (insertion order), no markers.

    Differs from :func:`tools_fingerprint` exactly when the bytes changed but the tool set
    did not: a serialization problem, not a new tool.
    """
    return sha256_hex(json.dumps(strip_cache_control(list(tools or [])), ensure_ascii=False))


def static_system_text(system: str | list[Mapping[str, Any]] | None) -> str:
    """Return the static part of a request's ``system``.

    A string: the text before ``DYNAMIC_BOUNDARY``. A list of text blocks: the texts of
    the blocks up to and including the last one carrying ``cache_control`` (everything, when
    none does, each block split at the boundary), joined with newlines. None: ``""``.
    """
    if system is None:
        return ""
    if isinstance(system, str):
        return split_system_prompt(system)[0]
    blocks = list(system)
    marked = [i for i, b in enumerate(blocks) if b.get("cache_control")]
    if marked:
        return "\n".join(b.get("text", "") for b in blocks[: marked[-1] + 1])
    return "\n".join(split_system_prompt(b.get("text", ""))[0] for b in blocks)


def _message_fingerprints(messages: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    return tuple(sha256_hex(canonical_json(strip_cache_control(dict(m)))) for m in messages)


# --------------------------------------------------------------------------- the detector

@dataclasses.dataclass(frozen=True)
class CacheBreak:
    """One detected cache break.

    Attributes: request_index: 0-based number of the request whose response broke;
    previous_read_tokens / read_tokens: ``cache_read_input_tokens`` before and now;
    dropped_tokens: their difference; causes: names from :data:`BREAK_CAUSES`, in that order.
    """

    request_index: int
    previous_read_tokens: int
    read_tokens: int
    dropped_tokens: int
    causes: tuple[str, ...]


class CacheBreakDetector:
    """Watch ``cache_read_input_tokens`` across requests and name why the cache broke.

    Use: call :meth:`record_request` with what is about to be sent, then
    :meth:`check_response` with the response's ``usage``. A break is a drop in
    ``cache_read_input_tokens`` versus the previous response of more than ``min_drop_tokens``
    AND more than ``min_drop_ratio`` of that previous read: both must hold, so a few hundred
    tokens of jitter on a small request and a 1% wobble on a huge cache are not breaks.
    Fingerprints: SHA-256 of the STATIC system part only (the dynamic
    part may change freely) and of the canonical JSON of the tools.
    Args: min_drop_tokens, min_drop_ratio: thresholds; ttl_seconds: the cache TTL used to
    name ``ttl_expired`` (300 for "5m").
    Attributes: breaks: every :class:`CacheBreak` found so far.
    Source: CacheBreakDetector in 002_4516104fd432e704.txt (recordRequest / checkResponse).
    """

    def __init__(self, *, min_drop_tokens: int = BREAK_MIN_DROP_TOKENS,
                 min_drop_ratio: float = BREAK_MIN_DROP_RATIO,
                 ttl_seconds: float = TTL_SECONDS["5m"]) -> None:
        self.min_drop_tokens = min_drop_tokens
        self.min_drop_ratio = min_drop_ratio
        self.ttl_seconds = ttl_seconds
        self.breaks: list[CacheBreak] = []
        self._last: dict[str, Any] | None = None
        self._pending: dict[str, Any] | None = None
        self._count = 0

    def record_request(self, request: Mapping[str, Any] | None = None, *, system: Any = None,
                       tools: Any = None, messages: Any = None,
                       now: float | None = None) -> None:
        """Fingerprint the request about to be sent (a request dict, or its parts).

        Args: request: kwargs/body with ``system``, ``tools``, ``messages`` (any may be
        absent); system/tools/messages: override or give the parts directly; now: clock
        time in seconds (needed for ``ttl_expired``; None skips that cause).
        """
        request = request or {}
        system = request.get("system") if system is None else system
        tools = request.get("tools") if tools is None else tools
        messages = request.get("messages") if messages is None else messages
        self._pending = {
            "system": sha256_hex(static_system_text(system)),
            "tools": tools_fingerprint(tools),
            "raw_tools": raw_tools_fingerprint(tools),
            "messages": _message_fingerprints(messages or []),
            "now": now,
        }

    def prepare_request(self, request_kwargs: dict[str, Any]) -> dict[str, Any]:
        """Agent ``prepare_request`` adapter: record the request (no clock) and return it as is."""
        self.record_request(request_kwargs)
        return request_kwargs

    def on_request(self, record: Mapping[str, Any], *_: Any) -> CacheBreak | None:
        """Agent ``on_request`` adapter: check ``record["usage"]``."""
        return self.check_response(record.get("usage") or {})

    def check_response(self, usage: Any) -> CacheBreak | None:
        """Compare this response's ``cache_read_input_tokens`` with the previous one.

        Args: usage: a usage dict or the SDK's ``Usage`` object. Returns: a
        :class:`CacheBreak` (also appended to ``breaks``) or None: no break, or no
        :meth:`record_request` before this call, or the first response.
        """
        if self._pending is None:
            return None
        state = dict(self._pending, read=usage_tokens(usage, "cache_read_input_tokens"))
        self._pending = None
        index = self._count
        self._count += 1
        report = None
        last = self._last
        if last is not None:
            drop = last["read"] - state["read"]
            ratio = drop / last["read"] if last["read"] > 0 else 0.0
            if drop > self.min_drop_tokens and ratio > self.min_drop_ratio:
                report = CacheBreak(index, last["read"], state["read"], drop,
                                    self._causes(last, state))
                self.breaks.append(report)
        self._last = state
        return report

    def _causes(self, last: dict[str, Any], state: dict[str, Any]) -> tuple[str, ...]:
        causes = []
        if last["system"] != state["system"]:
            causes.append("system_prompt_changed")
        if last["tools"] != state["tools"]:
            causes.append("tools_changed")
        elif last["raw_tools"] != state["raw_tools"]:
            causes.append("serialization_changed")
        previous = last["messages"]
        if state["messages"][: len(previous)] != previous:
            causes.append("messages_changed")
        if last["now"] is not None and state["now"] is not None and \
                state["now"] - last["now"] > self.ttl_seconds:
            causes.append("ttl_expired")
        return tuple(causes) or ("unknown",)
