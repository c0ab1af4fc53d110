"""A policy's hold on the session's history scan: the scan it read last, checked in one step.

What this module does: a view policy replayed by the explorer asks for the session's
:class:`~mini_agent.core.history_scan.HistoryScan` at every request
(:func:`~mini_agent.core.history_scan.scan_for`: the enclosing token memo, its table of
scans, the scan of the history's first message, an identity check of the history). A
:class:`ScanHandle` kept by the policy remembers the scan it was given and, while the next
history is a prefix of what that scan has read (the same message objects) inside the same
memo, returns it after the identity check alone; otherwise it asks ``scan_for`` and keeps
the answer. What it does not do: start or extend a scan by itself (``scan_for`` does).
Pure: no IO, inputs never mutated.

Source: the policy explorer (:mod:`mini_agent.core.replay`): request ``n`` gives every
policy the history of request ``n - 1`` plus a few messages, and the first policy asked
extends the session's scan over them.
"""

from __future__ import annotations

from operator import is_ as _is
from typing import Sequence

from mini_agent.core.history_scan import REQUEST_KEY, HistoryScan, scan_for
from mini_agent.core.messages import Message
from mini_agent.core.tokens import _MEMO


class ScanHandle:
    """The scan a policy read last, and the token memo it came from.

    Each :meth:`get` answers with a scan whose first ``len(history)`` messages are
    ``history``'s own objects, or None, as ``scan_for`` does; the kept scan may be one the
    memo's table no longer holds (another history with the same first message replaced it),
    still right for these messages. One handle per policy object.
    """

    __slots__ = ("scan", "memo")

    def __init__(self) -> None:
        self.scan: HistoryScan | None = None
        self.memo: dict | None = None

    def get(self, history: Sequence[Message], *, create: bool = True,
            extend: bool = True) -> HistoryScan | None:
        """Return a scan covering ``history``: the kept one, else ``scan_for``'s answer.

        The kept scan is returned when ``history`` is a non-empty list no longer than what it
        has read, made of the same message objects, inside the memo it came from (its facts
        are those of these very messages, which code inside a token memo never mutates).
        Otherwise this is ``scan_for(history, create=create, extend=extend)``, whose answer
        is kept.

        Args:
            history: a list of messages; never mutated.
            create: passed to ``scan_for`` (start a scan when none has this first message).
            extend: passed to ``scan_for`` (with ``create=False``: False returns only a scan
                that already covers ``history``).

        Returns:
            A :class:`~mini_agent.core.history_scan.HistoryScan` whose first ``len(history)``
            messages are ``history``'s own objects, or None (no token memo is running, the
            history is empty or not a list, or with ``create=False`` no scan matches).
        """
        scan = self.scan
        if (scan is not None and _MEMO.get() is self.memo
                and (history is scan.request   # checked already this request (request_mark)
                     or (0 < len(history) <= len(scan.messages) and type(history) is list
                         and all(map(_is, history, scan.messages))))):
            return scan
        scan = scan_for(history, create=create, extend=extend)
        if scan is not None:
            self.scan, self.memo = scan, _MEMO.get()   # session_memo()
        return scan


def request_mark() -> list | None:
    """Start marking the history list every policy of one request is given (a token memo).

    The caller stores each request's list in ``mark[0]``. Until :func:`request_unmark`, the
    first :func:`~mini_agent.core.history_scan.scan_for` of the marked list that finds (or
    extends) a scan starting with its objects notes the list on the scan (``scan.request``),
    and later checks of that list against that scan (``scan_for``, :meth:`ScanHandle.get`,
    the policies' inlined checks) skip the comparison of every message. The caller promises
    that no list it marks is mutated until it unmarks (a scan vouches for the last one it
    noted).

    Returns:
        The mark, ``[None, []]`` (the list, the scans that noted one), to fill and to pass
        to :func:`request_unmark`; None outside a token memo.
    """
    memo = _MEMO.get()
    if memo is None:
        return None
    mark = memo[REQUEST_KEY] = [None, []]
    return mark


def request_unmark(mark: list | None) -> None:
    """End a :func:`request_mark`: its scans forget their lists, the memo drops the mark.

    Args:
        mark: what ``request_mark`` returned (None: nothing to do).
    """
    if mark is None:
        return
    for scan in mark[1]:
        scan.request = None
    mark[0] = None
    mark[1].clear()
    memo = _MEMO.get()
    if memo is not None and memo.get(REQUEST_KEY) is mark:
        del memo[REQUEST_KEY]
