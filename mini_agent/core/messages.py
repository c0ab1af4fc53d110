"""Build, read and validate Anthropic Messages API histories (plain ``MessageParam`` dicts).

Every request the kit sends passes through :func:`validate_messages`, and the offline Claude
runs the same check on each request body, so a history the API would refuse with a 400 fails
the same way offline. The rules checked here are the ones a context-engineering kit can
break by rewriting a history (masking, compaction, repairs of real transcripts); what a
single block may hold (its type and keys) is checked by ``mini_agent.core.block_rules``.

This module does no IO and never mutates its inputs. Taught in ``notebooks/01_agent_loop.ipynb``
and used by every other episode.

Shapes (Messages API, https://docs.anthropic.com/en/api/messages)::

    {"role": "user" | "assistant", "content": str | list[block]}
    block = {"type": "text", "text": str}
          | {"type": "tool_use", "id": str, "name": str, "input": dict}
          | {"type": "tool_result", "tool_use_id": str, "content": str | list[block],
             "is_error": bool (optional)}
          | {"type": "image", "source": {...}} | {"type": "thinking", ...} | ...

Source: Messages API reference (docs.anthropic.com/en/api/messages) and tool-use docs; the
API's 400 texts; 002_4516104fd432e704.txt pitfall 1 (every tool_use answered, in order).
"""

from __future__ import annotations

from typing import Any

from mini_agent.core.block_rules import (ALLOWED_BLOCK_KEYS, ALLOWED_MESSAGE_KEYS,
                                         KNOWN_BLOCK_TYPES, Problem,
                                         block_keys_problem, text_problem,
                                         tool_result_content_problem)
from mini_agent.core.message_parts import (  # noqa: F401 (re-exported)
    Block, Message, assistant, content_blocks, count_cache_control, iter_blocks, text_block,
    tool_names_by_id, tool_result_block, tool_result_positions, tool_result_text, tool_results,
    tool_use_block, tool_uses, user)
from mini_agent.core.wire_rules import (cache_control_problem, cache_markers,
                                       cache_markers_with_paths, final_whitespace_problem,
                                       ttl_order_problem)

NO_RESULT_TEXT = ("Interrupted: the session stopped (crash or kill) before this tool call "
                  "returned, so its result is unknown and whether it took effect was not "
                  "checked. Check what it would have changed before running it again.")
"""The ``is_error`` tool_result content for a tool call that never got a result: the loop
interrupted before its tools finished, a session log cut by a crash, a transcript with no
recorded result, a request that failed after its tool calls were kept
(:func:`answer_unanswered_tool_uses`). One text for one meaning, wherever the history is
repaired."""

MISSING_START_TEXT = ("[the transcript starts with an assistant turn; earlier history is not "
                      "in the file]")
"""The user message put before a history that starts with an assistant turn (a session log or
a transcript whose first messages are missing)."""

MAX_CACHE_CONTROL_MARKERS = 4
"""The API accepts at most four ``cache_control`` breakpoints per request (prompt caching docs)."""


class MessageValidationError(ValueError):
    """A history breaks a rule of the Messages API.

    Attributes: ``index`` (int | None): the offending message's position in the list;
    ``tool_use_id`` (str | None): the id involved, when the rule is about tool pairing;
    ``rule`` (str): a short rule name, e.g. ``"tool_use_without_result"``.
    """

    def __init__(self, message: str, *, rule: str, index: int | None = None,
                 tool_use_id: str | None = None) -> None:
        super().__init__(message)
        self.rule = rule
        self.index = index
        self.tool_use_id = tool_use_id


# --------------------------------------------------------------------------- builders

def _raise_on(problem: Problem | None, index: int) -> None:
    """Raise a block's ``(rule, sentence)`` problem as the error of message ``index``."""
    if problem:
        rule, sentence = problem
        raise MessageValidationError(sentence, rule=rule, index=index)


def validate_messages(messages: list[Message], *, system: Any = None,
                      tools: list[dict] | None = None, request: bool = True) -> None:
    """Raise :class:`MessageValidationError` if ``messages`` breaks a Messages API rule.

    Rules (each quoted from the API's own 400 messages or docs):
      * the list is non-empty, starts with a user message, and roles alternate
        (the API merges consecutive same-role turns, but the kit never sends them);
      * every block has a known ``type``; no kit-private keys (e.g. ``"timestamp"``) in blocks or
        messages;
      * "text content blocks must be non-empty" and "must contain non-whitespace text" (also
        inside list-shaped ``tool_result`` content); "all messages must have non-empty
        content except for the optional final assistant message"; "cache_control cannot be
        set for empty text blocks";
      * "tool_use ids were found without tool_result blocks immediately after": each
        assistant ``tool_use`` is answered by a ``tool_result`` with the same id in the
        next message, which is a user message;
      * "unexpected tool_use_id found in tool_result blocks": each ``tool_result`` answers
        a ``tool_use`` of the immediately preceding assistant message; ids are unique;
      * in a user message, ``tool_result`` blocks come first, text after them ("Did not find
        N `tool_result` block(s) at the beginning of this message");
      * at most 4 ``cache_control`` markers over tools, system and messages, each (on a
        tool and a system block too) ``{"type": "ephemeral", "ttl"?: "5m" | "1h"}``, longer
        TTLs before shorter ones
        (in the order tools, system, messages);
      * ``tool_result`` content is a string or a list of text/image/document/search_result
        blocks;
      * with ``request``: "final assistant content cannot end with trailing whitespace".

    Args:
        messages: the history, oldest first (never mutated).
        system: the request's ``system`` (str or blocks), only counted for cache markers.
        tools: the request's tool definitions, likewise.
        request: True (default) checks a request body; False checks a stored history,
            whose final assistant message is not sent as it is (a user message follows it
            first).

    Raises:
        MessageValidationError: the first broken rule, with ``index`` / ``tool_use_id`` set.

    Source: Messages API reference and tool-use docs (docs.anthropic.com); pitfall 1 of
    002_4516104fd432e704.txt; empty-text rule from the same seed.
    """
    if not messages:
        raise MessageValidationError("messages: at least one message is required",
                                     rule="empty_messages")
    seen_ids: set[str] = set()
    markers = 0  # cache_control values inside the blocks (a message holds no other place)
    asked: list = []  # the tool_use ids of the message before this one
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise MessageValidationError(f"messages.{i}: not a dict", rule="shape", index=i)
        # ``keys() <=`` asks the frozenset key by key (``issuperset`` of a dict builds a set)
        if not message.keys() <= ALLOWED_MESSAGE_KEYS:
            extra = sorted(set(message) - ALLOWED_MESSAGE_KEYS)
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
            asked = []
            continue
        if not isinstance(content, list):
            raise MessageValidationError(f"messages.{i}: content must be a string or a list "
                                         "of blocks", rule="shape", index=i)
        uses, results = [], []  # its tool_use and tool_result blocks, for the pairing
        for j, block in enumerate(content):
            if not isinstance(block, dict) or "type" not in block:
                raise MessageValidationError(f"messages.{i}: every block needs a 'type'",
                                             rule="shape", index=i)
            kind = block["type"]
            if kind not in KNOWN_BLOCK_TYPES:
                raise MessageValidationError(
                    f"messages.{i}: unknown content block type {kind!r}",
                    rule="unknown_block_type", index=i)
            unmarked = block.get("cache_control") is None
            allowed = ALLOWED_BLOCK_KEYS.get(kind)
            # fast form of block_keys_problem: no marker and no key beyond the allowed ones
            if not unmarked or not (allowed is None or block.keys() <= allowed):
                _raise_on(block_keys_problem(block, i), i)
            if kind == "text":
                text = block.get("text")
                # fast form of text_problem: unmarked, a str with a non-whitespace character
                if not (unmarked and isinstance(text, str) and text and not text.isspace()):
                    _raise_on(text_problem(block, i, f"content.{j}"), i)
            elif kind == "tool_result":
                results.append(block)
                if role != "user":
                    raise MessageValidationError(
                        f"messages.{i}: tool_result blocks must be in a user message",
                        rule="tool_result_role", index=i, tool_use_id=block.get("tool_use_id"))
                result = block.get("content", "")
                if type(result) is str:  # the usual content, asked first
                    pass
                elif isinstance(result, list):
                    _raise_on(tool_result_content_problem(result, i), i)
                elif not isinstance(result, str):
                    raise MessageValidationError(
                        f"messages.{i}: tool_result content must be a string or a list of "
                        "blocks", rule="tool_result_content", index=i)
            elif kind == "tool_use":
                uses.append(block)
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
            if not unmarked:
                markers += 1
            for value in block.values():  # markers nested in the block (a result's parts...)
                # a str is neither (asked first: a failed isinstance looks up __class__)
                if type(value) is not str and isinstance(value, (dict, list)):
                    markers += len(cache_markers(value))
        asked = _paired(messages, i, uses, results, asked)
    if request and final_whitespace_problem(messages[-1]):
        raise MessageValidationError(final_whitespace_problem(messages[-1]),
                                     rule="final_trailing_whitespace", index=len(messages) - 1)
    # what count_cache_control([tools or [], system or [], messages]) counts: the block loop
    # counted the messages' markers (role and content are their only keys, content is a
    # string or the blocks), so only tools and system are walked here
    outside = cache_markers_with_paths([tools or [], system if isinstance(system, list)
                                        else [], []]) if tools or system else []
    for path, marker in outside:   # each marker on a tool or system block is a valid one
        problem = cache_control_problem(marker)
        if problem:
            raise MessageValidationError(f"{path}: {problem}", rule="cache_control")
    markers += count_cache_control([tools or [], system or []])
    if markers > MAX_CACHE_CONTROL_MARKERS:
        raise MessageValidationError(
            f"A maximum of {MAX_CACHE_CONTROL_MARKERS} blocks with cache_control may be "
            f"provided. Found {markers}.", rule="cache_control_limit")
    # the TTL walk sees a subset of the markers just counted: none counted, none to order
    problem = ttl_order_problem([tools or [], system if isinstance(system, list) else [],
                                 messages]) if markers else None
    if problem:
        raise MessageValidationError(problem, rule="cache_ttl_order")


def _paired(messages: list[Message], i: int, uses: list[Block], results: list[Block],
            asked: list) -> list:
    """Check message ``i``'s tool pairing; return its tool_use ids (the next one's ``asked``).

    The fast form of :func:`_check_pairing`, given what the block loop collected: ``uses``
    and ``results`` (message ``i``'s tool_use and tool_result blocks, in order) and
    ``asked`` (the ids of the previous message's tool_uses). When a rule is broken it calls
    :func:`_check_pairing`, which raises the error. ``tests/test_validate_fast.py`` compares
    :func:`validate_messages` with the form that calls ``_check_pairing`` on every message.
    """
    if uses:  # an assistant message (the block loop refused tool_use in a user message)
        ids = [b["id"] for b in uses]
        following = messages[i + 1] if i + 1 < len(messages) else None
        if not _answered_ids(following).issuperset(ids):
            _check_pairing(messages, i)
        return ids
    if results:  # a user message
        content = messages[i]["content"]
        tids = [b.get("tool_use_id") for b in results]
        if not (set(asked).issuperset(tids) and len(set(tids)) == len(tids) and all(
                b["type"] == "tool_result" for b in content[:len(results)])):
            _check_pairing(messages, i)
    return []


def _answered_ids(following: Message | None) -> set:
    """The tool_use ids ``following`` answers: ``{b.get("tool_use_id") for b in
    tool_results(following)}``, read straight from a list content; empty for no message."""
    if not following:
        return set()
    blocks = following.get("content")
    if type(blocks) is not list:
        return {b.get("tool_use_id") for b in tool_results(following)}
    return {b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"}


def _check_pairing(messages: list[Message], i: int) -> None:
    """Raise the first tool-pairing rule message ``i`` breaks (the reference form)."""
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


def answer_unanswered_tool_uses(messages: list[Message], *,
                                text: str = NO_RESULT_TEXT) -> list[Message]:
    """Answer every ``tool_use`` that has no ``tool_result`` in the next message.

    A history can hold such a call after a request failed mid-turn (the assistant turn was
    kept, its tools never ran) or at its very end; sent as it is, the API refuses it ("tool_use
    ids were found without tool_result blocks immediately after"). Each missing id gets
    ``{"type": "tool_result", "tool_use_id": id, "content": text, "is_error": True}`` at the
    front of the next user message, or in a new user message when the call is the last
    message or is followed by another assistant message.

    Args:
        messages: the history (never mutated).
        text: the answers' content (default :data:`NO_RESULT_TEXT`).

    Returns:
        A new list (unchanged messages are shared); a history with nothing unanswered comes
        back equal to the input.

    >>> fixed = answer_unanswered_tool_uses([user("go"), assistant([tool_use_block(
    ...     "toolu_1", "grep", {})])])
    >>> fixed[-1]["content"][0]["tool_use_id"], fixed[-1]["content"][0]["is_error"]
    ('toolu_1', True)
    """
    out: list[Message] = []
    for i, message in enumerate(messages):
        if out and out[-1] is not None and _pending_ids(out[-1], message):
            missing = _pending_ids(out[-1], message)
            answers = [tool_result_block(tid, text, is_error=True) for tid in missing]
            if isinstance(message, dict) and message.get("role") == "user":
                message = {"role": "user", "content": [*answers, *content_blocks(message)]}
            else:
                out.append({"role": "user", "content": answers})
        out.append(message)
    if out and _pending_ids(out[-1], None):
        out.append({"role": "user", "content": [
            tool_result_block(tid, text, is_error=True) for tid in _pending_ids(out[-1], None)]})
    return out


def _pending_ids(message: Any, following: Any) -> list[str]:
    """Ids of ``message``'s tool_uses that ``following`` does not answer."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return []
    answered = {b.get("tool_use_id") for b in tool_results(following)} \
        if isinstance(following, dict) else set()
    return [b["id"] for b in tool_uses(message) if b.get("id") not in answered]
