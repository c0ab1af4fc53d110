"""How the block memo reads a recorded history: its usual blocks summarised inline.

:class:`~mini_agent.core.block_memo.BlockMemo` summarises every message of a session's
history once (the history's messages are shared by every request and every policy). Most of
a history's blocks have one of three shapes: a text block, a tool_result of string content,
a tool_use with a dict input, each with exactly its API keys. For those, :func:`history_facts`
builds the block's stand-in for its JSON (what ``flat_key`` or ``tree_key`` give: ``(key,
type, value)`` per item, sorted by key) and counts its facts inline, and reads the pieces
``view_text`` takes from the message on the way; any other block is left to the memo's own
``_block``. It does not know requests or policies.

Pure: no IO, inputs never mutated (the memo's tables are extended in place).
Source: the prompt caching docs as modelled in :mod:`mini_agent.core.prompt_cache` (block
identity is the bytes sent).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from mini_agent.core.cache import CLEARED_TOOL_RESULT
from mini_agent.core.mask_placeholder import is_masked
from mini_agent.core.tokens import CHARS_PER_TOKEN, TOOL_USE_OVERHEAD_CHARS, tool_input_json
from mini_agent.core.tree_key import tree_key

_TEXT_ITEM = ("type", str, "text")
_RESULT_ITEM = ("type", str, "tool_result")
_USE_ITEM = ("type", str, "tool_use")
"""The ``type`` item of each usual block's stand-in (``flat_key``'s ``(key, type, value)``)."""

def history_facts(content: list, blocks: dict, flat: dict, keys: dict,
                  slow_block: Callable[[Any], tuple]) -> tuple[list[tuple], list[str] | None]:
    """Each block's facts, as ``BlockMemo._block`` gives them, and the message's pieces.

    The same facts, interned in the same order: a usual block (see the module doc) has its
    stand-in built directly and its facts counted inline, any other asks ``slow_block``.
    ``tests/test_block_memo_history.py`` compares the memo built this way with one that
    summarises each block with ``_block``.

    Args:
        content: a history message's blocks (a list); never mutated.
        blocks: the memo's ``id(block) -> (block, facts)`` table, extended.
        flat: the memo's ``stand-in -> facts`` table, extended.
        keys: the memo's identity table (identity -> small int), extended.
        slow_block: the memo's ``_block``.

    Returns:
        ``(facts, pieces)``: per block ``(json key, tokens, kind, markable, masked or
        cleared, chars, images)``; the message's ``message_pieces(message,
        canonical=True)`` when every block is a usual one whose pieces are read here (a
        tool_use's input of scalar values), else None.
    """
    out: list[tuple] = []
    pieces: list[str] | None = []
    for block in content:
        if type(block) is dict and len(block) <= 4:
            kind = block.get("type")
            stand_in = None
            if kind == "text":
                text = block.get("text")
                if len(block) == 2 and type(text) is str:
                    stand_in = (("text", str, text), _TEXT_ITEM)
                    chars, can_mark, masked = len(text), bool(text.strip()), False
                    if pieces is not None:
                        pieces.append(text)
            elif kind == "tool_result":
                body, uid = block.get("content"), block.get("tool_use_id")
                if len(block) == 3 and type(body) is str and type(uid) is str:
                    stand_in = (("content", str, body), ("tool_use_id", str, uid),
                                _RESULT_ITEM)
                    chars, can_mark = len(body), True
                    masked = body[:1] == "[" and (body == CLEARED_TOOL_RESULT
                                                  or is_masked(block))
                    if pieces is not None:
                        pieces.append(body)
            elif kind == "tool_use":
                uid, name, args = block.get("id"), block.get("name"), block.get("input")
                if len(block) == 4 and type(uid) is str and type(name) is str and \
                        type(args) is dict:
                    args_key = tree_key(args)
                    if args_key is not None:
                        stand_in = (("id", str, uid), ("input", dict, args_key),
                                    ("name", str, name), _USE_ITEM)
                        chars = len(tool_input_json(block)) + len(name) + TOOL_USE_OVERHEAD_CHARS
                        can_mark, masked = True, False
                        if pieces is not None:
                            # its items sorted without cache_control, scalars as they are
                            pieces.append(name)
                            for k, value_type, v in args_key:
                                if value_type is dict or value_type is list:
                                    pieces = None  # nested: ``message_pieces`` reads it
                                    break
                                pieces.append(f"{k}: {v}")
            if stand_in is not None:
                # (a stand-in is in ``keys`` exactly when it is in ``flat``: an equal block
                # seen before keeps its identity and its facts)
                fact = flat.setdefault(stand_in, (keys.setdefault(stand_in, len(keys)),
                                                  math.ceil(chars / CHARS_PER_TOKEN), kind,
                                                  can_mark, masked, chars, 0))
                blocks[id(block)] = (block, fact)
                out.append(fact)
                continue
        pieces = None
        fact = slow_block(block)
        blocks[id(block)] = (block, fact)
        out.append(fact)
    return out, pieces
