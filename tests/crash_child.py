"""A scripted agent run that writes a write-ahead session; the crash test SIGKILLs it.

Usage: ``python crash_child.py SESSIONS_DIR SESSION_ID TURNS SEED``. It resumes whatever the
session file holds (rebuild_history), then continues the run deterministically: each turn an
assistant message with 1-3 tool_use blocks, then one tool_result entry per call (sizes up to
~200 KB so a kill can land inside a write), and a final "done" turn. After each append returns
(written + fsynced) it prints ``ACK <seq>``; ``seq`` is the entry's index among the file's
readable entries. Prints ``READY`` once set up and ``FINISHED`` when the run is complete.
"""

from __future__ import annotations

import random
import sys

from mini_agent.core.session_entries import rebuild_history
from mini_agent.harness.session import SessionWriter, resume_session, session_path


def main(directory: str, session_id: str, turns: int, seed: int) -> int:
    entries, _ = resume_session(path) if (path := session_path(directory, session_id)).exists() \
        else ([], [])
    history, _, _ = rebuild_history(entries)
    writer = SessionWriter(directory, session_id)
    seq = len(entries)
    print("READY", flush=True)

    def append(entry: dict) -> None:
        nonlocal seq
        writer.append({**entry, "seq": seq})
        print(f"ACK {seq}", flush=True)
        seq += 1

    if not history:
        append({"type": "meta", "event": "session_start", "model": "scripted"})
        append({"type": "message", "message": {"role": "user", "content": "fix the bug"}})
        history = [{"role": "user", "content": "fix the bug"}]
    turn = sum(1 for m in history if m["role"] == "assistant")
    if history[-1]["role"] == "assistant":  # rebuild answers every tool_use: only "done" ends here
        print("FINISHED", flush=True)
        return 0
    rng = random.Random(seed * 1000 + turn)
    while turn < turns - 1:
        ids = [f"toolu_{turn}_{j}" for j in range(1 + turn % 3)]
        append({"type": "message", "message": {"role": "assistant", "content": [
            {"type": "text", "text": f"step {turn}"}] + [
            {"type": "tool_use", "id": i, "name": "read_file", "input": {"path": f"f{turn}.py"}}
            for i in ids]}})
        for i in ids:
            size = rng.choice([50, 2_000, 20_000, 200_000])
            append({"type": "tool_result", "block": {"type": "tool_result", "tool_use_id": i,
                                                     "content": f"{i}:" + "x" * size}})
        turn += 1
    append({"type": "message", "message": {"role": "assistant", "content": "done"}})
    print("FINISHED", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
