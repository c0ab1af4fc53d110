"""Prefix scans of a history: what the masking policies recount at every request, counted once.

The explorer replays a session request by request: request ``r`` gives each policy
``messages[:i_r]``, the previous request's history plus a few messages. The plain policies
recount the whole history every time (its tokens, where its tool results are, what masking
each would save), ``O(requests^2)`` over a session. A :class:`HistoryScan` holds those facts
per prefix (cumulative sums, the result positions in order) for one chain of histories
that share their first message; a longer history extends it, a shorter one reads a prefix
of it, so each message is looked at once per session.

Scans exist only inside :func:`mini_agent.core.tokens.token_memo` (their home is its memo,
so they live exactly as long as it and keep its rule: code that never mutates a message).
Outside one, :func:`scan_for` returns None and every caller runs its plain code. Each fast
path names the plain function it must equal; ``tests/test_history_scan.py`` compares them
on generated sessions. Pure: no IO, inputs never mutated.
Source: the policy explorer (:mod:`mini_agent.core.replay`); the facts are those of
:func:`~mini_agent.core.tokens.approx_tokens`,
:func:`~mini_agent.core.messages.tool_result_positions`
and :func:`~mini_agent.core.masking.mask_old_observations`.
"""

from __future__ import annotations

import math
import operator
from itertools import compress
from typing import Any, Sequence

from mini_agent.core.mask_placeholder import masked_block, placeholder
from mini_agent.core.message_parts import Message, tool_result_text
from mini_agent.core.tokens import (_MEMO, CHARS_PER_TOKEN, SCANS_KEY, TOOL_USE_OVERHEAD_CHARS,
                                   _block_chars, _message_chars, approx_tokens, remember,
                                   session_memo, tool_input_json)


REQUEST_KEY = "request_history"
"""Where the replay marks the one history list it hands every policy of a request, in the
memo: ``[list, scans that noted one]`` (:func:`mini_agent.core.scan_handle.request_mark`).
No list handed out is mutated while the mark lasts, so a scan whose ``request`` is a list
is known to start with its objects without comparing them again."""

MAX_CACHED_VIEWS = 256
"""Masked prefix views a scan keeps before it starts over (bounds its memory)."""


class HistoryScan:
    """Per-prefix facts of one chain of histories (all starting with the same message object).

    Attributes, for the scanned ``messages`` (``n`` of them): ``cum_chars[k]`` and
    ``cum_images[k]``: ``approx_tokens``' characters and image tokens of ``messages[:k]``;
    ``cum_tokens[k]``: the sum of ``approx_tokens(m)`` of each message of ``messages[:k]``;
    ``cum_users[k]``: user messages in ``messages[:k]``; ``results_upto[k]``: tool results in
    ``messages[:k]``; ``positions``: ``tool_result_positions(messages)``; ``blocks``: the
    result blocks in the same order; ``rows``: per result ``(message index, saving)`` as
    ``result_savings(messages, ())`` returns it (tokens, >= 0), ``cum_saved`` the savings'
    prefix sums;
    ``maskable``: per result, whether ``_mask_oldest`` would replace it (``_saved_chars > 0``);
    ``masked``: per result, its masked copy
    (:func:`~mini_agent.core.mask_placeholder.masked_block`, the token memo's own object
    shared with every other reader of that block; None where ``maskable`` is False);
    ``holders``: per result, ``placeholder(tool_result_text(block))`` (its masked content);
    ``first_use``: tool_use id -> (message index, name) of its first tool_use;
    ``irregular``: a tool_use id repeats, lacks, or answers a result that came before it
    (then name look-ups depend on the prefix, and callers use their plain code);
    ``request``: the replay's marked history list last found to start with ``messages``'
    objects (:func:`~mini_agent.core.scan_handle.request_mark`), or None.
    """

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.cum_chars = [0]
        self.cum_images = [0]
        self.cum_tokens = [0]
        self.cum_users = [0]
        self.results_upto = [0]
        self.positions: list[tuple[int, int]] = []
        self.blocks: list[dict] = []
        self.rows: list[tuple[int, int]] = []
        self.cum_saved = [0]
        self.maskable: list[bool] = []
        self.masked: list[dict | None] = []
        self.holders: list[str] = []
        self.first_use: dict[Any, tuple[int, str]] = {}
        self.irregular = False
        self.answered: set = set()
        self.derived: dict[Any, Any] = {}   # per-scan state of the fast paths, by name
        self._views: dict[int, list[Message]] = {}
        self._last_n = 0
        self._copies: dict[tuple[int, int], Message] = {}
        self.request: list[Message] | None = None

    def extend(self, history: Sequence[Message]) -> None:
        """Scan ``history[len(self.messages):]`` (``history`` starts with the scanned ones).

        Args:
            history: a history whose first ``len(self.messages)`` messages are the scanned ones.
        """
        memo = _MEMO.get()   # session_memo()
        messages, positions = self.messages, self.positions
        cum_chars, cum_images, cum_tokens = self.cum_chars, self.cum_images, self.cum_tokens
        cum_users, results_upto = self.cum_users, self.results_upto
        # the running sums, kept in locals and appended per message
        total_chars, total_images = cum_chars[-1], cum_images[-1]
        total_tokens, users = cum_tokens[-1], cum_users[-1]
        for i in range(len(messages), len(history)):
            message = history[i]
            role, content = message.get("role"), message.get("content", "")
            if isinstance(content, str):
                chars, images = len(content), 0
            else:  # _message_chars' sum, block by block, with the blocks' own facts
                chars = images = 0
                for j, block in enumerate(content):
                    # _block_chars' cases for text, tool_use and string results, inlined
                    kind = block.get("type")
                    if kind == "text":
                        chars += len(block.get("text", ""))
                    elif kind == "tool_use":
                        chars += (len(tool_input_json(block)) + len(block.get("name", ""))
                                  + TOOL_USE_OVERHEAD_CHARS)
                        self._add_use(block, i)
                    elif kind == "tool_result":
                        body = block.get("content", "")
                        c, im = (len(body), 0) if isinstance(body, str) else _block_chars(block)
                        chars += c
                        images += im
                        if role == "user":
                            self._add_result(block, i, j, c, im, memo)
                    else:
                        c, im = _block_chars(block)
                        chars += c
                        images += im
            messages.append(message)
            total_chars += chars
            cum_chars.append(total_chars)
            total_images += images
            cum_images.append(total_images)
            total_tokens += math.ceil(chars / CHARS_PER_TOKEN) + images
            cum_tokens.append(total_tokens)
            users += role == "user"
            cum_users.append(users)
            results_upto.append(len(positions))

    def _add_result(self, block: dict, i: int, j: int, chars: int, images: int,
                    memo: dict | None) -> None:
        """Record one result: ``result_savings``' and ``_saved_chars``' figures from one count.

        The placeholder comes from ``masked_block`` (kept per block in the token memo, so a
        result another reader already measured, the hindsight bound, is not counted again):
        its masked copy holds ``placeholder(tool_result_text(block))`` exactly when
        ``_saved_chars(block) > 0``, the same test with the same ``_block_chars``.
        """
        hit = memo.get(("masked", id(block))) if memo is not None else None
        # masked_block(block, memo), its memo hit inlined (the bound measured it first)
        masked = hit[1] if hit is not None and hit[0] is block else masked_block(block, memo)
        # kept: ``_copy`` masks with it; a result that does not pay is short (or already a
        # placeholder): its own count is cheap
        text = placeholder(tool_result_text(block)) if masked is None else masked["content"]
        holder = len(text)
        saved = (approx_tokens(block) if "role" in block
                 else math.ceil(chars / CHARS_PER_TOKEN) + images)
        saved = max(0, saved - math.ceil(holder / CHARS_PER_TOKEN))
        self.holders.append(text)
        self.positions.append((i, j))
        self.blocks.append(block)
        self.answered.add(block.get("tool_use_id"))
        self.rows.append((i, saved))
        self.cum_saved.append(self.cum_saved[-1] + saved)
        self.maskable.append(masked is not None)
        self.masked.append(masked)

    def _add_use(self, block: dict, i: int) -> None:
        if "id" not in block:
            self.irregular = True   # tool_names_by_id raises KeyError: let it
            return
        uid = block["id"]
        if uid in self.first_use or uid in self.answered:
            self.irregular = True
        else:
            self.first_use[uid] = (i, block.get("name", ""))

    def tokens(self, k: int) -> int:
        """Return ``approx_tokens(messages[:k])``.

        Args:
            k: a prefix length, ``0 <= k <= len(self.messages)``.

        Returns:
            ``ceil(chars / 4) + image tokens`` of the prefix.
        """
        return math.ceil(self.cum_chars[k] / CHARS_PER_TOKEN) + self.cum_images[k]

    def masked_view(self, history: Sequence[Message], n_oldest: int) -> list[Message]:
        """Return ``_mask_oldest(history, positions, n_oldest, ())[0]`` from cached pieces.

        The view is ``prefix(n) + history[end:]`` where ``prefix(n)`` is the scanned messages
        up to the message of the n-th result with the first ``n`` results masked; it is built
        once per ``n`` (from the largest smaller ``n`` already built) and the masked blocks
        and message copies are shared between views, so equal placeholders are not rebuilt.

        Args:
            history: a prefix of the scanned messages (identical objects).
            n_oldest: how many of the oldest results to mask (capped at those in ``history``).

        Returns:
            A new list, equal to the plain function's view; messages that change are copies
            shared with other views of this scan (treat the view as read-only).
        """
        n = min(n_oldest, self.results_upto[len(history)])
        if n <= 0:
            return list(history)
        prefix = self._views.get(n)
        if prefix is None:
            prefix = self._build_prefix(n)
        return prefix + history[len(prefix):]

    def chunked_view(self, history: Sequence[Message], keep: int, chunk: int,
                     threshold_tokens: int) -> list[Message]:
        """Return the view of :class:`~mini_agent.core.masking.ChunkedMasking` in one call.

        The same list as ``ChunkedMasking(keep=keep, chunk=chunk,
        threshold_tokens=threshold_tokens)(history)`` (no tool excluded): ``list(history)``
        when ``approx_tokens(history) <= threshold_tokens``, else
        ``masked_view(history, chunked_mask_count(results, keep=keep, chunk=chunk))``.
        ``chunk=1`` gives :class:`~mini_agent.core.masking.ThresholdMasking`'s view. The
        token sum, the count and the cached prefix are read inline (each policy asks once
        per request). ``tests/test_history_scan.py`` compares it with the policies' plain
        code.

        Args:
            history: a prefix of the scanned messages (identical objects).
            keep: newest results always left verbatim (>= 0).
            chunk: results masked at once (>= 1).
            threshold_tokens: approx tokens at or under which nothing is masked.

        Returns:
            A new list, as :meth:`masked_view` returns it (treat it as read-only).
        """
        k = len(history)
        if math.ceil(self.cum_chars[k] / CHARS_PER_TOKEN) + self.cum_images[k] \
                <= threshold_tokens:   # tokens(k)
            return list(history)
        # chunked_mask_count, then the masked view of that many results
        return self.masked_view(history, max(0, self.results_upto[k] - keep) // chunk * chunk)

    def _build_prefix(self, n: int) -> list[Message]:
        # start from the last prefix built when it is shorter (a growing session), else
        # from the longest shorter one kept
        base_n = self._last_n if self._last_n < n and self._last_n in self._views else max(
            (m for m in self._views if m < n), default=0)
        base = self._views.get(base_n, [])
        end = self.positions[n - 1][0] + 1
        prefix = base + self.messages[len(base):end]
        # each message holding results base_n..n-1, in order (a message's results are
        # consecutive): its copy with its results up to the n-th masked
        positions, upto, copies = self.positions, self.results_upto, self._copies
        r = base_n
        while r < n:
            i = positions[r][0]
            last = min(n, upto[i + 1])
            copy = copies.get((i, last))
            if copy is None:
                copy = copies[(i, last)] = self._copy(i, upto[i], last)
            prefix[i] = copy
            r = last
        if len(self._views) >= MAX_CACHED_VIEWS:
            self._views.clear()
        self._views[n] = prefix
        self._last_n = n
        return prefix

    def _copy(self, i: int, first: int, last: int) -> Message:
        """Message ``i`` with its maskable results ``first..last-1`` masked (or itself)."""
        message = self.messages[i]
        content = None
        for r in range(first, last):
            if not self.maskable[r]:
                continue
            if content is None:
                content = list(message["content"])
            # masked_block's copy: {**block, "content": placeholder(tool_result_text(block))}
            content[self.positions[r][1]] = self.masked[r]
        return message if content is None else {**message, "content": content}


def scan_for(history: Sequence[Message], *, create: bool = True,
             extend: bool = True) -> HistoryScan | None:
    """Return the scan covering ``history`` inside a token memo, else None.

    Args:
        history: a list of messages.
        create: start a scan when none has this first message (the policies' histories);
            False only uses or extends an existing one (for lists that may be one-off views).
        extend: read the messages past an existing scan's end; False (with
            ``create=False``): only a scan that already covers ``history`` is returned (for
            callers that count by themselves more cheaply than a scan reads a message).

    Returns:
        A :class:`HistoryScan` whose first ``len(history)`` messages are ``history``'s own
        objects, or None: no :func:`~mini_agent.core.tokens.token_memo` is running, the
        history is empty or not a list (a tuple is not scanned), or (with ``create=False``)
        no scan matches.
    """
    memo = _MEMO.get()   # session_memo(), inlined
    if memo is None or not history or not isinstance(history, list):
        return None
    scans = memo.get(SCANS_KEY)
    if scans is None:
        scans = {}
        remember(memo, SCANS_KEY, scans)
    head = history[0]
    held = scans.get(id(head))
    scan = held[1] if held is not None and held[0] is head else None
    if scan is not None:
        # identity of the common part, at C speed: a diverging list is not this chain
        if history is not scan.request and not all(map(operator.is_, scan.messages, history)):
            if not create:
                return None
            scan = None
    if scan is None:
        if not create or not isinstance(head, dict):
            return None
        scan = HistoryScan()
        scans[id(head)] = (head, scan)
    if len(history) > len(scan.messages):
        if not (extend or create):
            return None
        try:
            scan.extend(history)
        except Exception:  # a malformed message: drop the scan, the plain code raises
            scans.pop(id(head), None)
            return None
    mark = memo.get(REQUEST_KEY)   # the replay's list of this request: checked once per scan
    if mark is not None and mark[0] is history and scan.request is not history:
        scan.request = history
        mark[1].append(scan)   # once per request and scan: forgotten when unmarked
    return scan


def view_tokens(view: Sequence[Message]) -> int | None:
    """Return ``approx_tokens(view)`` of a scanned history with some messages replaced, or None.

    A policy's view (micro_compact's, a masked one) is often the history with a few messages
    swapped for copies. Its count is the scan's prefix sums of the history plus, for each
    position holding another object, that message's characters minus the original's: the
    same ``ceil(chars / 4) + image tokens`` the plain loop adds up, without visiting the
    messages that did not change (found with a C-level identity scan).

    Args:
        view: a list whose first message starts a scan (``view[0]`` is a scanned history's
            first message); never mutated.

    Returns:
        The plain ``approx_tokens(view)``, or None when no scan starts with ``view[0]`` or the
        view is longer than its scan and not a history (then the caller counts plainly).
    """
    memo = session_memo()
    scans = memo.get(SCANS_KEY) if memo is not None else None
    held = scans.get(id(view[0])) if scans and view else None
    if held is None or held[0] is not view[0]:
        return None
    scan, n = held[1], len(view)
    if n > len(scan.messages):
        longer = scan_for(view, create=False)  # a longer history extends its scan
        return None if longer is None else longer.tokens(n)
    chars, images = scan.cum_chars[n], scan.cum_images[n]
    cum_chars, cum_images = scan.cum_chars, scan.cum_images
    get = memo.get
    for i in compress(range(n), map(operator.is_not, view, scan.messages)):
        message = view[i]
        # _message_chars' memo hit, inlined as approx_tokens does (a masked view replaces
        # many messages, each counted once per session)
        hit = get(id(message))
        if hit is not None and hit[0] is message and hit[1] is message.get("content"):
            c, im = hit[2]
        else:
            c, im = _message_chars(message)
        chars += c - (cum_chars[i + 1] - cum_chars[i])
        images += im - (cum_images[i + 1] - cum_images[i])
    return math.ceil(chars / CHARS_PER_TOKEN) + images
