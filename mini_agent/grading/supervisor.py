"""Run one exercise's checks in a worker process, each under a time limit: never hang.

All checks of one exercise run in ONE worker process (:mod:`.worker`), started with the same
Python and the same ``mini_agent`` as the caller; the worker is replaced only after a check
ran out of time (it is killed) or ended the process. The caller waits on a queue fed by a
reader thread, never on the event loop, so this works the same in a terminal and in a notebook
kernel whose loop is already running.

A function that timed out is stubbed out in every later worker of the same grading: the
checks after it that call it fail at once ("skipped: `should_mask` timed out in
check_should_mask_threshold"), so an exercise costs about one time limit per broken function,
not one per check that calls it. The other functions are graded normally.

IO: starts and kills processes, threads.

Source: the kit's grading design (``docs/grading.md``); no seed covers grading.
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from mini_agent.grading.reaper import kill_tree
from mini_agent.grading.registry import time_limit
from mini_agent.grading.runner import graded_files, names_used
from mini_agent.grading.scorecard import CheckResult, Raised
from mini_agent.grading.stack_dump import stuck_function

GRACE_SECONDS = 3.0
"""Extra wait beyond a check's limit for the worker's own timeout report (seconds)."""
START_SECONDS = 60.0
"""How long a worker may take to start (seconds; a busy laptop in a workshop)."""
STDERR_KEEP_BYTES = 64 * 1024
"""How much of the end of a worker's stderr the caller keeps, in memory (bytes): the learner's
code may write to stderr without end (731 MB in 2 s went to a temporary file before)."""
NONCE_BYTES = 16
"""Random bytes of the nonce that starts every reply line of one worker (32 hex digits)."""
POLL_SECONDS = 0.1
"""While waiting for a reply, how often the caller checks that the worker still runs (seconds):
a child the learner's code forked keeps the reply pipe open after the worker itself ended."""


class WorkerError(RuntimeError):
    """The worker process could not start; the message carries what it printed."""


class Worker:
    """One worker process and the channel to it.

    The worker leads its own process group (a new session): the processes the learner's code
    starts or forks belong to it, and :meth:`kill` and :meth:`close` end the whole group, so
    a ``subprocess.run(["sleep", "654"])`` that timed out leaves nothing behind. On Linux they
    also end the worker's whole tree: a child started with ``start_new_session=True`` (or
    that called ``os.setsid()``) leaves the group but stays the worker's descendant (the
    worker is a child subreaper, :mod:`.reaper`). The new
    session also keeps a terminal's Ctrl-C from reaching the worker: the caller handles it.

    Args:
        cwd: the working directory of the worker (the folder being graded).

    Raises:
        WorkerError: the process did not say it was ready within :data:`START_SECONDS`.
    """

    def __init__(self, *, cwd: Path) -> None:
        import mini_agent
        kit_parent = str(Path(mini_agent.__file__).resolve().parent.parent)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (kit_parent, env.get("PYTHONPATH")) if p)
        # every reply starts with this: a line the learner's code writes is no reply
        self.nonce = secrets.token_hex(NONCE_BYTES)
        self.dropped_lines = 0  # lines on the reply pipe without the nonce (forged or noise)
        self.stderr_tail = bytearray()  # the last STDERR_KEEP_BYTES of stderr
        self.stderr_bytes = 0  # how much the process wrote on stderr in all (bytes)
        # -P: the folder being graded may hold another mini_agent/; import the caller's
        self.process = subprocess.Popen(
            [sys.executable, "-P", "-m", "mini_agent.grading.worker"], cwd=cwd, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True)
        assert self.process.stdin is not None
        try:  # the worker reads it before it loads any learner code
            self.process.stdin.write(f"{self.nonce}\n".encode("ascii"))
            self.process.stdin.flush()
        except OSError:  # it ended at once: the wait for "ready" below says so
            pass
        self.replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True, name="mini-agent-grader").start()
        self.stderr_reader = threading.Thread(target=self._read_stderr, daemon=True,
                                              name="mini-agent-grader-stderr")
        self.stderr_reader.start()
        try:
            ready = self._wait(START_SECONDS)
        except TimeoutError:
            ready = None
        if ready is None or ready.get("op") != "ready":
            self.kill()
            self.stderr_reader.join(timeout=1)  # what it printed before it ended
            raise WorkerError(f"the grading worker did not start: {self.stderr_text()}")

    def _read(self) -> None:
        """Queue each reply framed by the nonce; drop (and count) every other line.

        A reply is read from the nonce on, so text the code wrote on the pipe without a line
        end (``os.write(fd, b"partial")``) does not swallow the reply that follows it.
        """
        assert self.process.stdout is not None
        prefix = f"{self.nonce} ".encode("ascii")
        with self.process.stdout as replies:
            for line in replies:
                start = line.find(prefix)
                if start < 0:
                    self.dropped_lines += 1
                    continue
                try:
                    reply = json.loads(line[start + len(prefix):])
                except ValueError:  # a half-written line: the worker died mid-write
                    self.dropped_lines += 1
                    continue
                self.replies.put(reply)
        self.replies.put(None)  # end of file: the process ended

    def _read_stderr(self) -> None:
        """Keep the last :data:`STDERR_KEEP_BYTES` of stderr, dropping the rest as it comes."""
        assert self.process.stderr is not None
        with self.process.stderr as stderr:
            while chunk := stderr.read1(STDERR_KEEP_BYTES):
                self.stderr_bytes += len(chunk)
                self.stderr_tail += chunk
                del self.stderr_tail[:-STDERR_KEEP_BYTES]

    def _wait(self, seconds: float) -> dict[str, Any] | None:
        """The next reply; None once the process ended without one (even if a child it forked
        still holds the pipe open); TimeoutError after ``seconds``."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                return self.replies.get(timeout=min(left, POLL_SECONDS))
            except queue.Empty:
                pass
            if self.process.poll() is not None:
                try:  # a reply written before the end is already readable
                    return self.replies.get(timeout=POLL_SECONDS)
                except queue.Empty:
                    return None
        raise TimeoutError

    def request(self, message: dict[str, Any], *, seconds: float) -> dict[str, Any] | None:
        """Send one request and wait for its reply.

        Args:
            message: a request of the protocol (see :mod:`.worker`).
            seconds: how long to wait for the reply (seconds).

        Returns:
            The reply, or None when the process ended instead of answering.
        Raises:
            TimeoutError: no reply within ``seconds``.
        """
        assert self.process.stdin is not None
        try:
            self.process.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        return self._wait(seconds)

    def exit_code(self) -> int | None:
        """Wait up to 5 s for the process to end.

        Returns:
            Its exit code, or None when it still runs.
        """
        try:
            return self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def stderr_text(self, limit_chars: int = 2000) -> str:
        """Read what the process wrote on stderr.

        Args:
            limit_chars: how many characters to keep from the end (default 2,000).

        Returns:
            The last ``limit_chars`` characters, stripped.
        """
        return bytes(self.stderr_tail).decode("utf-8", "replace")[-limit_chars:].strip()

    def kill(self) -> None:
        """Kill the process, every process of its group and of its tree, and wait for it."""
        self._kill_group()
        self.process.kill()
        self.process.wait()
        if self.process.stdin is not None:
            try:
                self.process.stdin.close()
            except OSError:  # the unread end is gone
                pass

    def _kill_group(self) -> None:
        """SIGKILL what the learner's code started: the worker's tree, then its group.

        On Linux the worker is first stopped (``SIGSTOP``: it starts nothing more), then
        every descendant is killed (:func:`.reaper.kill_tree`: the worker adopts what the
        code orphaned, so a child in a session of its own is found too), then the group.
        POSIX only for the group; on Windows (no process groups here) only the worker itself
        is killed.
        """
        if not hasattr(os, "killpg"):
            return
        if self.process.poll() is None:
            try:
                os.kill(self.process.pid, signal.SIGSTOP)
            except OSError:  # ended meanwhile
                pass
            kill_tree(self.process.pid)
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:  # the group is empty already
            pass

    def close(self) -> None:
        """Ask the process to end (stdin closed), kill it if it does not, then its group.

        A worker that ends on request kills its own tree first (:func:`.worker.end_worker`).
        """
        if self.process.stdin is not None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self._kill_group()  # also what the learner's code started and left running
        self.process.kill()
        self.process.wait()


def timeout_detail(seconds: float, where: str) -> str:
    """Describe a check that ran out of time.

    Args:
        seconds: the time limit it ran out of (seconds).
        where: the loop's site ("f (03_x.py, line 4)") or the suspects ("f or g"); "" when
            nothing is known.

    Returns:
        ``"timed out after 2 s: look for an endless loop in f (03_x.py, line 4)"``.
    """
    return (f"timed out after {seconds:g} s: look for an endless loop in "
            f"{where or 'the code this check calls'}")


def run_in_worker(exercise: str, checks: list[Callable], load: dict[str, Any], *,
                  cwd: Path, default_seconds: float) -> tuple[list[CheckResult], str]:
    """Run ``checks`` in one worker process; replace it only after a timeout or a crash.

    After a timeout, the function that spun (or the one function the check names, when no
    stack said where) is stubbed out in the next worker, so later checks calling it are
    skipped at once instead of each costing a full time limit.

    Args:
        exercise: "03".
        checks: the exercise's check functions, in order (their metadata only is used here).
        load: the worker's load request ``{"implementation", "path"}``.
        cwd: the worker's working directory.
        default_seconds: the time limit of a check that declares none (seconds).

    Returns:
        ``(results, error)``: one CheckResult per check; ``error`` says, once, why nothing
        could run (the file does not import), and then every check failed without running.

    Raises:
        WorkerError: a worker process could not start.
    """
    load = {"op": "load", "exercise": exercise, "time_limit_seconds": default_seconds, **load}
    results: list[CheckResult] = []
    worker: Worker | None = None
    names: list[str] = []
    timed_out: list[dict[str, Any]] = []  # the functions stubbed out in every later worker
    error = ""
    try:
        for fn in checks:
            meta, limit = fn.grading, time_limit(fn, default_seconds)
            if worker is None:
                worker = Worker(cwd=cwd)
                reply = _ask(worker, {**load, "timed_out": timed_out}, default_seconds)
                if reply.get("op") != "loaded" or reply["error"]:
                    error = reply.get("error") or _load_failure(reply, load, default_seconds)
                    worker.kill()
                    worker = None
                    break
                names = reply["names"]
            started = time.perf_counter()
            reply = _ask(worker, {"op": "run", "name": fn.__name__,
                                  "time_limit_seconds": limit}, limit)
            seconds = time.perf_counter() - started
            if reply.get("op") == "result":
                passed = reply["passed"]
                results.append(CheckResult(fn.__name__, meta["points"] if passed else 0,
                                           meta["points"], passed,
                                           "" if passed else meta["hint"], reply["detail"],
                                           reply["seconds"],
                                           Raised.from_dict(reply.get("raised")),
                                           reply.get("changed", ""),
                                           meta.get("guards_input", False)))
                continue
            if reply.get("op") == "timeout":
                if not reply.get("where"):  # the interpreter was held: read the stack dump
                    worker.stderr_reader.join(timeout=1)
                    stuck = stuck_function(worker.stderr_text(STDERR_KEEP_BYTES),
                                           graded_files(load.get("implementation"),
                                                        load.get("path")))
                    if stuck is not None:
                        reply = {**reply, "where": stuck.where,
                                 # the dump has no module: the answer file, or the package's
                                 # public name when the package is graded; the worker finds
                                 # a method from its name and line
                                 "function": {"module": None, "qualname": stuck.name,
                                              "line": stuck.line}}
                suspects = names_used(fn, names)
                where = reply.get("where") or " or ".join(suspects)
                detail = timeout_detail(limit, where)
                function = reply.get("function")
                if not function and len(suspects) == 1:
                    function = {"module": None, "qualname": suspects[0]}
                if function:
                    timed_out.append({**function, "check": fn.__name__})
            else:
                detail = (f"the grading process ended while this check ran (exit code "
                          f"{reply.get('exit_code')}): does the code call sys.exit or "
                          "os._exit, or use all the memory?")
            results.append(CheckResult(fn.__name__, 0, meta["points"], False, meta["hint"],
                                       detail, seconds))
            worker.kill()
            worker = None
    except BaseException:  # Ctrl-C: the worker may spin in a check, do not wait for it
        if worker is not None:
            worker.kill()
            worker = None
        raise
    finally:
        if worker is not None:
            worker.close()
    if error:
        results = [CheckResult(fn.__name__, 0, fn.grading["points"], False, fn.grading["hint"],
                               "not run: the file does not import") for fn in checks]
    return results, error


def _ask(worker: Worker, message: dict[str, Any], limit: float) -> dict[str, Any]:
    """One request; a missing reply becomes ``{"op": "timeout"}`` or ``{"op": "ended"}``."""
    try:
        reply = worker.request(message, seconds=limit + GRACE_SECONDS)
    except TimeoutError:
        worker.kill()
        return {"op": "timeout", "where": ""}
    if reply is None:
        return {"op": "ended", "exit_code": worker.exit_code()}
    return reply


def _load_failure(reply: dict[str, Any], load: dict[str, Any], seconds: float) -> str:
    """Why loading the implementation gave no "loaded" reply, once, for the scorecard."""
    path = load.get("path") or "the package"
    if reply.get("op") == "timeout":
        return (f"could not import {path}: {timeout_detail(seconds, reply.get('where') or '')}"
                " (code at module level runs on import)")
    return (f"could not import {path}: the grading process ended while importing it (exit "
            f"code {reply.get('exit_code')}): does it call sys.exit or os._exit at module level?")
