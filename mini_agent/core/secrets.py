"""Find and redact secrets in text before it is stored (memory files, notes, logs).

One list of patterns, one pure function. The memory tool (``mini_agent.harness.memory``) runs
every text the model writes through :func:`redact_secrets` before it reaches the disk, because a
memory outlives the conversation that produced it: a key pasted once would be read back in
every later session.

Does not: detect every secret (high-entropy strings without a known shape pass), or decide
what to do with a count (callers report it). Taught in
``notebooks/09_memory_and_subagents.ipynb``.

Source:
    004_b74ef821c58ee4ec.txt (memory tool: strip secrets before writing); token shapes from
    the issuers' documentation.
"""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"
"""What a secret is replaced with."""

SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("anthropic_api_key", re.compile(r"sk-ant-[A-Za-z0-9_\-]{16,}"), REDACTED),
    ("private_key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?"
                               r"-----END [A-Z0-9 ]*PRIVATE KEY-----"), REDACTED),
    ("bearer_token", re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9\-._~+/]{16,}=*"), r"\1" + REDACTED),
    ("aws_access_key_id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), REDACTED),
    ("aws_secret_access_key", re.compile(
        r"(?i)(aws_secret_access_key\s*[=:]\s*[\"']?)[A-Za-z0-9/+=]{40}\b"), r"\1" + REDACTED),
    ("github_token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"), REDACTED),
    ("assigned_secret", re.compile(
        r"(?i)\b(password|passwd|secret|api_key|apikey|access_token)(\s*[=:]\s*)"
        r"(?!\[REDACTED\])[^\s\"',;]{4,}"), r"\1\2" + REDACTED),
)
"""``(kind, pattern, replacement)`` in the order applied (private keys before generic ones)."""


def redact_secrets(text: str) -> tuple[str, dict[str, int]]:
    """Replace each secret in ``text`` with ``[REDACTED]``.

    Args:
        text: any text; not modified (str is immutable).
    Returns:
        ``(redacted_text, {kind: count})``; the dict holds only kinds found.
    Source:
        004_b74ef821c58ee4ec.txt ("機密情報を除き").

    >>> redact_secrets("key sk-ant-api03-abcdefghijklmnop1234 ok")
    ('key [REDACTED] ok', {'anthropic_api_key': 1})
    """
    found: dict[str, int] = {}
    for kind, pattern, replacement in SECRET_PATTERNS:
        text, n = pattern.subn(replacement, text)
        if n:
            found[kind] = n
    return text, found
