"""What the fast replay knows about one message: its :class:`MessageInfo`, assembled from its blocks.

:class:`~mini_agent.core.block_memo.BlockMemo` reduces each block of a message to a few facts
(its interned JSON identity, tokens, kind, whether it may carry a marker, whether it is a
masked or cleared result); :func:`assemble_info` turns a message's facts into the summary the
replay steps on: its blocks' identity keys, tokens and lookback positions, its markable block,
its newest masked result, its tool uses and results. It does not read JSON or count tokens
(the memo does), and it knows nothing of requests.

Pure: no IO, inputs never mutated (the identity table is extended in place).
Source: the prompt caching docs as modelled in :mod:`mini_agent.core.prompt_cache` (runs of
tool_use or tool_result blocks share one lookback position).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from mini_agent.core.block_identity import canonical_identity
from mini_agent.core.cache import CLEARED_TOOL_RESULT
from mini_agent.core.prompt_cache import RUN_TYPES

_ZERO = (0,)


# read-only by convention, not frozen: a frozen dataclass's __init__ is several times slower,
# and the replay makes one per fresh message of every request
@dataclasses.dataclass(eq=False, slots=True)
class MessageInfo:
    """What the replay needs to know about one message, computed once per message object.

    Attributes: keys: interned identity of each block (role, first-block flag and JSON);
    tokens: each block's estimate (``approx_tokens``); offsets: each block's lookback
    position relative to the message's first block; positions: how many positions the
    message takes; markable: index of the last block that may carry ``cache_control`` (None:
    none); anchor: index of the newest masked or cleared tool_result (None: none); chars,
    images: ``approx_tokens``' characters and image tokens of the whole message; uses:
    ``(id, name)`` of each tool_use; results: ``(block index, tool_use_id, not cleared yet)``
    of each tool_result; live_results: ``(block index, tool_use_id)`` of those not cleared.
    Two infos are equal only when they are the same object (``first_new_info`` relies on
    it); never change one after it is made (the memo shares it between requests).
    """

    keys: tuple[int, ...]
    tokens: tuple[int, ...]
    offsets: tuple[int, ...]
    positions: int
    markable: int | None
    anchor: int | None
    chars: int
    images: int
    uses: tuple[tuple[Any, Any], ...]
    results: tuple[tuple[int, Any, bool], ...]
    live_results: tuple[tuple[int, Any], ...] = ()


def assemble_info(interned: dict, role: Any, content: list,
                  facts: list[tuple]) -> MessageInfo:
    """The :class:`MessageInfo` of a message from its blocks' facts.

    One pass over the blocks (a one-block message takes a shorter path): the same summary as
    the reference loop ``tests/test_block_memo_assemble.py`` keeps.

    Args:
        interned: the memo's identity table (identity -> small int), extended in place.
        role: the message's role.
        content: its blocks (a list).
        facts: per block ``(json key, tokens, kind, markable, masked or cleared, chars,
            images)``, as ``BlockMemo._block`` returns them.

    Returns:
        The message's summary.
    """
    if not facts:
        return MessageInfo((), (), (), 0, None, None, 0, 0, (), ())
    plain = isinstance(role, str) and ":" not in role
    if len(facts) == 1 and plain and type(facts[0][2]) is str:
        return _assemble_one(interned, role, content[0], facts[0])
    if len(facts) == 2 and plain and type(facts[0][2]) is str and type(facts[1][2]) is str:
        return _assemble_two(interned, role, content, facts)
    intern = interned.setdefault
    keys, tokens, offsets, uses, results, live = [], [], [], [], [], []
    # runs of tool_use (or tool_result) blocks share one lookback position
    position, run = -1, None
    markable = anchor = None
    chars = images = 0
    for j, (json_key, tok, kind, can_mark, masked, c, im) in enumerate(facts):
        keys.append(intern((role, j == 0, json_key) if plain else
                           f"{role}:{int(j == 0)}:" + canonical_identity(content[j]),
                           len(interned)))
        tokens.append(tok)
        chars += c
        images += im
        run_key = kind if kind in RUN_TYPES else None
        if run_key is None or run_key != run:
            position += 1
        run = run_key
        offsets.append(position)
        if can_mark:
            markable = j
        if kind == "tool_result" or kind == "tool_use":
            if masked and kind == "tool_result":
                anchor = j
            _note_tool_block(content[j], j, kind, uses, results, live)
    return MessageInfo(tuple(keys), tuple(tokens), tuple(offsets), position + 1, markable,
                       anchor, chars, images, tuple(uses), tuple(results), tuple(live))


def _note_tool_block(block: dict, j: int, kind: str, uses: list, results: list,
                     live: list) -> None:
    """Append block ``j``'s tool call to ``uses``, or its result to ``results`` (and to
    ``live`` unless the server cleared it); the lists :class:`MessageInfo` keeps."""
    if kind == "tool_result":
        uid = block.get("tool_use_id")
        not_cleared = block.get("content") != CLEARED_TOOL_RESULT
        results.append((j, uid, not_cleared))
        if not_cleared:
            live.append((j, uid))
    else:
        uses.append((block.get("id"), block.get("name")))


def _assemble_one(interned: dict, role: str, block: dict, fact: tuple) -> MessageInfo:
    """:func:`assemble_info` of a one-block message (the usual), without the loop.

    Args:
        interned: the memo's identity table.
        role: the message's role (a str without ``:``).
        block: its only block.
        fact: the block's facts (``BlockMemo._block``), its ``kind`` a str.

    Returns:
        The same summary as :func:`assemble_info`'s loop
        (``tests/test_block_memo_assemble.py``).
    """
    json_key, tokens, kind, can_mark, masked, chars, images = fact
    key = interned.setdefault((role, True, json_key), len(interned))
    uses = results = live = ()
    anchor = None
    if kind == "tool_result":
        uid = block.get("tool_use_id")
        not_cleared = block.get("content") != CLEARED_TOOL_RESULT
        results = ((0, uid, not_cleared),)
        if not_cleared:
            live = ((0, uid),)
        if masked:
            anchor = 0
    elif kind == "tool_use":
        uses = ((block.get("id"), block.get("name")),)
    return MessageInfo((key,), (tokens,), _ZERO, 1, 0 if can_mark else None, anchor,
                       chars, images, uses, results, live)


def _assemble_two(interned: dict, role: str, content: list, facts: list[tuple]) -> MessageInfo:
    """:func:`assemble_info` of a two-block message (an assistant's text and tool_use), without
    the loop.

    Args:
        interned: the memo's identity table.
        role: the message's role (a str without ``:``).
        content: its two blocks.
        facts: the blocks' facts (``BlockMemo._block``), their ``kind`` strs.

    Returns:
        The same summary as :func:`assemble_info`'s loop
        (``tests/test_block_memo_assemble.py``).
    """
    (key0, tok0, kind0, mark0, masked0, c0, im0), (key1, tok1, kind1, mark1, masked1, c1, im1) \
        = facts
    intern = interned.setdefault
    key0 = intern((role, True, key0), len(interned))
    key1 = intern((role, False, key1), len(interned))
    # a run of tool_use (or tool_result) blocks shares one lookback position
    second = 0 if kind1 == kind0 and kind1 in RUN_TYPES else 1
    markable = 1 if mark1 else 0 if mark0 else None
    if kind0 == "text" and kind1 == "tool_use":  # the usual: no result, one use
        use = content[1]
        return MessageInfo((key0, key1), (tok0, tok1), (0, 1), 2, markable, None, c0 + c1,
                           im0 + im1, ((use.get("id"), use.get("name")),), (), ())
    uses, results, live = [], [], []
    anchor = None
    for j, kind, masked in ((0, kind0, masked0), (1, kind1, masked1)):
        if kind == "tool_result" or kind == "tool_use":
            if masked and kind == "tool_result":
                anchor = j
            _note_tool_block(content[j], j, kind, uses, results, live)
    return MessageInfo((key0, key1), (tok0, tok1), (0, second), second + 1, markable, anchor,
                       c0 + c1, im0 + im1, tuple(uses), tuple(results), tuple(live))
