"""Tell when a loaded history needs no repair at all, in two passes instead of six.

Most files load without a single repair: every block is clean, roles alternate, every
``tool_use`` is answered right after. For them the repairs of :mod:`.repair` each walk the
blocks to change nothing (:func:`~.repair.clean_blocks`, ``_merge``, ``_rename_duplicate_ids``,
``_pair``), then ``validate_messages`` walks them once more to find nothing wrong. The two
predicates here ask all of those questions at once:

* :func:`blocks_valid`, per block (before Claude Code's split responses are joined): would
  ``clean_blocks`` keep the block as it is, and does it pass ``validate_messages``'s block
  rules with no ``cache_control`` marker anywhere in it?
* :func:`history_valid`, per draft (after the join): would ``_merge``, ``_rename_duplicate_ids``
  and ``_pair`` change nothing, would no placeholder start be needed, and does the history
  pass ``validate_messages``'s role and tool-pairing rules?

When both say yes, :func:`~.repair.finish` builds the messages directly; when either says no
(or is not sure: a list-shaped ``tool_result`` content, a ``cache_control`` key), the repairs
run as before. A yes must never be wrong; a no only costs time.
``tests/test_valid_drafts.py`` checks, on generated drafts, that whenever both say yes the
repairs change nothing, report nothing and ``validate_messages`` accepts the history.

Pure; reads the drafts, never changes them.

Source:
    the repairs of :mod:`.repair` and the rules of ``core/messages.validate_messages`` they
    stand for (Messages API validity rules).
"""

from __future__ import annotations

from mini_agent.core.block_rules import ALLOWED_BLOCK_KEYS, KNOWN_BLOCK_TYPES
from mini_agent.core.transcripts.drafts import MessageDraft
from mini_agent.core.wire_rules import cache_markers

__all__ = ["blocks_valid", "history_valid"]

_STR_ONLY = frozenset((str,))


def blocks_valid(drafts: list[MessageDraft]) -> bool:
    """Say whether every block is clean and valid as it is.

    True only when, for every block, ``clean_blocks`` would neither drop nor change it (a
    text or thinking block with non-whitespace text, no key beyond the API's for its type, a
    ``tool_use`` with a non-empty string id and an object input, a ``tool_result`` with a
    string ``tool_use_id``) and ``validate_messages`` would accept it: a known type, a
    string (or missing) ``tool_result`` content, and no ``cache_control`` key in the block or
    anywhere inside its values.

    The three usual shapes (``{"type": "text", "text"}``, ``{"type": "tool_use", "id",
    "name", "input"}``, ``{"type": "tool_result", "tool_use_id", "content"}`` with maybe a
    boolean ``is_error``) are told by their size and value types first: their other values are
    strings, so only a ``tool_use`` input can hold a marker; a flat input of strings without
    a ``cache_control`` key holds none, and is not walked by ``cache_markers``
    (``tests/test_valid_drafts_inputs.py`` compares the two).

    Args:
        drafts: the drafts as the reader made them (blocks are dicts).

    Returns:
        True when the blocks need no cleaning and pass the block rules; False when one may
        not (the repairs then decide).
    """
    for draft in drafts:
        for block in draft.blocks:
            kind = block.get("type")
            size = len(block)
            if kind == "text" and size == 2:
                text = block.get("text")
                if type(text) is str and text and not text.isspace():
                    continue
            elif kind == "tool_result" and (size == 3 or size == 4 and type(
                    block.get("is_error")) is bool):
                if type(block.get("tool_use_id")) is str and type(block.get("content")) is str:
                    continue
            elif kind == "tool_use" and size == 4:
                tid, tool_input = block.get("id"), block.get("input")
                if type(tid) is str and tid and type(block.get("name")) is str \
                        and type(tool_input) is dict:
                    # a flat input of strings (the usual one) holds no marker: not walked,
                    # as ``cache_markers`` would return [] for it
                    if ("cache_control" in tool_input
                            or not _STR_ONLY.issuperset(map(type, tool_input.values()))) \
                            and cache_markers(tool_input):
                        return False
                    continue
            if not _block_valid(block, kind):
                return False
    return True


def _block_valid(block: dict, kind: object) -> bool:
    """:func:`blocks_valid`'s answer for one block of any shape (``kind``: its type)."""
    if type(kind) is not str or kind not in KNOWN_BLOCK_TYPES or "cache_control" in block:
        return False
    allowed = ALLOWED_BLOCK_KEYS.get(kind)
    if allowed is not None and not block.keys() <= allowed:
        return False
    if kind == "text":
        text = block.get("text")
        if not (type(text) is str and text and not text.isspace()):
            return False
    elif kind == "tool_use":
        tid = block.get("id")
        if not (type(tid) is str and tid and type(block.get("input")) is dict):
            return False
    elif kind == "tool_result":
        if not (type(block.get("tool_use_id")) is str
                and type(block.get("content", "")) is str):
            return False
    elif kind == "thinking":
        thought = block.get("thinking")
        if not (type(thought) is str and thought and not thought.isspace()):
            return False
    for value in block.values():  # a marker nested in a value (a tool input...)
        if type(value) is not str and isinstance(value, (dict, list)) and cache_markers(value):
            return False
    return True


def history_valid(drafts: list[MessageDraft]) -> bool:
    """Say whether the drafts already form a valid history, tool calls paired.

    Expects blocks that :func:`blocks_valid` accepted. True only when the list is not
    empty, starts with a user draft, alternates user and assistant drafts that each hold a
    block, every ``tool_use`` id is used once and only in an assistant draft, and each
    user draft answers exactly the ``tool_use`` ids of the assistant draft before it (none
    after a user draft or at the start), with ``tool_result`` blocks only, once each, before
    any other block; a last assistant draft asks for no tool.

    Args:
        drafts: the drafts after Claude Code's split responses are joined.

    Returns:
        True when ``_merge``, ``_rename_duplicate_ids`` and ``_pair`` would change nothing,
        no placeholder start is needed and ``validate_messages`` accepts the history.
    """
    if not drafts:
        return False
    seen: set = set()  # every tool_use id so far
    asked: set = set()  # the ids the previous (assistant) draft asked for, not yet answered
    before = "assistant"  # the previous draft's role: the first one must be a user draft
    for draft in drafts:
        role, blocks = draft.role, draft.blocks
        if role == before or not blocks:
            return False
        if role == "user":
            front = True  # still in the tool_result blocks at the start
            for block in blocks:
                kind = block["type"]
                if kind == "tool_result":
                    tid = block["tool_use_id"]
                    if not front or tid not in asked:  # moved, orphan or duplicate
                        return False
                    asked.discard(tid)
                elif kind == "tool_use":
                    return False
                else:
                    front = False
            if asked:  # a tool_use of the assistant draft before is not answered
                return False
        elif role == "assistant":
            for block in blocks:
                kind = block["type"]
                if kind == "tool_use":
                    tid = block["id"]
                    if tid in seen:
                        return False
                    seen.add(tid)
                    asked.add(tid)
                elif kind == "tool_result":
                    return False
        else:
            return False
        before = role
    return not asked  # the last draft, an assistant one, asked for no tool
