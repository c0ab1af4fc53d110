"""Two summary-based view policies for replaying recorded sessions: an LLM summary and the
server-side compaction edit, both as ``policy(history, ctx) -> view``.

* :class:`SummaryPolicy` is JetBrains' "LLM summarization" baseline: once more than
  ``every_exchanges`` exchanges have accumulated since the last summary, everything but the
  newest ``keep_exchanges`` exchanges is replaced by one summary (the previous summary is part
  of what gets summarised, so it is incremental). The summary is kept and reused until the
  next one, so it costs one generation, not one per request.
* :class:`ServerCompactionView` replays ``compact_20260112`` on a recorded history: when the
  request's estimate reaches ``trigger_tokens`` the server replaces everything before the
  newest exchange by a summary, and later requests start from that summary.

Both take a ``summarize(messages) -> str``. Offline defaults: the server's summary is the
deterministic :func:`~mini_agent.core.structured_summary.structured_summary` (what the
simulated edit writes); the LLM summary follows the kit's revised summary prompt
(:func:`~mini_agent.core.prompt_summary.prompt_summarizer`). Online pass
``model_summarizer(client, prompt=...)``. State: the kept summary (use one object per session).
Returns new lists; inputs never mutated. Taught in ``notebooks/11_evaluating_policies.ipynb``.
Source: JetBrains Research, "The Complexity Trap" (2025): masking M=10 vs LLM summary (N=21,
M=10); Anthropic compaction docs (trigger, summary replaces the earlier turns).
"""

from __future__ import annotations

import bisect
import math
from typing import Callable

from mini_agent.core.compaction import summary_message
from mini_agent.core.exchange_counts import ExchangeCounts
from mini_agent.core.exchange_memo import chars_of
from mini_agent.core.messages import Message
from mini_agent.core.tokens import CHARS_PER_TOKEN, approx_request_tokens
from mini_agent.core.view import ViewContext

Summarize = Callable[[list[Message]], str]


def _default_summarize(server: bool) -> Summarize:
    if server:
        from mini_agent.core.structured_summary import structured_summary
        return structured_summary
    from mini_agent.core.prompt_summary import prompt_summarizer
    return prompt_summarizer()


class _KeptSummary:
    """A summary of ``history[:cut]`` reused while the history still extends what it saw."""

    def __init__(self, summarize: Summarize | None, *, server: bool = False) -> None:
        self.summarize = summarize or _default_summarize(server)
        self.cut = 0
        self.message: Message | None = None
        self.summaries = 0

    def base(self, history: list[Message]) -> list[Message]:
        if self.message is not None and len(history) >= self.cut:
            return [self.message, *history[self.cut:]]
        self.message, self.cut = None, 0
        return list(history)

    def compact(self, history: list[Message], cut: int) -> list[Message]:
        """Summarise the current view of ``history[:cut]`` and keep it."""
        part = self.base(history[:cut]) if self.message is not None else list(history[:cut])
        self.message = summary_message(self.summarize(part))
        self.cut = cut
        self.summaries += 1
        return [self.message, *history[cut:]]


class _SummaryView:
    """What both policies share: a kept summary in front, replaced when ``_cut`` says where."""

    _kept: _KeptSummary

    @property
    def summaries(self) -> int:
        """How many summaries were written so far."""
        return self._kept.summaries

    def __call__(self, history: list[Message], ctx: ViewContext | None = None
                 ) -> list[Message]:
        kept = self._kept   # view = kept.base(history), inlined:
        if kept.message is None:   # nothing kept (and so cut is 0): a copy of the history
            view = list(history)
        elif len(history) >= kept.cut:
            view = [kept.message, *history[kept.cut:]]
        else:
            view = kept.base(history)
        cut = self._cut(history, view)
        return view if cut is None else kept.compact(history, cut)

    def _cut(self, history: list[Message], view: list[Message]) -> int | None:
        """Where to summarise ``history`` now, or None to send ``view`` as it is."""
        raise NotImplementedError


class SummaryPolicy(_SummaryView):
    """Summarise all but the newest ``keep_exchanges`` exchanges every ``every_exchanges``.

    An exchange here is one assistant message (one model request's reply) with what answers it.

    Args:
        every_exchanges: exchanges since the last summary that trigger a new one (JetBrains'
            N=21).
        keep_exchanges: newest exchanges kept verbatim (JetBrains' M=10).
        summarize: ``messages -> str`` (offline default: the revised prompt, followed
            offline).

    Attributes:
        summaries: how many summaries were written.

    Raises:
        ValueError: unless 1 <= keep_exchanges < every_exchanges.
    """

    def __init__(self, *, every_exchanges: int = 21, keep_exchanges: int = 10,
                 summarize: Summarize | None = None) -> None:
        if not 1 <= keep_exchanges < every_exchanges:
            raise ValueError(f"need 1 <= keep_exchanges < every_exchanges, got "
                             f"{keep_exchanges}, {every_exchanges}")
        self.every_exchanges, self.keep_exchanges = every_exchanges, keep_exchanges
        self._kept = _KeptSummary(summarize)
        self._exchanges = ExchangeCounts()  # where the assistant messages are, kept per request

    def _cut(self, history: list[Message], view: list[Message]) -> int | None:
        # The plain rule, O(len(history)) per request: replies = the assistant indexes
        # >= kept.cut; none unless len(replies) > every_exchanges; else the newest clean cut
        # (``compaction.clean_cut_points``: the assistant indexes >= 1) at or before
        # replies[-keep_exchanges], used when it is past max(1, kept.cut). The clean cuts are
        # the exchange starts the memo keeps, so the replies are those >= kept.cut, plus
        # index 0 when kept.cut is 0 and the history opens with an assistant message; as
        # there are more replies than keep_exchanges, replies[-keep_exchanges] is a clean cut
        # itself. ``tests/test_view_fast_paths.py`` compares this with the plain rule.
        cut = self._kept.cut
        if len(history) - cut <= self.every_exchanges:
            return None   # at most one reply per message of history[cut:]: too few to count
        starts, count = self._exchanges.update(history)  # history's starts: starts[:count]
        first = bisect.bisect_left(starts, cut, 0, count)
        replies = count - first + (cut == 0 and bool(history)
                                   and history[0].get("role") == "assistant")
        if replies <= self.every_exchanges:
            return None
        candidate = starts[count - self.keep_exchanges]
        return candidate if candidate > max(1, cut) else None


class ServerCompactionView(_SummaryView):
    """The ``compact_20260112`` edit replayed as a view policy (see the module doc).

    Args: trigger_tokens: approx tokens of system + tools + messages at which the server
    compacts (the API's minimum trigger is 50,000); system, tools: counted in the estimate;
    summarize: the summariser (offline default ``structured_summary``).
    Attributes: summaries: compactions so far.
    """

    def __init__(self, *, trigger_tokens: int = 50_000, system=None, tools=None,
                 summarize: Summarize | None = None) -> None:
        self.trigger_tokens = trigger_tokens
        self.system, self.tools = system, tools
        self._kept = _KeptSummary(summarize, server=True)
        self._counts = ExchangeCounts()  # exchange starts and running character counts
        self._overhead: tuple | None = None  # (system str, its approx tokens)

    def _cut(self, history: list[Message], view: list[Message]) -> int | None:
        # self._view_tokens(history, view) + self._overhead_tokens(), inlined (asked at every
        # request; ``tests/test_view_fast_paths.py`` compares it with the two)
        kept = self._kept
        if kept.message is None:
            chars, images = self._counts.tail_chars(history, 0)
        else:
            chars, images = self._counts.tail_chars(history, kept.cut)
            c, im = chars_of([kept.message])
            chars, images = chars + c, images + im
        held = self._overhead
        overhead = (held[1] if held is not None and held[0] is self.system and self.tools is None
                    else self._overhead_tokens())
        size = math.ceil(chars / CHARS_PER_TOKEN) + images + overhead
        if size < self.trigger_tokens:
            return None
        # the newest clean cut past max(1, kept.cut): clean_cut_points(history) are the
        # exchange starts the running counts found when _view_tokens took this history
        starts, count = self._counts.last
        return starts[count - 1] if count and starts[count - 1] > max(1, self._kept.cut) \
            else None

    def _overhead_tokens(self) -> int:
        """``approx_request_tokens(messages=[], system=..., tools=...)``, counted once while
        ``system`` is the same str (or None) and there are no tools (a list could change in
        place, so blocks and tools are counted every time)."""
        system, tools = self.system, self.tools
        if tools is not None or not isinstance(system, (str, type(None))):
            return approx_request_tokens(messages=[], system=system, tools=tools)
        held = self._overhead
        if held is None or held[0] is not system:
            held = self._overhead = (system, approx_request_tokens(messages=[], system=system))
        return held[1]

    def _view_tokens(self, history: list[Message], view: list[Message]) -> int:
        """``approx_tokens(view)`` of the base view (``history``, or the kept summary then
        ``history[cut:]``), from the running counts: a message is counted once per policy."""
        self._counts.take(history)
        kept = self._kept
        if kept.message is None:
            chars, images = self._counts.chars(0, len(history))
            return math.ceil(chars / CHARS_PER_TOKEN) + images
        chars, images = self._counts.chars(kept.cut, len(history))
        c, im = chars_of([kept.message])
        return math.ceil((chars + c) / CHARS_PER_TOKEN) + images + im
