"""The run_bash tool's body: a shell command in the workspace, bounded in time and in output.

The command runs through ``bash -c`` in the workspace root, in its own process group (killed
whole at the timeout), stdout and stderr merged; output is read by a thread that keeps only
the first ``4 * max_output_chars`` bytes, so a flood cannot fill memory, and the last line
always gives the exit code. A background process that keeps stdout open does not make the
call wait (:data:`BASH_PIPE_GRACE_SECONDS`). Not a sandbox: run_bash is a "write" tool.

IO: processes, threads. Taught in ``notebooks/01_agent_loop.ipynb``.

Source:
    000_86e3ff2076a5ae37.txt (episodes 01-03's run_bash tool); section 5 of
    002_4516104fd432e704.txt (Bash counts as a write tool).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from typing import Any

from mini_agent.harness.workspace import ToolError, Workspace

BASH_PIPE_GRACE_SECONDS = 0.5
"""How long run_bash waits for output after the shell exits; a background process that keeps
stdout open past this is not waited for (its later output is not shown)."""


class _Drain(threading.Thread):
    """Read a pipe to its end, keeping the first ``keep_bytes`` and counting the rest."""

    def __init__(self, fd: int, keep_bytes: int) -> None:
        super().__init__(daemon=True)
        self.fd, self.keep_bytes = fd, keep_bytes
        self.head = bytearray()
        self.dropped_bytes = 0
        self.lock = threading.Lock()

    def run(self) -> None:
        while chunk := os.read(self.fd, 65_536):
            with self.lock:
                room = max(self.keep_bytes - len(self.head), 0)
                self.head += chunk[:room]
                self.dropped_bytes += len(chunk) - min(room, len(chunk))

    def text(self, ws: Workspace) -> tuple[str, int]:
        with self.lock:
            return ws.scrub(bytes(self.head).decode("utf-8", errors="replace")), self.dropped_bytes


def cap_output(ws: Workspace, text: str, dropped_bytes: int) -> str:
    """Cap output like :meth:`Workspace.cap`, also counting output that was never kept.

    Args:
        ws: the workspace; its ``max_output_chars`` is the cap.
        text: the kept output.
        dropped_bytes: bytes the reader discarded past its buffer; added to the truncation
            count as if they were characters.

    Returns:
        ``text`` unchanged when nothing was dropped and it fits, else its first
        ``max_output_chars`` characters and a ``[... truncated: N more characters]`` line.
    """
    if not dropped_bytes:
        return ws.cap(text)
    rest = max(len(text) - ws.max_output_chars, 0) + dropped_bytes
    return f"{text[:ws.max_output_chars]}\n[... truncated: {rest:,} more characters]"


def run_bash(ws: Workspace, input: dict[str, Any]) -> str:
    """Run a shell command in the workspace; output is bounded, the exit code line never cut.

    A command past its timeout has its process group killed; a background process that keeps
    stdout open after the shell exits does not make the call wait (see
    BASH_PIPE_GRACE_SECONDS).

    Args:
        ws: the workspace: its root is the working directory; ``bash_timeout_seconds`` and
            ``max_output_chars`` bound the run.
        input: the tool input, ``{"command": str, "timeout_seconds"?: float}``; the timeout
            defaults to ``ws.bash_timeout_seconds``.

    Returns:
        The merged stdout and stderr, capped, then a ``[exit code: N]`` line.

    Raises:
        ToolError: ``timeout_seconds`` is not a positive finite number, or the command timed
            out (the message carries the output so far and a hint).
    """
    command = input["command"]
    timeout_seconds = float(input.get("timeout_seconds", ws.bash_timeout_seconds))
    if not 0 < timeout_seconds < float("inf"):
        raise ToolError(f"timeout_seconds must be a positive number of seconds, "
                        f"got {input.get('timeout_seconds')!r}")
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", NO_COLOR="1",
               TERM="dumb", PATH=os.pathsep.join([os.path.dirname(sys.executable),
                                                  os.environ.get("PATH", "")]))
    proc = subprocess.Popen(["bash", "-c", command], cwd=ws.root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    assert proc.stdout is not None
    drain = _Drain(proc.stdout.fileno(), 4 * ws.max_output_chars + 4)
    drain.start()
    try:
        proc.wait(timeout=timeout_seconds)
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    drain.join(BASH_PIPE_GRACE_SECONDS)
    text, dropped = drain.text(ws)
    if not drain.is_alive():
        proc.stdout.close()
    if timed_out:
        text = cap_output(ws, text, dropped)
        raise ToolError(f"{text}\n[command timed out after {timeout_seconds:g} seconds and was "
                        "killed; make it faster or pass a larger timeout_seconds]".lstrip())
    text = cap_output(ws, text if dropped else text.rstrip("\n"), dropped)
    return f"{text}\n[exit code: {proc.returncode}]".lstrip("\n")

