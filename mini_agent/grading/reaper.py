"""A tiny process beside the grading worker that ends the worker's group once its caller dies.

The worker watches its caller from a thread (:func:`.worker.watch_parent`), but a thread runs
only when the learner's code lets go of the interpreter: a C-level loop
(``sum(itertools.repeat(1))``) in a worker whose caller died would spin for ever. So on Linux
the worker forks this reaper before it loads any learner code. The reaper holds no pipes and
runs no learner code; every :data:`POLL_SECONDS` it reads the worker's parent from
``/proc/<worker>/stat``, and once that is no longer the caller (the caller died and the worker
was handed to init) or the worker is gone, it kills the whole process group: the worker,
what the learner's code started, and itself. When the worker ends normally its group is
killed anyway (the reaper with it).

IO: forks a process, reads ``/proc``, sends signals.

Source: the kit's grading design (``docs/grading.md``); proc(5) for the ``stat`` fields.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

POLL_SECONDS = 0.5
"""How often the reaper looks at the worker's parent (seconds)."""


def stat_fields(pid: int) -> list[str] | None:
    """Read a process's ``/proc/<pid>/stat`` fields after its name.

    Args:
        pid: the process to look at.

    Returns:
        The fields from the state on (``[state, ppid, pgrp, ...]``), or None when the
        process is gone (or there is no ``/proc``).
    """
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def parent_of(pid: int) -> int | None:
    """Read a process's parent pid from ``/proc``.

    Args:
        pid: the process to look at.

    Returns:
        Its parent's pid, or None when the process is gone.
    """
    fields = stat_fields(pid)
    return None if fields is None else int(fields[1])


def start_reaper(caller: int) -> int | None:
    """Fork the reaper for this worker (Linux, and only when the worker leads its group).

    Call it before any thread starts and before the learner's code loads.

    Args:
        caller: the caller's pid (the worker's parent at start-up).

    Returns:
        The reaper's pid in the worker; None when no reaper was started (no ``/proc``, no
        ``fork``, or this process does not lead its process group). The forked reaper itself
        never returns.
    """
    worker = os.getpid()
    if not (hasattr(os, "fork") and Path(f"/proc/{worker}/stat").exists()
            and os.getpgid(0) == worker):
        return None
    pid = os.fork()
    if pid:
        return pid
    try:  # the reaper: hold none of the worker's pipes, run no Python clean-up
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 256)
        while parent_of(worker) == caller:
            time.sleep(POLL_SECONDS)
        os.killpg(worker, signal.SIGKILL)  # this process too
    finally:
        os._exit(0)
