"""The thinking and effort rules of a Messages API request, as pure checks.

What the API refuses in a request's ``thinking`` and ``output_config`` before it looks at the
conversation: a ``thinking`` setting of the wrong shape (an unknown ``type``, a field that type
does not take, a ``display`` other than summarized or omitted), a mode the model does not take
(manual ``enabled`` on the models that only think adaptively, ``adaptive`` on the older ones),
a manual budget under 1,024 tokens or not below ``max_tokens``, the sampling parameters
thinking rules out (``temperature`` other than 1, ``top_k``, a ``top_p`` under 0.95; only the
legacy version 2023-06-01 accepts them at all) and an unknown ``output_config.effort``.

Each check returns the API's 400 ``error.message`` or None;
:func:`mini_agent.core.request_rules.request_problem` runs them with the other top-level
rules, and :mod:`mini_agent.core.request_rules` re-exports every name here. Pure: no IO,
inputs never mutated; the model's limits come in as a
:class:`~mini_agent.core.request_rules.ModelLimits`. Taught in
``notebooks/01_agent_loop.ipynb`` (what the API refuses).

Source: the SDK 2.14 param types (``ThinkingConfigParam``: "a budget_tokens of at least
1,024"; ``OutputConfigParam``: effort levels); 400 bodies quoted in public bug reports for the
thinking budget, manual thinking on current models and for ``temperature`` / ``top_k`` with
thinking (danny-avila/LibreChat#6023, quarkiverse/quarkus-langchain4j#1812,
MartialBE/one-hub#529); the extended-thinking docs ("Feature compatibility": top_p between
0.95 and 1). ASSUMPTIONS (the docs give no wording): the texts of the ``thinking`` shape, the
``top_p`` and the effort refusals; the sampling rule applies to adaptive thinking too (a
client fix "verified against the API", dotCipher/opencode-claude-bridge#1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from mini_agent.core.request_rules import ModelLimits

MIN_THINKING_BUDGET_TOKENS = 1024
"""``thinking.budget_tokens`` must be at least this (SDK ``ThinkingConfigEnabledParam``)."""

THINKING_FIELDS = {"enabled": frozenset({"type", "budget_tokens", "display"}),
                   "disabled": frozenset({"type"}),
                   "between_tools": frozenset({"type"}),
                   "adaptive": frozenset({"type", "display"})}
"""``thinking.type`` -> the fields that type takes (SDK ``ThinkingConfigParam`` union)."""

THINKING_DISPLAYS = ("summarized", "omitted")
"""Values of ``thinking.display`` (SDK ``ThinkingConfigEnabledParam`` / ``...AdaptiveParam``)."""

EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")
"""Values of ``output_config.effort`` (SDK ``OutputConfigParam``)."""

_SAMPLING_DOCS = ("Please consult our documentation at https://docs.claude.com/en/docs/"
                  "build-with-claude/extended-thinking#important-considerations-when-using-"
                  "extended-thinking")

def _thinking_shape_problem(thinking: Any) -> str | None:
    """The SDK's ``ThinkingConfigParam`` shape: a known ``type`` and only its own fields."""
    if not isinstance(thinking, Mapping):
        return "thinking: Input should be a valid dictionary or object to extract fields from"
    kind = thinking.get("type")
    if kind not in THINKING_FIELDS:
        tags = ", ".join(f"'{t}'" for t in THINKING_FIELDS)
        return (f"thinking: Input tag '{kind}' found using 'type' does not match any of the "
                f"expected tags: {tags}")
    extra = sorted(set(thinking) - THINKING_FIELDS[kind])
    if extra:
        return f"thinking.{kind}.{extra[0]}: Extra inputs are not permitted"
    display = thinking.get("display")
    if display is not None and display not in THINKING_DISPLAYS:
        return f"thinking.{kind}.display: Input should be 'summarized' or 'omitted'"
    return None


def _budget_problem(body: Mapping[str, Any], thinking: Mapping[str, Any]) -> str | None:
    """``thinking.enabled.budget_tokens``: an integer, at least 1,024, below ``max_tokens``."""
    if "budget_tokens" not in thinking:
        return "thinking.enabled.budget_tokens: Field required"
    budget = thinking["budget_tokens"]
    if not isinstance(budget, int) or isinstance(budget, bool):
        return "thinking.enabled.budget_tokens: Input should be a valid integer"
    if budget < MIN_THINKING_BUDGET_TOKENS:
        return (f"thinking.enabled.budget_tokens: Input should be greater than or equal "
                f"to {MIN_THINKING_BUDGET_TOKENS}")
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens <= budget:
        return ("`max_tokens` must be greater than `thinking.budget_tokens`. Please "
                "consult our documentation at https://docs.claude.com/en/docs/"
                "build-with-claude/extended-thinking#max-tokens-and-context-window-size")
    return None


def sampling_with_thinking_problem(body: Mapping[str, Any]) -> str | None:
    """Return the refusal of a sampling parameter the thinking setting rules out, or None.

    Only the legacy version (2023-06-01) accepts ``temperature``, ``top_p`` and ``top_k`` at
    all; with thinking on (``enabled``, or ``adaptive`` / ``between_tools``: ASSUMPTION, the
    same rule) ``temperature`` may only be 1, ``top_k`` must be unset and ``top_p`` must lie
    between 0.95 and 1 ("Thinking isn't compatible with temperature or top_k modifications";
    "you can set top_p to values between 1 and 0.95").

    Args:
        body: the JSON request body.

    Returns:
        The API's message for ``temperature`` and ``top_k`` (as quoted in public bug
        reports); for ``top_p`` an ASSUMPTION worded like them. None when thinking is off or
        the values are allowed.

    >>> sampling_with_thinking_problem({"thinking": {"type": "adaptive"}, "top_k": 5})[:42]
    '`top_k` must be unset when thinking is ena'
    """
    thinking = body.get("thinking")
    if not isinstance(thinking, Mapping) or thinking.get("type") in (None, "disabled"):
        return None
    temperature = body.get("temperature")
    if temperature is not None and temperature != 1:
        return f"`temperature` may only be set to 1 when thinking is enabled. {_SAMPLING_DOCS}"
    if body.get("top_k") is not None:
        return f"`top_k` must be unset when thinking is enabled. {_SAMPLING_DOCS}"
    top_p = body.get("top_p")
    if top_p is not None and not (isinstance(top_p, (int, float)) and 0.95 <= top_p <= 1):
        return (f"`top_p` must be between 0.95 and 1, or unset, when thinking is enabled. "
                f"{_SAMPLING_DOCS}")
    return None


def effort_problem(body: Mapping[str, Any]) -> str | None:
    """Return the refusal of an ``output_config.effort`` outside the SDK's values, or None.

    ASSUMPTION: the wording (pydantic style, like the API's other field errors).

    Args:
        body: the JSON request body.

    Returns:
        ``"output_config.effort: Input should be ..."`` for an unknown level, else None.

    >>> effort_problem({"output_config": {"effort": "extreme"}})
    "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
    """
    config = body.get("output_config")
    if not isinstance(config, Mapping) or config.get("effort") is None:
        return None
    if config["effort"] not in EFFORT_LEVELS:
        levels = ", ".join(f"'{e}'" for e in EFFORT_LEVELS[:-1])
        return f"output_config.effort: Input should be {levels} or '{EFFORT_LEVELS[-1]}'"
    return None


def thinking_problem(body: Mapping[str, Any], limits: ModelLimits | None) -> str | None:
    """Return the refusal of a ``thinking`` setting, or None.

    Checks the shape (a known ``type``, only that type's fields, ``display`` summarized or
    omitted), the mode against the model (manual ``enabled`` or ``adaptive``), the manual
    budget (an integer, at least 1,024 and below ``max_tokens``), then the sampling
    parameters thinking rules out (:func:`sampling_with_thinking_problem`).

    Args:
        body: the JSON request body.
        limits: the model's limits (which thinking modes it takes), or None.

    Returns:
        The API's message (pydantic style for the shape: ASSUMPTION), else None.

    >>> thinking_problem({"max_tokens": 4000, "thinking": {"type": "adaptive",
    ...                   "budget_tokens": 2048}}, None)
    'thinking.adaptive.budget_tokens: Extra inputs are not permitted'
    """
    if body.get("thinking") is None:
        return None
    thinking = body["thinking"]
    problem = _thinking_shape_problem(thinking)
    if problem:
        return problem
    kind = thinking.get("type")
    if kind == "enabled":
        if limits is not None and not limits.manual_thinking:
            return ('"thinking.type.enabled" is not supported for this model. Use '
                    '"thinking.type.adaptive" and "output_config.effort" to control '
                    'thinking behavior.')
        problem = _budget_problem(body, thinking)
        if problem:
            return problem
    elif kind == "adaptive" and limits is not None and not limits.adaptive_thinking:
        return "adaptive thinking is not supported on this model."
    return sampling_with_thinking_problem(body)
