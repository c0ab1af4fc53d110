"""Offline compaction: a deterministic structured summariser and the server-side edit, simulated.

* :func:`~mini_agent.core.structured_summary.structured_summary` (a module of its own, with
  :class:`~mini_agent.core.structured_summary.SummaryBrain`; both re-exported here) writes the
  deterministic summary a compaction puts in place of the history, without a model.
* :func:`compact_request` is the API's server-side compaction edit
  ``{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": N},
  "pause_after_compaction": bool, "instructions": str}`` (beta ``compact-2026-01-12``) as a
  pure function; the default offline client applies it whenever a request asks, and
  :class:`ServerCompaction` wraps it as a transport plug-in that records each compaction.
* :func:`mini_agent.core.long_session.long_session` (a module of its own) builds the long,
  deterministic coding session (history and arrival times) the compaction and lifecycle
  notebooks and tests compact.

What the simulation assumes (the API documents the request side; the rest is our reading of
the SDK types ``BetaCompactionBlock`` / ``BetaCompact20260112EditParam``): when the request's
input estimate reaches the trigger (default 150,000 tokens; the API refuses a trigger under
50,000), the server summarises everything before the newest exchange, answers with
``{"type": "compaction", "content": summary, "encrypted_content": ...}`` as the first
content block (then the model's reply; with ``pause_after_compaction`` the block alone,
``stop_reason: "compaction"``) and reports the summariser's own tokens as a ``compaction``
entry of ``usage.iterations`` (not in the top-level usage fields). It adds no
``applied_edits`` entry: the SDK's ``applied_edits`` union has no compaction type. In a
stream the block starts with null content and arrives in one ``compaction_delta``. The
client appends the whole
``content``; on later requests the server ignores every message before the last compaction
block and shows the model its summary instead. Offline the model sees the summary as a user
message (how the real server frames it internally is not documented); ``instructions`` are
recorded but the deterministic summariser does not follow them.

Taught in ``notebooks/04_compaction.ipynb``.

Source:
    Anthropic compaction docs (platform.claude.com, "Compaction"); SDK
    ``anthropic.types.beta``; seed 004 (what a summary must keep); seed 002 section 3.
"""

from __future__ import annotations

import base64
import zlib
from typing import Any

from mini_agent.core.compaction import clean_cut_points, summary_message
from mini_agent.core.messages import Message, content_blocks, text_block
from mini_agent.core.structured_summary import (  # noqa: F401 - re-exported
    _PATH_RE, _SYMBOL_RE, SECTIONS, SummaryBrain, structured_summary)
from mini_agent.core.tokens import approx_request_tokens, approx_tokens

COMPACT_EDIT_TYPE = "compact_20260112"
COMPACT_BETA = "compact-2026-01-12"
DEFAULT_TRIGGER_TOKENS = 150_000
"""The API's default trigger for compact_20260112 (SDK docstring: "Defaults to 150000")."""


# --------------------------------------------------------------------------- compact_20260112

ENCRYPTED_PREFIX = "offline-compaction-v1:"
"""Marks the offline API's ``encrypted_content`` (the real one is opaque and signed)."""


def compaction_edit(request: dict[str, Any]) -> dict[str, Any] | None:
    """Find the request's server-side compaction edit.

    Args:
        request: the Messages API request body.

    Returns:
        The ``compact_20260112`` entry of ``context_management.edits``, or None.
    """
    edits = (request.get("context_management") or {}).get("edits") or []
    return next((e for e in edits if isinstance(e, dict)
                 and e.get("type") == COMPACT_EDIT_TYPE), None)


_compact_edit = compaction_edit


def encrypt_summary(summary: str) -> str:
    """Make the offline ``encrypted_content`` of a summary: reversible, opaque-looking, stable.

    ASSUMPTION: the real field is opaque; the kit only promises that it round-trips and that
    a block whose ``content`` is null is restored from it.

    Args:
        summary: the summary text.

    Returns:
        An ASCII string that :func:`decrypt_summary` turns back into ``summary``.

    >>> decrypt_summary(encrypt_summary("## Task\\nFix it"))
    '## Task\\nFix it'
    """
    return ENCRYPTED_PREFIX + base64.b64encode(zlib.compress(summary.encode())).decode()


def decrypt_summary(encrypted: Any) -> str | None:
    """Read the summary inside an offline ``encrypted_content``.

    Args:
        encrypted: the block's ``encrypted_content`` (any value).

    Returns:
        The summary, or None when ``encrypted`` is not one :func:`encrypt_summary` made.
    """
    if not isinstance(encrypted, str) or not encrypted.startswith(ENCRYPTED_PREFIX):
        return None
    try:
        return zlib.decompress(base64.b64decode(encrypted[len(ENCRYPTED_PREFIX):])).decode()
    except (ValueError, zlib.error):
        return None


def apply_compaction_blocks(messages: list[Message]) -> list[Message]:
    """Return what the server shows the model after compaction blocks.

    Everything before the last ``compaction`` block is dropped and the block's summary becomes
    a user message. A block with null ``content`` is restored from its ``encrypted_content``;
    one with neither is a no-op ("the server treats them as no-ops", SDK
    ``BetaCompactionBlock``).

    Args:
        messages: the request's messages; never mutated.

    Returns:
        A new list.
    """
    for i in range(len(messages) - 1, -1, -1):
        blocks = content_blocks(messages[i])
        k = next((j for j in range(len(blocks) - 1, -1, -1)
                  if blocks[j].get("type") == "compaction"), None)
        if k is None:
            continue
        summary = blocks[k].get("content") or decrypt_summary(blocks[k].get("encrypted_content"))
        rest = [b for b in blocks[k + 1:]]
        tail = list(messages[i + 1:])
        if not summary:   # a failed compaction: drop the block, keep the history
            kept = [*blocks[:k], *rest]
            return [*messages[:i], *([{**messages[i], "content": kept}] if kept else []),
                    *tail]
        head = summary_message(summary)
        if rest:
            return [head, {"role": "assistant", "content": rest}, *tail]
        if tail and tail[0].get("role") == "user":
            return [{"role": "user", "content": [*head["content"], *content_blocks(tail[0])]},
                    *tail[1:]]
        return [head, *tail]
    return list(messages)


def compact_request(request: dict[str, Any], edit: dict[str, Any]
                    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Apply ``compact_20260112`` to a request body as the API does.

    Earlier compaction blocks are applied first; then, when the input estimate reaches the
    edit's trigger (default 150,000 tokens), everything before the newest clean cut point is
    summarised with :func:`structured_summary`. The input is not mutated.

    Args:
        request: the Messages API request body.
        edit: its ``compact_20260112`` edit (``trigger``, ``pause_after_compaction``,
            ``instructions``).

    Returns:
        ``(request the model sees, compaction)``; compaction is None when nothing was
        compacted, else ``{"summary", "encrypted_content", "pause", "instructions",
        "tokens_before", "tokens_after", "usage"}`` where ``usage`` is the compaction iteration's
        ``{"input_tokens", "output_tokens", "cache_creation_input_tokens",
        "cache_read_input_tokens"}`` (ASSUMPTION: the summariser reads the compacted messages
        uncached and writes the summary).
    """
    messages = apply_compaction_blocks(request["messages"])
    trigger = (edit.get("trigger") or {}).get("value", DEFAULT_TRIGGER_TOKENS)
    size = lambda ms: approx_request_tokens(messages=ms, system=request.get("system"),  # noqa: E731
                                            tools=request.get("tools"))
    before = size(messages)
    cuts = clean_cut_points(messages)
    if before < trigger or not cuts or cuts[-1] <= 1:
        return {**request, "messages": messages}, None
    summary = structured_summary(messages[:cuts[-1]])
    compacted = [summary_message(summary), *messages[cuts[-1]:]]
    after = size(compacted)
    return {**request, "messages": compacted}, {
        "summary": summary, "encrypted_content": encrypt_summary(summary),
        "pause": bool(edit.get("pause_after_compaction")),
        "instructions": edit.get("instructions"), "tokens_before": before,
        "tokens_after": after,
        "usage": {"input_tokens": size(messages[:cuts[-1]]),
                  "output_tokens": approx_tokens(text_block(summary)),
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}


def compaction_block(compaction: dict[str, Any]) -> dict[str, Any]:
    """Build the ``compaction`` content block that leads the reply for a compaction.

    Args:
        compaction: the dict :func:`compact_request` returned.

    Returns:
        ``{"type": "compaction", "content": summary, "encrypted_content": ...}``.
    """
    return {"type": "compaction", "content": compaction["summary"],
            "encrypted_content": compaction["encrypted_content"]}


class ServerCompaction:
    """The ``compact_20260112`` edit as a transport plug-in, with a record of each compaction.

    The default offline client already compacts as the API does; this class is for a
    notebook that wants the record: ``compaction_client(edit, brain)`` (or
    ``offline_client(edit.wrap(brain), request_transforms=[edit])``). The transform
    (``edit(request) -> (request, extra)``) runs :func:`compact_request`; the wrapped brain
    then puts the ``compaction`` block first in its reply. No ``applied_edits`` entry is
    reported: the API reports compaction by the block and ``usage.iterations``. Not
    thread-safe (one request at a time, as the transport serves them).

    Attributes:
        compactions: one dict per compaction ``{"tokens_before", "tokens_after",
            "instructions"}``.
    """

    def __init__(self) -> None:
        self.compactions: list[dict[str, Any]] = []
        self._pending: dict[str, Any] | None = None

    def __call__(self, request: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Request transform: returns ``(request seen by the model, extra response fields)``."""
        self._pending = None
        edit = compaction_edit(request)
        if edit is None:
            return request, {}
        request, compaction = compact_request(request, edit)
        if compaction is not None:
            self.compactions.append({k: compaction[k] for k in
                                     ("tokens_before", "tokens_after", "instructions")})
            self._pending = compaction
        return request, {}

    def wrap(self, brain: Any) -> "_CompactingBrain":
        """Wrap a brain so its reply leads with the pending compaction block.

        Args:
            brain: the offline brain that answers the compacted request.

        Returns:
            A brain that answers like ``brain`` but puts the ``compaction`` block first after a
            compaction (alone, with ``stop_reason: "compaction"``, when the edit pauses).
        """
        return _CompactingBrain(self, brain)


class _CompactingBrain:
    def __init__(self, edit: ServerCompaction, brain: Any) -> None:
        self.edit, self.brain = edit, brain

    def respond(self, request: dict[str, Any]) -> dict[str, Any]:
        pending, self.edit._pending = self.edit._pending, None
        if pending is None:
            return self.brain.respond(request)
        block = compaction_block(pending)
        if pending["pause"]:
            return {"content": [block], "stop_reason": "compaction"}
        reply = self.brain.respond(request)
        return {**reply, "content": [block, *reply["content"]]}
