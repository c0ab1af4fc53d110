"""``role: "system"`` inside ``messages``: which models take it, where, and what the rest see.

The Messages API has a top-level ``system`` field. Newer models also accept a message with
``role: "system"`` later in the conversation, "immediately after a user turn", so that a
long-running agent can add instructions without restating (and re-caching) its whole system
prompt; older models answer 400 ``Unexpected role "system"``. The offline API follows the
API, model by model (:data:`MID_CONVERSATION_SYSTEM_MODELS`); the kit's own
``validate_messages`` stays stricter as a teaching aid (its histories hold user and assistant
messages only; notebook 01 says where and why).

Shapes: ``{"role": "system", "content": str | [{"type": "text", "text": str}]}``.
What this module does not do: send anything, or decide what the model makes of the message.
Pure: inputs never mutated. Used by :mod:`mini_agent.core.request_rules` and the offline API.

Source: Anthropic "What's new in Claude Opus 4.8" (platform.claude.com/docs/en/about-claude/
models/whats-new-claude-4-8, quoted in simonw/llm-anthropic#73: "accepts role: "system"
messages immediately after a user turn in the messages array (subject to placement rules)...
No beta header is required"); the 400 texts as quoted in public bug reports
(songquanpeng/one-api#1135: ``Unexpected role "system"``; LeenHawk/gproxy#209:
``messages.0: use the top-level 'system' parameter for the initial system prompt``, answered
by ``claude-opus-4-8`` and ``claude-opus-5``).
ASSUMPTIONS (no page lists the models): the Opus line from 4.8 on takes the role (4.8 from its
page, Opus 5 from the placement 400 it answers, Opus 5.5 as the later Opus); every other model
in :data:`mini_agent.core.models.MODELS` refuses it, the default Sonnet included. The wording
of :data:`NOT_AFTER_USER` and :data:`TEXT_ONLY` is the kit's.
"""

from __future__ import annotations

from typing import Any

from mini_agent.core.models import MODELS, UnknownModelError, model_spec

MID_CONVERSATION_SYSTEM_MODELS = frozenset(m for m, spec in MODELS.items() if spec.system_messages)
"""Model ids of ``core/models.py`` whose row says ``system_messages``: they accept a
``role: "system"`` message after a user message. ASSUMPTION: see the module docstring."""

UNEXPECTED_SYSTEM_ROLE = ('messages: Unexpected role "system". The Messages API accepts a '
                          'top-level `system` parameter, not "system" as an input message role.')
"""The 400 of a model that does not take the role (API wording, one-api#1135)."""

FIRST_SYSTEM = ("messages.0: use the top-level 'system' parameter for the initial system "
                "prompt")
"""The 400 of a system message at index 0 on a model that takes the role (gproxy#209)."""

NOT_AFTER_USER = "messages.{i}: a system message must come immediately after a user message"
"""The 400 of a system message after an assistant or a system message (ASSUMPTION: wording)."""

TEXT_ONLY = "messages.{i}.content: a system message holds non-empty text blocks only"
"""The 400 of a system message whose content is empty or not text (ASSUMPTION: wording)."""


def accepts_system_messages(model: str) -> bool:
    """Tell whether ``model`` takes ``role: "system"`` messages inside ``messages``.

    Args:
        model: a model id; a dated id (``claude-opus-4-8-20260520``) counts as its model.

    Returns:
        True for the ids in :data:`MID_CONVERSATION_SYSTEM_MODELS`.

    >>> accepts_system_messages("claude-opus-4-8"), accepts_system_messages("claude-sonnet-5-5")
    (True, False)
    """
    try:
        return model_spec(model).system_messages
    except UnknownModelError:
        return False


def _is_text(content: Any) -> bool:
    if isinstance(content, str):
        return bool(content.strip())
    return (isinstance(content, list) and bool(content) and all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        and b["text"].strip() for b in content))


def system_messages_problem(messages: Any, model: str) -> str | None:
    """Return the API's 400 message for the ``role: "system"`` messages of a request, or None.

    Args:
        messages: the request's ``messages`` (anything; non-lists are left to other checks).
        model: the request's model id.

    Returns:
        :data:`UNEXPECTED_SYSTEM_ROLE` when the model does not take the role; else, for the
        first misplaced one, :data:`FIRST_SYSTEM` (index 0), :data:`NOT_AFTER_USER` (not right
        after a user message) or :data:`TEXT_ONLY`; None when there is none or all are placed
        as the API wants.
    """
    if not isinstance(messages, list):
        return None
    found = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "system"]
    if not found:
        return None
    if not accepts_system_messages(model):
        return UNEXPECTED_SYSTEM_ROLE
    for i in found:
        if i == 0:
            return FIRST_SYSTEM
        before = messages[i - 1]
        if not isinstance(before, dict) or before.get("role") != "user":
            return NOT_AFTER_USER.format(i=i)
        if not _is_text(messages[i].get("content")):
            return TEXT_ONLY.format(i=i)
    return None


def without_system_messages(messages: list[dict]) -> list[dict]:
    """Return the conversation the other rules check: ``messages`` minus its system messages.

    Args:
        messages: a request's messages (not mutated).

    Returns:
        A new list without the ``role: "system"`` messages; the user and assistant messages
        around them are then combined by the API's same-role rule.

    >>> without_system_messages([{"role": "user", "content": "a"},
    ...                          {"role": "system", "content": "b"}])
    [{'role': 'user', 'content': 'a'}]
    """
    return [m for m in messages if not (isinstance(m, dict) and m.get("role") == "system")]
