#!/usr/bin/env python3
"""PreToolUse hook: block destructive shell commands (exit 2, reason on stderr).

Reads the hook payload (JSON) on stdin; looks at ``tool_input.command`` (the kit's run_bash and
Claude Code's Bash both use that key). Works unchanged as a Claude Code hook.

Source: Claude Code's hooks reference (a command hook's exit code 2 blocks the call and its
stderr goes back to the model); the ``rm -rf`` guard of section 5 of
002_4516104fd432e704.txt.
"""
import json
import re
import sys

PATTERNS = [
    (r"\brm\s+(-[a-zA-Z]*[rR][a-zA-Z]*\s+-?[a-zA-Z]*f|-[a-zA-Z]*f[a-zA-Z]*\s+-?[a-zA-Z]*[rR]|"
     r"-[a-zA-Z]*[rR][a-zA-Z]*f|-[a-zA-Z]*f[a-zA-Z]*[rR]|--recursive\s+--force|--force\s+--recursive)"
     r"[a-zA-Z]*\s+(--no-preserve-root\s+)?(/|~|\$HOME|/\*|\*)(\s|$|;|&|\|)",
     "recursive forced delete of /, ~ or everything"),
    (r"\bmkfs(\.\w+)?\b", "formatting a file system"),
    (r"\bdd\b[^|;&]*\bof=/dev/", "writing raw bytes to a device"),
    (r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:", "a fork bomb"),
    (r"\bchmod\s+-R\s+0?777\s+/(\s|$)", "making the whole file system world-writable"),
    (r">\s*/dev/sd[a-z]\b", "overwriting a disk device"),
    (r"\bgit\s+push\b[^|;&]*(\s--force\b|\s-f\b)", "force-pushing over shared history"),
]


def main() -> int:
    """Read a PreToolUse payload on stdin and block a destructive ``command``.

    Unreadable input, or a payload without a string ``tool_input.command``, is let through.

    Returns:
        The exit code: 2 with the reason on stderr to block (a pattern of :data:`PATTERNS`
        matched), else 0.
    """
    try:
        payload = json.load(sys.stdin)
    except ValueError:
        return 0  # not our business: let the call through
    command = (payload.get("tool_input") or {}).get("command")
    if not isinstance(command, str):
        return 0
    for pattern, what in PATTERNS:
        if re.search(pattern, command):
            print(f"Blocked by policy: `{command}` looks like {what}. "
                  "Use a narrower command (a specific path inside the workspace).",
                  file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
