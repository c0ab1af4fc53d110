"""A real offline Agent run (DemoBrain, demo project) logging a session; the crash test kills it.

Usage: ``python crash_agent_child.py WORKSPACE_ROOT SESSIONS_DIR SESSION_ID``. The first run
copies the demo project under WORKSPACE_ROOT and starts the demo task; a later run resumes the
session (``Agent.resume``) and asks the agent to continue. Each session append prints
``ACK <seq>`` after it returned (written + fsynced); ``FINISHED <stop_reason>`` at the end.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.pop("ANTHROPIC_API_KEY", None)  # always offline

from mini_agent.cli import build_agent, copy_demo_project, demo_task  # noqa: E402
from mini_agent.harness.session import SessionWriter, resume_session, session_path  # noqa: E402


class AckingWriter(SessionWriter):
    """A SessionWriter that numbers entries and prints ``ACK n`` once each is on disk."""

    def __init__(self, *args, first_seq: int = 0, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.seq = first_seq

    def append(self, entry: dict) -> None:
        super().append({**entry, "seq": self.seq})
        print(f"ACK {self.seq}", flush=True)
        self.seq += 1


def main(root: str, directory: str, session_id: str) -> int:
    workspace = Path(root) / "project"
    if not workspace.exists():
        copy_demo_project(Path(root))
    path = session_path(directory, session_id)
    entries = resume_session(path)[0] if path.exists() else []
    writer = AckingWriter(directory, session_id, first_seq=len(entries))
    agent = build_agent(workspace, session=writer)
    print("READY", flush=True)
    if entries:
        agent.resume(session_id, directory=directory)
        result = agent.run("Continue the task where you left off.")
    else:
        result = agent.run(demo_task())
    print(f"FINISHED {result.exit_status}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
