"""The state of the break-even rule over a growing history: token sums, results, the boundary.

What this module does: :class:`_Scan` consumes a history message by message (prefix sums of
its approx tokens, where its tool results are and what masking each would save) and decides,
request after request, where :mod:`mini_agent.core.breakeven_masking`'s boundary stands; the
module doc there states the rule. Inside a :func:`~mini_agent.core.tokens.token_memo` (the
explorer's replay) the figures are read from the session's
:mod:`~mini_agent.core.history_scan` (the same sums, counted once per session) instead of
being counted again. What it does not do: build views (``BreakEvenMasking`` does). Pure: no
IO, inputs never mutated.

Source: the rule of :mod:`mini_agent.core.breakeven_masking` (Karlin et al. 1988; Purohit,
Svitkina and Kumar 2018); Anthropic prompt caching docs (TTL, minimum cacheable length).
"""

from __future__ import annotations

import bisect
import dataclasses
import operator
from typing import Any, Sequence

from mini_agent.core.history_scan import HistoryScan, scan_for
from mini_agent.core.mask_placeholder import placeholder
from mini_agent.core.messages import Message, tool_result_text
from mini_agent.core.tokens import approx_tokens

FIND = object()
"""``_Scan.advance``'s default ``shared``: look the session's scan up."""

RESUME_MEMORY_REQUESTS = 32
"""Requests ``cache_policies.ResumeBreakpoints`` remembers a marked prefix (its default)."""


@dataclasses.dataclass(frozen=True)
class _Prices:
    keep: int
    rent_factor: float
    ttl_seconds: float
    min_cacheable_tokens: int
    fixed_tokens: int
    exclude_tools: tuple[str, ...]
    write_multiplier: float
    read_multiplier: float
    trust: float


class _Scan:
    """The rule's state over a growing history: token sums, results seen, the boundary.

    ``messages`` and ``times`` hold what was consumed; the decisions of the requests that
    end before ``len(messages)`` are committed (``boundary``, ``paid``, ``prev_end``...).
    """

    def __init__(self, prices: _Prices, *, timed: bool) -> None:
        self.p = prices
        self.messages: list[Message] = []
        self.times: list[float] | None = [] if timed else None
        self.cum_tokens = [0]            # tokens of messages[:k]
        self.results: list[int] = []     # message index of each tool result, oldest first
        self.cum_saved = [0]             # tokens saved by masking results[:k]
        self.names: dict[str, str] = {}  # tool_use id -> tool name
        self.requests = 0                # requests decided (committed)
        self.boundary = 0
        self.paid = 0.0
        self.prev_end = 0
        self.prev_time: float | None = None
        self.prev_total = 0
        self.task_time: float | None = None   # when the first message's entry was last read
        # the last answer of :meth:`decision`: ((end, sent, requests), (boundary, paid))
        self._decided: tuple | None = None
        # the session's scan every consumed message was read from (its first
        # ``len(messages)`` messages are ``messages``' own objects), or None
        self.source: HistoryScan | None = None

    def continues(self, history: list[Message], times: Sequence[float] | None,
                  shared: HistoryScan | None = None) -> bool:
        """Whether ``history`` (with ``times``) extends what this scan consumed.

        Args:
            history: the next request's history.
            times: its times (None: untimed).
            shared: a session scan whose first ``len(history)`` messages are ``history``'s
                own objects (``scan_for``'s answer), or None. When it is :attr:`source`,
                ``history`` starts with the consumed messages without comparing them again.
        """
        n = len(self.messages)
        if n > len(history) or (times is None) != (self.times is None):
            return False
        if times is not None and list(times[:n]) != self.times:
            return False
        return (shared is not None and shared is self.source) or all(
            map(operator.is_, self.messages, history))  # the same objects, at C speed

    def consume(self, message: Message, when: float | None,
                shared: HistoryScan | None = None) -> None:
        """Append one message: its tokens, its tool uses and results (read from ``shared``,
        the session's scan of the history, when given: the same figures, counted once)."""
        p = self.p
        index = len(self.messages)
        self.messages.append(message)
        if self.times is not None:
            self.times.append(when)
        if shared is not None:  # its rows: (message index, saving) per result, as below
            self.cum_tokens.append(shared.cum_tokens[index + 1])
            for r in range(shared.results_upto[index], shared.results_upto[index + 1]):
                self.results.append(index)
                self.cum_saved.append(self.cum_saved[-1] + shared.rows[r][1])
            return
        self.cum_tokens.append(self.cum_tokens[-1] + approx_tokens(message))
        content = message.get("content")
        if isinstance(content, str) or not content:
            return
        for block in content:
            kind = block.get("type")
            if kind == "tool_use":
                self.names[block.get("id")] = block.get("name", "")
            elif kind == "tool_result" and message.get("role") == "user":
                saved = approx_tokens(block) - approx_tokens(placeholder(tool_result_text(block)))
                if p.exclude_tools and self.names.get(block.get("tool_use_id")) in p.exclude_tools:
                    saved = 0
                self.results.append(index)
                self.cum_saved.append(self.cum_saved[-1] + max(0, saved))

    def decide(self, end: int, sent: float | None) -> tuple[int, float]:
        """Return ``(boundary, paid)`` after the request ``messages[:end]`` sent at ``sent``."""
        p = self.p
        boundary, paid = self.boundary, self.paid
        seen = bisect.bisect_left(self.results, end)
        candidate = seen - p.keep
        total = p.fixed_tokens + self.cum_tokens[end]
        if candidate > boundary and total >= p.min_cacheable_tokens:
            # cacheable unmasked: mask fewer results rather than fall below the minimum
            room = total - p.min_cacheable_tokens
            candidate = min(candidate, bisect.bisect_right(self.cum_saved, room) - 1)
        if candidate <= boundary:
            return boundary, paid
        freed = self.cum_saved[candidate] - self.cum_saved[boundary]
        if freed <= 0:
            return boundary, paid
        rho, write = p.read_multiplier, p.write_multiplier
        paid += rho * freed
        cold = (self.requests == 0 or self.prev_total < p.min_cacheable_tokens
                or (sent is not None and self.prev_time is not None
                    and sent - self.prev_time > p.ttl_seconds))
        if not cold:
            first = self.results[boundary - 1] if boundary else 0   # the anchor's message
            if not boundary and self.results[0] > 0 and sent is not None \
                    and self.task_time is not None and sent - self.task_time < p.ttl_seconds \
                    and self.requests <= RESUME_MEMORY_REQUESTS + 1:
                first = 1   # the resume breakpoint re-reads the first message, still cached
            first_masked = boundary   # masked results in or after the anchor's message
            while first_masked and self.results[first_masked - 1] >= first:
                first_masked -= 1
            old = max(0, self.cum_tokens[self.prev_end] - self.cum_tokens[first]
                      - (self.cum_saved[boundary] - self.cum_saved[first_masked]))
            anchor = p.fixed_tokens + self.cum_tokens[first] - self.cum_saved[first_masked]
            if anchor < p.min_cacheable_tokens:
                old += anchor   # a prefix too short to cache is not read: re-written too
            price = (write - rho) * old - write * freed
            # predicted: the session lasts as many requests again as it has so far
            trusted = rho * freed * (self.requests + 1) >= price
            if p.rent_factor * paid <= (price * p.trust if trusted else price / p.trust):
                return boundary, paid
        return candidate, 0.0

    def decision(self, end: int, sent: float | None) -> tuple[int, float]:
        """Return :meth:`decide`'s ``(boundary, paid)``, kept until the next commit.

        A policy asks for the decision of its request ``messages[:end]``, and the next
        request commits the same one in :meth:`advance` (the assistant message that opens it
        is at ``end``, sent at the same time). In between the state changes only by
        :meth:`consume`, which appends: the sums, results and savings ``decide`` reads (up to
        ``end``, and the savings up to the candidate it caps) stay the same, so one answer
        serves both.
        ``tests/test_policy_fast_paths.py`` compares it with ``decide``.
        """
        key = (end, sent, self.requests)
        held = self._decided
        if held is not None and held[0] == key:
            return held[1]
        answer = self.decide(end, sent)
        self._decided = (key, answer)
        return answer

    def advance(self, history: list[Message], times: Sequence[float] | None,
                shared: Any = FIND) -> None:
        """Consume ``history`` past what was seen, committing every request that ends in it.

        Args:
            history: a history that continues the consumed messages (:meth:`continues`).
            times: its times, or None.
            shared: the session's scan covering ``history`` (``scan_for(history,
                create=False)``'s answer, None for none); by default looked up here. Its
                figures are read instead of counted (the same sums); without exclusions only.
        """
        # inside a token memo, without exclusions, the session's scan holds the figures when
        # another policy started it (a scan reads more per message than this one needs)
        if self.p.exclude_tools:
            shared = None
        elif shared is FIND:
            shared = scan_for(history, create=False)
        messages, stamps = self.messages, self.times
        for index in range(len(messages), len(history)):
            message = history[index]
            when = times[index] if times is not None else None
            if index > 0 and message.get("role") == "assistant":
                # commit the request messages[:index]: its decision (decision()'s kept
                # answer when the policy asked for it as the last request), then the state
                # the next decisions read
                held = self._decided
                requests = self.requests
                self.boundary, self.paid = (
                    held[1] if held is not None and held[0] == (index, when, requests)
                    else self.decide(index, when))
                if requests < 2:   # the first two requests write, then read, the first message
                    self.task_time = when
                self.requests = requests + 1
                self.prev_end = index
                self.prev_time = when
                self.prev_total = (self.p.fixed_tokens + self.cum_tokens[index]
                                   - self.cum_saved[self.boundary])
            if shared is None:
                self.consume(message, when)
                continue
            # consume(message, when, shared), inlined: its rows are (message index, saving)
            messages.append(message)
            if stamps is not None:
                stamps.append(when)
            self.cum_tokens.append(shared.cum_tokens[index + 1])
            rows, results, cum_saved = shared.rows, self.results, self.cum_saved
            for r in range(shared.results_upto[index], shared.results_upto[index + 1]):
                results.append(index)
                cum_saved.append(cum_saved[-1] + rows[r][1])
        # every consumed message is now ``history``'s, whose first messages are shared's
        self.source = shared if len(messages) == len(history) else None


def _prices(keep: int, rent_factor: float, ttl_seconds: float, min_cacheable_tokens: int,
            fixed_tokens: int, exclude_tools: Sequence[str], write_multiplier: float,
            read_multiplier: float, trust: float) -> _Prices:
    if keep < 0:
        raise ValueError(f"keep must be >= 0, got {keep}")
    if rent_factor <= 0 or ttl_seconds <= 0 or not 0 < trust <= 1:
        raise ValueError(f"rent_factor, ttl_seconds > 0 and 0 < trust <= 1 required, got "
                         f"{rent_factor}, {ttl_seconds}, {trust}")
    return _Prices(keep, rent_factor, ttl_seconds, min_cacheable_tokens, fixed_tokens,
                   tuple(exclude_tools), write_multiplier, read_multiplier, trust)


def _scan_times(history: list[Message], times: Sequence[float] | None,
                now: float | None) -> tuple[Sequence[float] | None, float | None]:
    if times is None or len(times) != len(history):
        return None, None
    return times, now
