"""BlockMemo's column-wise ``_assemble`` equals the block-by-block reference loop."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings

from mini_agent.core.block_identity import canonical_identity
from mini_agent.core.block_memo import BlockMemo, MessageInfo
from mini_agent.core.cache import CLEARED_TOOL_RESULT
from mini_agent.core.masking import mask_old_observations
from mini_agent.core.prompt_cache import RUN_TYPES
from strategies import hostile_histories


def _assemble_by_blocks(self, role, content, facts):
    """The reference: one pass over the blocks, every field gathered block by block."""
    keys, tokens, offsets = [], [], []
    position, run = -1, None
    markable = anchor = None
    uses, results = [], []
    chars = images = 0
    plain_role = isinstance(role, str) and ":" not in role
    for j, (json_key, tok, kind, can_mark, masked, c, im) in enumerate(facts):
        keys.append(self.key((role, j == 0, json_key)) if plain_role else
                    self.key(f"{role}:{int(j == 0)}:" + canonical_identity(content[j])))
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
        if kind == "tool_result":
            block = content[j]
            if masked:
                anchor = j
            results.append((j, block.get("tool_use_id"),
                            block.get("content") != CLEARED_TOOL_RESULT))
        elif kind == "tool_use":
            block = content[j]
            uses.append((block.get("id"), block.get("name")))
    return MessageInfo(tuple(keys), tuple(tokens), tuple(offsets), position + 1, markable,
                       anchor, chars, images, tuple(uses), tuple(results),
                       tuple((j, uid) for j, uid, live in results if live))


def _fields(info):
    return [getattr(info, f.name) for f in dataclasses.fields(MessageInfo)]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=hostile_histories(max_turns=10))
def test_column_wise_assemble_equals_the_block_by_block_loop(history):
    odd = [{"role": "user", "content": []},
           {"role": "tool:x", "content": [{"type": "text", "text": "a"},
                                          {"type": "tool_use", "id": "u", "name": "n",
                                           "input": {}}]},
           {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "u",
                                         "content": CLEARED_TOOL_RESULT},
                                        {"type": "tool_result", "tool_use_id": "v",
                                         "content": "x"}]},
           {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "w",
                                         "content": CLEARED_TOOL_RESULT}]},
           {"role": "assistant", "content": [{"type": "tool_use", "id": "w", "name": "n",
                                              "input": {"a": 1}}]},
           {"role": "user", "content": [{"text": "no type"}]}]
    views = [history + odd, mask_old_observations(history, keep=1)]
    fast = BlockMemo(views[0])
    slow = BlockMemo.__new__(BlockMemo)
    original = BlockMemo._assemble
    try:
        BlockMemo._assemble = _assemble_by_blocks
        slow.__init__(views[0])
        slow_infos = [_fields(slow.info(m)) for view in views for m in view]
    finally:
        BlockMemo._assemble = original
    fast_infos = [_fields(fast.info(m)) for view in views for m in view]
    assert fast_infos == slow_infos
