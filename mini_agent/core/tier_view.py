"""The lifecycle's view for given tiers: the task with its cold index and timeline, then the
Hot and Warm-A exchanges.

What this module does: :func:`render_tiers` assembles the view of a history whose exchanges
already have their tiers (``core/lifecycle.py`` picks them), with the tokens per tier and
the view's approx tokens, reading each exchange's tier form and counts from an
:class:`~mini_agent.core.exchange_memo.ExchangeMemo`, which keeps them between requests; a
run of Hot exchanges is one slice of the history, its counts one difference of the memo's
running sums. What it does not do: pick tiers, store cold segments, or count anything it
can read from the memo. Pure; inputs never mutated. Taught in
``notebooks/08_context_lifecycle.ipynb``.

Source: 003_85ccd58041fa7231.txt (four tiers, timeline line, cold index of ``id + label``).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from mini_agent.core.exchange_memo import ExchangeMemo
from mini_agent.core.history_scan import scan_for
from mini_agent.core.messages import Message, content_blocks, text_block
from mini_agent.core.tier_forms import (COLD, COLD_INDEX_HEADER, HOT, TIMELINE_HEADER, WARM_A,
                                        WARM_B, cold_form, warm_a_counted, warm_b_form)
from mini_agent.core.tokens import CHARS_PER_TOKEN

__all__ = ["render_tiers", "scan_sums"]


def scan_sums(history: Sequence[Message]) -> tuple[list[int], list[int]] | None:
    """Return ``(cum_chars, cum_images)`` of the session's scan when one already covers ``history``.

    Inside a token memo another policy has usually scanned the history: its prefix sums
    give ``memo.chars(s, e)`` as ``cum[e] - cum[s]`` without a call per exchange.

    Args:
        history: the history of this request; never mutated.

    Returns:
        The scan's prefix sums of characters and image tokens, or None (no scan covers
        ``history``: the memo counts).
    """
    scan = scan_for(history, create=False, extend=False)
    return None if scan is None else (scan.cum_chars, scan.cum_images)


def render_tiers(history: Sequence[Message], ranges: list[tuple[int, int]], tiers: list[str],
                 times: Sequence[float], memo: ExchangeMemo,
                 sums: tuple[list[int], list[int]] | None = None
                 ) -> tuple[list[Message], dict[str, Any], int]:
    """Build the view for given tiers: ``(view, parts, approx_tokens(view))``.

    Args:
        history: the full history; never mutated.
        ranges: its exchanges, ``memo.update(history)``.
        tiers: one tier per exchange, oldest first ("hot", "warm_a", "warm_b" or "cold").
        times: Unix seconds per message, parallel to ``history``.
        memo: the memo updated with ``history``; keeps each exchange's tier forms.
        sums: :func:`scan_sums` of ``history``, or None (the memo counts).

    Returns:
        ``view`` = ``[head, *Hot and Warm-A exchanges in order]``, where the head is the task
        message, or a copy of it with the cold index and the timeline appended as text
        blocks;
        ``parts`` = ``{"tokens": {tier: approx tokens}, "timeline": [lines], "cold_index":
        [entries], "cold": [(segment_id, label, time_seconds, messages)]}``; and the view's
        approx tokens, added up from the characters of its messages.
    """
    count = min(len(ranges), len(tiers))
    j = 0  # the oldest exchanges are usually all Cold: that run is kept by the memo
    while j < count and tiers[j] == COLD:
        j += 1
    if not isinstance(history, list):
        history = list(history)  # so that each slice below is a new list
    index, cold, cold_tokens = [], [], 0
    if j:
        run = memo.run(j, cold_form)
        index = [entry for _, _, entry, _ in run]
        cold_tokens = sum(n for _, _, _, n in run)
        cold = [(segment, label, times[s], history[s:e])
                for (segment, label, _, _), (s, e) in zip(run, ranges)]
    lines, body = [], []
    if sums is not None:
        cum_chars, cum_images = sums
        head_chars, head_images = cum_chars[1], cum_images[1]
    else:
        head_chars, head_images = memo.chars(0, 1)
    chars, images = head_chars, head_images
    hot_tokens = warm_a_tokens = warm_b_tokens = 0
    fact, chars_in, counted = memo.fact, memo.chars, memo.counted_fact
    # the memo's kept facts, read here without a call per exchange (``counted`` and
    # ``fact`` when one is missing or stale)
    facts = memo.exchange_facts()
    for k in range(j, count):
        tier = tiers[k]
        if tier == HOT:
            s, e = ranges[k]
            body += history[s:e]
            if sums is not None:  # chars_in(s, e), read from the prefix sums
                c, im = cum_chars[e] - cum_chars[s], cum_images[e] - cum_images[s]
            else:
                c, im = chars_in(s, e)  # memo.tokens(s, e), from the same counts
            hot_tokens += math.ceil(c / CHARS_PER_TOKEN) + im
            chars, images = chars + c, images + im
        elif tier == WARM_A:
            hit = facts[k].get(warm_a_counted)  # counted(k, warm_a_counted, sums)
            masked, n, (c, im) = (counted(k, warm_a_counted, sums) if hit is None
                                  else hit[1])  # fact(k, warm_a_form)
            body += masked
            warm_a_tokens += n
            chars, images = chars + c, images + im
        elif tier == WARM_B:
            args = (k, times[ranges[k][0]])
            hit = facts[k].get(warm_b_form)  # fact(k, warm_b_form, *args)
            line, n = fact(k, warm_b_form, *args) if hit is None or hit[0] != args else hit[1]
            lines.append(line)
            warm_b_tokens += n
        else:
            segment, label, entry, n = fact(k, cold_form, k)
            index.append(entry)
            cold_tokens += n
            s, e = ranges[k]
            cold.append((segment, label, times[s], history[s:e]))
    head = history[0]
    if index or lines:
        texts = []
        if index:
            texts.append(COLD_INDEX_HEADER + "\n" + "\n".join(index))
        if lines:
            texts.append(TIMELINE_HEADER + "\n" + "\n".join(lines))
        head = _head_with(head, texts)
        chars += sum(map(len, texts))
    hot_tokens += math.ceil(head_chars / CHARS_PER_TOKEN) + head_images  # memo.tokens(0, 1)
    view_tokens = math.ceil(chars / CHARS_PER_TOKEN) + images
    tokens = {HOT: hot_tokens, WARM_A: warm_a_tokens, WARM_B: warm_b_tokens, COLD: cold_tokens}
    body.insert(0, head)
    return body, {"tokens": tokens, "timeline": lines, "cold_index": index,
                  "cold": cold}, view_tokens


def _head_with(task: Message, texts: list[str]) -> Message:
    """The task message with ``texts`` appended as text blocks (a new dict)."""
    return {"role": task["role"], "content": [*content_blocks(task), *map(text_block, texts)]}
