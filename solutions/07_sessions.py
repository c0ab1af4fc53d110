"""Exercise 07: resuming a write-ahead session (notebooks/07_sessions.ipynb).

A session file holds one JSON object per line (JSON Lines). A crash can leave it damaged:
the last line cut mid-write, or (after careless recovery) a garbled line in the middle.

* 07.1 ``resume_session(path)``: read every good entry and report every line you skipped.

Grade with ``mini-agent grade 07``; the same checks pass on the kit's own version
(``from mini_agent import resume_session``), which also checks a checksum on each line and
recovers the records of two fused appends: read it after you pass.
"""

from __future__ import annotations

import json
from pathlib import Path


def resume_session(path: str | Path) -> tuple[list[dict], list[tuple[int, str]]]:
    """Return ``(entries, problems)`` for a JSONL session file; never raise on damage.

    Rules:
      * the file is UTF-8 text; lines end at ``"\\n"`` only (a JSON string may hold other
        characters Python calls line ends, U+2028 say); ``path`` is a ``str`` or a ``Path``;
      * bytes that do not decode (a line cut inside a multibyte character) must not make
        reading fail;
      * an empty file (or one with only blank lines) gives ``([], [])``;
      * blank (or whitespace-only) lines are skipped without a report;
      * each line that parses as a JSON object is an entry, in file order;
      * a line that does not parse (or parses to something other than an object) is
        skipped and reported as ``(line_number, kind)``, line numbers counting from 1:
        kind ``"truncated_last_line"`` when it is the file's last line and the file does not
        end with a newline (a crash mid-append), else ``"corrupt_line"``;
      * reading goes on after a bad line: later good lines are still entries.
    Example: a file ``'{"a": 1}\\n{"b": '`` gives ``([{"a": 1}], [(2, "truncated_last_line")])``.
    Raises: FileNotFoundError for a missing file.
    Source: resumeSession and pitfall 1 in section 6 (write-ahead sessions) of the
    agent-implementation deep-dive ("Learning Claude Code know-how from sample code", seed
    002; see docs/sources.md in the kit).
    """
    # BEGIN SOLUTION
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    lines = text.split("\n")
    ends_with_newline = lines[-1] == ""
    if ends_with_newline:
        lines.pop()
    entries: list[dict] = []
    problems: list[tuple[int, str]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            entry = None
        if isinstance(entry, dict):
            entries.append(entry)
        elif number == len(lines) and not ends_with_newline:
            problems.append((number, "truncated_last_line"))
        else:
            problems.append((number, "corrupt_line"))
    return entries, problems
    # END SOLUTION
