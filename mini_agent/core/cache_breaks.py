"""Cache breaks: fingerprint what each request sends, notice when cache reads drop, name the cause.

What this module does: fingerprints the parts of a request that make up the cached prefix
(the STATIC system text, the tool set, each message) and, with :class:`CacheBreakDetector`,
compares ``cache_read_input_tokens`` across responses; a drop of more than 2,000 tokens AND
more than 5% of the previous read is a break, and the fingerprints that changed name its
cause. What it does not do: place breakpoints (``mini_agent.core.cache``), price tokens
(``mini_agent.core.pricing``) or simulate the server's cache (``mini_agent.core.prompt_cache``).
Pure: the detector keeps only the previous request's fingerprints; the clock is an argument.
Taught in ``notebooks/05_prompt_caching.ipynb``.

Source:
    Read 2026-11-29.

    * Seed 002_4516104fd432e704.txt, section 4 (promptCache.ts: CacheBreakDetector with
      recordRequest / checkResponse, toolsHash, the 2,000-token AND 5% rule).
    * Seed 004_b74ef821c58ee4ec.txt ("prompt cache and context layout": key order and tool
      order break the cache).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable, Mapping, TypedDict

from mini_agent.core.cache import (TTL_SECONDS, canonical_json, canonical_tools,
                                   split_system_prompt, strip_cache_control)
from mini_agent.core.pricing import usage_tokens

BREAK_MIN_DROP_TOKENS = 2_000
"""A cache break needs a drop in ``cache_read_input_tokens`` of MORE than this (seed 002)."""
BREAK_MIN_DROP_RATIO = 0.05
"""... AND more than this fraction of the previous read (seed 002)."""

BREAK_CAUSES = ("system_prompt_changed", "tools_changed", "serialization_changed",
                "messages_changed", "ttl_expired", "unknown")
"""Cause names. The seed has system_prompt_changed, tools_changed, unknown; with
``finer_causes`` the kit adds serialization_changed (same tool set, different bytes: order or
key order), messages_changed (an earlier message was masked, compacted or dropped) and
ttl_expired (the gap since the previous request exceeds the TTL)."""


def sha256_hex(text: str) -> str:
    """Hash a text the way every fingerprint here does.

    Args:
        text: any text; encoded as UTF-8.

    Returns:
        The SHA-256 hex digest (64 lowercase hex characters).
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tools_fingerprint(tools: Iterable[Mapping[str, Any]] | None) -> str:
    """SHA-256 hex digest of the canonical JSON of ``tools``.

    Canonical: tools sorted by ``"name"``, every dict's keys sorted, every ``cache_control``
    removed, UTF-8 kept. Two tool lists that differ only in order, key order or markers have
    the same fingerprint: the *tool set* did not change.
    Args:
        tools: tool definitions, or None (no tools); never mutated.
    Returns:
        64 hex digits.
    Source: seed 002 (toolsHash), made canonical (seed 004); exercise 05.1.
    """
    return sha256_hex(canonical_json(strip_cache_control(canonical_tools(tools or []))))


def raw_tools_fingerprint(tools: Iterable[Mapping[str, Any]] | None) -> str:
    """Fingerprint ``tools`` as the SDK would serialise them (insertion order), no markers.

    Differs from :func:`tools_fingerprint` exactly when the bytes changed but the tool set
    did not: a serialization problem, not a new tool.

    Args:
        tools: the request's ``tools``, or None.

    Returns:
        The SHA-256 hex digest of their JSON in insertion order.
    """
    return sha256_hex(json.dumps(strip_cache_control(list(tools or [])), ensure_ascii=False))


def static_system_text(system: str | list[Mapping[str, Any]] | None) -> str:
    """Return the static part of a request's ``system``.

    Args:
        system: a string: the text before :data:`DYNAMIC_BOUNDARY`. A list of text blocks: the
            texts of the blocks up to and including the last one carrying ``cache_control``
            (everything, when none does, each block split at the boundary). None.

    Returns:
        The static text, list texts joined with newlines; ``""`` for None.
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


def system_fingerprint(system: str | list[Mapping[str, Any]] | None) -> str:
    """SHA-256 hex digest (of the UTF-8 bytes) of the static part of ``system``.

    Args:
        system: a prompt string (the static part is the text before the first
            :data:`DYNAMIC_BOUNDARY`, exactly as it is), a list of text blocks (see
            :func:`static_system_text`) or None.
    Returns:
        64 hex digits; the dynamic part may change without changing it.
    Source: seed 002 (systemHash of the static part); exercise 05.2.

    >>> from mini_agent.core.cache import DYNAMIC_BOUNDARY
    >>> system_fingerprint("Rules." + DYNAMIC_BOUNDARY + "now: 10:00") == sha256_hex("Rules.")
    True
    """
    return sha256_hex(static_system_text(system))


def _message_fingerprints(messages: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    return tuple(sha256_hex(canonical_json(strip_cache_control(dict(m)))) for m in messages)


class CacheBreak(TypedDict):
    """One detected cache break, a plain dict.

    Keys: ``dropped_tokens``: how far ``cache_read_input_tokens`` fell; ``causes``: names from
    :data:`BREAK_CAUSES`, each once, in that order (exercise 05.3 returns these two);
    ``request_index``: 0-based number of the request whose response broke;
    ``previous_read_tokens`` / ``read_tokens``: ``cache_read_input_tokens`` before and now.
    """

    dropped_tokens: int
    causes: list[str]
    request_index: int
    previous_read_tokens: int
    read_tokens: int


class CacheBreakDetector:
    """Watch ``cache_read_input_tokens`` across requests and name why the cache broke.

    Use: call :meth:`record_request` (or :meth:`record` with a whole request) with what is
    about to be sent, then :meth:`check_response` with the response's ``usage``. A break is a
    drop in ``cache_read_input_tokens`` versus the previous response of more than
    ``min_drop_tokens`` AND more than ``min_drop_ratio`` of that previous read: both must
    hold, so a few hundred tokens of jitter on a small request and a 1% wobble on a huge
    cache are not breaks. Fingerprints: :func:`system_fingerprint` (the STATIC system part
    only: the dynamic part may change freely) and :func:`tools_fingerprint`.
    Args:
        min_drop_tokens, min_drop_ratio: the two thresholds.
        ttl_seconds: the cache TTL that names ``ttl_expired`` (300 for "5m").
        finer_causes: also name the kit's causes (``serialization_changed``,
            ``messages_changed``, ``ttl_expired``) where the seed says ``unknown``.
    Attributes:
        breaks: every :class:`CacheBreak` found so far.
    Source: CacheBreakDetector in 002_4516104fd432e704.txt (recordRequest / checkResponse);
        exercise 05.3.
    """

    def __init__(self, *, min_drop_tokens: int = BREAK_MIN_DROP_TOKENS,
                 min_drop_ratio: float = BREAK_MIN_DROP_RATIO,
                 ttl_seconds: float = TTL_SECONDS["5m"], finer_causes: bool = False) -> None:
        self.min_drop_tokens = min_drop_tokens
        self.min_drop_ratio = min_drop_ratio
        self.ttl_seconds = ttl_seconds
        self.finer_causes = finer_causes
        self.breaks: list[CacheBreak] = []
        self._last: dict[str, Any] | None = None
        self._pending: dict[str, Any] | None = None
        self._count = 0

    def record_request(self, system: Any, tools: Any, *, messages: Any = None,
                       now: float | None = None) -> None:
        """Fingerprint the request about to be sent.

        Args:
            system: its ``system`` (a string, a list of text blocks, or None).
            tools: its ``tools`` (a list, or None).
            messages: its ``messages`` (for ``messages_changed``; None skips that cause).
            now: clock time in seconds (for ``ttl_expired``; None skips that cause).
        """
        self._pending = {
            "system": system_fingerprint(system),
            "tools": tools_fingerprint(tools),
            "raw_tools": raw_tools_fingerprint(tools),
            "messages": _message_fingerprints(messages or []),
            "now": now,
        }

    def record(self, request: Mapping[str, Any], *, now: float | None = None) -> None:
        """Fingerprint a whole request dict: :meth:`record_request` on its parts.

        Args:
            request: the request kwargs or body (``system``, ``tools``, ``messages``).
            now: clock time in seconds (for ``ttl_expired``; None skips that cause).
        """
        self.record_request(request.get("system"), request.get("tools"),
                            messages=request.get("messages"), now=now)

    def prepare_request(self, request_kwargs: dict[str, Any]) -> dict[str, Any]:
        """Record the request (no clock) and return it as is: the Agent's ``prepare_request`` hook.

        Args:
            request_kwargs: the keyword arguments about to go to ``messages.create``.

        Returns:
            ``request_kwargs`` itself, unchanged.
        """
        self.record(request_kwargs)
        return request_kwargs

    def on_request(self, record: Mapping[str, Any], *_: Any) -> CacheBreak | None:
        """Check the response's usage: the Agent's ``on_request`` hook.

        Args:
            record: the Agent's request record; its ``"usage"`` is checked.
            _: further hook arguments, ignored.

        Returns:
            What :meth:`check_response` returns: a :class:`CacheBreak`, or None.
        """
        return self.check_response(record.get("usage") or {})

    def check_response(self, usage: Any) -> CacheBreak | None:
        """Compare this response's ``cache_read_input_tokens`` with the previous one.

        Args:
            usage: a usage dict or the SDK's ``Usage`` object.
        Returns:
            A :class:`CacheBreak` (also appended to ``breaks``), or None: no break, no
            :meth:`record_request` since the last check, or the first response. Either way
            this response becomes the previous one.
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
                report = CacheBreak(dropped_tokens=drop, causes=self._causes(last, state),
                                    request_index=index, previous_read_tokens=last["read"],
                                    read_tokens=state["read"])
                self.breaks.append(report)
        self._last = state
        return report

    def _causes(self, last: dict[str, Any], state: dict[str, Any]) -> list[str]:
        causes = []
        if last["system"] != state["system"]:
            causes.append("system_prompt_changed")
        if last["tools"] != state["tools"]:
            causes.append("tools_changed")
        elif self.finer_causes and last["raw_tools"] != state["raw_tools"]:
            causes.append("serialization_changed")
        previous = last["messages"]
        if self.finer_causes and state["messages"][: len(previous)] != previous:
            causes.append("messages_changed")
        if self.finer_causes and last["now"] is not None and state["now"] is not None and \
                state["now"] - last["now"] > self.ttl_seconds:
            causes.append("ttl_expired")
        return causes or ["unknown"]
