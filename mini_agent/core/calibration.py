"""A calibrated token estimate: characters per token by content kind, fitted on real usage.

The seed's chars/4 rule is fine for deciding *when* to mask, but on real Claude Code sessions
it lands 58-86% below what the API counted: the transcript lacks the system prompt and tool
definitions, and code and JSON run at fewer characters per token than prose. This module:

* splits a request's characters by content kind (:data:`KINDS`: prose, code, JSON, tool
  output, CJK text) and counts its content blocks (each costs a few framing tokens);
* fits tokens per character of each kind on recorded usage (:func:`fit_calibration`): per
  session the first request with usage fixes the session's overhead (system prompt and tool
  definitions, which the transcript does not hold), and the growth of the real input from
  there is regressed on the growth of each kind's characters (least squares on relative
  error, pulled gently toward a prior so a kind the data hardly holds keeps a sane value);
* estimates every request of a session (:func:`estimate_requests`): the table plus the
  overhead of the first request with usage, then a per-session scale on the content growth
  learned from the usage of earlier requests only (:mod:`.session_scale`: another tokenizer,
  DeepSeek's, counts 0.71-0.89 of the table), and reports the error against the real input.

What it does not do: tokenize (no tokenizer ships offline), or price anything. Pure: no IO,
inputs never mutated. Taught in ``notebooks/11_evaluating_policies.ipynb``.
Source: issue text of the kit's evaluation chapter (58-86% gap measured on real sessions);
Anthropic usage fields (``input_tokens + cache_creation_input_tokens +
cache_read_input_tokens`` is the whole input); seed 000 (approxTokens, chars/4).
"""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
from typing import Any, Iterable, Mapping, Sequence

from mini_agent.core.feature_counts import count_message, counted_requests, split_text
from mini_agent.core.frozen_rows import frozen_row
from mini_agent.core.messages import Message
from mini_agent.core.output_kind import (  # noqa: F401 (the line tests read them here)
    _CODE_CHAR_RE, _CODE_LINE_RE, _CODE_START_RE, output_kind as _output_kind,
    output_kind_by_lines as _output_kind_by_lines)
from mini_agent.core.session_scale import real_input_tokens, scaled_estimates

KINDS = ("prose", "code", "json", "tool_output", "cjk")
"""Content kinds whose characters are counted separately."""

FEATURES = KINDS + ("blocks",)
"""What a request is measured by: characters of each kind, plus the number of content blocks."""

PRIOR_CHARS_PER_TOKEN: dict[str, float] = {
    "prose": 4.0, "code": 3.0, "json": 2.6, "tool_output": 3.0, "cjk": 1.0}
"""Starting values (characters per token) the fit is pulled toward: the seed's 4 for prose,
about 2.3-2.9 for code and JSON as measured on Claude, about one CJK character per token."""

PRIOR_TOKENS_PER_BLOCK = 3.0
"""Framing tokens per content block before fitting (role and block markers)."""

FITTED_CHARS_PER_TOKEN: dict[str, float] = {
    "prose": 3.58, "code": 3.09, "json": 2.69, "tool_output": 1.90, "cjk": 1.0}
"""Characters per token fitted by :func:`fit_calibration` (prior_weight 0.5) on the eight
Claude Code sessions of ``../shared/data`` (264 requests, 2026-12-01; ``benchmarks/policies.py``
refits and prints them). CJK stays at its prior: those sessions hold almost none."""

FITTED_TOKENS_PER_BLOCK = 14.4
"""Framing tokens per content block from the same fit (Claude Code adds reminders and ids
around tool results that the transcript does not show)."""

_COUNTS = FEATURES + ("image_tokens",)


@dataclasses.dataclass(frozen=True)
class Calibration:
    """Tokens per character of each kind, plus framing tokens per block.

    Attributes: chars_per_token: kind -> characters per token (> 0); tokens_per_block:
    framing tokens per content block; fitted_on: names of the sessions it was fitted on
    (empty for the prior); requests: requests used by the fit.
    """

    chars_per_token: Mapping[str, float] = dataclasses.field(
        default_factory=lambda: dict(FITTED_CHARS_PER_TOKEN))
    tokens_per_block: float = FITTED_TOKENS_PER_BLOCK
    fitted_on: tuple[str, ...] = ()
    requests: int = 0

    def tokens(self, features: Mapping[str, float]) -> float:
        """Estimate the tokens of one request's (or message's) features.

        Args:
            features: kind -> characters (:data:`KINDS`), plus ``blocks`` (content blocks)
                and ``image_tokens``; a missing key counts 0.

        Returns:
            Tokens as a float: each kind's characters over its characters per token, plus
            ``tokens_per_block`` per block, plus the image tokens.
        """
        # sum() over KINDS, written out: the same additions from 0 in the same order
        get, rate = features.get, self.chars_per_token
        total = (0 + get("prose", 0) / rate["prose"] + get("code", 0) / rate["code"]
                 + get("json", 0) / rate["json"] + get("tool_output", 0) / rate["tool_output"]
                 + get("cjk", 0) / rate["cjk"])
        return total + get("blocks", 0) * self.tokens_per_block + get("image_tokens", 0)

    def describe(self) -> str:
        """Describe the calibration as printed text.

        Returns:
            One line per kind (``prose  4.00 chars/token``), then the block framing in
            tokens, then (when fitted) how many sessions and requests the fit used.
        """
        lines = [f"{k:<12}{self.chars_per_token[k]:6.2f} chars/token" for k in KINDS]
        lines.append(f"{'per block':<12}{self.tokens_per_block:6.2f} tokens")
        if self.fitted_on:
            lines.append(f"fitted on {len(self.fitted_on)} sessions, {self.requests} requests")
        return "\n".join(lines)


def message_features(message: Message) -> dict[str, int]:
    """Characters of each kind in one message, its block count and its image tokens.

    Rules: text and thinking are prose (fenced code blocks are code); tool_use name and JSON
    input are json; tool_result text is json when it parses, code when 40% of its lines look
    like code, else tool_output; CJK characters count as cjk wherever they are.

    Args:
        message: one message (str content or a list of blocks); never mutated.

    Returns:
        ``{"prose": int, "code": int, "json": int, "tool_output": int, "cjk": int,
        "blocks": int, "image_tokens": int}`` (characters, blocks, image tokens).

    >>> message_features({"role": "user", "content": "hello"})["prose"]
    5
    """
    out = dict.fromkeys(_COUNTS, 0)
    count_message(message, out)
    return out


def system_features(system: Any = None, tools: Sequence[Mapping] | None = None
                    ) -> dict[str, int]:
    """Compute :func:`message_features` of the fixed part of every request.

    Args:
        system: the system prompt, a str or a list of text blocks (prose); None: none.
        tools: tool definitions, each counted as its JSON (json); None: none.

    Returns:
        The same keys as :func:`message_features`, one block per system block and per tool.
    """
    out = dict.fromkeys(FEATURES + ("image_tokens",), 0)
    blocks = [{"type": "text", "text": system}] if isinstance(system, str) else list(system or [])
    for block in blocks:
        out["blocks"] += 1
        split_text(block.get("text", ""), "prose", out)
    for tool in tools or []:
        out["blocks"] += 1
        split_text(json.dumps(tool, ensure_ascii=False), "json", out)
    return out


def request_features(messages: Sequence[Message], points: Sequence[int]
                     ) -> list[dict[str, int]]:
    """Compute the features of each request ``messages[:i]``, in one pass over the history.

    Args:
        messages: the whole history; never mutated.
        points: the history length of each request, ascending (see ``request_points``).

    Returns:
        One features dict per point (:func:`message_features` summed over the messages
        the request sends).
    """
    return counted_requests(messages, points)  # = requests_by_message(messages, points)


@dataclasses.dataclass(frozen=True)
class RequestEstimate:
    """One request: ``estimated_input_tokens`` (int), the ``scale`` it used and, when
    recorded, ``real_input_tokens`` and ``error`` = (estimated - real) / real."""

    request: int
    estimated_input_tokens: int
    real_input_tokens: int | None = None
    error: float | None = None
    scale: float = 1.0


def estimate_requests(features: Sequence[Mapping[str, int]],
                      usage: Sequence[Mapping[str, Any] | None], *,
                      calibration: Calibration | None = None,
                      overhead_features: Mapping[str, int] | None = None,
                      adapt: bool = True) -> tuple[list[RequestEstimate], float]:
    """Estimate each request's input tokens from the table, the overhead and earlier usage.

    Up to the first request with usage (the anchor) every estimate is the table's plus the
    overhead that request shows. After it, request k is estimated by a
    :class:`~.session_scale.SessionScale` that has seen the usage of requests before k only
    (never k's): the session's tokenizer scales the content growth since the anchor.

    Args:
        features: :func:`request_features` of each request, oldest first.
        usage: the recorded usage of each request (or None), parallel to ``features``.
        calibration: defaults to the fitted one.
        overhead_features: system prompt and tools (:func:`system_features`), used as the
            overhead when no request has usage.
        adapt: False keeps the table's scale (1.0) and the anchor's overhead for every
            request (the estimate before the per-session scale; benchmarks compare them).

    Returns:
        ``(rows, overhead_tokens)``: one :class:`RequestEstimate` per request and the
        anchor's overhead at the table's scale (real minus estimate, never below 0; the
        explorer's stand-in for the system prompt and tools). The anchor has error 0 by
        construction.
    """
    cal = calibration or Calibration()
    msgs = [cal.tokens(f) for f in features]
    reals = [real_input_tokens(usage[n]) if n < len(usage) else None
             for n in range(len(features))]
    first = next((n for n, r in enumerate(reals) if r is not None), None)
    if first is not None:
        overhead = max(0.0, reals[first] - msgs[first])
    else:
        overhead = cal.tokens(overhead_features or {})
    estimates = scaled_estimates(msgs, reals, overhead, adapt=adapt)
    return [_estimate_row(n + 1, est, real, (est - real) / real if real else None, scale)
            for n, ((est, scale), real) in enumerate(zip(estimates, reals))], overhead


def request_rows(features: Sequence[Mapping[str, int]],
                 usage: Sequence[Mapping[str, Any] | None], *,
                 calibration: Calibration | None = None,
                 overhead_features: Mapping[str, int] | None = None
                 ) -> tuple[list[dict[str, Any]], float | None, float]:
    """Compute :func:`estimate_requests` as the explorer reports it, without a row object each.

    Args:
        features: :func:`request_features` of each request, oldest first.
        usage: the recorded usage of each request (or None), parallel to ``features``.
        calibration: defaults to the fitted one.
        overhead_features: as :func:`estimate_requests` takes them.

    Returns:
        ``(rows, median_error, overhead_tokens)``: per request ``{"request",
        "estimated_input_tokens"}``, plus ``"real_input_tokens"`` and ``"error"`` when its
        usage is recorded; :func:`median_abs_error` of the rows; the overhead. The same
        figures as :func:`estimate_requests` (``tests/test_calibration.py`` compares them).
    """
    cal = calibration or Calibration()
    msgs = [cal.tokens(f) for f in features]
    n_usage = len(usage)
    reals = [real_input_tokens(usage[n]) if n < n_usage else None for n in range(len(features))]
    first = next((n for n, r in enumerate(reals) if r is not None), None)
    if first is not None:
        overhead = max(0.0, reals[first] - msgs[first])
    else:
        overhead = cal.tokens(overhead_features or {})
    rows, errors = [], []
    for n, ((est, _), real) in enumerate(zip(scaled_estimates(msgs, reals, overhead), reals), 1):
        if real is None:
            rows.append({"request": n, "estimated_input_tokens": est})
            continue
        error = (est - real) / real if real else None
        rows.append({"request": n, "estimated_input_tokens": est, "real_input_tokens": real,
                     "error": error})
        if error is not None:
            errors.append(abs(error))
    return rows, statistics.median(errors[1:]) if len(errors) > 1 else None, overhead


def _estimate_row(request: int, estimated: int, real: int | None, error: float | None,
                  scale: float) -> RequestEstimate:
    """Build ``RequestEstimate(request, estimated, real, error, scale)``.

    The same object the frozen dataclass's ``__init__`` makes (its ``__dict__`` holds the five
    fields in field order), without that ``__init__``'s five ``object.__setattr__`` calls: the
    fields are set as one ``__dict__``. ``tests/test_calibration.py`` compares the two.
    """
    return frozen_row(RequestEstimate, {
        "request": request, "estimated_input_tokens": estimated, "real_input_tokens": real,
        "error": error, "scale": scale})


def median_abs_error(rows: Iterable[RequestEstimate], *, skip_first: bool = True) -> float | None:
    """Return the median absolute relative error of the estimate over the recorded requests.

    Args:
        rows: :func:`estimate_requests` rows; rows without usage are ignored.
        skip_first: skip the first row with usage (it fixes the overhead, so its error is 0
            by construction); default True.

    Returns:
        The median of ``|error|`` (0.1 = 10%), or None when no row is left.
    """
    errors = [abs(r.error) for r in rows if r.error is not None]
    if skip_first:
        errors = errors[1:]
    return statistics.median(errors) if errors else None


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """Solve a small dense linear system by Gaussian elimination with partial pivoting."""
    n = len(vector)
    a = [row[:] + [v] for row, v in zip(matrix, vector)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(a[r][c]))
        a[c], a[p] = a[p], a[c]
        if abs(a[c][c]) < 1e-18:
            continue
        for r in range(n):
            if r != c:
                f = a[r][c] / a[c][c]
                a[r] = [x - f * y for x, y in zip(a[r], a[c])]
    return [a[i][n] / a[i][i] if abs(a[i][i]) > 1e-18 else 0.0 for i in range(n)]


def fit_calibration(sessions: Iterable[tuple[str, Sequence[Mapping[str, int]],
                                             Sequence[Mapping[str, Any] | None]]], *,
                    prior_weight: float = 0.5) -> Calibration:
    """Fit tokens per character of each kind (and per block) on sessions with real usage.

    Shapes: each session is ``(name, features, usage)`` with ``features`` from
    :func:`request_features` and ``usage`` the recorded usage parallel to it.

    Per session the first request with usage is the anchor; every later request with usage
    gives one equation ``real - real_anchor = sum_k a_k * (x_k - x_k_anchor)``, divided by
    ``real`` (so each request weighs by its relative error). ``prior_weight`` adds, per
    coefficient, ``prior_weight * (a_k - prior_k) = 0`` scaled to the data, which keeps a kind
    the sessions hardly hold near :data:`PRIOR_CHARS_PER_TOKEN`. Coefficients are kept
    >= 1/20 of their prior (never zero or negative).
    Args:
        sessions: the fitting set; never mutated.
        prior_weight: strength of the pull toward the prior (0: plain least squares).
    Returns:
        A :class:`Calibration` with ``fitted_on`` and ``requests`` set.
    Raises:
        ValueError: no session has two requests with usage.
    """
    prior = [1 / PRIOR_CHARS_PER_TOKEN[k] for k in KINDS] + [PRIOR_TOKENS_PER_BLOCK]
    rows: list[tuple[list[float], float]] = []
    names = []
    for name, features, usage in sessions:
        reals = [real_input_tokens(usage[n]) if n < len(usage) else None
                 for n in range(len(features))]
        with_usage = [n for n, r in enumerate(reals) if r]
        if len(with_usage) < 2:
            continue
        names.append(name)
        a = with_usage[0]
        for n in with_usage[1:]:
            x = [features[n].get(k, 0) - features[a].get(k, 0) for k in FEATURES]
            y = reals[n] - reals[a] - (features[n].get("image_tokens", 0)
                                       - features[a].get("image_tokens", 0))
            rows.append(([v / reals[n] for v in x], y / reals[n]))
    if not rows:
        raise ValueError("fit_calibration needs a session with at least two requests that "
                         "carry usage")
    m = len(FEATURES)
    ata = [[sum(r[0][i] * r[0][j] for r in rows) for j in range(m)] for i in range(m)]
    atb = [sum(r[0][i] * r[1] for r in rows) for i in range(m)]
    for i in range(m):  # ridge toward the prior, scaled to each column's own size
        scale = prior_weight * max(ata[i][i], 1e-12)
        ata[i][i] += scale
        atb[i] += scale * prior[i]
    coef = [max(c, p / 20) for c, p in zip(_solve(ata, atb), prior)]
    return Calibration(chars_per_token={k: 1 / coef[i] for i, k in enumerate(KINDS)},
                       tokens_per_block=coef[-1], fitted_on=tuple(names), requests=len(rows))


def naive_estimate(features: Mapping[str, int]) -> int:
    """Apply the seed's rule to the same features, for comparison.

    Args:
        features: kind -> characters plus ``image_tokens`` (:func:`request_features`).

    Returns:
        ``ceil(all characters / 4)`` plus the image tokens, as an int.
    """
    return math.ceil(sum(features.get(k, 0) for k in KINDS) / 4) + features.get("image_tokens", 0)
