"""The explorer's fast replay: the same usage as the reference replay, without copying requests.

:func:`~mini_agent.core.cache_policies.replay_with_cache` is the reference: for every request
it deep-copies the view, sorts its keys, places the breakpoints
(:func:`~mini_agent.core.cache.place_breakpoints`), serialises and hashes every block of the
prefix (:func:`~mini_agent.core.prompt_cache.prefix_boundaries`) and scans the cache. Over a
session of ``n`` requests that is ``O(n^2)`` serialisations. :func:`fast_replay` computes the
same ``usage`` per request (the same figures, to the token and to the float of ``cost_usd``)
from a per-block memo instead:

* each message is summarised once per object (:class:`BlockMemo`): per block an interned
  key for its identity (its JSON as the cache sees it, ``cache_control`` removed, keys sorted
  as ``place_breakpoints(canonical=True)`` sorts them), its token estimate, its lookback
  position, whether it can carry a marker and whether it is a masked or cleared result;
* a prefix is an interned chain of block keys, so two requests share a cache entry exactly
  when the reference's SHA-256 chains are equal (no hashing, no collisions);
* each request updates the flattened prefix from the first message that differs from the
  previous request, so a request that appends costs only its new blocks;
* breakpoint positions follow ``place_breakpoints(canonical=True, anchors=True)`` and the
  resume breakpoint of :class:`~mini_agent.core.cache_policies.ResumeBreakpoints` by index,
  without building the request; ``clear_tool_uses_20250919`` is applied to the messages
  that change only.

Inputs it does not model (tool definitions, a list ``system``, a TTL other than "5m", a
block that is not a dict) raise :class:`Unsupported`; :func:`replay_usage` then runs the
reference instead, so callers always get the reference's figures. The equivalence is tested
in ``tests/test_fast_replay.py`` on generated and shared sessions.

Pure: no IO, inputs never mutated. Used by :func:`mini_agent.core.replay.evaluate_session`.
Source: the prompt caching docs as modelled in :mod:`mini_agent.core.prompt_cache` (20-position
lookback, writes at breakpoints above the minimum length, 5-minute TTL refreshed on a hit).
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any, Callable, Sequence

from mini_agent.core.cache import CLEARED_TOOL_RESULT, TTL_SECONDS, build_system_blocks
from mini_agent.core.masking import is_masked
from mini_agent.core.messages import MAX_CACHE_CONTROL_MARKERS, Message
from mini_agent.core.pricing import CACHE_WRITE_1H_MULTIPLIER, CACHE_WRITE_5M_MULTIPLIER, model_price
from mini_agent.core.prompt_cache import LOOKBACK_POSITIONS, RUN_TYPES, min_cacheable_tokens
from mini_agent.core.tokens import CHARS_PER_TOKEN, _block_chars, approx_tokens
from mini_agent.core.view import ViewContext, check_times

RESUME_MEMORY_REQUESTS = 32
"""Requests a resume breakpoint is remembered for (``ResumeBreakpoints``' default)."""

_TTL_S = TTL_SECONDS["5m"]


class Unsupported(Exception):
    """An input the fast path does not model; :func:`replay_usage` falls back to the reference."""


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _strip(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k != "cache_control"}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    if isinstance(obj, tuple):
        raise Unsupported("a tuple inside a block")
    return obj


def _canonical_identity(block: dict) -> str:
    """The block's JSON as ``prefix_boundaries`` sees it after ``place_breakpoints(canonical=True)``."""
    text = json.dumps(block, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    if '"cache_control"' in text:
        text = json.dumps(_strip(block), ensure_ascii=False, separators=(",", ":"),
                          sort_keys=True)
    return text


def _markable(block: dict) -> bool:
    kind = block.get("type")
    if kind in ("thinking", "redacted_thinking"):
        return False
    if kind == "text":
        return bool(str(block.get("text", "")).strip())
    return True


@dataclasses.dataclass(frozen=True)
class MessageInfo:
    """What the replay needs to know about one message, computed once per message object.

    Attributes: keys: interned identity of each block (role, first-block flag and JSON);
    tokens: each block's estimate (``approx_tokens``); offsets: each block's lookback
    position relative to the message's first block; positions: how many positions the
    message takes; markable: index of the last block that may carry ``cache_control`` (None:
    none); anchor: index of the newest masked or cleared tool_result (None: none); chars,
    images: ``approx_tokens``' characters and image tokens of the whole message; uses:
    ``(id, name)`` of each tool_use; results: ``(block index, tool_use_id, already cleared)``
    of each tool_result.
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
        self._systems: dict[str, tuple[MessageInfo, list[int]]] = {}
        self._blocks: dict[int, tuple[Any, tuple]] = {}
        self._flat: dict[tuple, tuple] = {}
        for message in keep:
            self._fixed[id(message)] = (message, self._summarise(message, keep_blocks=True))

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

        Args:
            system: the system prompt (a str: :func:`build_system_blocks` splits it at the
                dynamic boundary and marks the static part).

        Returns:
            ``(info, marked)``: its blocks as a :class:`MessageInfo` (each block one lookback
            position) and the indices of the blocks that carry ``cache_control``.
        """
        hit = self._systems.get(system)
        if hit is None:
            keys, tokens, marks = [], [], []
            for k, block in enumerate(build_system_blocks(system)):
                keys.append(self.key("system:" + _dumps(
                    {key: v for key, v in block.items() if key != "cache_control"})))
                tokens.append(approx_tokens(block))
                if block.get("cache_control"):
                    marks.append(k)
            info = MessageInfo(tuple(keys), tuple(tokens), tuple(range(len(keys))), len(keys),
                               None, None, 0, 0, (), ())
            hit = self._systems[system] = (info, marks)
        return hit[0], list(hit[1])

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
        for message in view:
            hit = self._texts.get(id(message))
            if hit is None or hit[0] is not message:
                parts = message_pieces(message, canonical=True)
                hit = self._texts[id(message)] = (message, "\n".join(parts) if parts else None)
            if hit[1] is not None:
                texts.append(hit[1])
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
        fixed = self._fixed
        out = []
        for message in view:
            hit = fixed.get(id(message))
            out.append(hit[1] if hit is not None and hit[0] is message
                       else self.info(message))
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
        # a policy's fresh block (a mask placeholder, a cleared result) is remembered by its
        # items in order and their types (True == 1 and 0.0 == -0.0, but they dump apart);
        # a block holding a list or dict is unhashable and is not remembered
        types = tuple(map(type, block.values()))
        flat = (tuple(block.items()), types) if float not in types else None
        try:
            hit = self._flat.get(flat) if flat is not None else None
        except TypeError:
            hit = flat = None
        if hit is not None:
            return hit
        kind = block.get("type")
        body = block.get("content") if kind == "tool_result" else None
        chars, images = _block_chars(block)
        facts = (self.key(_canonical_identity(block)), approx_tokens(block), kind,
                 _markable(block),
                 kind == "tool_result" and (is_masked(block) or body == CLEARED_TOOL_RESULT),
                 chars, images)
        if flat is not None:
            self._flat[flat] = facts
        return facts

    def _summarise(self, message: Message, keep_blocks: bool = False) -> MessageInfo:
        role = message.get("role")
        content = message.get("content")
        if isinstance(content, str):
            ident = f"{role}:1:" + _dumps({"type": "text", "text": content})
            tokens = math.ceil(len(content) / CHARS_PER_TOKEN)
            return MessageInfo((self.key(ident),), (tokens,), (0,), 1,
                               0 if content.strip() else None, None, len(content), 0, (), ())
        if not isinstance(content, list):
            if content is None:
                content = []
            else:
                raise Unsupported(f"content of type {type(content).__name__}")
        keys, tokens, offsets = [], [], []
        position, run = -1, None
        markable = anchor = None
        uses, results = [], []
        chars = images = 0
        plain_role = isinstance(role, str) and ":" not in role
        for j, block in enumerate(content):
            facts = self._block(block)
            if keep_blocks:
                self._blocks[id(block)] = (block, facts)
            json_key, tok, kind, can_mark, masked, c, im = facts
            keys.append(self.key((role, j == 0, json_key)) if plain_role else
                        self.key(f"{role}:{int(j == 0)}:" + _canonical_identity(block)))
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
                if masked:
                    anchor = j
                results.append((j, block.get("tool_use_id"),
                                block.get("content") != CLEARED_TOOL_RESULT))
            elif kind == "tool_use":
                uses.append((block.get("id"), block.get("name")))
        return MessageInfo(tuple(keys), tuple(tokens), tuple(offsets), position + 1, markable,
                           anchor, chars, images, tuple(uses), tuple(results))


@dataclasses.dataclass
class FastReplay:
    """The result of :func:`fast_replay` (or of the reference, converted).

    Attributes: usage: one usage dict per request (the simulator's shape); cost_usd: the
    input cost of each request (USD, as ``cost_usd(usage, model, include_output=False)``);
    last_view: the messages of the last request (the policy's view, server edit applied; no
    markers, keys as the policy wrote them); last_text: ``view_text`` of the last request as
    the reference sends it (keys sorted), for retention; total: the usages added up
    (``sum_usage``'s shape).
    """

    usage: list[dict[str, Any]]
    cost_usd: list[float]
    last_view: list[Message]
    last_text: str
    total: dict[str, Any]


class _Prefix:
    """The flattened prefix of the previous request, updated from the first changed message."""

    def __init__(self, memo: BlockMemo, root: tuple, system_info: MessageInfo) -> None:
        self.memo = memo
        self.chain: dict[tuple[int, int], int] = {}
        self.root = len(self.chain)
        self.chain[root] = self.root  # type: ignore[index]
        self.infos: list[MessageInfo] = []
        self.starts: list[int] = []
        self.cum: list[int] = []
        self.pos: list[int] = []
        self.pid: list[int] = []
        self.pid_index: dict[int, int] = {}
        self.system_info = system_info

    def update(self, infos: list[MessageInfo]) -> None:
        infos = [self.system_info, *infos]
        old = self.infos
        d = 0
        limit = min(len(old), len(infos))
        while d < limit and (old[d] is infos[d] or old[d].keys == infos[d].keys):
            d += 1
        cut = self.starts[d] if d < len(self.starts) else len(self.cum)
        del self.cum[cut:], self.pos[cut:], self.pid[cut:], self.starts[d:]
        cum = self.cum[-1] if self.cum else 0
        next_pos = (self.pos[-1] + 1) if self.pos else 0
        parent = self.pid[-1] if self.pid else self.root
        chain, pid_index = self.chain, self.pid_index
        for info in infos[d:]:
            self.starts.append(len(self.cum))
            for key, tok, off in zip(info.keys, info.tokens, info.offsets):
                cum += tok
                self.cum.append(cum)
                self.pos.append(next_pos + off)
                link = (parent, key)
                parent = chain.get(link)
                if parent is None:
                    parent = chain[link] = len(chain)
                    pid_index[parent] = len(self.pid)
                self.pid.append(parent)
            next_pos += info.positions
        self.infos = infos


def _marks(infos: list[MessageInfo], starts: list[int], system_marks: list[int]
           ) -> tuple[list[int], range]:
    """Flat indices of ``place_breakpoints(canonical=True, anchors=True)``'s markers, and the
    flat range of the message before the previous one (the resume planner drops from it)."""
    marks = list(system_marks)
    budget = MAX_CACHE_CONTROL_MARKERS - len(system_marks)
    n = len(infos)
    second = range(0)
    if n and budget > 0:
        last = n - 1
        if infos[last].markable is not None:
            marks.append(starts[last + 1] + infos[last].markable)
            budget -= 1
        if budget > 0:
            for i in range(last - 1, -1, -1):
                if infos[i].anchor is not None:
                    marks.append(starts[i + 1] + infos[i].anchor)
                    budget -= 1
                    break
        if last >= 2:
            second = range(starts[last - 1], starts[last - 1] + len(infos[last - 2].keys))
            if budget > 0 and infos[last - 2].markable is not None:
                marks.append(starts[last - 1] + infos[last - 2].markable)
    return sorted(set(marks)), second


def fast_replay(messages: list[Message], *, model: str, policy: Callable | None = None,
                server_edit: dict | None = None, system: str | None = None,
                resume: bool = False, times: Sequence[float] | None = None,
                gap_seconds: float = 20.0, memo: BlockMemo | None = None,
                trace: list | None = None) -> FastReplay:
    """Replay a recorded history under one policy and return each request's cache usage.

    The same requests as ``replay_with_cache(messages, model=model, policy=policy,
    server_edit=server_edit, system=system, resume=resume, times=times,
    gap_seconds=gap_seconds)`` (caching on, 5-minute TTL, no tools), the same usage and cost
    per request; see the module doc for how.

    Args:
        messages: the whole recorded history; never mutated.
        model: prices and the minimum cacheable length come from it.
        policy: ``policy(history, ctx) -> view`` or None (send the history as it is).
        server_edit: a ``clear_tool_uses_20250919`` edit dict applied to every request.
        system: the system prompt (a non-empty str).
        resume: place the resume breakpoint of ``ResumeBreakpoints``.
        times: Unix seconds per message (``Transcript.times``); None: ``gap_seconds`` apart.
        gap_seconds: seconds between requests when ``times`` is None.
        memo: the session's :class:`BlockMemo` (share one between the policies of a session).
        trace: a list that receives, per request, ``[(block index, prefix tokens)]`` of each
            breakpoint (block index counts system blocks first, as ``prefix_boundaries``
            does), for tests; None: nothing recorded.

    Returns:
        A :class:`FastReplay`.

    Raises:
        Unsupported: an input the fast path does not model (see the module doc).
        ValueError: ``times`` not parallel to ``messages``.
    """
    from mini_agent.core.cache_policies import request_points

    if not isinstance(system, str) or not system.strip():
        raise Unsupported("system must be a non-empty str")
    if server_edit is not None:
        _check_edit(server_edit)
        if resume:
            raise Unsupported("a server edit with resume breakpoints")
    if times is not None:
        check_times(messages, times)
    points = request_points(messages)
    if times is not None and any(times[b] < times[a] for a, b in zip(points, points[1:])):
        raise Unsupported("request times that go back")
    memo = memo or BlockMemo(messages)
    system_info, sys_marks = memo.system(system)
    system_body_tokens = sum(system_info.tokens)
    prefix = _Prefix(memo, ("root", model), system_info)
    price = model_price(model)
    minimum = min_cacheable_tokens(model)
    entries: dict[int, list] = {}      # prefix id -> [prefix_tokens, expires_at]
    remembered: dict[int, int] = {}   # resume planner: prefix id -> request count
    cleared_copies: dict[tuple[int, tuple[int, ...]], tuple[Message, Message]] = {}
    usages: list[dict[str, Any]] = []
    costs: list[float] = []
    totals = [0, 0, 0, 0, 0]          # input, creation, read, 5m, 1h
    view: list[Message] = []
    for n, i in enumerate(points):
        now = times[i] - times[points[0]] if times is not None else n * gap_seconds
        if policy is None:
            view = messages[:i]
        elif times is not None:
            view = policy(messages[:i], ViewContext(times=tuple(times[:i]), now=times[i],
                                                    turn=n + 1))
        else:
            view = policy(messages[:i], ViewContext(turn=n + 1))
        memo.rotate()
        infos = memo.infos(view)
        sent, sent_infos = view, infos
        if server_edit is not None:  # markers are placed before the edit, on ``infos``
            sent, sent_infos = _clear(view, infos, server_edit, system_body_tokens, memo,
                                      cleared_copies)
        prefix.update(sent_infos)    # clearing keeps every block, so the starts hold for both
        pos, pid, cum = prefix.pos, prefix.pid, prefix.cum
        marks, second = _marks(infos, prefix.starts, sys_marks)
        if resume:
            marks = _resume(marks, second, pid, pos, prefix.pid_index, remembered, n + 1,
                            sys_marks)
        if trace is not None:
            trace.append([(m, cum[m]) for m in marks])
        usage = _usage(entries, marks, pid, pos, cum, now, minimum)
        usages.append(usage)
        w5 = usage["cache_creation"]["ephemeral_5m_input_tokens"]
        w1 = usage["cache_creation"]["ephemeral_1h_input_tokens"]
        costs.append((usage["input_tokens"] + w5 * CACHE_WRITE_5M_MULTIPLIER
                      + w1 * CACHE_WRITE_1H_MULTIPLIER
                      + usage["cache_read_input_tokens"] * price.cache_read_multiplier
                      ) * price.input_usd_per_mtok / 1e6)
        totals[0] += usage["input_tokens"]
        totals[1] += usage["cache_creation_input_tokens"]
        totals[2] += usage["cache_read_input_tokens"]
        totals[3] += w5
        totals[4] += w1
        view = sent
    total = {"input_tokens": totals[0], "cache_creation_input_tokens": totals[1],
             "cache_read_input_tokens": totals[2], "output_tokens": 0,
             "cache_creation": {"ephemeral_5m_input_tokens": totals[3],
                                "ephemeral_1h_input_tokens": totals[4]}}
    if not points:
        view = []
    return FastReplay(usages, costs, view, memo.text(view), total)


def _check_edit(edit: dict) -> None:
    trigger = edit.get("trigger") or {"type": "input_tokens", "value": 100_000}
    if trigger.get("type") != "input_tokens":
        raise Unsupported("only an input_tokens trigger")
    if (edit.get("keep") or {"type": "tool_uses"}).get("type") != "tool_uses":
        raise Unsupported("keep.type must be tool_uses")
    if edit.get("clear_tool_inputs"):
        raise Unsupported("clear_tool_inputs")


def _clear(view: list[Message], infos: list[MessageInfo], edit: dict, system_tokens: int,
           memo: BlockMemo, copies: dict) -> tuple[list[Message], list[MessageInfo]]:
    """``apply_clear_tool_uses`` on the messages (markers stay where they were placed)."""
    from mini_agent.core.context_edits import DEFAULT_KEEP, DEFAULT_TRIGGER

    trigger = edit.get("trigger") or DEFAULT_TRIGGER
    keep = edit.get("keep") or DEFAULT_KEEP
    chars = sum(info.chars for info in infos)
    images = sum(info.images for info in infos)
    before = math.ceil(chars / CHARS_PER_TOKEN) + images + system_tokens
    if not before > trigger["value"]:
        return view, infos
    uses = [u for info in infos for u in info.uses]
    excluded = set(edit.get("exclude_tools") or ())
    older = uses[: max(0, len(uses) - int(keep["value"]))]
    targets = {uid for uid, name in older if name not in excluded}
    if not targets:
        return view, infos
    new_view, new_infos = list(view), list(infos)
    changed = False
    for k, info in enumerate(infos):
        js = tuple(j for j, uid, live in info.results if live and uid in targets)
        if not js:
            continue
        changed = True
        message = view[k]
        held = copies.get((id(message), js))
        if held is not None and held[0] is message:
            copy = held[1]
        else:
            content = list(message["content"])
            for j in js:
                content[j] = {**content[j], "content": CLEARED_TOOL_RESULT}
            copy = {**message, "content": content}
            copies[(id(message), js)] = (message, copy)
        new_view[k] = copy
        new_infos[k] = memo.info(copy)
    if not changed:
        return view, infos
    after = (math.ceil(sum(i.chars for i in new_infos) / CHARS_PER_TOKEN)
             + sum(i.images for i in new_infos) + system_tokens)
    least = (edit.get("clear_at_least") or {}).get("value", 0)
    if before - after < least:
        return view, infos
    return new_view, new_infos


def _resume(marks: list[int], second: range, pid: list[int], pos: list[int],
            pid_index: dict[int, int], remembered: dict[int, int], count: int,
            sys_marks: list[int]) -> list[int]:
    """``ResumeBreakpoints``: mark the longest remembered prefix out of every lookback."""
    for h in [h for h, c in remembered.items() if count - c > RESUME_MEMORY_REQUESTS]:
        del remembered[h]
    resume = None
    for h in remembered:
        k = pid_index[h]
        if k < len(pid) and pid[k] == h and (resume is None or k > resume):
            resume = k
    if resume is not None and not any(0 <= pos[bp] - pos[resume] < LOOKBACK_POSITIONS
                                      for bp in marks if bp >= resume):
        marks = sorted({*marks, resume})
        # drop order: the previous turn's marker (never the resume point), then the system's
        drop = [m for m in marks if m in second and m != resume] + list(sys_marks)
        while len(marks) > MAX_CACHE_CONTROL_MARKERS and drop:
            gone = drop.pop(0)
            if gone in marks:
                marks.remove(gone)
    for bp in marks:
        remembered[pid[bp]] = count
    return marks


def _usage(entries: dict[int, list], marks: list[int], pid: list[int], pos: list[int],
           cum: list[int], now: float, minimum: int) -> dict[str, Any]:
    """``PromptCacheSimulator.usage`` on the flattened prefix (entries expire lazily)."""
    total = cum[-1] if cum else 0
    hit = -1
    for bp in marks:
        p = bp
        while p >= 0 and pos[bp] - pos[p] < LOOKBACK_POSITIONS:
            entry = entries.get(pid[p])
            if entry is not None and entry[1] > now:
                if p > hit:
                    hit = p
                break
            p -= 1
    read = cum[hit] if hit >= 0 else 0
    if hit >= 0:
        for p in [hit] + [bp for bp in marks if bp < hit]:
            entry = entries.get(pid[p])
            if entry is not None and entry[1] > now:
                entry[1] = now + _TTL_S
    created = 0
    cached_end = read
    for bp in marks:
        if bp <= hit or cum[bp] < minimum:
            continue
        created += cum[bp] - cached_end
        cached_end = cum[bp]
        entries[pid[bp]] = [cum[bp], now + _TTL_S]
    return {"input_tokens": total - cached_end, "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": created,
                               "ephemeral_1h_input_tokens": 0}}


def replay_usage(messages: list[Message], *, model: str, policy: Callable | None = None,
                 server_edit: dict | None = None, system: Any = None, resume: bool = False,
                 times: Sequence[float] | None = None, gap_seconds: float = 20.0,
                 memo: BlockMemo | None = None, make_policy: Callable[[], Any] | None = None
                 ) -> FastReplay:
    """Run :func:`fast_replay`, or the reference replay when the input is not modelled.

    Args:
        messages: the whole recorded history; never mutated.
        model: prices and the minimum cacheable length come from it.
        policy: ``policy(history, ctx) -> view`` or None (send the history as it is).
        server_edit: a ``clear_tool_uses_20250919`` edit dict applied to every request.
        system: the system prompt (the fast path models a non-empty str).
        resume: place the resume breakpoint of ``ResumeBreakpoints``.
        times: Unix seconds per message; None: ``gap_seconds`` apart.
        gap_seconds: seconds between requests when ``times`` is None.
        memo: the session's :class:`BlockMemo` (None: a new one).
        make_policy: builds a fresh policy for the reference run when the fast path gives up
            part-way (a policy may keep state); None: reuse ``policy``.

    Returns:
        A :class:`FastReplay` with the reference's figures either way.

    Raises:
        ValueError: ``times`` not parallel to ``messages``.
    """
    try:
        return fast_replay(messages, model=model, policy=policy, server_edit=server_edit,
                           system=system, resume=resume, times=times, gap_seconds=gap_seconds,
                           memo=memo)
    except Unsupported:
        pass
    from mini_agent.core.cache_policies import replay_with_cache
    from mini_agent.core.pricing import sum_usage
    from mini_agent.core.retention import view_text
    records = replay_with_cache(messages, model=model,
                                policy=make_policy() if make_policy else policy,
                                server_edit=server_edit, system=system, resume=resume,
                                times=times, keep_views=True, gap_seconds=gap_seconds)
    last = records[-1]["view"] if records else []
    return FastReplay([r["usage"] for r in records], [r["cost_usd"] for r in records], last,
                      view_text(last), sum_usage(r["usage"] for r in records))
