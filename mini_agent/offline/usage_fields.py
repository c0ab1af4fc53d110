"""The ``usage`` object of an offline reply, with every field today's API fills in.

A usage model (:class:`~mini_agent.core.prompt_cache.PromptCacheSimulator` by default) counts
the input side; :func:`response_usage` adds what the API adds for a standard-tier request:

* ``cache_creation``: the cache writes split by TTL (``ephemeral_5m_input_tokens`` +
  ``ephemeral_1h_input_tokens`` == ``cache_creation_input_tokens``), present even when both
  are 0;
* ``output_tokens`` and ``output_tokens_details.thinking_tokens`` (the thinking and
  redacted-thinking blocks' share of it, 0 without thinking);
* ``server_tool_use``: ``null`` when the request defines no server tool; with a web search or
  web fetch tool, ``{"web_search_requests": 0, "web_fetch_requests": 0}`` (offline runs no
  server tool);
* ``service_tier``: ``"standard"``; ``inference_geo``: the request's ``inference_geo``, else
  ``"global"``; ``speed``: the request's ``speed``, else ``"standard"``.

The transport adds ``iterations`` (a compaction's cost; a beta request's one sampling
iteration). :func:`stream_usages` splits it into the ``message_start`` usage (everything but the output
side, ``output_tokens`` 1) and the ``message_delta`` usage (the SDK's ``MessageDeltaUsage``
fields, cumulative), so the SDK's stream accumulator ends with the same usage as the JSON
reply. Pure: no IO. Used by :mod:`mini_agent.offline.transport` and
:mod:`mini_agent.offline.sse`.

Source: the SDK 2.14 ``Usage`` / ``BetaUsage`` / ``MessageDeltaUsage`` models and their field
docs ("If the request used the priority, standard, or batch tier", "Breakdown of cached
tokens by TTL"); data residency docs (``inference_geo``: ``"global"`` is the default, the
response's ``usage.inference_geo`` says where inference ran); a Messages API reply recorded
in a public repository (``"inference_geo": "global"``, ``"server_tool_use": null``,
``"service_tier": "standard"``, ``cache_creation`` with both TTLs at 0); Claude Code
transcripts in shared/data (``message_start`` usage: the input side, ``cache_creation``,
``output_tokens``, ``service_tier``, ``inference_geo``); recorded replies with
``"output_tokens_details": {"thinking_tokens": 0}`` on a reply without thinking.
ASSUMPTIONS (the docs are silent): a usage model that gives no TTL split wrote every cache
token at 5 minutes (the default TTL); ``speed`` echoes the request (the docs name the values,
not the default's echo); ``server_tool_use`` is zeros rather than null once a web search or
fetch tool is defined; the ``message_delta`` usage repeats the input side (the SDK documents
those fields as cumulative).
"""

from __future__ import annotations

from typing import Any, Mapping

from mini_agent.core.tokens import approx_tokens

__all__ = ["SERVER_TOOL_PREFIXES", "response_usage", "stream_usages", "thinking_tokens"]

SERVER_TOOL_PREFIXES = ("web_search_", "web_fetch_")
"""Tool ``type`` prefixes whose calls ``server_tool_use`` counts."""

INPUT_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
"""The input side every usage model returns."""

DELTA_FIELDS = INPUT_FIELDS + ("output_tokens", "output_tokens_details", "server_tool_use",
                               "iterations")
"""Fields of the SDK's ``MessageDeltaUsage`` / ``BetaMessageDeltaUsage`` the offline API sends."""

_THINKING = ("thinking", "redacted_thinking")


def thinking_tokens(content: list[dict[str, Any]]) -> int:
    """Count the tokens of a reply's thinking and redacted-thinking blocks.

    Args:
        content: the sampled reply blocks (a compaction block excluded).

    Returns:
        The estimate of :func:`mini_agent.core.tokens.approx_tokens` over those blocks; 0
        when the reply has none.
    """
    blocks = [b for b in content if isinstance(b, dict) and b.get("type") in _THINKING]
    return approx_tokens({"role": "assistant", "content": blocks}) if blocks else 0


def _server_tool_use(body: Mapping[str, Any]) -> dict[str, int] | None:
    tools = body.get("tools") if isinstance(body.get("tools"), list) else []
    if any(isinstance(t, Mapping) and isinstance(t.get("type"), str)
           and t["type"].startswith(SERVER_TOOL_PREFIXES) for t in tools):
        return {"web_search_requests": 0, "web_fetch_requests": 0}
    return None


def response_usage(counted: Mapping[str, Any], body: Mapping[str, Any], *,
                   output_tokens: int, thinking: int = 0) -> dict[str, Any]:
    """Build a reply's ``usage`` as the API fills it, from a usage model's input side.

    Args:
        counted: the usage model's answer: ``input_tokens`` and, when it caches,
            ``cache_creation_input_tokens``, ``cache_read_input_tokens`` (missing ones are
            0) and ``cache_creation`` (the TTL split; missing: every write at 5 minutes).
            Other keys (``iterations``) are kept.
        body: the request as the model saw it (``tools``, ``inference_geo``, ``speed`` read).
        output_tokens: the reply's output tokens (thinking included).
        thinking: the thinking tokens among them (capped at ``output_tokens``).

    Returns:
        ``{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
        "cache_creation", "output_tokens", "output_tokens_details", "server_tool_use",
        "service_tier", "inference_geo", "speed"}`` plus the extra keys of ``counted``.
    """
    usage: dict[str, Any] = {k: int(counted.get(k) or 0) for k in INPUT_FIELDS}
    split = counted.get("cache_creation")
    if isinstance(split, Mapping):
        split = {"ephemeral_5m_input_tokens": int(split.get("ephemeral_5m_input_tokens") or 0),
                 "ephemeral_1h_input_tokens": int(split.get("ephemeral_1h_input_tokens") or 0)}
    else:
        split = {"ephemeral_5m_input_tokens": usage["cache_creation_input_tokens"],
                 "ephemeral_1h_input_tokens": 0}
    geo = body.get("inference_geo")
    speed = body.get("speed")
    usage.update({
        "cache_creation": split,
        "output_tokens": output_tokens,
        "output_tokens_details": {"thinking_tokens": min(thinking, output_tokens)},
        "server_tool_use": _server_tool_use(body),
        "service_tier": "standard",
        "inference_geo": geo if isinstance(geo, str) and geo else "global",
        "speed": speed if speed in ("standard", "fast") else "standard",
    })
    usage.update({k: v for k, v in counted.items() if k not in usage})
    return usage


def stream_usages(usage: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a reply's usage into its ``message_start`` and ``message_delta`` parts.

    Args:
        usage: the complete usage of the reply (:func:`response_usage`).

    Returns:
        ``(start, delta)``: ``start`` is every field but the output side and ``iterations``,
        with ``output_tokens`` 1 (the API's placeholder before sampling); ``delta`` holds
        the input side again, ``output_tokens``, ``output_tokens_details``,
        ``server_tool_use`` when not null, and ``iterations`` when present.
    """
    start = {k: v for k, v in usage.items()
             if k not in ("output_tokens", "output_tokens_details", "iterations")}
    start["output_tokens"] = 1
    delta = {k: usage[k] for k in DELTA_FIELDS if usage.get(k) is not None}
    return start, delta
