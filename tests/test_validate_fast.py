"""``validate_messages`` and ``cache_markers`` against their forms before the fast paths.

``validate_messages`` skips ``_check_pairing`` where the block loop says every pair is fine,
checks block keys and text with set and ``isspace`` tests before calling the block rules,
and walks the markers once; ``cache_markers`` recurses instead of stacking every value.
Each must give the same result (or the same error: type, message, rule, index, id) as the
reference forms kept here, on valid and on broken histories.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from mini_agent.core.block_rules import (ALLOWED_MESSAGE_KEYS, KNOWN_BLOCK_TYPES,
                                         block_keys_problem, text_problem,
                                         tool_result_content_problem)
from mini_agent.core.message_parts import content_blocks, tool_results, tool_uses
from mini_agent.core.messages import (Message, MessageValidationError, _raise_on,
                                      validate_messages)
from mini_agent.core.wire_rules import (cache_markers, cache_markers_iterative,
                                        final_whitespace_problem, ttl_order_problem)
from strategies import RandomSource, build_hostile_history

MAX_CACHE_CONTROL_MARKERS = 4


def reference_validate(messages: list[Message], *, system: Any = None,
                      tools: list[dict] | None = None, request: bool = True) -> None:
    """The validation as it was before its fast paths (the reference)."""
    if not messages:
        raise MessageValidationError("messages: at least one message is required",
                                     rule="empty_messages")
    seen_ids: set[str] = set()
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise MessageValidationError(f"messages.{i}: not a dict", rule="shape", index=i)
        extra = sorted(set(message) - ALLOWED_MESSAGE_KEYS)
        if extra:
            raise MessageValidationError(
                f"messages.{i}: unexpected keys {extra} (kit metadata must stay beside the "
                "message, never inside it)", rule="extra_keys", index=i)
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise MessageValidationError(f"messages.{i}: role must be 'user' or 'assistant', "
                                         f"got {role!r}", rule="role", index=i)
        if i == 0 and role != "user":
            raise MessageValidationError("messages.0: the first message must use the user role",
                                         rule="first_role", index=0)
        if i > 0 and messages[i - 1].get("role") == role:
            raise MessageValidationError(
                f"messages.{i}: roles must alternate (two {role} messages in a row)",
                rule="alternation", index=i)
        content = message.get("content")
        is_prefill = role == "assistant" and i == len(messages) - 1
        if content in ("", []) and not is_prefill:
            raise MessageValidationError(
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message", rule="empty_text", index=i)
        if isinstance(content, str):
            if content and not content.strip() and not is_prefill:
                raise MessageValidationError(
                    "messages: text content blocks must contain non-whitespace text",
                    rule="empty_text", index=i)
            continue
        if not isinstance(content, list):
            raise MessageValidationError(f"messages.{i}: content must be a string or a list "
                                         "of blocks", rule="shape", index=i)
        for j, block in enumerate(content):
            if not isinstance(block, dict) or "type" not in block:
                raise MessageValidationError(f"messages.{i}: every block needs a 'type'",
                                             rule="shape", index=i)
            kind = block["type"]
            if kind not in KNOWN_BLOCK_TYPES:
                raise MessageValidationError(
                    f"messages.{i}: unknown content block type {kind!r}",
                    rule="unknown_block_type", index=i)
            _raise_on(block_keys_problem(block, i), i)
            if kind == "text":
                _raise_on(text_problem(block, i, f"content.{j}"), i)
            elif kind == "tool_result":
                if role != "user":
                    raise MessageValidationError(
                        f"messages.{i}: tool_result blocks must be in a user message",
                        rule="tool_result_role", index=i, tool_use_id=block.get("tool_use_id"))
                if isinstance(block.get("content"), list):
                    _raise_on(tool_result_content_problem(block["content"], i), i)
                elif not isinstance(block.get("content", ""), str):
                    raise MessageValidationError(
                        f"messages.{i}: tool_result content must be a string or a list of "
                        "blocks", rule="tool_result_content", index=i)
            elif kind == "tool_use":
                if role != "assistant":
                    raise MessageValidationError(
                        f"messages.{i}: tool_use blocks must be in an assistant message",
                        rule="tool_use_role", index=i, tool_use_id=block.get("id"))
                if block.get("id") in seen_ids:
                    raise MessageValidationError(
                        f"messages.{i}: tool_use ids must be unique: {block.get('id')}",
                        rule="duplicate_id", index=i, tool_use_id=block.get("id"))
                seen_ids.add(block.get("id"))
                if not isinstance(block.get("input"), dict):
                    raise MessageValidationError(
                        f"messages.{i}: tool_use {block.get('id')} input must be an object",
                        rule="tool_use_input", index=i, tool_use_id=block.get("id"))
        _reference_pairing(messages, i)
    if request and final_whitespace_problem(messages[-1]):
        raise MessageValidationError(final_whitespace_problem(messages[-1]),
                                     rule="final_trailing_whitespace", index=len(messages) - 1)
    markers = len(cache_markers_iterative([tools or [], system or [], messages]))
    if markers > MAX_CACHE_CONTROL_MARKERS:
        raise MessageValidationError(
            f"A maximum of {MAX_CACHE_CONTROL_MARKERS} blocks with cache_control may be "
            f"provided. Found {markers}.", rule="cache_control_limit")
    problem = ttl_order_problem([tools or [], system if isinstance(system, list) else [],
                                 messages])
    if problem:
        raise MessageValidationError(problem, rule="cache_ttl_order")


def _reference_pairing(messages: list[Message], i: int) -> None:
    """Tool pairing checked on every message, as before."""
    message = messages[i]
    if message["role"] == "assistant":
        ids = [b["id"] for b in tool_uses(message)]
        if not ids:
            return
        following = messages[i + 1] if i + 1 < len(messages) else None
        answered = {b.get("tool_use_id") for b in tool_results(following)} if following else set()
        missing = [x for x in ids if x not in answered]
        if missing:
            raise MessageValidationError(
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message.",
                rule="tool_use_without_result", index=i, tool_use_id=missing[0])
    else:
        results = tool_results(message)
        if not results:
            return
        blocks = content_blocks(message)
        previous = messages[i - 1] if i > 0 else None
        asked = {b["id"] for b in tool_uses(previous)} if previous else set()
        for j, block in enumerate(blocks):
            tid = block.get("tool_use_id") if block.get("type") == "tool_result" else None
            if block.get("type") == "tool_result" and tid not in asked:
                raise MessageValidationError(
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {tid}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message.",
                    rule="tool_result_without_use", index=i, tool_use_id=tid)
        kinds = [b.get("type") for b in blocks]
        if kinds[:len(results)] != ["tool_result"] * len(results):
            raise MessageValidationError(
                f"messages.{i}: Did not find {len(results)} `tool_result` block(s) at the "
                "beginning of this message. Messages following `tool_use` blocks must begin "
                "with a matching number of `tool_result` blocks.",
                rule="tool_result_order", index=i)
        seen: set[str] = set()
        for block in results:
            tid = block.get("tool_use_id")
            if tid in seen:
                raise MessageValidationError(
                    f"messages.{i}: duplicate tool_result for {tid}",
                    rule="duplicate_result", index=i, tool_use_id=tid)
            seen.add(tid)



def outcome(check, messages, **kw) -> Any:
    """What a validation does: None, or the error's type, text and attributes."""
    try:
        check(messages, **kw)
    except MessageValidationError as err:
        return ("MessageValidationError", str(err), err.rule, err.index, err.tool_use_id)
    except Exception as err:  # noqa: BLE001 - the same crash counts as the same outcome
        return (type(err).__name__, str(err))
    return None


MARKERS = ({"type": "ephemeral"}, {"type": "ephemeral", "ttl": "1h"},
           {"type": "ephemeral", "ttl": "2h"}, {"type": "persistent"}, "yes", None)


def mutate(rng: random.Random, history: list[dict]) -> list:
    """One to three random damages of the kinds real files and buggy policies produce."""
    h = copy.deepcopy(history)
    for _ in range(rng.randint(1, 3)):
        if not h:
            return h
        i = rng.randrange(len(h))
        m = h[i]
        blocks = m["content"] if isinstance(m, dict) and isinstance(m.get("content"), list) \
            else None
        j = rng.randrange(len(blocks)) if blocks else None
        kind = rng.randrange(22)
        if kind == 0:
            del h[i]
        elif kind == 1 and i + 1 < len(h):
            h[i], h[i + 1] = h[i + 1], h[i]
        elif kind == 2:
            m["role"] = rng.choice(("user", "assistant", "system", None))
        elif kind == 3:
            m["timestamp"] = 1.0
        elif kind == 4:
            m["content"] = rng.choice(("", " \n", [], 5, "ok", None))
        elif not blocks or not isinstance(blocks[j], dict):
            continue
        elif kind == 5:
            blocks[j]["cache_control"] = rng.choice(MARKERS)
        elif kind == 6:
            blocks[j]["extra"] = 1
        elif kind == 7:
            blocks[j] = rng.choice(({"type": "text", "text": rng.choice(("", " ", "\u3000",
                                                                             "x", "y "))},
                                    {"type": "mystery"}, "text", {"text": "x"}, {}))
        elif kind == 8 and blocks[j].get("type") == "tool_use":
            blocks[j]["id"] = rng.choice(("toolu_dup", None, 7))
        elif kind == 9 and blocks[j].get("type") == "tool_use":
            del blocks[j]["id"]
        elif kind == 10 and blocks[j].get("type") == "tool_use":
            blocks[j]["input"] = rng.choice(("x", None, {"cache_control": {"type": "ephemeral"}},
                                             {"a": [{"cache_control": {"ttl": "1h"}}]}))
        elif kind == 11 and blocks[j].get("type") == "tool_result":
            blocks[j]["tool_use_id"] = rng.choice(("toolu_other", None))
        elif kind == 12 and blocks[j].get("type") == "tool_result":
            blocks[j]["content"] = rng.choice((
                5, [], [{"type": "text", "text": ""}], [{"type": "tool_use"}], ["x"],
                [{"type": "text", "text": "ok", "cache_control": {"type": "ephemeral"}}],
                [{"type": "text", "text": "ok", "bad": 1}]))
        elif kind == 13:
            blocks.insert(j, copy.deepcopy(blocks[j]))  # a duplicate block (id, result)
        elif kind == 14:
            del blocks[j]
        elif kind == 15:
            blocks.reverse()
        elif kind == 16:
            blocks.append({"type": "text", "text": rng.choice(("done ", "done", "\n"))})
        elif kind == 17 and blocks[j].get("type") == "text":
            blocks[j]["text"] = rng.choice((None, 3, "", " ", "fine"))
        elif kind == 18:
            blocks[j]["cache_control"] = {"type": "ephemeral", "ttl": rng.choice(("5m", "1h"))}
        elif kind == 19:
            other = rng.randrange(len(h))
            if isinstance(h[other], dict) and isinstance(h[other].get("content"), list):
                h[other]["content"].append(copy.deepcopy(blocks[j]))
        elif kind == 20:
            h.insert(i, "not a message")
        elif kind == 21 and blocks[j].get("type") == "text":
            blocks[j]["citations"] = [{"cache_control": {"type": "ephemeral"}}]
    return h


def histories(seed: int, count: int):
    rng = random.Random(seed)
    for _ in range(count):
        history = build_hostile_history(RandomSource(rng), max_turns=12)
        yield rng, history


def test_validate_messages_equals_its_reference_on_valid_and_broken_histories():
    broken = 0
    seen_rules = set()
    for rng, history in histories(1, 200):
        for messages in (history, mutate(rng, history), mutate(rng, history)):
            kw = rng.choice(({}, {"request": False},
                             {"system": [{"type": "text", "text": "s",
                                          "cache_control": rng.choice(MARKERS[:2])}]},
                             {"tools": [{"name": "t", "cache_control": {"type": "ephemeral"}}]
                              * rng.randint(1, 5)}))
            got, want = outcome(validate_messages, messages, **kw), \
                outcome(reference_validate, messages, **kw)
            assert got == want, (messages, kw)
            broken += want is not None
            if want is not None:
                seen_rules.add(want[2] if want[0] == "MessageValidationError" else want[0])
    # the damages reach most rules, so the comparison covers the error paths
    assert broken > 150 and len(seen_rules) >= 20, seen_rules


def test_cache_markers_equals_the_iterative_walk_at_any_depth():
    for rng, history in histories(2, 100):
        messages = mutate(rng, history)
        parts = [[{"cache_control": {"type": "ephemeral", "cache_control": {"ttl": "1h"}}}],
                 "system", messages]
        assert cache_markers(parts) == cache_markers_iterative(parts)
    deep: Any = {"cache_control": {"type": "ephemeral"}}
    for _ in range(5000):  # deeper than the interpreter's stack: the iterative walk answers
        deep = [deep, {"cache_control": {"ttl": "1h"}}]
    assert cache_markers(deep) == cache_markers_iterative(deep)
    assert len(cache_markers(deep)) == 5001


def test_markers_nested_anywhere_are_counted_as_before():
    with pytest.raises(MessageValidationError, match="Found 5"):
        validate_messages([{"role": "user", "content": [
            {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}]}],
            tools=[{"name": "a", "cache_control": {"type": "ephemeral"}},
                   {"name": "b", "input_schema": {"cache_control": {"type": "ephemeral"}}},
                   {"name": "c", "cache_control": {"type": "ephemeral"}},
                   {"name": "d", "cache_control": {"type": "ephemeral"}}])
    # four markers, the last one 1h after 5m ones: the TTL order is still checked
    with pytest.raises(MessageValidationError, match="must not come after"):
        validate_messages([{"role": "user", "content": [
            {"type": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}],
            tools=[{"name": "a", "cache_control": {"type": "ephemeral"}}])
