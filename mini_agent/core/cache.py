"""Prompt caching on the client side: stable prefixes, breakpoints, break detection, prices.

What this module does: splits a system prompt into a static (cached) and a dynamic part at
:data:`DYNAMIC_BOUNDARY`; places at most four ``cache_control`` breakpoints on a whole request
(tools, system, messages), byte-stable on request (:func:`place_breakpoints`); fingerprints
tools and the static system part; watches ``cache_read_input_tokens`` for breaks and names
their cause (:class:`CacheBreakDetector`); turns ``usage`` into USD. Exercise 05's four
functions are this module's own.
What it does not do: simulate the server's cache (that is ``mini_agent.core.prompt_cache``) or
talk to the network. Pure; no function mutates its input. Taught in
``notebooks/05_prompt_caching.ipynb``.

Sources (read 2026-11-29):
  * Seed 002_4516104fd432e704.txt, section 4 (promptCache.ts: DYNAMIC_BOUNDARY,
    splitSystemPrompt, CacheBreakDetector with the 2,000-token AND 5% rule).
  * Seed 004_b74ef821c58ee4ec.txt ("prompt cache and context layout": tools -> system ->
    messages, key order and tool order break the cache) and 000_86e3ff2076a5ae37.txt
    (masking moves the prefix; move the mask boundary in fixed chunks).
  * Anthropic prompt caching docs,
    https://platform.claude.com/docs/en/build-with-claude/prompt-caching : at most 4
    breakpoints; prefix order tools -> system -> messages; TTL "5m" (default) or "1h",
    refreshed on each hit; ``usage.cache_creation_input_tokens``,
    ``usage.cache_read_input_tokens``, ``usage.input_tokens`` (the uncached part only) and
    ``usage.cache_creation.{ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}``.
  * Anthropic pricing, https://platform.claude.com/docs/en/about-claude/pricing : USD per
    million tokens; 5m cache write = 1.25x input, 1h write = 2x, cache hit = 0.1x.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from typing import Any, Iterable, Mapping, TypedDict

from mini_agent.core.messages import MAX_CACHE_CONTROL_MARKERS
from mini_agent.core.wire_rules import shorten_later_ttls

DYNAMIC_BOUNDARY = "__SYSTEM_PROMPT_DYNAMIC_BOUNDARY__"
"""Marker that separates the static (cacheable) part of a system prompt from the dynamic part
(seed 002, promptCache.ts). Everything after it may change per request without breaking the
cache of what comes before it."""

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
"""Cache lifetimes by ``cache_control.ttl`` value (prompt caching docs: default "5m")."""

CLEARED_TOOL_RESULT = "[Old tool result content cleared]"
"""Placeholder of cleared tool results (server-side context editing, seed 002 micro-compact)."""

BREAK_MIN_DROP_TOKENS = 2_000
"""A cache break needs a drop in ``cache_read_input_tokens`` of MORE than this (seed 002)."""
BREAK_MIN_DROP_RATIO = 0.05
"""... AND more than this fraction of the previous read (seed 002)."""


# --------------------------------------------------------------------------- system prompt

def split_system_prompt(prompt: str) -> tuple[str, str]:
    """Split ``prompt`` at the first :data:`DYNAMIC_BOUNDARY` into ``(static, dynamic)``.

    Without the marker the whole prompt is static and dynamic is ``""``. The marker itself
    is dropped. Source: splitSystemPrompt in 002_4516104fd432e704.txt.

    >>> split_system_prompt("rules" + DYNAMIC_BOUNDARY + "time: 12:00")
    ('rules', 'time: 12:00')
    >>> split_system_prompt("rules")
    ('rules', '')
    """
    index = prompt.find(DYNAMIC_BOUNDARY)
    if index == -1:
        return prompt, ""
    return prompt[:index], prompt[index + len(DYNAMIC_BOUNDARY):]


def cache_control(ttl: str = "5m") -> dict[str, str]:
    """Return the ``cache_control`` value for a TTL: ``{"type": "ephemeral"}`` for "5m" (the
    API default, written without ``ttl`` so requests stay minimal) or
    ``{"type": "ephemeral", "ttl": "1h"}``. Raises ValueError for any other ttl."""
    if ttl not in TTL_SECONDS:
        raise ValueError(f"cache ttl must be one of {sorted(TTL_SECONDS)}, got {ttl!r}")
    return {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}


def build_system_blocks(prompt: str, *, ttl: str = "5m") -> list[dict[str, Any]]:
    """Return system text blocks with ``cache_control`` on the static part only.

    Shapes: ``[{"type": "text", "text": static, "cache_control": {...}},
    {"type": "text", "text": dynamic}]``; an empty (or whitespace-only) part is left out,
    because the API rejects empty text blocks; a prompt with no static text gets no marker.
    Raises ValueError for an unknown ttl. Source: seed 002 section 4.

    >>> [b.get("cache_control") for b in build_system_blocks("A" + DYNAMIC_BOUNDARY + "B")]
    [{'type': 'ephemeral'}, None]
    """
    static, dynamic = split_system_prompt(prompt)
    blocks: list[dict[str, Any]] = []
    if static.strip():
        blocks.append({"type": "text", "text": static, "cache_control": cache_control(ttl)})
    if dynamic.strip():
        blocks.append({"type": "text", "text": dynamic})
    return blocks


# --------------------------------------------------------------------------- canonical bytes

def strip_cache_control(obj: Any) -> Any:
    """Return a deep copy of ``obj`` with every ``cache_control`` key removed (input untouched)."""
    if isinstance(obj, dict):
        return {k: strip_cache_control(v) for k, v in obj.items() if k != "cache_control"}
    if isinstance(obj, list):
        return [strip_cache_control(v) for v in obj]
    return obj


def _sorted_keys(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _sorted_keys(obj[k]) for k in sorted(obj)}
    if isinstance(obj, list):
        return [_sorted_keys(v) for v in obj]
    return obj


def canonical_json(obj: Any) -> str:
    """Serialise ``obj`` the same way every time: sorted keys, no spaces, UTF-8 kept.

    >>> canonical_json({"b": 1, "a": [2, {"d": 3, "c": 4}]})
    '{"a":[2,{"c":4,"d":3}],"b":1}'
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(text: str) -> str:
    """Return the SHA-256 hex digest of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_tools(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Return tool definitions sorted by ``name`` with every dict's keys in sorted order.

    The SDK writes dicts in insertion order, so rebuilding them sorted makes the wire bytes
    depend only on the content (seed 004: tool order and key order must not change between
    requests). Returns new dicts; the input is not mutated.
    """
    return [_sorted_keys(copy.deepcopy(dict(t))) for t in sorted(tools, key=lambda t: t["name"])]


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
    """SHA-256 of ``tools`` as the SDK would serialise them (insertion order), no markers.

    Differs from :func:`tools_fingerprint` exactly when the bytes changed but the tool set
    did not: a serialization problem, not a new tool.
    """
    return sha256_hex(json.dumps(strip_cache_control(list(tools or [])), ensure_ascii=False))


def static_system_text(system: str | list[Mapping[str, Any]] | None) -> str:
    """Return the static part of a request's ``system``.

    A string: the text before :data:`DYNAMIC_BOUNDARY`. A list of text blocks: the texts of
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


def system_fingerprint(system: str | list[Mapping[str, Any]] | None) -> str:
    """SHA-256 hex digest (of the UTF-8 bytes) of the static part of ``system``.

    Args:
        system: a prompt string (the static part is the text before the first
            :data:`DYNAMIC_BOUNDARY`, exactly as it is), a list of text blocks (see
            :func:`static_system_text`) or None.
    Returns:
        64 hex digits; the dynamic part may change without changing it.
    Source: seed 002 (systemHash of the static part); exercise 05.2.

    >>> system_fingerprint("Rules." + DYNAMIC_BOUNDARY + "now: 10:00") == sha256_hex("Rules.")
    True
    """
    return sha256_hex(static_system_text(system))


# --------------------------------------------------------------------------- breakpoints

def _is_markable(block: Mapping[str, Any]) -> bool:
    """A block may carry cache_control: not thinking, not an empty text block."""
    kind = block.get("type")
    if kind in ("thinking", "redacted_thinking"):
        return False
    if kind == "text":
        return bool(str(block.get("text", "")).strip())
    return True


def _mark_last_block(message: dict[str, Any], marker: dict[str, str]) -> bool:
    """Put ``marker`` on the last markable block of ``message`` (in place on a copy)."""
    content = message["content"]
    if isinstance(content, str):
        if not content.strip():
            return False
        message["content"] = [{"type": "text", "text": content, "cache_control": dict(marker)}]
        return True
    for block in reversed(content):
        if _is_markable(block):
            block["cache_control"] = dict(marker)
            return True
    return False


def place_breakpoints(request: Mapping[str, Any], *, ttl: str = "5m",
                      static_ttl: str | None = None, canonical: bool = False,
                      anchors: bool = False) -> dict[str, Any]:
    """Return a copy of a request with at most 4 ``cache_control`` breakpoints.

    The breakpoints of seed 002 (exercise 05.4), in prefix order:
      1. every existing ``cache_control`` is removed, except the caller's last one on a
         system block: it marks the end of the static part (the blocks after it may change);
      2. the last tool, in the order given, gets one (``static_ttl``);
      3. a list ``system`` keeps that marker or, with none, its last non-empty block gets
         one; a string ``system`` becomes :func:`build_system_blocks` (the marker on the
         static part, never on the dynamic part) (``static_ttl``);
      4. a rolling one on the last markable block of the LAST message (written now, read by
         the next request): not a thinking block nor a whitespace-only text block; a
         tool_result takes it itself; string content becomes one text block.
    Never more than :data:`~mini_agent.core.messages.MAX_CACHE_CONTROL_MARKERS`. Mixed TTLs:
    the docs require longer TTLs before shorter ones, so ``static_ttl`` may only be longer
    than or equal to ``ttl``; a caller's own system marker shorter than a marker after it
    shortens that marker (:func:`~mini_agent.core.wire_rules.shorten_later_ttls`).
    Args:
        request: ``{"model", "messages", "system"?, "tools"?, ...}``; never mutated.
        ttl: "5m" or "1h" for the rolling breakpoints.
        static_ttl: for tools and system (default ``ttl``).
        canonical: also sort the tools by name and every dict's keys first, so the same
            logical request has the same bytes across runs and hash seeds (seed 004); the
            kit's requests use it.
        anchors: also, while markers are left, one on the newest masked (or cleared)
            tool_result (when the mask boundary moves, the request still reads everything up
            to the old boundary) and one on the last markable block of the previous message
            of the same role, which the previous request wrote (so a turn that adds more than
            the 20 blocks the API looks back still reads it); the kit's requests use it.
    Returns:
        A new dict. As an Agent ``prepare_request`` callable with options:
        ``functools.partial(place_breakpoints, canonical=True, anchors=True)``.
    Raises:
        ValueError: an unknown ttl, or a static_ttl shorter than ttl.
    Source: prompt caching docs (4 breakpoints, "mixing TTLs"), seed 002 and seed 004.
    """
    static_ttl = static_ttl or ttl
    cache_control(ttl), cache_control(static_ttl)  # validate both
    if TTL_SECONDS[static_ttl] < TTL_SECONDS[ttl]:
        raise ValueError("a longer-TTL breakpoint must come before shorter ones "
                         f"(static_ttl={static_ttl!r} < ttl={ttl!r})")
    out = copy.deepcopy(dict(request))
    if canonical:
        out = _sorted_keys(out)
    budget = MAX_CACHE_CONTROL_MARKERS
    if "tools" in out:
        out["tools"] = strip_cache_control(canonical_tools(out["tools"]) if canonical
                                           else out["tools"])
    if out.get("tools"):
        out["tools"][-1]["cache_control"] = cache_control(static_ttl)
        budget -= 1
    system = out.get("system")
    if isinstance(system, str):
        blocks = build_system_blocks(system, ttl=static_ttl)
        if blocks:
            out["system"] = blocks
            budget -= sum(1 for b in blocks if "cache_control" in b)
        else:
            out.pop("system")
    elif isinstance(system, list) and system:
        marked = [i for i, b in enumerate(system) if b.get("cache_control")]
        for i, b in enumerate(system):
            if not marked or i != marked[-1]:
                b.pop("cache_control", None)  # keep only the caller's last system marker
        if not marked:
            for b in reversed(system):
                if _is_markable(b):
                    b["cache_control"] = cache_control(static_ttl)
                    break
        budget -= sum(1 for b in system if b.get("cache_control"))
    messages = strip_cache_control(out.get("messages", []))
    out["messages"] = messages
    if messages and budget > 0:
        last = len(messages) - 1
        if _mark_last_block(messages[last], cache_control(ttl)):
            budget -= 1
        anchor = _last_masked_result(messages[:last]) if anchors else None
        if anchor is not None and budget > 0:
            i, j = anchor
            messages[i]["content"][j]["cache_control"] = cache_control(ttl)
            budget -= 1
        if anchors and last >= 2 and budget > 0 and _mark_last_block(messages[last - 2],
                                                                     cache_control(ttl)):
            budget -= 1
    shorten_later_ttls([out.get("tools") or [], out.get("system") or [], messages])
    return out


def _last_masked_result(messages: list[dict[str, Any]]) -> tuple[int, int] | None:
    """``(message_index, block_index)`` of the newest tool_result whose content is a mask or
    clearing placeholder, or None."""
    from mini_agent.core.masking import is_masked
    for i in range(len(messages) - 1, -1, -1):
        content = messages[i].get("content")
        if isinstance(content, str):
            continue
        for j in range(len(content) - 1, -1, -1):
            block = content[j]
            if block.get("type") == "tool_result" and (
                    is_masked(block) or block.get("content") == CLEARED_TOOL_RESULT):
                return i, j
    return None


def request_bytes(request_kwargs: Mapping[str, Any]) -> bytes:
    """Return the JSON body the SDK would send for these kwargs (insertion order kept).

    Used to show that :func:`place_breakpoints` with ``canonical=True`` gives the same bytes
    for the same logical request, whatever the order its dicts were built in.
    """
    return json.dumps(dict(request_kwargs), ensure_ascii=False, separators=(",", ":")).encode()


# --------------------------------------------------------------------------- break detection

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


BREAK_CAUSES = ("system_prompt_changed", "tools_changed", "serialization_changed",
                "messages_changed", "ttl_expired", "unknown")
"""Cause names. The seed has system_prompt_changed, tools_changed, unknown; with
``finer_causes`` the kit adds serialization_changed (same tool set, different bytes: order or
key order), messages_changed (an earlier message was masked, compacted or dropped) and
ttl_expired (the gap since the previous request exceeds the TTL)."""


def _usage_get(usage: Any, key: str) -> int:
    if isinstance(usage, Mapping):
        value = usage.get(key)
    else:
        value = getattr(usage, key, None)
    return int(value or 0)


def _message_fingerprints(messages: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    return tuple(sha256_hex(canonical_json(strip_cache_control(dict(m)))) for m in messages)


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
        """:meth:`record_request` for a whole request dict (kwargs or body)."""
        self.record_request(request.get("system"), request.get("tools"),
                            messages=request.get("messages"), now=now)

    def prepare_request(self, request_kwargs: dict[str, Any]) -> dict[str, Any]:
        """Agent ``prepare_request`` adapter: record the request (no clock) and return it as is."""
        self.record(request_kwargs)
        return request_kwargs

    def on_request(self, record: Mapping[str, Any], *_: Any) -> CacheBreak | None:
        """Agent ``on_request`` adapter: check ``record["usage"]``."""
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
        state = dict(self._pending, read=_usage_get(usage, "cache_read_input_tokens"))
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


# --------------------------------------------------------------------------- prices

@dataclasses.dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens for one model: ``input_usd_per_mtok``, ``output_usd_per_mtok``.
    Cache prices derive from input: write 5m x1.25, write 1h x2, read x0.1."""

    input_usd_per_mtok: float
    output_usd_per_mtok: float


CACHE_WRITE_5M_MULTIPLIER = 1.25
CACHE_WRITE_1H_MULTIPLIER = 2.0
CACHE_READ_MULTIPLIER = 0.1

PRICES_AS_OF = "2026-11-29"
"""Date the table below was read from https://platform.claude.com/docs/en/about-claude/pricing."""

PRICES: dict[str, ModelPrice] = {
    "claude-opus-4-6": ModelPrice(5.0, 25.0),
    "claude-opus-4-5": ModelPrice(5.0, 25.0),
    "claude-opus-4-1": ModelPrice(15.0, 75.0),
    "claude-opus-4": ModelPrice(15.0, 75.0),
    "claude-sonnet-4-6": ModelPrice(3.0, 15.0),
    "claude-sonnet-4-5": ModelPrice(3.0, 15.0),
    "claude-sonnet-4": ModelPrice(3.0, 15.0),
    "claude-haiku-4-5": ModelPrice(1.0, 5.0),
    "claude-haiku-3-5": ModelPrice(0.8, 4.0),
    "claude-3-5-haiku": ModelPrice(0.8, 4.0),
}
"""Model id (without date suffix) -> price. Source: Anthropic pricing page, read 2026-11-29."""


class UnknownModelError(KeyError):
    """No price is known for a model id (the message lists the known ones)."""


def model_price(model: str) -> ModelPrice:
    """Return the price row for ``model``: exact id, else the longest known id it starts with
    (``claude-sonnet-4-5-20250929`` -> ``claude-sonnet-4-5``). Raises UnknownModelError."""
    if model in PRICES:
        return PRICES[model]
    matches = [k for k in PRICES if model.startswith(k + "-") or model.startswith(k + "@")]
    if not matches:
        raise UnknownModelError(f"no price for model {model!r}; known: {sorted(PRICES)}")
    return PRICES[max(matches, key=len)]


def cost_usd(usage: Any, model: str, *, include_output: bool = True) -> float:
    """Return the USD cost of one response's ``usage`` on ``model``.

    cost = input_tokens * in + cache writes (``cache_creation.ephemeral_5m_input_tokens`` x
    1.25 in + ``ephemeral_1h_input_tokens`` x 2 in; when the breakdown is absent all of
    ``cache_creation_input_tokens`` is priced as 5m) + cache_read_input_tokens x 0.1 in +
    output_tokens x out (unless ``include_output=False``); prices per million tokens.
    Args: usage: dict or SDK ``Usage``. Raises: UnknownModelError.

    >>> round(cost_usd({"input_tokens": 1_000_000}, "claude-sonnet-4-6"), 2)
    3.0
    >>> round(cost_usd({"cache_read_input_tokens": 1_000_000}, "claude-sonnet-4-6"), 2)
    0.3
    """
    price = model_price(model)
    creation = _usage_get(usage, "cache_creation_input_tokens")
    breakdown = usage.get("cache_creation") if isinstance(usage, Mapping) else \
        getattr(usage, "cache_creation", None)
    if breakdown:
        write_1h = _usage_get(breakdown, "ephemeral_1h_input_tokens")
        write_5m = _usage_get(breakdown, "ephemeral_5m_input_tokens")
        write_5m += max(0, creation - write_1h - write_5m)
    else:
        write_1h, write_5m = 0, creation
    input_usd = (_usage_get(usage, "input_tokens")
                 + write_5m * CACHE_WRITE_5M_MULTIPLIER
                 + write_1h * CACHE_WRITE_1H_MULTIPLIER
                 + _usage_get(usage, "cache_read_input_tokens") * CACHE_READ_MULTIPLIER
                 ) * price.input_usd_per_mtok / 1e6
    output_usd = _usage_get(usage, "output_tokens") * price.output_usd_per_mtok / 1e6
    return input_usd + (output_usd if include_output else 0.0)


def cache_hit_rate(usage: Any) -> float:
    """Return read / (read + creation + uncached input) for one usage (0.0 when all are 0).

    >>> cache_hit_rate({"input_tokens": 10, "cache_creation_input_tokens": 10,
    ...                 "cache_read_input_tokens": 80})
    0.8
    """
    read = _usage_get(usage, "cache_read_input_tokens")
    total = read + _usage_get(usage, "cache_creation_input_tokens") + \
        _usage_get(usage, "input_tokens")
    return read / total if total else 0.0


def sum_usage(usages: Iterable[Any]) -> dict[str, Any]:
    """Add up usages (dicts or SDK objects) field by field, including the cache_creation
    breakdown. Returns a usage dict that :func:`cost_usd` and :func:`cache_hit_rate` accept."""
    total = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0,
             "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}}
    for usage in usages:
        for key in ("input_tokens", "output_tokens", "cache_creation_input_tokens",
                    "cache_read_input_tokens"):
            total[key] += _usage_get(usage, key)
        breakdown = usage.get("cache_creation") if isinstance(usage, Mapping) else \
            getattr(usage, "cache_creation", None)
        if breakdown:
            for key in ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"):
                total["cache_creation"][key] += _usage_get(breakdown, key)
        else:
            total["cache_creation"]["ephemeral_5m_input_tokens"] += \
                _usage_get(usage, "cache_creation_input_tokens")
    return total
