"""BlockMemo's history path (``history_facts``) equals summarising each message block by block."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings

from mini_agent.core.block_memo import BlockMemo, MessageInfo
from mini_agent.core.cache import CLEARED_TOOL_RESULT
from mini_agent.core.masking import mask_old_observations, placeholder
from mini_agent.core.retention import message_pieces
from strategies import hostile_histories

ODD = [
    {"role": "user", "content": [{"type": "text", "text": "  "},
                                 {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
                                 {"text": "a", "type": "text"}, {"type": "text", "text": "a"}]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "u", "name": "n",
                                       "input": {"b": None, "a": 1, "c": False, "d": "x"}}]},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "u", "name": "n",
                                       "input": {"b": [1], "a": 1}}]},
    {"role": "assistant", "content": [
        {"type": "tool_use", "id": "u", "name": "n", "input": {"a": 1}},
        {"type": "tool_use", "id": "u", "name": "n", "input": {"a": True}},
        {"type": "tool_use", "id": "u", "name": "n", "input": {"a": 1.0}},
        {"type": "tool_use", "id": "u", "name": "n", "input": {"a": {"cache_control": 1}}},
        {"type": "tool_use", "id": "u", "name": "n", "input": {}},
        {"type": "tool_use", "id": "u", "name": "n", "input": "not a dict"},
        {"type": "tool_use", "id": 7, "name": "n", "input": {}},
        {"type": "tool_use", "id": "v", "name": "n"},
        {"type": "tool_use", "id": "u", "name": "n", "input": {"a": 1},
         "cache_control": {"type": "ephemeral"}}]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "u", "content": CLEARED_TOOL_RESULT},
        {"type": "tool_result", "tool_use_id": "u", "content": placeholder("a\nb")},
        {"type": "tool_result", "tool_use_id": "u", "content": "[not a placeholder]"},
        {"type": "tool_result", "tool_use_id": "u", "content": "x", "is_error": True},
        {"type": "tool_result", "tool_use_id": "u", "content": "x", "is_error": 1},
        {"type": "tool_result", "tool_use_id": None, "content": "x"},
        {"type": "tool_result", "tool_use_id": "u", "content": None},
        {"type": "tool_result", "tool_use_id": "u", "content": [{"type": "text", "text": "x"}]},
        {"type": "tool_result", "tool_use_id": "u", "content": "x"}]},
    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b", "n": 0.0},
                                 {"type": "thinking", "thinking": "t"}, {"text": "no type"}]},
    {"role": "tool:x", "content": [{"type": "text", "text": "a"}]},
    {"role": "user", "content": "plain"},
    {"role": "user", "content": []},
    {"role": 3, "content": [{"type": "text", "text": "a"}]},
]


def _fields(info: MessageInfo) -> list:
    return [getattr(info, f.name) for f in dataclasses.fields(MessageInfo)]


def _by_blocks(history: list[dict]) -> BlockMemo:
    """The reference: every history message summarised block by block (``_block`` each)."""
    memo = BlockMemo()
    for message in history:
        memo._fixed[id(message)] = (message, memo._summarise(message, keep_blocks=True))
    return memo


def _same_memo(fast: BlockMemo, slow: BlockMemo, views: list[list[dict]]) -> None:
    assert list(fast._keys.items()) == list(slow._keys.items())  # the same ints, interned in order
    assert {k: v[1] for k, v in fast._blocks.items()} == {k: v[1] for k, v in slow._blocks.items()}
    assert fast._flat == slow._flat
    got = [_fields(fast.info(m)) for view in views for m in view]
    assert got == [_fields(slow.info(m)) for view in views for m in view]
    for message, text in fast._texts.values():  # the pieces read on the way
        assert text == ("\n".join(message_pieces(message, canonical=True)) or None)
    readable = [[m for m in view if _readable(m)] for view in views]
    assert [fast.text(view) for view in readable] == [slow.text(view) for view in readable]


def _readable(message: dict) -> bool:
    """Whether ``message_pieces`` reads the message (a tool input that is a str it does not)."""
    try:
        message_pieces(message, canonical=True)
    except AttributeError:
        return False
    return True


def test_the_history_path_equals_the_block_by_block_summary_on_odd_blocks():
    history = ODD + [dict(m) for m in ODD]   # copies: equal blocks share one identity
    fast = BlockMemo(history)
    _same_memo(fast, _by_blocks(history), [history])
    text = fast.info(ODD[0])
    # neither the key order nor a marker is in the identity; the first block's flag is
    assert text.keys[1] == text.keys[2] == text.keys[3] != text.keys[0]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=hostile_histories(max_turns=12))
def test_the_history_path_equals_the_block_by_block_summary(history):
    history = history + ODD
    views = [history, mask_old_observations(history, keep=1)]
    _same_memo(BlockMemo(history), _by_blocks(history), views)


def test_system_blocks_share_an_identity_exactly_when_their_json_is_equal():
    """Prompts are told apart by ``==``, not by hash: an equal copy is the same prompt, an equal
    static part is the same block, a different one is not."""
    from mini_agent.core.block_identity import compact_json
    from mini_agent.core.cache import DYNAMIC_BOUNDARY, build_system_blocks
    long = "S" * 9000
    prompts = [long, "".join(["S" * 4500, "S" * 4500]), long + DYNAMIC_BOUNDARY + "now: 1",
               long + DYNAMIC_BOUNDARY + "now: 2", "T" * 9000 + DYNAMIC_BOUNDARY + "now: 1",
               "S" * 8999 + "T", "now: 1"]
    memo = BlockMemo()
    seen: dict[str, int] = {}
    for prompt in prompts:
        info, marks = memo.system(prompt)
        blocks = build_system_blocks(prompt)
        assert marks == [k for k, b in enumerate(blocks) if b.get("cache_control")]
        for key, block in zip(info.keys, blocks, strict=True):
            body = compact_json({k: v for k, v in block.items() if k != "cache_control"})
            assert seen.setdefault(body, key) == key   # equal JSON: one identity
        assert memo.system(prompt)[0] is info
    assert len(set(seen.values())) == len(seen)         # different JSON: different ones
    assert memo.system("".join(["now", ": 1"]))[0].keys[0] == seen[compact_json(
        {"type": "text", "text": "now: 1"})]
