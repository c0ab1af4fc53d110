"""The run_bash tool's body: a shell command in the workspace, bounded in time and in output.

The command runs through ``bash -c`` in the workspace root, in its own process group, stdout
and stderr merged. The group is killed whole (SIGTERM, then SIGKILL after
:data:`BASH_KILL_GRACE_SECONDS`) and the shell reaped at the timeout, when the call is
interrupted (the executor's cancel event,
:func:`~mini_agent.harness.threads.cancel_event`: the run was closed, cancelled or got a
Ctrl-C) and when the waiting thread itself is interrupted (a ``KeyboardInterrupt`` in a
direct call), so no process of the command outlives the call, a background grandchild
(``sleep 300 &``) included; output is read by a thread that keeps only
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
import time
from typing import Any

from mini_agent.harness.threads import cancel_event
from mini_agent.harness.workspace import ToolError, Workspace

BASH_PIPE_GRACE_SECONDS = 0.5
"""How long run_bash waits for output after the shell exits; a background process that keeps
stdout open past this is not waited for (its later output is not shown)."""

BASH_KILL_GRACE_SECONDS = 1.0
"""How long a command's process group has to end after SIGTERM before it gets SIGKILL."""

BASH_POLL_SECONDS = 0.05
"""How often run_bash checks its cancel event while the command runs (the latency of an
interrupt)."""


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


def group_alive(pgid: int) -> bool:
    """Tell whether a process group still has a member that is not a zombie.

    An orphaned member that has died stays a zombie until whoever adopted it (init, a
    container's first process) reaps it, which may take a while; it runs no more, so it
    does not count. Where ``/proc`` is missing (not Linux), any member counts.

    Args:
        pgid: the process group id.

    Returns:
        True while a member runs (or, without ``/proc``, exists).
    """
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if not os.path.isdir("/proc/self"):
        return True
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def kill_group(proc: subprocess.Popen, grace_seconds: float = BASH_KILL_GRACE_SECONDS) -> None:
    """Kill a process group led by ``proc`` and reap ``proc``: SIGTERM, then SIGKILL.

    The group gets SIGTERM; ``proc`` is reaped, and once no member of the group runs any
    more (:func:`group_alive`) it returns; a member still running after ``grace_seconds`` (a
    process that ignores SIGTERM) gets SIGKILL with the rest of the group. Orphaned members
    are reaped by whoever adopted them (init or a subreaper).

    Args:
        proc: a process started with ``start_new_session=True`` (its pid is the group id).
        grace_seconds: seconds between SIGTERM and SIGKILL (default
            :data:`BASH_KILL_GRACE_SECONDS`, 1 s).
    """
    pgid = proc.pid
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        proc.wait()
        return
    deadline = time.monotonic() + grace_seconds
    while True:
        try:
            proc.wait(timeout=0.02)
            if not group_alive(pgid):
                return
            time.sleep(0.02)
        except subprocess.TimeoutExpired:
            pass
        if time.monotonic() >= deadline:
            break
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
    deadline = time.monotonic() + 1.0   # SIGKILL lands when the member is next scheduled
    while group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.01)


def _wait(proc: subprocess.Popen, timeout_seconds: float) -> str | None:
    """Wait for ``proc`` up to ``timeout_seconds``, watching the call's cancel event.

    Returns:
        None when the command ended, ``"timeout"`` or ``"interrupted"`` otherwise (the group
        still running).
    """
    cancel = cancel_event()
    deadline = time.monotonic() + timeout_seconds
    while True:
        if cancel.is_set():
            return "interrupted"
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout"
        try:
            proc.wait(timeout=min(left, BASH_POLL_SECONDS))
            return None
        except subprocess.TimeoutExpired:
            continue


def run_bash(ws: Workspace, input: dict[str, Any]) -> str:
    """Run a shell command in the workspace; output is bounded, the exit code line never cut.

    A command past its timeout, or whose call is interrupted (the executor's cancel event; a
    ``KeyboardInterrupt`` in this thread), has its process group killed (:func:`kill_group`)
    within about :data:`BASH_POLL_SECONDS` plus the SIGTERM grace; a background process that
    keeps stdout open after the shell exits does not make the call wait (see
    BASH_PIPE_GRACE_SECONDS).

    Args:
        ws: the workspace: its root is the working directory; ``bash_timeout_seconds`` and
            ``max_output_chars`` bound the run.
        input: the tool input, ``{"command": str, "timeout_seconds"?: float}``; the timeout
            defaults to ``ws.bash_timeout_seconds``.

    Returns:
        The merged stdout and stderr, capped, then a ``[exit code: N]`` line.

    Raises:
        ToolError: ``timeout_seconds`` is not a positive finite number, the command timed
            out (the message carries the output so far and a hint), or the call was
            interrupted (the output so far, then ``[command interrupted after N seconds; its
            process group was killed]``).
        BaseException: whatever interrupts the wait in this thread (``KeyboardInterrupt``),
            after the group is killed and the shell reaped.
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
    started = time.monotonic()
    try:
        stopped = _wait(proc, timeout_seconds)
    except BaseException:  # KeyboardInterrupt in a direct call: no process left behind
        kill_group(proc)
        raise
    if stopped is not None:  # a command that ended may leave a server running on purpose
        kill_group(proc)
    drain.join(BASH_PIPE_GRACE_SECONDS)
    text, dropped = drain.text(ws)
    if not drain.is_alive():
        proc.stdout.close()
    if stopped == "timeout":
        text = cap_output(ws, text, dropped)
        raise ToolError(f"{text}\n[command timed out after {timeout_seconds:g} seconds and was "
                        "killed; make it faster or pass a larger timeout_seconds]".lstrip())
    if stopped == "interrupted":
        text = cap_output(ws, text.rstrip("\n"), dropped)
        raise ToolError(f"{text}\n[command interrupted after {time.monotonic() - started:.1f} "
                        "seconds (the run was closed, cancelled or got Ctrl-C); its process "
                        "group was killed]".lstrip())
    text = cap_output(ws, text if dropped else text.rstrip("\n"), dropped)
    return f"{text}\n[exit code: {proc.returncode}]".lstrip("\n")

