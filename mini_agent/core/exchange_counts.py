"""Where the exchanges of a growing history start, and the characters of its slices, cheaply.

What this module does: :class:`ExchangeCounts` answers two questions a summary policy asks at
every request, "where do the exchanges start?" (the indexes >= 1 of the assistant messages,
which are also ``compaction.clean_cut_points``) and "how many characters does this slice
hold?" (as ``approx_tokens`` counts them). Inside a token memo, when another policy of the
session has already scanned the history (:mod:`~mini_agent.core.history_scan`), both are read
from that scan: the starts are found once per session and kept with the scan, the characters
are its prefix sums, so a request costs one identity check of the history. Otherwise it asks
its own :class:`~mini_agent.core.exchange_memo.ExchangeMemo` (the same answers).
What it does not do: remember facts per exchange (``ExchangeMemo.fact`` does). Pure: no IO,
inputs never mutated.

Source: 003_85ccd58041fa7231.txt (an exchange: one assistant message plus the user message
answering it); 000_86e3ff2076a5ae37.txt ("store full, send masked": the view is rebuilt from
the full history every request).
"""

from __future__ import annotations

import bisect
from typing import Sequence

from mini_agent.core.exchange_memo import ExchangeMemo
from mini_agent.core.history_scan import HistoryScan
from mini_agent.core.messages import Message
from mini_agent.core.scan_handle import ScanHandle

_STARTS = "exchange_starts"
"""The key of the starts a scan keeps in ``HistoryScan.derived``."""


def scan_starts(scan: HistoryScan) -> list[int]:
    """Return the indexes >= 1 of the assistant messages of everything ``scan`` has read.

    Equal to ``[i for i in range(1, len(scan.messages)) if scan.messages[i].get("role") ==
    "assistant"]`` (``split_exchanges``' starts); kept in ``scan.derived`` and extended as
    the scan grows (a scan only ever appends), so each message is looked at once per session.

    Args:
        scan: a history scan; its ``derived`` dict receives the kept list.

    Returns:
        The kept list itself, ascending (treat it as read-only).
    """
    held = scan.derived.get(_STARTS)
    if held is None:
        held = scan.derived[_STARTS] = [[], 1]  # [starts, messages read] (0 opens none)
    starts, read = held
    messages = scan.messages
    if read < len(messages):
        for i in range(read, len(messages)):
            if messages[i].get("role") == "assistant":
                starts.append(i)
        held[1] = len(messages)
    return starts


class ExchangeCounts:
    """Exchange starts and slice characters of the history a policy is called with.

    Call :meth:`update` (or :meth:`take`, when the starts are not needed at once) with each
    request's history first; :meth:`chars` then answers for that history, and ``last`` holds
    what :meth:`update` returns for it. One object per history (one per policy object).
    """

    def __init__(self) -> None:
        self._memo = ExchangeMemo()            # used when no session scan covers the history
        self._scan: HistoryScan | None = None  # the scan of the last history, if one covers it
        self._scans = ScanHandle()             # the session's scan this object read last
        self._length = 0                       # the last history's length

    def take(self, history: Sequence[Message]) -> None:
        """Take this request's history for :meth:`chars`; its starts are found when asked for.

        Args:
            history: the history of this request; never mutated.
        """
        # only a scan another policy already extended over this history: starting or
        # extending one here would cost more than the memo's own counting
        scan = self._scan = self._scans.get(history, create=False, extend=False)
        if scan is None:
            self._memo.update(history)
        self._length = len(history)

    def tail_chars(self, history: Sequence[Message], start: int) -> tuple[int, int]:
        """:meth:`take` ``history``, then return :meth:`chars` of ``history[start:]``.

        Args:
            history: the history of this request; never mutated.
            start: first message index (``0 <= start <= len(history)``).

        Returns:
            ``(chars, image_tokens)`` of ``history[start:]``, as :meth:`chars` counts them.
        """
        self.take(history)
        return self.chars(start, len(history))

    @property
    def last(self) -> tuple[list[int], int]:
        """What :meth:`update` returns for the last history taken (``([], 0)`` before any)."""
        scan = self._scan
        if scan is not None:
            starts = scan_starts(scan)
            return starts, bisect.bisect_left(starts, self._length)
        starts = self._memo.starts()
        return starts, len(starts)

    def update(self, history: Sequence[Message]) -> tuple[list[int], int]:
        """Take this request's history; return where its exchanges start.

        Args:
            history: the history of this request; never mutated.

        Returns:
            ``(starts, count)``: the exchange starts of ``history`` are ``starts[:count]``
            (``[s for s, _ in split_exchanges(history)]``); ``starts`` may go on past
            ``history`` and is shared: treat it as read-only.
        """
        self.take(history)
        return self.last

    def chars(self, start: int, end: int) -> tuple[int, int]:
        """Return the characters and image tokens of ``history[start:end]``.

        Args:
            start: first message index.
            end: one past the last message index (at most the last :meth:`update`'s length).

        Returns:
            ``(chars, image_tokens)`` summed as ``core/tokens.approx_tokens`` counts them.
        """
        scan = self._scan
        if scan is not None:
            cum_chars, cum_images = scan.cum_chars, scan.cum_images
            return cum_chars[end] - cum_chars[start], cum_images[end] - cum_images[start]
        return self._memo.chars(start, end)
