"""Per-session memo of the explorer's fast replay: each message and block summarised once.

The fast replay (:mod:`mini_agent.core.fast_replay`) needs, for every message a request sends,
what the reference replay would compute from the request: each block's identity as the
prompt cache sees it (its JSON with ``cache_control`` removed and keys sorted, as
``place_breakpoints(canonical=True)`` sends it), its token estimate, its lookback position,
whether it may carry a marker, whether it is a masked or cleared result. :class:`BlockMemo`
computes that once per message object (the history's messages are shared by every request
and every policy) and once per content for a policy's fresh blocks (mask placeholders,
cleared results), and interns identities as small ints so prefixes compare by int
(:mod:`mini_agent.core.message_info` assembles a message's summary from its blocks' facts).

Pure: no IO, inputs never mutated (objects are held while remembered, so an id is never
reused for another object). Used by :func:`mini_agent.core.fast_replay.fast_replay`.
Source: the prompt caching docs as modelled in :mod:`mini_agent.core.prompt_cache` (block
identity is the bytes sent; runs of tool_use or tool_result blocks share one position).
"""

from __future__ import annotations

import json
import math
from operator import is_
from typing import Any, Sequence

from mini_agent.core.block_identity import (STRING_CONTENT_MARK, SYSTEM_MARK, Unsupported,
                                            canonical_identity, compact_json,
                                            first_difference, flat_key, same_message)
from mini_agent.core.cache import CLEARED_TOOL_RESULT, build_system_blocks, is_markable
from mini_agent.core.masking import is_masked
from mini_agent.core.message_info import MessageInfo, assemble_info
from mini_agent.core.messages import Message
from mini_agent.core.history_facts import history_facts
from mini_agent.core.tokens import CHARS_PER_TOKEN, _block_chars, approx_tokens
from mini_agent.core.tree_key import tree_key


_canonical_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"),
                                   sort_keys=True).encode
"""``canonical_identity``'s first dump, the same text, from one encoder made once (``json.dumps``
with options builds a new encoder on every call); a block whose JSON names ``cache_control``
takes ``canonical_identity`` itself, which strips the markers."""


class BlockMemo:
    """Per-session memo: message object -> :class:`MessageInfo`, identity string -> key.

    Messages are remembered by object (``id``) while the memo holds them, so the history's
    messages, shared by every request and every policy, are summarised once. One memo per
    session (it keeps the session's messages alive).

    Args:
        keep: messages whose summary is kept for the memo's whole life (the history); other
            messages (a policy's fresh copies) are kept only until :meth:`rotate` is called
            twice, so long sessions do not keep every view alive.
    """

    def __init__(self, keep: Sequence[Message] = ()) -> None:
        self._keys: dict[str, int] = {}
        self._fixed: dict[int, tuple[Message, MessageInfo]] = {}
        self._recent: dict[int, tuple[Message, MessageInfo]] = {}
        self._older: dict[int, tuple[Message, MessageInfo]] = {}
        self._texts: dict[int, tuple[Message, str | None]] = {}
        self._systems: list[tuple[str, MessageInfo, list[int]]] = []
        self._system_bodies: list[tuple] = []
        self._blocks: dict[int, tuple[Any, tuple]] = {}
        self._flat: dict[tuple, tuple] = {}
        self._by_content: dict[tuple, MessageInfo] = {}   # (role, *block facts) -> summary
        self._points: tuple[list, list[int]] | None = None
        # the history's usual blocks are summarised inline (:mod:`.history_facts`), their
        # messages' ``view_text`` pieces read on the way
        keys, blocks, flat, texts = self._keys, self._blocks, self._flat, self._texts
        self._kept = list(keep)
        self._kept_infos: list[MessageInfo] = []   # parallel to ``_kept``
        for message in self._kept:
            content = message.get("content") if type(message) is dict else None
            role = message.get("role") if content is not None else None
            if type(content) is list and type(role) is str and ":" not in role:
                facts, pieces = history_facts(content, blocks, flat, keys, self._block)
                info = assemble_info(keys, role, content, facts)
                if pieces is not None:
                    texts[id(message)] = (message, "\n".join(pieces) if pieces else None)
            else:
                info = self._summarise(message, keep_blocks=True)
            self._fixed[id(message)] = (message, info)
            self._kept_infos.append(info)

    def request_points(self, messages: Sequence[Message]) -> list[int]:
        """``request_points(messages)``, computed once while the history stays the same.

        Args:
            messages: the recorded history (compared with the one remembered, item by item
                in C, so a changed list is never answered from the memo).

        Returns:
            The ascending history lengths of the requests (a list the caller must not change).
        """
        from mini_agent.core.cache_policies import request_points
        held = self._points
        if held is None or held[0] != messages:
            held = self._points = (list(messages), request_points(list(messages)))
        return held[1]

    def key(self, identity: Any) -> int:
        """Intern one identity.

        Args:
            identity: a block's JSON as the cache sees it, or the prefix identity of one
                block: ``role:first:json`` as a str, or ``(role, first, key of the JSON)``
                (the same thing without copying the JSON; roles never hold ``:``).

        Returns:
            A small int, equal for equal identities within this memo.
        """
        return self._keys.setdefault(identity, len(self._keys))

    def info(self, message: Message) -> MessageInfo:
        """Return the summary of ``message``, computing it on first sight.

        Args:
            message: one message of a view; never mutated.

        Returns:
            Its :class:`MessageInfo`.

        Raises:
            Unsupported: a block that is not a dict, or content of another type.
        """
        ident = id(message)
        for table in (self._fixed, self._recent, self._older):
            hit = table.get(ident)
            if hit is not None and hit[0] is message:
                if table is self._older:
                    self._recent[ident] = hit
                return hit[1]
        info = self._summarise(message)
        self._recent[ident] = (message, info)
        return info

    def system(self, system: str) -> tuple[MessageInfo, list[int]]:
        """The system prompt as ``place_breakpoints`` sends it, summarised once per prompt.

        Prompts and their blocks are told apart by ``==`` (a ``memcmp``), never by hash: a
        session's stand-in prompt is tens of thousands of characters, and a memo sees one or
        two prompts.

        Args:
            system: the system prompt (a str: :func:`build_system_blocks` splits it at the
                dynamic boundary and marks the static part).

        Returns:
            ``(info, marked)``: its blocks as a :class:`MessageInfo` (each block one lookback
            position) and the indices of the blocks that carry ``cache_control``.
        """
        for held, info, marks in self._systems:
            if held is system or held == system:
                return info, list(marks)
        keys, tokens, marks = [], [], []
        for k, block in enumerate(build_system_blocks(system)):
            body = {key: v for key, v in block.items() if key != "cache_control"}
            keys.append(self.key(self._system_key(body)))
            tokens.append(approx_tokens(block))
            if block.get("cache_control"):
                marks.append(k)
        info = MessageInfo(tuple(keys), tuple(tokens), tuple(range(len(keys))), len(keys),
                           None, None, 0, 0, (), ())
        self._systems.append((system, info, marks))
        return info, list(marks)

    def _system_key(self, body: dict) -> Any:
        """The identity of one system block (without its marker): when every value is a str,
        its items in order stand for its JSON, and equal items take one number
        (``(SYSTEM_MARK, n)``); otherwise its JSON."""
        if not all(type(v) is str for v in body.values()):
            return "system:" + compact_json(body)
        items = tuple(body.items())
        for n, held in enumerate(self._system_bodies):
            if held == items:
                return SYSTEM_MARK, n
        self._system_bodies.append(items)
        return SYSTEM_MARK, len(self._system_bodies) - 1

    def text(self, view: Sequence[Message]) -> str:
        """``view_text`` of ``view`` as the reference sends it, each message read once.

        Args:
            view: the messages of one request; never mutated.

        Returns:
            The pieces of every message (tool inputs with sorted keys, as
            ``place_breakpoints(canonical=True)`` sends them) joined by newlines.
        """
        from mini_agent.core.retention import message_pieces
        texts = []
        add, held = texts.append, self._texts
        for message in view:
            hit = held.get(id(message))
            if hit is None or hit[0] is not message:
                parts = message_pieces(message, canonical=True)
                hit = held[id(message)] = (message, "\n".join(parts) if parts else None)
            if hit[1] is not None:
                add(hit[1])
        return "\n".join(texts)

    def infos(self, view: Sequence[Message]) -> list[MessageInfo]:
        """:meth:`info` of every message of ``view``, in order.

        Args:
            view: the messages of one request; never mutated.

        Returns:
            A list parallel to ``view``.

        Raises:
            Unsupported: as :meth:`info`.
        """
        kept = self._kept
        # a prefix of the history (the same objects; no message object kept twice, so each
        # one's summary is the one ``_fixed`` holds): its summaries as they were made
        if len(view) <= len(kept) and len(self._fixed) == len(kept) and \
                all(map(is_, view, kept)):
            return self._kept_infos[:len(view)]
        fixed = self._fixed
        out = []
        for message in view:
            hit = fixed.get(id(message))
            out.append(hit[1] if hit is not None and hit[0] is message
                       else self.info(message))
        return out

    def view_infos(self, view: Sequence[Message], before: Sequence[Message],
                   before_infos: list[MessageInfo]) -> list[MessageInfo]:
        """:meth:`infos` of ``view``, reusing those of the same policy's previous view.

        Equal to ``self.infos(view)`` (the same summaries, by value): the messages before the
        first one that is not the same object as in ``before`` (a C-level scan) take
        ``before_infos`` as they are; a later message takes its info from ``before`` when it
        is the same object at the same index, from the memo when it was seen before (the
        history, a copy a policy keeps), from ``before`` at the same index when it is an
        equal copy (a mask policy copies every masked message on every request), else it is
        summarised (and remembered like :meth:`info` does).

        Args:
            view: the messages of this request; never mutated.
            before: the messages of the previous request of the same replay (``[]`` at the
                first).
            before_infos: ``self.view_infos`` (or :meth:`infos`) of ``before``.

        Returns:
            A list parallel to ``view``.

        Raises:
            Unsupported: as :meth:`info`.
        """
        d = first_difference(view, before)
        out = before_infos[:d]
        add = out.append
        fixed, recent, older = self._fixed, self._recent, self._older
        n_before = len(before)
        for k in range(d, len(view)):
            message = view[k]
            if k < n_before and message is before[k]:
                add(before_infos[k])
                continue
            ident = id(message)  # a message seen before: the history, or a policy's kept copy
            hit = fixed.get(ident)
            if hit is None or hit[0] is not message:
                hit = recent.get(ident)
                if hit is None or hit[0] is not message:
                    hit = older.get(ident)
                    if hit is None or hit[0] is not message:
                        hit = None
                    else:
                        recent[ident] = hit
            if hit is not None:
                add(hit[1])
                continue
            if k < n_before and same_message(message, before[k]):
                info = before_infos[k]
            else:
                info = self._summarise(message)
            recent[ident] = (message, info)
            add(info)
        return out

    def rotate(self) -> None:
        """Forget fresh messages not seen since the previous call (call once per request)."""
        self._older, self._recent = self._recent, {}

    def _block(self, block: Any) -> tuple:
        """``(json key, tokens, kind, markable, masked or cleared, chars, images)`` of a block,
        remembered for the history's blocks (their objects are shared by every view)."""
        hit = self._blocks.get(id(block))
        if hit is not None and hit[0] is block:
            return hit[1]
        if not isinstance(block, dict):
            raise Unsupported("a block that is not a dict")
        # a block of scalar values (text, a string tool_result, a policy's placeholder) is
        # known by its flat key, which also stands for its canonical JSON (True == 1 and
        # 0.0 == -0.0, but they dump apart: the key holds the types, floats take the JSON)
        # nested values (a tool_use's input): the same stand-in one level down (``tree_key``
        # gives the flat key itself to a block of scalars)
        kind = block.get("type")
        flat = tree_key(block) if kind == "tool_use" else flat_key(block)
        if flat is None and kind != "tool_use":
            flat = tree_key(block)
        if flat is not None:
            hit = self._flat.get(flat)
            if hit is not None:
                return hit
        body = block.get("content") if kind == "tool_result" else None
        chars, images = _block_chars(block)
        # approx_tokens of a block dict is this same sum (a dict with "role" counts as a message)
        tokens = (math.ceil(chars / CHARS_PER_TOKEN) + images if "role" not in block
                  else approx_tokens(block))
        if flat is None:
            identity = _canonical_json(block)
            if '"cache_control"' in identity:  # markers nested somewhere: strip them
                identity = canonical_identity(block)
        keys = self._keys   # :meth:`key`, inlined
        facts = (keys.setdefault(flat if flat is not None else identity, len(keys)), tokens,
                 kind, is_markable(block),
                 # both placeholders open with "[": a result that does not is neither
                 kind == "tool_result" and isinstance(body, str) and body[:1] == "["
                 and (body == CLEARED_TOOL_RESULT or is_masked(block)),
                 chars, images)
        if flat is not None:
            self._flat[flat] = facts
        return facts

    def _summarise(self, message: Message, keep_blocks: bool = False) -> MessageInfo:
        role = message.get("role")
        content = message.get("content")
        if isinstance(content, str):
            # one text block ``{"type": "text", "text": content}``, as the reference sends it
            tokens = math.ceil(len(content) / CHARS_PER_TOKEN)
            key = self.key((STRING_CONTENT_MARK, f"{role}", content))
            return MessageInfo((key,), (tokens,), (0,), 1,
                               0 if content.strip() else None, None, len(content), 0, (), ())
        if not isinstance(content, list):
            if content is None:
                content = []
            else:
                raise Unsupported(f"content of type {type(content).__name__}")
        facts = []
        for block in content:
            fact = self._block(block)
            if keep_blocks:
                self._blocks[id(block)] = (block, fact)
            facts.append(fact)
        # the summary depends on the role and the blocks' facts only (their identities name
        # their JSON, so their ids, names and contents too): a policy's copy equal to a
        # message summarised before (a mask placeholder rebuilt, a view's head rebuilt with
        # the same lines) takes that summary, as ``_assemble`` would rebuild it
        if keep_blocks or not isinstance(role, str) or ":" in role:
            return self._assemble(role, content, facts)  # (the history seldom repeats)
        signature = (role, *facts)
        try:
            info = self._by_content.get(signature)
        except TypeError:  # a block "type" that is not hashable: no sharing
            return self._assemble(role, content, facts)
        if info is None:
            info = self._by_content[signature] = self._assemble(role, content, facts)
        return info

    def _assemble(self, role: Any, content: list, facts: list[tuple]) -> MessageInfo:
        """The :class:`MessageInfo` of a message from its blocks' facts (:meth:`_block`):
        :func:`~mini_agent.core.message_info.assemble_info` with this memo's keys."""
        return assemble_info(self._keys, role, content, facts)
