"""Kit-generated sample sessions in Claude Code's JSONL format, for the explorer without real data.

:func:`sample_session_jsonl` writes, from
:func:`~mini_agent.core.long_session.long_session`, the lines Claude Code stores in
``~/.claude/projects/<project>/<session>.jsonl`` (``type``, ``uuid``, ``parentUuid``,
``sessionId``, ``timestamp``, ``message`` with ``usage``), so ``mini-agent evaluate`` and
notebook 11 run on them exactly as on a real session. They are GENERATED, not recorded: every
session says so in its first user message, and its ``usage`` is the kit's own count (the
calibrated estimate plus a fixed stand-in overhead of :data:`SAMPLE_OVERHEAD_TOKENS`), not
the API's. Pure: returns text; nothing random (``variant`` picks a deterministic variation).
Used by ``benchmarks/policies.py`` (1 to 1,000 sessions), by
:func:`mini_agent.harness.real_sessions.real_or_generated` when a real session is absent, and
the tests.

Source:
    the entry shape of Claude Code's session files, as ``core/transcripts/claude_code.py``
    reads them; the session itself is the kit's ``long_session``.
"""

from __future__ import annotations

import datetime
import json

from mini_agent.core.long_session import long_session

SAMPLE_OVERHEAD_TOKENS = 18_000
"""Stand-in for the system prompt and tools a Claude Code request carries (real sessions in
``../shared/data`` show 18,000-46,000 tokens)."""

SAMPLE_LABEL = "[kit-generated sample session: not a recording; usage computed by the kit]"

_TASKS = ("The tests fail: parse() in src/parser.py returns None for empty input. Find the "
          "cause and fix it without changing the public API of src/app.py.",
          "load_config() in src/config.py ignores MINI_TIMEOUT; the default must stay 30 s. "
          "Fix it and add a test in tests/test_app.py.",
          "render() in src/report.py prints 3 decimals; the spec says 2. Fix it and keep "
          "the CLI output of src/cli.py unchanged.")


def _iso(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.000Z")


def sample_session_jsonl(steps: int = 30, *, variant: int = 0,
                         model: str = "claude-sonnet-4-5-20250929") -> str:
    """Return one generated Claude Code session (JSONL text) of ``steps`` tool exchanges.

    Args:
        steps: tool exchanges (requests = steps + 1; >= 1; default 30).
        variant: picks the task and shifts the file sizes (any int).
        model: the ``message.model`` of assistant lines.

    Returns:
        JSONL text, one entry per line, ending with a newline.

    Raises:
        ValueError: steps < 1.
    """
    from mini_agent.core.calibration import message_features, Calibration
    task = f"{SAMPLE_LABEL}\n{_TASKS[variant % len(_TASKS)]}"
    history, times = long_session(steps + variant % 7, task=task,
                                  start_seconds=1_767_225_600.0 + 3600.0 * variant)
    cal = Calibration()
    session = f"sample-{variant:05d}"
    lines, parent, tokens, cached = [], None, 0.0, 0
    for n, (message, when) in enumerate(zip(history, times)):
        uuid = f"{session}-{n:04d}"
        entry = {"type": message["role"], "uuid": uuid, "parentUuid": parent,
                 "isSidechain": False, "sessionId": session, "timestamp": _iso(when),
                 "message": {"role": message["role"], "content": message["content"]}}
        if message["role"] == "assistant":
            # cached like Claude Code's requests: read what the request before cached, write
            # the rest (3 tokens after the last breakpoint stay uncached)
            whole = round(tokens) + SAMPLE_OVERHEAD_TOKENS
            read = min(cached, whole - 3)
            entry["message"].update({"id": f"msg_{session}_{n:04d}", "model": model,
                                     "type": "message", "stop_reason": "tool_use",
                                     "usage": {"input_tokens": 3,
                                               "cache_creation_input_tokens": whole - 3 - read,
                                               "cache_read_input_tokens": read,
                                               "output_tokens": 60}})
            cached = whole - 3
        tokens += cal.tokens(message_features(message))
        lines.append(json.dumps(entry, ensure_ascii=False))
        parent = uuid
    return "\n".join(lines) + "\n"


def is_generated(messages) -> bool:
    """Say whether a history is a kit-generated sample (its first message opens with the label).

    Args:
        messages: a history, oldest first (``MessageParam`` dicts).

    Returns:
        True when the first message's text starts with :data:`SAMPLE_LABEL`.

    >>> is_generated([{"role": "user", "content": SAMPLE_LABEL + "\\nFix parse()."}])
    True
    >>> is_generated([{"role": "user", "content": [{"type": "text", "text": "Fix it."}]}])
    False
    """
    if not messages:
        return False
    content = messages[0].get("content")
    if isinstance(content, list):
        content = next((b.get("text") for b in content
                        if isinstance(b, dict) and b.get("type") == "text"), None)
    return isinstance(content, str) and content.startswith(SAMPLE_LABEL)


def sample_transcript(steps: int = 30, *, variant: int = 0):
    """Load :func:`sample_session_jsonl` as a ``Transcript``.

    Args:
        steps: tool exchanges (requests = steps + 1; default 30).
        variant: picks the task and shifts the file sizes (any int).

    Returns:
        The parsed ``Transcript`` named "sample.jsonl" (its path is None).
    """
    from mini_agent.core.transcripts import parse_text
    return parse_text(sample_session_jsonl(steps, variant=variant), name="sample.jsonl")
