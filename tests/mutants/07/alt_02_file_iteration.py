"""ALTERNATIVE (correct, written differently): the file iterated line by line with
newline="\\n" (only \\n ends a line), a problem decided from the line's own ending.

Exercise 07: resuming a write-ahead session (notebooks/07_sessions.ipynb).
"""

from __future__ import annotations

import json
from pathlib import Path


def _parse(text):
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def resume_session(path):
    entries = []
    problems = []
    with Path(path).open(encoding="utf-8", errors="replace", newline="\n") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.isspace() or raw == "":
                continue
            entry = _parse(raw)
            if entry is not None:
                entries.append(entry)
            elif raw.endswith("\n"):
                problems.append((number, "corrupt_line"))
            else:  # only the last line of a file can lack its newline
                problems.append((number, "truncated_last_line"))
    return entries, problems
