"""The top-level request rules of Messages API version 2026-10-21, as pure checks.

What the API refuses before it looks at the conversation: fields the version does not accept
(``temperature``, ``top_p`` and ``top_k`` are gone, "even at default values"), a ``max_tokens``
above the model's ceiling, a ``thinking`` setting of the wrong shape, a mode the model does
not take or a budget out of range, ``temperature`` other than 1, ``top_k`` or a ``top_p``
under 0.95 with thinking on (legacy version only: the current one refuses the three
outright), an unknown ``output_config.effort``, ``document`` blocks in assistant
turns and citations on user text (both refused since 2026-10-21), context-management edits
sent without their beta flag, a compaction trigger under 50,000 tokens, a ``role: "system"``
message on a model that does not take one, or misplaced
(:mod:`mini_agent.core.system_messages`). Also two things the
API does before checking the conversation: it combines consecutive same-role turns, and it
places the automatic ``cache_control`` of a request that has one at the top level.

Each check returns the API's 400 ``error.message`` or None; :func:`request_problem` runs them
in order. The thinking, sampling and effort checks live in :mod:`mini_agent.core.thinking_rules`
and the automatic ``cache_control`` in :mod:`mini_agent.core.automatic_cache`; this module
re-exports their names. The conversation itself is checked by :func:`mini_agent.core.messages
.validate_messages` (tool pairing, empty text, breakpoints and TTL order). Pure: no IO, inputs
never mutated; the model's limits come in as a :class:`~mini_agent.core.models.ModelSpec`.
Used by the offline API (``mini_agent/offline/transport.py``); taught in
``notebooks/01_agent_loop.ipynb`` (what the API refuses) and ``05_prompt_caching.ipynb``
(automatic caching).

Source: API migration guide for 2026-10-21 (platform.claude.com/docs/en/api/
migration-2026-10-21, read 2026-12-01); the SDK 2.14 param types
(``MessageCreateParamsBase``, ``BetaCompact20260112EditParam``, ``ThinkingConfigParam``:
"a budget_tokens of at least 1,024"); 400 bodies quoted in public bug reports for the
max_tokens ceiling, the thinking budget, manual thinking on current models and the TTL order,
and for ``temperature`` / ``top_k`` with thinking (danny-avila/LibreChat#6023,
quarkiverse/quarkus-langchain4j#1812, MartialBE/one-hub#529); the extended-thinking docs
("Feature compatibility": top_p between 0.95 and 1); ``OutputConfigParam`` (effort levels).
ASSUMPTIONS (the docs give no wording): the texts of :data:`DOCUMENT_IN_ASSISTANT`,
:data:`CITATIONS_IN_USER_TEXT`, :func:`context_management_problem`, the top-level
``cache_control``, the ``thinking`` shape, the ``top_p`` and the effort refusals; the
sampling rule applies to adaptive thinking too (a client fix "verified against the API",
dotCipher/opencode-claude-bridge#1); other beta-only fields are accepted with any beta flag.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol

from mini_agent.core.automatic_cache import (NOT_CACHEABLE,  # noqa: F401 (re-exported)
                                             automatic_cache_control_problem, content_blocks,
                                             place_automatic_cache_control)
from mini_agent.core.system_messages import system_messages_problem
from mini_agent.core.thinking_rules import (EFFORT_LEVELS,  # noqa: F401 (re-exported)
                                            MIN_THINKING_BUDGET_TOKENS, THINKING_DISPLAYS,
                                            THINKING_FIELDS, effort_problem,
                                            sampling_with_thinking_problem, thinking_problem)

API_VERSION = "2026-10-21"
"""The ``anthropic-version`` the installed SDK (2.x) sends."""

LEGACY_API_VERSION = "2023-06-01"
"""The previous version, which still accepts the sampling parameters."""

SAMPLING_PARAMETERS = ("temperature", "top_p", "top_k")
"""Removed in 2026-10-21: "400 error, even at their default values" (migration guide)."""

CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
COMPACT_BETA = "compact-2026-01-12"
EDIT_BETAS = {"clear_tool_uses_20250919": CONTEXT_MANAGEMENT_BETA,
              "clear_thinking_20251015": CONTEXT_MANAGEMENT_BETA,
              "compact_20260112": COMPACT_BETA}
"""The ``anthropic-beta`` flag each ``context_management`` edit type needs."""

MIN_COMPACTION_TRIGGER_TOKENS = 50_000
"""The smallest ``compact_20260112`` trigger the API accepts (compaction docs)."""

MESSAGES_FIELDS = frozenset({
    "cache_control", "container", "diagnostics", "inference_geo", "max_tokens", "messages",
    "metadata", "model", "output_config", "service_tier", "speed", "stop_sequences", "stream",
    "system", "thinking", "tool_choice", "tools", "user_profile_id", "workspace_id"})
"""Top-level fields of ``POST /v1/messages`` (SDK ``MessageCreateParamsBase`` + ``stream``)."""

COUNT_TOKENS_FIELDS = frozenset({
    "cache_control", "messages", "model", "output_config", "speed", "system", "thinking",
    "tool_choice", "tools", "user_profile_id", "workspace_id"})
"""Top-level fields of ``POST /v1/messages/count_tokens`` (SDK ``MessageCountTokensParams``)."""

BETA_FIELDS = frozenset({"billing_policy", "compaction", "context_management",
                         "fallback_credit_token", "fallbacks", "mcp_servers", "thread"})
"""Fields only the beta Messages API takes (SDK ``beta.MessageCreateParamsBase``)."""

DOCUMENT_IN_ASSISTANT = "document blocks are not supported in assistant messages"
"""ASSUMPTION: wording of the 400 for a ``document`` block in an assistant turn."""

CITATIONS_IN_USER_TEXT = "citations are not supported on text blocks in user messages"
"""ASSUMPTION: wording of the 400 for non-empty ``citations`` on a user text block."""

PREFILL_REFUSED = ("This model does not support assistant message prefill. The conversation "
                   "must end with a user message.")
"""The API's 400 for a final assistant turn on Claude 4.6 and later (public bug reports)."""



class ModelLimits(Protocol):
    """What the rules need to know of a model (``mini_agent.core.models.ModelSpec`` has it)."""

    max_output_tokens: int
    manual_thinking: bool
    adaptive_thinking: bool


def fields_problem(body: Mapping[str, Any], *, count_tokens: bool = False,
                   api_version: str = API_VERSION, betas: tuple[str, ...] = ()) -> str | None:
    """Return the API's refusal of a top-level field the request may not carry, or None.

    Args:
        body: the JSON request body.
        count_tokens: True for ``/v1/messages/count_tokens`` (fewer fields).
        api_version: the ``anthropic-version`` header (the legacy one still takes sampling).
        betas: the ``anthropic-beta`` flags (beta-only fields need one).

    Returns:
        ``"<field>: Extra inputs are not permitted"`` for the first such field, else None.

    >>> fields_problem({"model": "m", "max_tokens": 1, "messages": [], "temperature": 1.0})
    'temperature: Extra inputs are not permitted'
    """
    allowed = set(COUNT_TOKENS_FIELDS if count_tokens else MESSAGES_FIELDS)
    if betas:
        allowed |= BETA_FIELDS
    if api_version == LEGACY_API_VERSION:
        allowed |= set(SAMPLING_PARAMETERS)
    extra = [key for key in body if key not in allowed]
    return f"{extra[0]}: Extra inputs are not permitted" if extra else None


def max_tokens_problem(body: Mapping[str, Any], model: str,
                       limits: ModelLimits | None) -> str | None:
    """Return the refusal of a missing, negative or too large ``max_tokens``, or None.

    Args:
        body: the JSON request body.
        model: its model id (named in the ceiling's message).
        limits: the model's limits, or None (no ceiling). ``max_tokens: 0`` is allowed: it
            pre-warms the cache.

    Returns:
        The API's message, or None.

    >>> max_tokens_problem({"max_tokens": -1}, "m", None)
    'max_tokens: Input should be greater than or equal to 0'
    """
    value = body.get("max_tokens")
    if value is None:
        return "max_tokens: Field required"
    if not isinstance(value, int) or isinstance(value, bool):
        return "max_tokens: Input should be a valid integer"
    if value < 0:
        return "max_tokens: Input should be greater than or equal to 0"
    if limits is not None and value > limits.max_output_tokens:
        return (f"max_tokens: {value} > {limits.max_output_tokens}, which is the maximum "
                f"allowed number of output tokens for {model}")
    return None




def version_content_problem(messages: Any) -> str | None:
    """Return the 2026-10-21 refusals inside the conversation, or None.

    Args:
        messages: the request's messages (anything; non-lists are left to other checks).

    Returns:
        The message for a ``document`` block in an assistant turn or non-empty
        ``citations`` on a user text block, else None.

    >>> version_content_problem([{"role": "user", "content": [
    ...     {"type": "text", "text": "x", "citations": [{"type": "char_location"}]}]}])
    'messages.0.content.0.citations: citations are not supported on text blocks in user messages'
    """
    for i, message in enumerate(messages if isinstance(messages, list) else []):
        content = message.get("content") if isinstance(message, Mapping) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            if not isinstance(block, Mapping):
                continue
            if message.get("role") == "assistant" and block.get("type") == "document":
                return f"messages.{i}.content.{j}: {DOCUMENT_IN_ASSISTANT}"
            if (message.get("role") == "user" and block.get("type") == "text"
                    and block.get("citations")):
                return f"messages.{i}.content.{j}.citations: {CITATIONS_IN_USER_TEXT}"
    return None


def prefill_problem(messages: Any, limits: ModelLimits | None) -> str | None:
    """Return the refusal of an assistant prefill on a model that no longer takes one, or None.

    "Prefilling assistant messages returns a 400 error on Claude 4.6 models" (migration
    guide); the later models refuse it too. ASSUMPTION: the models that refuse it are those
    that take adaptive thinking (Claude 4.6 and later); the 4.5 and older models still take a
    prefill, and a model the kit does not know is given the benefit of the doubt.

    Args:
        messages: the request's messages (anything; non-lists are left to other checks).
        limits: the model's limits, or None for an unknown model.

    Returns:
        The API's message (quoted in public bug reports) when the last message is an
        assistant turn on such a model, else None.

    >>> prefill_problem([{"role": "user", "content": "hi"}, {"role": "assistant",
    ...                  "content": "{"}], None) is None
    True
    """
    if limits is None or not limits.adaptive_thinking or not isinstance(messages, list) \
            or not messages or not isinstance(messages[-1], Mapping):
        return None
    if messages[-1].get("role") == "assistant":
        return PREFILL_REFUSED
    return None


def context_management_problem(body: Mapping[str, Any],
                               betas: tuple[str, ...] = ()) -> str | None:
    """Return the refusal of a ``context_management`` setting, or None.

    ASSUMPTION: the wording of the missing-flag refusal (the API documents only that the
    flag is required) and of the trigger refusal (pydantic style, like its other range errors).

    Args:
        body: the JSON request body.
        betas: the ``anthropic-beta`` flags of the request.

    Returns:
        The message for an edit sent without its beta flag or a compaction trigger under
        :data:`MIN_COMPACTION_TRIGGER_TOKENS`, else None.
    """
    config = body.get("context_management")
    if config is None:
        return None
    if not betas:
        return "context_management: Extra inputs are not permitted"
    if "compaction" in body:
        return "compaction: cannot be combined with context_management"
    edits = config.get("edits") if isinstance(config, Mapping) else None
    for i, edit in enumerate(edits if isinstance(edits, list) else []):
        kind = edit.get("type") if isinstance(edit, Mapping) else None
        flag = EDIT_BETAS.get(kind)
        if flag is None:
            return f"context_management.edits.{i}.type: unknown edit type {kind!r}"
        if flag not in betas:
            return (f"context_management.edits.{i}: the {kind} edit requires the "
                    f"anthropic-beta header {flag}")
        trigger = edit.get("trigger") or {}
        if kind == "compact_20260112" and isinstance(trigger, Mapping) and \
                isinstance(trigger.get("value"), int) and \
                trigger["value"] < MIN_COMPACTION_TRIGGER_TOKENS:
            return (f"context_management.edits.{i}.trigger.value: Input should be greater "
                    f"than or equal to {MIN_COMPACTION_TRIGGER_TOKENS}")
    return None


def combine_consecutive_turns(messages: list[dict]) -> list[dict]:
    """Merge consecutive messages of the same role into one, as the API does.

    "Consecutive user or assistant turns in your request will be combined into a single
    turn" (SDK ``MessageCreateParamsBase.messages`` docstring).

    Args:
        messages: the request's messages (not mutated).

    Returns:
        A new list; string contents become text blocks when merged.

    >>> combine_consecutive_turns([{"role": "user", "content": "a"},
    ...                            {"role": "user", "content": "b"}])[0]["content"]
    [{'type': 'text', 'text': 'a'}, {'type': 'text', 'text': 'b'}]
    """
    out: list[dict] = []
    for message in messages:
        if (out and isinstance(message, dict) and isinstance(out[-1], dict)
                and message.get("role") == out[-1].get("role")):
            out[-1] = {**out[-1], "content": content_blocks(out[-1].get("content"))
                       + content_blocks(message.get("content"))}
        else:
            out.append(message)
    return out




def request_problem(body: Mapping[str, Any], *, count_tokens: bool = False,
                    api_version: str = API_VERSION, betas: tuple[str, ...] = (),
                    limits: ModelLimits | None = None) -> str | None:
    """Run every top-level rule, in the order the API checks them.

    ASSUMPTION on the order: fields, model, max_tokens, thinking (shape, mode, budget,
    sampling), effort, cache_control, context management, system messages, content, prefill
    (not on ``count_tokens``: ASSUMPTION).

    Args:
        body: the JSON request body.
        count_tokens: True for ``/v1/messages/count_tokens`` (no max_tokens, fewer fields).
        api_version: the request's ``anthropic-version`` header.
        betas: the request's ``anthropic-beta`` flags.
        limits: the model's limits, or None for a model the kit does not know (no ceilings).

    Returns:
        The first refusal's message, or None when these rules accept the request.
    """
    problem = fields_problem(body, count_tokens=count_tokens, api_version=api_version,
                             betas=betas)
    if problem:
        return problem
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    if not count_tokens:
        problem = max_tokens_problem(body, body["model"], limits)
        if problem:
            return problem
    return (thinking_problem(body, limits) or effort_problem(body)
            or automatic_cache_control_problem(body)
            or context_management_problem(body, betas)
            or system_messages_problem(body.get("messages"), body["model"])
            or version_content_problem(body.get("messages"))
            or (None if count_tokens else prefill_problem(body.get("messages"), limits)))
