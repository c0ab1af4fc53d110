"""Keep every process a graded check starts within reach, and end them all when grading ends.

Two tools, both Linux-only (``/proc`` and ``prctl``):

* :func:`become_subreaper`: the grading worker marks itself a *child subreaper*
  (``PR_SET_CHILD_SUBREAPER``), so a process the learner's code starts and then orphans
  (``setsid`` then exit, a double fork) is handed to the worker, not to init: whatever
  session or group it moved to, it stays the worker's descendant while the worker lives.
  :func:`kill_tree` kills the worker's descendants and group, pass after pass, until a pass
  finds nothing new (each kill hands the victim's children to the worker, where the next pass
  finds them).
* the reaper, a tiny process beside the worker that ends it once its caller dies. The worker
  watches its caller from a thread (:func:`.worker.watch_parent`), but a thread runs only
  when the learner's code lets go of the interpreter: a C-level loop
  (``sum(itertools.repeat(1))``) in a worker whose caller died would spin for ever. So on
  Linux the worker forks this reaper before it loads any learner code. The reaper holds no
  pipes and runs no learner code; every :data:`POLL_SECONDS` it reads the worker's parent
  from ``/proc/<worker>/stat``, and once that is no longer the caller (the caller died and
  the worker was handed on) or the worker is gone, it stops the worker (``SIGSTOP``: no more
  forks), kills its tree (:func:`kill_tree`: what the learner's code started, in its group
  or escaped from it), then the whole group: the worker and itself.

Elsewhere (macOS, Windows) there is no subreaper and no ``/proc``: only the worker's process
group is killed, so a child that moved to a session of its own (``start_new_session=True``,
``os.setsid()``) can outlive the grading. A worker that ends itself with ``os._exit`` (the
learner's code calls it) kills its tree first (:func:`.worker.guard_exit`); one killed from
outside (the out-of-memory killer) or that crashes hands its escaped descendants to init
before anyone can walk its tree (its group is still killed).

IO: forks a process, reads ``/proc``, sends signals, calls ``prctl``.

Source: the kit's grading design (``docs/grading.md``); proc(5) for the ``stat`` fields;
prctl(2) for ``PR_SET_CHILD_SUBREAPER``.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

POLL_SECONDS = 0.5
"""How often the reaper looks at the worker's parent (seconds)."""
PR_SET_CHILD_SUBREAPER = 36
"""The ``prctl`` option that makes a process adopt its orphaned descendants (Linux 3.4+)."""
KILL_PASSES = 200
"""Most passes :func:`kill_tree` makes over ``/proc`` (a fork bomb cannot keep it for ever)."""


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


def become_subreaper() -> bool:
    """Make this process adopt its orphaned descendants (``PR_SET_CHILD_SUBREAPER``).

    Returns:
        True when set (Linux); False elsewhere or when ``prctl`` refused.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def process_table() -> dict[int, tuple[int, int, str]] | None:
    """Read every process's parent, group and state from ``/proc``.

    Returns:
        ``{pid: (ppid, pgrp, state)}`` for the processes alive now; None without ``/proc``.
    """
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    table = {}
    for name in entries:
        if name.isdigit():
            fields = stat_fields(int(name))
            if fields is not None:
                table[int(name)] = (int(fields[1]), int(fields[2]), fields[0])
    return table


def tree_of(root: int, table: dict[int, tuple[int, int, str]]) -> set[int]:
    """List the live processes descending from ``root`` or in its process group.

    Args:
        root: the worker's pid (it leads its own group).
        table: :func:`process_table`.

    Returns:
        Their pids, ``root`` excepted, zombies (state Z or X: already dead) left out.
    """
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, stack = set(), [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    found |= {pid for pid, (_, group, _) in table.items() if group == root}
    return {pid for pid in found if pid != root and table[pid][2] not in ("Z", "X")}


def kill_tree(root: int, *, spare: frozenset[int] = frozenset()) -> int | None:
    """SIGKILL every descendant of ``root`` and every member of its group, ``root`` excepted.

    Passes over ``/proc`` until one finds no process not already killed: a process cannot
    fork once SIGKILL is pending, and the children of one killed are handed to ``root`` (a
    subreaper, :func:`become_subreaper`), where the next pass finds them. Stop ``root`` first
    (``SIGSTOP``) when it may still start processes, or call this from ``root`` itself.

    Args:
        root: the worker's pid.
        spare: pids to leave alone (the caller of this function, when it is in the tree).

    Returns:
        How many processes were sent SIGKILL; None without ``/proc`` (nothing was done).
    """
    killed: set[int] = set()
    for _ in range(KILL_PASSES):
        table = process_table()
        if table is None:
            return None
        fresh = tree_of(root, table) - killed - spare - {os.getpid()}
        if not fresh:
            break
        for pid in fresh:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:  # ended meanwhile
                pass
        killed |= fresh
    return len(killed)


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
        try:
            os.kill(worker, signal.SIGSTOP)  # no more forks while its tree is walked
        except OSError:  # gone already
            pass
        kill_tree(worker)
        os.killpg(worker, signal.SIGKILL)  # this process too
    finally:
        os._exit(0)
