"""ALTERNATIVE (correct, written differently): raw bytes split on b"\\n", each line decoded
with errors="replace" on its own, the last line's state known from the bytes.

Exercise 07: resuming a write-ahead session (notebooks/07_sessions.ipynb).
"""

from __future__ import annotations

import json
import os


def resume_session(path):
    with open(os.fspath(path), "rb") as handle:
        data = handle.read()
    if not data.strip():
        return [], []
    chunks = data.split(b"\n")
    cut_at_end = not data.endswith(b"\n")
    if not cut_at_end:
        chunks = chunks[:-1]
    entries, problems = [], []
    for index, chunk in enumerate(chunks):
        text = chunk.decode("utf-8", errors="replace")
        if text.strip() == "":
            continue
        try:
            value = json.loads(text)
            ok = type(value) is dict
        except json.JSONDecodeError:
            ok = False
        if ok:
            entries.append(value)
            continue
        last = index == len(chunks) - 1
        problems.append((index + 1, "truncated_last_line" if last and cut_at_end
                         else "corrupt_line"))
    return entries, problems
