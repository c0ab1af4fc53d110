"""Observation masking: send the model a view where old tool outputs are one-line placeholders.

About 84% of a coding agent's history is tool observations (file contents, bash output, grep
matches) that the assistant's reasoning has already absorbed a few turns later. Masking keeps
the newest ``keep`` ``tool_result`` blocks verbatim and replaces the content of older ones with
``[observation masked — N lines omitted]``; assistant text, ``tool_use`` blocks and user text
are never touched. No model call, no summary, nothing invented.

What this module does: :func:`mask_old_observations` (the transformation), the view policies
:class:`ThresholdMasking` (mask only above ``MASK_THRESHOLD_TOKENS``) and
:class:`ChunkedMasking` (the mask boundary moves in fixed chunks so the masked prefix stays
byte-stable for the prompt cache), :func:`masking_stats` (what ``/stats`` prints) and
:func:`masking_curve` (raw vs view tokens per request, for the episode's chart and sliders).
What it does not do: decide what to keep by content, summarise, or touch the full history,
which stays the record ("store full, send masked").

Pure: no IO, inputs never mutated. Inside a :func:`~mini_agent.core.tokens.token_memo` (the
explorer's replay) the policies read the session's :mod:`~mini_agent.core.history_scan`
instead of recounting the history at every request: the same views, with the masked copies
shared between them. Taught in ``notebooks/03_observation_masking.ipynb``.
Source: 000_86e3ff2076a5ae37.txt (maskOldObservations, approxTokens, MASK_THRESHOLD_TOKENS,
the cache pitfall); Lindenbauer et al., "The Complexity Trap" (JetBrains, NeurIPS 2025 DL4C);
server-side analogue: the API's context edit ``clear_tool_uses_20250919`` (``keep``,
``clear_at_least``, ``exclude_tools``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Collection, Iterable

from mini_agent.core.messages import Message, tool_names_by_id, tool_result_positions, tool_result_text
from mini_agent.core.history_scan import scan_for
from mini_agent.core.scan_handle import ScanHandle
from mini_agent.core.mask_placeholder import (PLACEHOLDER_TEMPLATE, _saved_chars,  # noqa: F401
                                              is_masked, masked_block, placeholder)
from mini_agent.core.tokens import (CHARS_PER_TOKEN, _block_chars, _message_chars,
                                   approx_tokens, session_memo)
from mini_agent.core.view import ViewContext

KEEP_RECENT_OBSERVATIONS = 4
"""Tool results kept verbatim by default (seed 000: KEEP_RECENT_OBSERVATIONS = 4)."""

MASK_THRESHOLD_TOKENS = 8_000
"""Mask only when the history's approx tokens exceed this (seed 000: MASK_THRESHOLD_TOKENS)."""

def _check_args(keep: int, exclude_tools: Collection[str]) -> None:
    if isinstance(keep, bool) or not isinstance(keep, int):
        raise TypeError(f"keep must be an int (a count of tool results), got {keep!r}")
    if keep < 0:
        raise ValueError(f"keep must be >= 0 (a count of tool results), got {keep}")
    if isinstance(exclude_tools, str):
        raise TypeError("exclude_tools must be a collection of tool names, not a str "
                        f"(did you mean ({exclude_tools!r},)?)")


def _init_policy(policy: "ThresholdMasking | ChunkedMasking") -> None:
    """Validate a masking policy's shared fields and freeze ``exclude_tools`` to a tuple."""
    _check_args(policy.keep, policy.exclude_tools)
    if policy.threshold_tokens < 0:
        raise ValueError(f"threshold_tokens must be >= 0, got {policy.threshold_tokens}")
    object.__setattr__(policy, "exclude_tools", tuple(policy.exclude_tools))


def _mask_oldest(messages: list[Message], positions: list[tuple[int, int]],
                 n_oldest: int, exclude_tools: Collection[str]) -> tuple[list[Message], int]:
    """Mask the first ``n_oldest`` of ``positions``; return ``(view, masked_count)``."""
    view = list(messages)
    if n_oldest <= 0:
        return view, 0
    names = tool_names_by_id(messages) if exclude_tools else {}
    excluded = frozenset(exclude_tools)
    changed: dict[int, list] = {}
    masked = 0
    memo = session_memo()
    for i, j in positions[:n_oldest]:
        block = messages[i]["content"][j]
        if excluded and names.get(block.get("tool_use_id")) in excluded:
            continue
        replacement = masked_block(block, memo)
        if replacement is None:  # already a placeholder, or shorter than one
            continue
        if i not in changed:
            changed[i] = list(messages[i]["content"])
        changed[i][j] = replacement
        masked += 1
    for i, content in changed.items():
        view[i] = {**messages[i], "content": content}
    return view, masked


def mask_old_observations(messages: list[Message], keep: int = KEEP_RECENT_OBSERVATIONS, *,
                          exclude_tools: Collection[str] = ()) -> list[Message]:
    """Replace all but the newest ``keep`` tool results with a one-line placeholder.

    Shapes: messages are Message dicts, oldest first; a tool result is
    ``{"type": "tool_result", "tool_use_id": str, "content": str | list[block],
    "is_error": bool (optional)}`` inside a role="user" message. A masked result becomes
    ``{**block, "content": "[observation masked — N lines omitted]"}`` where N is the line
    count of its text (the text parts of list content joined; images are dropped with it), so
    ``tool_use_id``, ``is_error`` and any other key are kept. Assistant text, ``tool_use``
    blocks and user text are never changed.

    The newest ``keep`` results (counted over all tool results, wherever they are) stay
    verbatim. Older results of a tool named in ``exclude_tools`` (looked up through the
    matching ``tool_use``) stay verbatim too. A result that is already a placeholder is left
    as it is, so masking twice gives the same view as masking once, and so is one whose text
    is shorter than its placeholder (and holds no image): masking it would cost tokens, so
    the estimate never grows.

    Args:
        messages: the history; never mutated.
        keep: how many of the newest tool results stay verbatim (a count, not tokens; default
            :data:`KEEP_RECENT_OBSERVATIONS`, 4).
        exclude_tools: tool names whose results are never masked.

    Returns:
        A new list of the same length; messages that change are new dicts with new content
        lists, the others are the input's own objects (treat the view as read-only).

    Raises:
        ValueError: keep < 0.
        TypeError: keep is not an int or exclude_tools is a str.

    Source:
        000_86e3ff2076a5ae37.txt (maskOldObservations); JetBrains "The Complexity Trap" (2025);
        server-side analogue: context edit clear_tool_uses_20250919; exercise 03.2 (the same
        checks grade both).

    >>> h = [{"role": "user", "content": "go"},
    ...      {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls",
    ...                                         "input": {}}]},
    ...      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
    ...                                    "content": "README.md\\n" * 20}]}]
    >>> mask_old_observations(h, keep=0)[2]["content"][0]["content"]
    '[observation masked — 21 lines omitted]'
    """
    _check_args(keep, exclude_tools)
    scan = None if exclude_tools else scan_for(messages, create=False)
    if scan is not None:  # inside a token memo: the same view from the session's scan
        return scan.masked_view(messages, scan.results_upto[len(messages)] - keep)
    positions = tool_result_positions(messages)
    return _mask_oldest(messages, positions, len(positions) - keep, exclude_tools)[0]


def should_mask(messages: list[Message],
                threshold_tokens: int = MASK_THRESHOLD_TOKENS) -> bool:
    """The trigger: True when ``approx_tokens(messages) > threshold_tokens``.

    Args:
        messages: the full history.
        threshold_tokens: mask only above this many approx tokens (strictly).
    Returns:
        bool.
    Source: ``approxTokens(history) > MASK_THRESHOLD_TOKENS`` in 000_86e3ff2076a5ae37.txt;
    exercise 03.3 (the same checks grade both).

    >>> should_mask([{"role": "user", "content": "x" * 400}], threshold_tokens=99)
    True
    """
    return approx_tokens(messages) > threshold_tokens


def count_tool_results(messages: list[Message]) -> int:
    """Count the ``tool_result`` blocks in the user messages of ``messages``.

    Args:
        messages: a history.

    Returns:
        The number of tool results.
    """
    return len(tool_result_positions(messages))


def chunked_mask_count(results: int, *, keep: int, chunk: int) -> int:
    """Say how many of the oldest ``results`` a chunked boundary masks: whole chunks only.

    Between ``keep`` and ``keep + chunk - 1`` results stay verbatim and the boundary moves only
    when a whole chunk has aged out. ``chunk=1`` is plain masking.

    Args:
        results: tool results in the history.
        keep: newest results always kept verbatim.
        chunk: results masked at once when the boundary moves.

    Returns:
        ``floor((results - keep) / chunk) * chunk``, 0 when results <= keep.

    >>> [chunked_mask_count(r, keep=4, chunk=8) for r in (4, 11, 12, 19, 20)]
    [0, 0, 8, 8, 16]
    """
    return max(0, results - keep) // chunk * chunk


@dataclasses.dataclass(frozen=True)
class ThresholdMasking:
    """View policy: mask old observations only when the history is big (seed 000's trigger).

    ``policy(history, ctx) -> view``: when ``approx_tokens(history) > threshold_tokens`` the view
    is ``mask_old_observations(history, keep=keep, exclude_tools=exclude_tools)``, otherwise a
    shallow copy of the history. ``ctx`` is unused (any :class:`ViewContext` or None).
    Raises: ValueError for keep < 0 or threshold_tokens < 0 (at construction).
    """

    keep: int = KEEP_RECENT_OBSERVATIONS
    threshold_tokens: int = MASK_THRESHOLD_TOKENS
    exclude_tools: tuple[str, ...] = ()
    _scans: ScanHandle = dataclasses.field(default_factory=ScanHandle, init=False,
                                           repr=False, compare=False)

    def __post_init__(self) -> None:
        _init_policy(self)

    def __call__(self, history: list[Message],
                 ctx: ViewContext | None = None) -> list[Message]:
        scan = None if self.exclude_tools else self._scans.get(history)
        if scan is not None:  # inside a token memo: from the session's scan (incremental)
            return scan.chunked_view(history, self.keep, 1, self.threshold_tokens)
        if not should_mask(history, self.threshold_tokens):
            return list(history)
        return mask_old_observations(history, keep=self.keep, exclude_tools=self.exclude_tools)


@dataclasses.dataclass(frozen=True)
class ChunkedMasking:
    """View policy whose mask boundary moves only in whole chunks of ``chunk`` tool results.

    Plain masking moves the boundary by one result every turn, so the masked prefix, and with
    it the prompt cache, changes on every request. Here the oldest
    ``chunked_mask_count(results, keep=keep, chunk=chunk)`` results are masked: the view's
    prefix stays byte-identical until ``chunk`` more results have aged out, then it jumps
    (seed 000, pitfall "cache invalidation", mitigation (b); the API's ``clear_at_least``
    serves the same purpose). Masking starts only above ``threshold_tokens``.
    Raises: ValueError for keep < 0, chunk < 1 or threshold_tokens < 0 (at construction).
    """

    keep: int = KEEP_RECENT_OBSERVATIONS
    chunk: int = 8
    threshold_tokens: int = MASK_THRESHOLD_TOKENS
    exclude_tools: tuple[str, ...] = ()
    _scans: ScanHandle = dataclasses.field(default_factory=ScanHandle, init=False,
                                           repr=False, compare=False)

    def __post_init__(self) -> None:
        _init_policy(self)
        if isinstance(self.chunk, bool) or not isinstance(self.chunk, int) or self.chunk < 1:
            raise ValueError(f"chunk must be an int >= 1 (tool results), got {self.chunk!r}")

    def __call__(self, history: list[Message],
                 ctx: ViewContext | None = None) -> list[Message]:
        if self.exclude_tools:
            scan = None
        else:
            scan = self._scans.get(history)
        if scan is not None:  # inside a token memo: from the session's scan (incremental)
            return scan.chunked_view(history, self.keep, self.chunk, self.threshold_tokens)
        if approx_tokens(history) <= self.threshold_tokens:
            return list(history)
        positions = tool_result_positions(history)
        n = chunked_mask_count(len(positions), keep=self.keep, chunk=self.chunk)
        return _mask_oldest(history, positions, n, self.exclude_tools)[0]


def masking_stats(history: list[Message], *,
                  keep: int = KEEP_RECENT_OBSERVATIONS) -> dict[str, int]:
    """Compute what ``/stats`` prints: messages, raw and masked tokens, results masked.

    Args:
        history: the full history; never mutated.
        keep: newest tool results kept verbatim in the masked view (>= 0).

    Returns:
        ``{"messages", "raw_tokens", "masked_tokens", "masked_count"}``: ``messages`` is
        ``len(history)`` (the seed calls it "turns"; in the kit a turn is one model
        request); ``raw_tokens`` and ``masked_tokens`` are approx tokens of the history
        and of ``mask_old_observations(history, keep=keep)`` (always masked, whatever the
        threshold); ``masked_count`` is how many tool results that masking replaced.

    Raises:
        ValueError: keep < 0.

    Source:
        000_86e3ff2076a5ae37.txt ("/stats").

    >>> masking_stats([{"role": "user", "content": "hello"}])
    {'messages': 1, 'raw_tokens': 2, 'masked_tokens': 2, 'masked_count': 0}
    """
    _check_args(keep, ())
    positions = tool_result_positions(history)
    view, masked = _mask_oldest(history, positions, len(positions) - keep, ())
    return {"messages": len(history), "raw_tokens": approx_tokens(history),
            "masked_tokens": approx_tokens(view), "masked_count": masked}


def masking_curve(history: list[Message], *, keep: int = KEEP_RECENT_OBSERVATIONS,
                  threshold_tokens: int = MASK_THRESHOLD_TOKENS, chunk: int = 1,
                  exclude_tools: Iterable[str] = ()) -> list[tuple[int, int, int]]:
    """Compute raw vs view approx tokens of every request a recorded history implies.

    A request is sent each time the history ends with a user message, so request ``r`` sees
    the prefix ending at the r-th user message. Equal to computing every prefix's view and
    ``approx_tokens`` of it, but in one pass (linear in the history), so sliders can redraw a
    long real transcript at once.

    Args:
        history: the recorded history; never mutated.
        keep: newest tool results kept verbatim (>= 0).
        threshold_tokens: approx tokens under which nothing is masked (default
            :data:`MASK_THRESHOLD_TOKENS`, 8,000).
        chunk: results masked at once (>= 1; 1 is ``ThresholdMasking``).
        exclude_tools: tool names whose results are never masked.

    Returns:
        ``(r, raw_tokens, view_tokens)`` per request, where view_tokens is what
        ``ChunkedMasking(keep, chunk, threshold_tokens, exclude_tools)`` would send.

    Raises:
        ValueError: keep < 0 or chunk < 1.

    >>> masking_curve([{"role": "user", "content": "hello"}])
    [(1, 2, 2)]
    """
    exclude_tools = tuple(exclude_tools)
    ChunkedMasking(keep=keep, chunk=chunk, threshold_tokens=threshold_tokens,
                   exclude_tools=exclude_tools)  # validates the arguments
    names = tool_names_by_id(history) if exclude_tools else {}
    excluded = frozenset(exclude_tools)
    # saved[k]: (chars, image tokens) masking the k-th oldest tool result would remove
    saved_chars: list[int] = [0]  # prefix sums over results
    saved_images: list[int] = [0]
    raw_chars = raw_images = 0
    curve = []
    for message in history:
        c, im = _message_chars(message)
        raw_chars += c
        raw_images += im
        content = message.get("content")
        if message.get("role") != "user":
            continue
        if not isinstance(content, str):
            for block in content or []:
                if block.get("type") != "tool_result":
                    continue
                dc = di = 0
                if (names.get(block.get("tool_use_id")) not in excluded
                        and _saved_chars(block) > 0):
                    bc, di = _block_chars(block)
                    dc = bc - len(placeholder(tool_result_text(block)))
                saved_chars.append(saved_chars[-1] + dc)
                saved_images.append(saved_images[-1] + di)
        raw = math.ceil(raw_chars / CHARS_PER_TOKEN) + raw_images
        view = raw
        if raw > threshold_tokens:
            n = chunked_mask_count(len(saved_chars) - 1, keep=keep, chunk=chunk)
            view = (math.ceil((raw_chars - saved_chars[n]) / CHARS_PER_TOKEN)
                    + raw_images - saved_images[n])
        curve.append((len(curve) + 1, raw, view))
    return curve
