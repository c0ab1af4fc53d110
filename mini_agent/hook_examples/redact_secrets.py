#!/usr/bin/env python3
"""PostToolUse hook: redact secrets (API keys, tokens, private keys, passwords) from tool output.

Prints ``{"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput":
<redacted text>, "additionalContext": "..."}}`` when something was redacted, nothing otherwise.
mini-agent replaces the tool's output with ``updatedMCPToolOutput`` (Claude Code does so for
MCP tools), so the secret never reaches the model or the session log.

Source: Claude Code's hooks reference (PostToolUse ``hookSpecificOutput`` with
``updatedMCPToolOutput`` and ``additionalContext``).
"""
import json
import re
import sys

SECRETS = [  # (pattern, replacement)
    (re.compile(r"sk-ant-[A-Za-z0-9_\-]{16,}"), "[REDACTED]"),            # Anthropic API keys
    (re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"), "[REDACTED]"),            # AWS access key ids
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"), "[REDACTED]"),         # GitHub tokens
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}\b"), "[REDACTED]"),      # Slack tokens
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
     "[REDACTED]"),
    (re.compile(r"(?i)\b(password|passwd|secret|api_key|apikey|token)(\s*[=:]\s*)[^\s\"',;]{4,}"),
     r"\1\2[REDACTED]"),                                                   # key=value pairs
]


def redact(text: str) -> tuple[str, int]:
    """Replace each secret in a text by ``[REDACTED]``.

    Args:
        text: a tool's output.

    Returns:
        ``(redacted text, number of replacements)``.
    """
    total = 0
    for pattern, replacement in SECRETS:
        text, n = pattern.subn(replacement, text)
        total += n
    return text, total


def main() -> int:
    """Read a PostToolUse payload on stdin; print the redacted output when a secret was found.

    The output is Claude Code's ``updatedMCPToolOutput`` field; nothing is printed when no secret
    was found or the input is unreadable. A ``tool_response`` that is not a string is redacted as
    its JSON.

    Returns:
        0, always (the hook never blocks).
    """
    try:
        payload = json.load(sys.stdin)
    except ValueError:
        return 0
    response = payload.get("tool_response")
    if not isinstance(response, str):
        response = json.dumps(response)
    text, count = redact(response)
    if count:
        print(json.dumps({"hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "updatedMCPToolOutput": text,
            "additionalContext": f"{count} secret(s) were redacted from this tool output."}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
