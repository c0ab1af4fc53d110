"""The exchanges of a growing history, remembered from one request to the next.

What this module does: :func:`split_exchanges` cuts a history into exchanges (an assistant
message and what answers it); :class:`ExchangeMemo` follows a history that grows by appending
(the agent loop, and the explorer's replay, call a view policy with ``history[:i]`` for a
growing ``i``) and remembers what a policy derives from each exchange (its identifiers, a masked copy,
its timeline line), so each is computed once per exchange instead of once per request. It
also keeps running character counts, so the tokens of any slice of the history cost O(1)
(inside a token memo, read from the session's :mod:`~mini_agent.core.history_scan` when another
policy started one, so a session counts each message once), and the position of the newest
user text (the request being worked on).

What it does not do: decide anything (``core/lifecycle.py`` does), or notice a message mutated
in place: it relies on the view contract (policies and the agent never mutate a message once
it is in the history). It holds the messages it saw, so an ``id`` is never reused for another
object while remembered, and it compares each new history with the previous one by identity:
what it knows about the common prefix is kept, the rest is recomputed. Use one memo per
history (one per policy object); its size follows the longest history it was given.
Pure: no IO. Taught in ``notebooks/08_context_lifecycle.ipynb``.

Source: 003_85ccd58041fa7231.txt (an exchange: one assistant message plus the user message
answering it); 000_86e3ff2076a5ae37.txt ("store full, send masked": the view is rebuilt from
the full history every request, which is what makes remembering per exchange pay).
"""

from __future__ import annotations

import bisect
import math
import operator
from typing import Any, Callable, Hashable, Sequence

from mini_agent.core.block_identity import first_difference
from mini_agent.core.history_scan import scan_for
from mini_agent.core.messages import Message
from mini_agent.core.relevance import request_texts
from mini_agent.core.tokens import CHARS_PER_TOKEN, _message_chars, session_memo


def split_exchanges(history: Sequence[Message]) -> list[tuple[int, int]]:
    """Split a history into exchanges, each starting at an assistant message.

    Args:
        history: the messages; the first (the task) belongs to no exchange.

    Returns:
        ``(start, end)`` index ranges, oldest first; ``end`` is exclusive.

    >>> split_exchanges([{"role": "user", "content": "a"}, {"role": "assistant",
    ...     "content": "b"}, {"role": "user", "content": "c"}])
    [(1, 3)]
    """
    starts = [i for i in range(1, len(history)) if history[i].get("role") == "assistant"]
    return [(s, starts[k + 1] if k + 1 < len(starts) else len(history))
            for k, s in enumerate(starts)]


def chars_of(messages: Sequence[Message]) -> tuple[int, int]:
    """Return the characters and image tokens of messages, as ``approx_tokens`` counts them.

    Args:
        messages: messages; never mutated.

    Returns:
        ``(chars, image_tokens)``: ``approx_tokens(messages) == ceil(chars / 4) + image_tokens``.
    """
    chars = images = 0
    for message in messages:
        c, im = _message_chars(message)
        chars, images = chars + c, images + im
    return chars, images


class ExchangeMemo:
    """Exchanges and per-exchange facts of the history a policy is called with, kept between calls.

    Call :meth:`update` with each request's history first; then :meth:`tokens`,
    :meth:`fact` and :meth:`request_fact` answer for that history. Exchange ``k`` (0-based,
    oldest first) is ``history[start:end]`` of :meth:`update`'s ranges.
    """

    def __init__(self) -> None:
        self._messages: list[Message] = []   # the previous history, held so ids stay unique
        self._starts: list[int] = []          # indexes >= 1 of its assistant messages
        self._ranges: list[tuple[int, int]] = []  # (start, end) per exchange of it
        # read only when asked for (a policy that never counts tokens never pays for it):
        self._sums: list[tuple[int, int]] = [(0, 0)]  # (chars, images) of messages[:i]
        self._texts: list[int] = []           # indexes of its user messages holding text
        self._texts_read = 0                  # messages[:_texts_read] were read for texts
        self._facts: list[dict[Callable, tuple]] = []  # per exchange: compute -> (args, value)
        self._request: tuple[int, Any, Any] | None = None  # (index, compute, value)
        self._runs: dict[Callable, list] = {}  # compute -> its facts of exchanges 0, 1, ...
        # compute -> [arg, start, done, ascending k in [start, done) whose fact is true]
        self._matching: dict[Callable, list] = {}
        # inside a token memo: the session's scan of this history when another policy of
        # the session has read it (its prefix sums are the counts: each message counted once
        # per session), else None; False: not looked up since the history changed
        self._scan = False
        # a session scan whose messages start with the first ``_covered`` held messages (the
        # same objects), kept so the next request checks only what it added
        self._covering: Any = None
        self._covered = 0

    def update(self, history: Sequence[Message]) -> list[tuple[int, int]]:
        """Take this request's history and return its exchanges.

        Everything known about the longest prefix ``history`` shares (object for object)
        with the previous history is kept; the rest is read once. Facts of the previous last
        exchange are dropped whenever its end may have moved: when the history was cut, or
        grew by messages that continue that exchange instead of opening a new one.

        Args:
            history: the history of this request; never mutated, held until the next call.

        Returns:
            ``(start, end)`` per exchange, oldest first, ``end`` exclusive: equal to
            :func:`split_exchanges` of ``history``.
        """
        prev = self._messages
        n_prev, n = len(prev), len(history)
        if n >= n_prev and all(map(operator.is_, prev, history)):
            if n == n_prev:
                return self._ranges[:]
            same = n_prev  # the usual request: the history grew
            # the last exchange keeps its end, so its facts, when the new messages open an
            # exchange of their own
            if not (same and history[same].get("role") == "assistant"):
                self._cut(same)
        else:
            same = first_difference(history, prev)
            self._cut(same)
            self._covered = min(self._covered, same)
        # the ranges of the kept exchanges hold, but for the last one's end: rebuild from it
        # on (``split_exchanges``' pairs of the tail)
        starts, facts = self._starts, self._facts
        k = len(starts) - 1 if starts else 0
        for i in range(same or 1, n):  # read the new messages (index 0 opens no exchange)
            if history[i].get("role") == "assistant":
                starts.append(i)
                facts.append({})
        prev.extend(history[same:])
        self._ranges[k:] = zip(starts[k:], [*starts[k + 1:], n])
        self._scan = False  # looked up again when counts are asked for
        return self._ranges[:]

    def _cut(self, keep: int) -> None:
        """Forget all but the first ``keep`` messages (and the facts of the exchanges they end)."""
        del self._messages[keep:]
        del self._sums[keep + 1:]
        while self._starts and self._starts[-1] >= keep:
            self._starts.pop()
        del self._ranges[len(self._starts):]
        while self._texts and self._texts[-1] >= keep:
            self._texts.pop()
        self._texts_read = min(self._texts_read, keep)
        del self._facts[max(0, len(self._starts) - 1):]  # the last kept exchange may grow
        for run in self._runs.values():
            del run[len(self._facts):]
        for held in self._matching.values():  # what is known of the kept exchanges stays
            held[2] = min(held[2], len(self._facts))
            held[1] = min(held[1], held[2])
            del held[3][bisect.bisect_left(held[3], held[2]):]
        self._facts.extend({} for _ in range(len(self._starts) - len(self._facts)))
        if self._request is not None and self._request[0] >= keep:
            self._request = None

    def starts(self) -> list[int]:
        """Return where the exchanges of the last :meth:`update`'s history start.

        Returns:
            The indexes >= 1 of its assistant messages, ascending (a new list):
            ``[s for s, _ in split_exchanges(history)]``, which are also
            ``compaction.clean_cut_points(history)``.
        """
        return list(self._starts)

    def chars(self, start: int, end: int) -> tuple[int, int]:
        """Return the characters and image tokens of ``history[start:end]``.

        Args:
            start: first message index.
            end: one past the last message index.

        Returns:
            ``(chars, image_tokens)`` summed as ``core/tokens.approx_tokens`` counts them.
        """
        scan = self._scan
        if scan is False:
            # a scan that covers the history already (another policy read it this request);
            # extending one here would cost more than counting the new messages below
            scan = self._scan = (scan_for(self._messages, create=False, extend=False)
                                 if session_memo() is not None else None)
        if scan is not None:  # the same sums, kept by the session's scan
            cum_chars, cum_images = scan.cum_chars, scan.cum_images
            return cum_chars[end] - cum_chars[start], cum_images[end] - cum_images[start]
        sums = self._sums
        if end >= len(sums):  # count the messages not counted yet
            chars, images = sums[-1]
            for message in self._messages[len(sums) - 1:end]:
                c, im = _message_chars(message)
                chars, images = chars + c, images + im
                sums.append((chars, images))
        (c1, i1), (c2, i2) = sums[start], sums[end]
        return c2 - c1, i2 - i1

    def scan_sums(self) -> tuple[list[int], list[int]] | None:
        """Return ``tier_view.scan_sums(history)`` of the last :meth:`update`'s history.

        The scan found is kept: while the history grows, the next request checks only the
        messages it added against the scan's (``tests/test_exchange_memo.py`` compares the
        two); another scan, or none, is looked up when they differ.

        Returns:
            The covering scan's ``(cum_chars, cum_images)``, or None (no scan covers the
            history: the memo counts).
        """
        messages = self._messages
        n, covered, scan = len(messages), self._covered, self._covering
        if scan is not None:
            held = scan.messages
            if len(held) >= n and (covered >= n or all(
                    map(operator.is_, held[covered:n], messages[covered:n]))):
                self._covered = n
                return scan.cum_chars, scan.cum_images
        scan = scan_for(messages, create=False, extend=False)
        if scan is None:
            return None
        self._covering, self._covered = scan, n
        return scan.cum_chars, scan.cum_images

    def tokens(self, start: int, end: int) -> int:
        """Return ``approx_tokens(history[start:end])`` from the running character counts.

        Args:
            start: first message index.
            end: one past the last message index.

        Returns:
            ``ceil(chars / 4) + image tokens`` of the slice, as ``core/tokens.approx_tokens``.
        """
        chars, images = self.chars(start, end)
        return math.ceil(chars / CHARS_PER_TOKEN) + images

    def fact(self, k: int, compute: Callable[..., Any], *args: Hashable) -> Any:
        """Return ``compute(messages of exchange k, *args)``, computed once while it holds.

        Args:
            k: the exchange, 0-based, oldest first, in the last :meth:`update`'s ranges.
            compute: builds the fact from the exchange's messages (a new list) and ``args``;
                it names the fact: one value is kept per exchange and function.
            args: what else the fact depends on (a segment number, a time); different
                ``args`` recompute and replace it.

        Returns:
            The fact, the same object on every call while exchange ``k``, ``compute`` and
            ``args`` are unchanged (treat it as read-only).
        """
        facts = self._facts[k]
        hit = facts.get(compute)
        if hit is None or hit[0] != args:
            end = self._starts[k + 1] if k + 1 < len(self._starts) else len(self._messages)
            hit = facts[compute] = (args, compute(self._messages[self._starts[k]:end], *args))
        return hit[1]

    def exchange_facts(self) -> list[dict[Callable, tuple]]:
        """Return the kept facts of the last :meth:`update`'s exchanges, for reading in a loop.

        Returns:
            Per exchange (0-based, oldest first), ``{compute: (args, value)}`` as :meth:`fact`
            and :meth:`counted_fact` (``args == ()``) keep them: the held list itself, to be
            read, never changed; a missing or stale entry is asked of those methods.
        """
        return self._facts

    def counted_fact(self, k: int, compute: Callable[[list[Message], int, int], Any],
                     sums: tuple[list[int], list[int]] | None = None) -> Any:
        """Return ``compute(messages of exchange k, chars, image tokens)``, computed once while it holds.

        Like :meth:`fact` without ``args``, for facts that need the exchange's counts: they
        are :meth:`chars` of its range (the session scan's prefix sums when one covers the
        history), so the messages are not counted again.

        Args:
            k: the exchange, 0-based, oldest first, in the last :meth:`update`'s ranges.
            compute: builds the fact from the exchange's messages (a new list) and their
                ``chars_of`` counts; it names the fact, as in :meth:`fact`.
            sums: ``(cum_chars, cum_images)`` prefix sums of the history (the session
                scan's, ``tier_view.scan_sums``) to read the counts from, or None.

        Returns:
            The fact, the same object on every call while exchange ``k`` and ``compute`` are
            unchanged (treat it as read-only).
        """
        facts = self._facts[k]
        hit = facts.get(compute)
        if hit is None:
            start = self._starts[k]
            end = self._starts[k + 1] if k + 1 < len(self._starts) else len(self._messages)
            if sums is None:
                chars, images = self.chars(start, end)
            else:  # the same counts, from the prefix sums
                chars, images = sums[0][end] - sums[0][start], sums[1][end] - sums[1][start]
            hit = facts[compute] = ((), compute(self._messages[start:end], chars, images))
        return hit[1]

    def matching(self, compute: Callable[[list[Message], Any], Any], arg: Hashable, lo: int,
                 hi: int) -> list[int]:
        """Return ``[k for k in range(lo, hi) if self.fact(k, compute, arg)]``, kept between calls.

        For a window of exchanges that moves forward as the history grows (the Warm
        exchanges a request may promote): a call asks :meth:`fact` only of the exchanges that
        entered the window since the last call with the same ``compute`` and ``arg``.

        Args:
            compute: builds a fact from an exchange's messages and ``arg``, read as true or false.
            arg: what else the fact depends on; another ``arg`` (not equal) starts over.
            lo: the first exchange of the window.
            hi: one past its last (at most the number in :meth:`update`'s ranges).

        Returns:
            The exchanges of ``range(lo, hi)`` whose fact is true, ascending (a new list).
        """
        held = self._matching.get(compute)
        if held is None or (held[0] is not arg and held[0] != arg) or \
                not held[1] <= lo <= held[2]:
            held = self._matching[compute] = [arg, lo, lo, []]
        if hi > held[2]:
            found = held[3]
            for k in range(held[2], hi):
                if self.fact(k, compute, arg):
                    found.append(k)
            held[2] = hi
        found = held[3]
        if not found:  # the usual window: nothing matched
            return []
        return found[bisect.bisect_left(found, lo):bisect.bisect_left(found, hi)]

    def run(self, j: int, compute: Callable[[list[Message], int], Any]) -> list:
        """Return ``[self.fact(k, compute, k) for k in range(j)]``, kept as one list between calls.

        For facts of the oldest exchanges, which stay the same request after request: a call
        costs a list copy, plus the facts of exchanges it has not seen yet.

        Args:
            j: how many of the oldest exchanges (at most the number in :meth:`update`'s ranges).
            compute: builds the fact from the exchange's messages and its 0-based index.

        Returns:
            A new list of ``j`` facts, oldest first (treat the facts as read-only).
        """
        done = self._runs.setdefault(compute, [])
        for k in range(len(done), j):
            done.append(self.fact(k, compute, k))
        return done[:j]

    def request_fact(self, compute: Callable[[str], Any]) -> Any:
        """Return ``compute(current request text)``, computed once per request message.

        The request text is ``lifecycle.current_request_text(history)``: the text blocks of the
        newest user message that has any, joined by newlines ("" when there is none).

        Args:
            compute: builds the fact from the text; one value is kept.

        Returns:
            The fact (treat it as read-only).
        """
        messages = self._messages
        for i in range(self._texts_read, len(messages)):  # read the new messages
            # request_texts is [] for a message that is not the user's, and for a list
            # content without a text block (tool results only): asked of the others
            message = messages[i]
            if message.get("role") == "user":
                content = message.get("content")
                if content.__class__ is list:
                    for block in content:
                        if block.get("type") == "text":
                            break
                    else:
                        continue
                if request_texts(message):
                    self._texts.append(i)
        self._texts_read = len(self._messages)
        index = self._texts[-1] if self._texts else -1
        hit = self._request
        if hit is None or hit[0] != index or hit[1] is not compute:
            text = "\n".join(request_texts(self._messages[index])) if index >= 0 else ""
            hit = self._request = (index, compute, compute(text))
        return hit[2]
