"""Replay a recorded history request by request and measure what a view policy would send.

A transcript implies one request per assistant message: request ``r`` sent the history before
the r-th assistant message. For each request :func:`analyze` estimates the approx tokens of
that view as recorded (``raw``) and after ``mask_old_observations(keep)`` (``masked``), the
share of ``tool_result`` tokens in it, and puts the real ``usage`` the file recorded for that
response beside the estimate (``input_tokens + cache_creation_input_tokens +
cache_read_input_tokens``: what the API really counted, system prompt and tool definitions
included, so it is larger than the estimate of the messages alone).

What this module does not do (yet): replay compaction or caching policies, or price a run in
USD; later episodes extend it. Pure except :func:`main_analyze`, which reads the file and prints
(``mini-agent analyze PATH``). Taught in ``notebooks/03_observation_masking.ipynb``.

Source:
    000_86e3ff2076a5ae37.txt ("where the tokens live", maskOldObservations, approxTokens);
    Anthropic usage fields (Messages API reference, prompt caching docs).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from mini_agent.core.messages import Message, iter_blocks
from mini_agent.core.session_scale import real_input_tokens
from mini_agent.core.tokens import approx_request_tokens, approx_tokens
from mini_agent.core.transcripts import Transcript, TranscriptError
from mini_agent.harness.transcript_files import load

try:  # masking is a sibling module; analysis still works without it (no masked column)
    from mini_agent.core.masking import mask_old_observations
except ImportError:  # pragma: no cover - a kit without mini_agent.core.masking
    mask_old_observations = None  # type: ignore[assignment]

DEFAULT_KEEP = 4
"""Tool results kept verbatim by the masked column (seed 000: KEEP_RECENT_OBSERVATIONS)."""


@dataclasses.dataclass(frozen=True)
class RequestRow:
    """One request of a replayed transcript.

    Attributes:
        request: 1-based request number.
        messages: number of messages in the view.
        raw_tokens: approx tokens of the view as recorded, system prompt included.
        masked_tokens: approx tokens of the view after masking, system prompt included (None
            when masking is unavailable).
        tool_result_tokens: approx tokens of the view's tool_result blocks.
        tool_result_share: tool_result_tokens / raw_tokens (0..1).
        real_input_tokens: ``input_tokens + cache_creation_input_tokens +
            cache_read_input_tokens`` of the recorded usage, or None.
        cache_read_input_tokens: from the recorded usage, or None.
        output_tokens: from the recorded usage, or None.
    """

    request: int
    messages: int
    raw_tokens: int
    masked_tokens: int | None
    tool_result_tokens: int
    tool_result_share: float
    real_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    output_tokens: int | None = None


@dataclasses.dataclass(frozen=True)
class Analysis:
    """Per-request rows and totals for one transcript (see :func:`analyze`).

    Attributes:
        path: the transcript's file, or None.
        source_format: the format the loader recognised.
        model: the model id the transcript recorded, or None.
        keep: the ``keep`` the masked column used (a count of tool results).
        rows: one :class:`RequestRow` per request.
        history_tokens: approx tokens of the whole loaded history + system.
        tool_result_tokens: approx tokens of the whole history's tool_result blocks.
        tool_result_share: tool_result_tokens / history_tokens (0..1).
        raw_total_tokens: summed over requests: what was sent.
        masked_total_tokens: summed over requests: what masking would send (None without
            masking).
        masking_ratio: masked_total_tokens / raw_total_tokens (None without masking or
            requests).
        real_input_total_tokens: summed recorded usage; None when the file has none.
        repairs: the loader's repair notes, one line each.
        system_counted: True when the transcript recorded a system prompt, counted in every
            request's raw and masked tokens; False (the default, a Claude Code session log)
            when the columns count the messages only. Tool definitions are never counted: no
            transcript holds them.
    """

    path: str | None
    source_format: str
    model: str | None
    keep: int
    rows: tuple[RequestRow, ...]
    history_tokens: int
    tool_result_tokens: int
    tool_result_share: float
    raw_total_tokens: int
    masked_total_tokens: int | None
    masking_ratio: float | None
    real_input_total_tokens: int | None
    repairs: tuple[str, ...] = ()
    system_counted: bool = False

    @property
    def requests(self) -> int:
        """Number of requests (assistant messages) in the transcript."""
        return len(self.rows)

    def to_dict(self) -> dict[str, Any]:
        """Turn the analysis into a JSON-ready dict.

        Returns:
            Every field, ``rows`` as a list of dicts and ``repairs`` as a list, plus
            ``requests`` (the row count).
        """
        data = dataclasses.asdict(self)
        data["rows"] = [dataclasses.asdict(r) for r in self.rows]
        data["repairs"] = list(self.repairs)
        data["requests"] = self.requests
        return data


NO_TOOL_RESULTS_NOTE = (
    "note: no tool_result blocks in this transcript (tool output sits in plain user\n"
    "      messages, as in older text-only trajectories), so masking has nothing to mask here;\n"
    "      "
    "the ratio says nothing about masking")
"""What the table adds when a transcript has no ``tool_result`` block to mask."""


def _tool_result_tokens(messages: list[Message]) -> int:
    """Approx tokens of all tool_result blocks of ``messages`` (one rounding, like the total)."""
    results = [b for _, _, b in iter_blocks(messages) if b.get("type") == "tool_result"]
    return approx_tokens([{"role": "user", "content": results}]) if results else 0


def analyze(transcript: Transcript, *, keep: int = DEFAULT_KEEP) -> Analysis:
    """Replay ``transcript`` request by request: raw vs masked approx tokens, tool_result share.

    Request r's view is ``transcript.messages[:i]`` where i is the index of the r-th assistant
    message; its real usage is ``transcript.usage[r - 1]``. Masked tokens use
    ``mask_old_observations(view, keep=keep)`` (None everywhere if the masking module cannot
    be imported). The system prompt, when the transcript has one, counts in every request.

    Args:
        transcript: the loaded history; not mutated.
        keep: how many of the newest tool results the masked column leaves verbatim (a count,
            not tokens); default ``DEFAULT_KEEP`` = 4.

    Returns:
        An :class:`Analysis`: one :class:`RequestRow` per assistant message, plus totals.

    Raises:
        ValueError: ``keep`` < 0.
    """
    if keep < 0:
        raise ValueError(f"keep must be >= 0, got {keep}")
    messages, system = transcript.messages, transcript.system
    rows = []
    assistant_indexes = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    for r, index in enumerate(assistant_indexes, 1):
        view = messages[:index]
        raw = approx_request_tokens(messages=view, system=system)
        masked = None
        if mask_old_observations is not None:
            masked = approx_request_tokens(messages=mask_old_observations(view, keep=keep),
                                           system=system)
        results = _tool_result_tokens(view)
        usage = transcript.usage[r - 1] if r - 1 < len(transcript.usage) else None
        rows.append(RequestRow(
            request=r, messages=len(view), raw_tokens=raw, masked_tokens=masked,
            tool_result_tokens=results, tool_result_share=results / raw if raw else 0.0,
            real_input_tokens=real_input_tokens(usage),
            cache_read_input_tokens=(usage or {}).get("cache_read_input_tokens"),
            output_tokens=(usage or {}).get("output_tokens")))
    history = approx_request_tokens(messages=messages, system=system)
    results = _tool_result_tokens(messages)
    raw_total = sum(r.raw_tokens for r in rows)
    masked_total = (sum(r.masked_tokens or 0 for r in rows)
                    if mask_old_observations is not None else None)
    real = [r.real_input_tokens for r in rows if r.real_input_tokens is not None]
    return Analysis(
        path=str(transcript.path) if transcript.path else None,
        source_format=transcript.source_format, model=transcript.model, keep=keep,
        rows=tuple(rows), history_tokens=history, tool_result_tokens=results,
        tool_result_share=results / history if history else 0.0,
        raw_total_tokens=raw_total, masked_total_tokens=masked_total,
        masking_ratio=(masked_total / raw_total
                       if masked_total is not None and raw_total else None),
        real_input_total_tokens=sum(real) if real else None,
        repairs=tuple(transcript.repairs), system_counted=bool(system))


def _num(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def counted_text(analysis: Analysis) -> str:
    """Say what the raw and masked columns count, for the totals line.

    ``mini-agent evaluate`` counts the system prompt and tool definitions of every request
    too (its calibrated overhead: ~25,000 to ~38,000 tokens per request in the kit's Claude
    Code sessions), so its raw total of the same file is larger; the real input tokens the
    file recorded include them as well.

    Args:
        analysis: what :func:`analyze` returned.

    Returns:
        ``"messages only; system prompt and tools are not in the transcript"``, or, when the
        transcript recorded a system prompt, ``"messages and the recorded system prompt; tool
        definitions are not in the transcript"``.
    """
    if analysis.system_counted:
        return "messages and the recorded system prompt; tool definitions are not in the transcript"
    return "messages only; system prompt and tools are not in the transcript"


def format_analysis(analysis: Analysis, *, max_rows: int | None = None) -> str:
    """Render an analysis as a readable report: header, repairs, one row per request, totals.

    Columns: approx tokens of the raw history and of the masked view each request would send
    (the messages, plus the system prompt when the transcript recorded one: the totals line
    says which; tool definitions never);
    "tool_result %": the share (in %) of that request's raw tokens in tool_result blocks; the
    real input and cache-read tokens the transcript recorded ("-" when it has none).

    Args:
        analysis: what :func:`analyze` returned.
        max_rows: when there are more requests than this, show only the first and last rows
            around a ``...`` line; None (the default) shows all.

    Returns:
        The report text, without a trailing newline.
    """
    a = analysis
    lines = [f"{a.path or '<transcript>'}",
             f"format {a.source_format}, model {a.model or 'unknown'}, {a.requests} requests, "
             f"history ~{a.history_tokens:,} tokens"]
    if a.repairs:
        lines.append(f"repairs ({len(a.repairs)}):")
        lines += [f"  - {r}" for r in a.repairs]
    header = (f"{'req':>4} {'msgs':>5} {'raw ~tok':>10} {f'masked k={a.keep}':>12} "
              f"{'tool_result %':>13} {'real input':>11} {'cache read':>11}")
    lines += [header, "-" * len(header)]
    rows = list(a.rows)
    cut = max_rows is not None and len(rows) > max_rows
    shown = rows[: max_rows // 2] + [None] + rows[-(max_rows - max_rows // 2):] if cut else rows
    for row in shown:
        if row is None:
            lines.append(f"{'...':>4}")
            continue
        lines.append(f"{row.request:>4} {row.messages:>5} {row.raw_tokens:>10,} "
                     f"{_num(row.masked_tokens):>12} {row.tool_result_share:>13.1%} "
                     f"{_num(row.real_input_tokens):>11} {_num(row.cache_read_input_tokens):>11}")
    lines.append("-" * len(header))
    lines.append(f"tool_result share of history tokens: {a.tool_result_share:.1%} "
                 f"(~{a.tool_result_tokens:,} of ~{a.history_tokens:,})")
    if a.tool_result_tokens == 0 and a.history_tokens > 0:
        lines.append(NO_TOOL_RESULTS_NOTE)
    sent = f"sent over all requests ({counted_text(a)}): ~{a.raw_total_tokens:,} tokens raw"
    if a.masked_total_tokens is None:
        lines.append(f"{sent} (masking unavailable)")
    else:
        ratio = f"{a.masking_ratio:.3f}" if a.masking_ratio is not None else "-"
        lines.append(f"{sent}, ~{a.masked_total_tokens:,} masked (keep={a.keep}); "
                     f"ratio {ratio}")
    if a.real_input_total_tokens is not None:
        lines.append(f"real input tokens recorded (input + cache writes + cache reads, "
                     f"system and tools included): {a.real_input_total_tokens:,}")
    return "\n".join(lines)


def main_analyze(path: str | Path, *, keep: int = DEFAULT_KEEP, as_json: bool = False,
                 compaction: str = "restart", text_actions: str = "keep",
                 stdout: TextIO | None = None,
                 stderr: TextIO | None = None) -> int:
    """Run ``mini-agent analyze PATH``: load, analyze, print a table (or JSON).

    Args:
        path: the transcript file (any format :func:`~mini_agent.harness.transcript_files.load`
            reads).
        keep: newest tool results the masked column leaves verbatim (a count); default 4.
        as_json: print ``Analysis.to_dict()`` as JSON instead of the table.
        compaction: passed to :func:`~mini_agent.harness.transcript_files.load` (default
            ``"restart"``).
        text_actions: passed to :func:`~mini_agent.harness.transcript_files.load` (default
            ``"keep"``).
        stdout: where the report goes; default ``sys.stdout``.
        stderr: where the error line goes; default ``sys.stderr``.

    Returns:
        The exit code: 0 on success; 2 with a one-line ``mini-agent analyze: error: ...`` on
        stderr for a missing file, an unknown format, an unrepairable transcript or keep < 0.

    Raises:
        ValueError: never escapes: raised for ``keep`` < 0 and, like ``TranscriptError``,
            caught and reported as exit code 2.
    """
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        if keep < 0:
            raise ValueError(f"keep must be >= 0, got {keep}")
        transcript = load(path, compaction=compaction,  # type: ignore[arg-type]
                          text_actions=text_actions)  # type: ignore[arg-type]
        analysis = analyze(transcript, keep=keep)
    except (TranscriptError, ValueError) as error:
        print(f"mini-agent analyze: error: {error}", file=err)
        return 2
    if as_json:
        print(json.dumps(analysis.to_dict(), indent=2, ensure_ascii=False), file=out)
    else:
        print(format_analysis(analysis), file=out)
    return 0
