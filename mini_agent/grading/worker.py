"""The grading worker: a separate Python process that runs one exercise's checks on request.

A learner's endless loop must cost one check, never the caller (a terminal, a notebook
kernel). So the checks run here, in a child process started by :class:`.supervisor.Worker`,
and the caller waits for each result with a deadline. The protocol is one JSON object per
line: the caller writes to the worker's stdin, the worker answers on a private copy of its
stdout (the learner's ``print`` goes to the null device, ``input()`` reads nothing). The
caller's first line is a random nonce, read before any learner code loads; every reply line
starts with it and a space, and the caller drops a line that does not: a JSON line the
learner's code writes to any descriptor (``os.write(3, ...)`` included) cannot pass for a
result. Code that reads the nonce out of the worker's memory could still forge one; grading
does not defend against that (docs/grading.md).

    -> 3f9c...e1                            (the nonce, 32 hex digits)
    <- 3f9c...e1 {"op": "ready", "pid": 4242}

    -> {"op": "load", "exercise": "03", "implementation": "exercises", "path": "/abs/03.py",
        "timed_out": [{"module": "_mini_agent_graded_exercises_03_masking",
                       "qualname": "should_mask", "check": "check_should_mask_threshold"}]}
    <- {"op": "loaded", "error": "", "names": [...]}   (error: the file does not import)
    -> {"op": "run", "name": "check_x", "time_limit_seconds": 10}
    <- {"op": "result", "name": "check_x", "passed": true, "detail": "", "seconds": 0.01,
        "raised": null, "changed": ""}   (or the exception the code raised, with its file
        and line; "changed" names the argument the code changed when that failed the check)
    <- {"op": "timeout", "name": "check_x", "where": "mask_old_observations (...)",
        "function": {"module": "...", "qualname": "mask_old_observations"}}

On a time limit a watchdog thread reports where the main thread spins and the caller kills
the process (which also ends itself soon after, should its caller be gone). Should the caller
die (a kernel restarted, a terminal closed), a watcher thread sees the worker's parent change
within :data:`PARENT_POLL_SECONDS` and ends the worker with every process the learner's code
started (:func:`abandon_worker`) while the learner's code lets go of the interpreter; on
Linux a reaper process (:mod:`.reaper`) does the same even when it never does. On Linux the
worker is a child subreaper: a process the learner's code moves to a session of its own and
orphans is handed to the worker, and dies with the rest of its tree. A loop that never
releases the interpreter gets no report: the caller's own deadline kills it. The next worker
loads the implementation with every function that timed out so far (``timed_out``) stubbed
out: a later check that calls one fails at once with "skipped: `should_mask` timed out in
check_should_mask_threshold", so one broken function costs about one time limit, not one per
check that calls it. Run as ``python -m mini_agent.grading.worker``.

Source: the kit's grading design (``docs/grading.md``); no seed covers grading.
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Callable, TextIO

from mini_agent.grading.reaper import become_subreaper, kill_tree, start_reaper
from mini_agent.grading.registry import checks_module, collect_checks
from mini_agent.grading.stack_dump import DUMP_AFTER_SECONDS, qualname_at
from mini_agent.grading.runner import (callable_names, graded_files, import_error, load_module,
                                       loop_frame, loop_site, names_used, run_check, stub_out)


EXIT_TIMED_OUT = 3
"""The worker's exit code after it reported a timeout."""
ORPHAN_SECONDS = 10.0
"""After reporting a timeout the worker ends itself this many seconds later (seconds), in case
its caller died before it could kill it."""
PARENT_POLL_SECONDS = 0.5
"""How often the worker checks that its caller still runs (seconds)."""


_real_exit = os._exit
"""``os._exit`` as Python made it (:func:`guard_exit` replaces the module's name)."""


def guard_exit(worker: int) -> None:
    """Make ``os._exit`` in this worker kill the worker's tree before the process ends.

    A worker that ends itself (``os._exit`` in the learner's code, or after a check that
    overran its limit returned) would hand its escaped descendants to init before the caller
    could walk its tree; with this, the tree dies first (:func:`.reaper.kill_tree`). A process
    the learner's code forks inherits the replacement but exits plainly (its pid is not
    ``worker``), so a daemon's double fork still works.

    Args:
        worker: this worker's pid.
    """
    def _exit(code: int) -> None:
        if os.getpid() == worker:
            kill_tree(worker)
        _real_exit(code)
    os._exit = _exit


def end_worker(code: int) -> None:
    """End this worker and every process the learner's code started, then exit with ``code``.

    The worker leads its own process group (the caller starts it in a new session) and, on
    Linux, adopts its orphaned descendants (:func:`.reaper.become_subreaper`): every other
    process of its group or of its tree is what the learner's code forked or started and
    left running, even one that moved to a session of its own; each gets SIGKILL
    (:func:`.reaper.kill_tree`). Without ``/proc`` the whole group, this process included,
    is killed instead. When the process does not lead its group (started by hand from a
    shell), only its tree is killed, then it exits.

    Args:
        code: the exit status.
    """
    me = os.getpid()
    if kill_tree(me) is None and hasattr(os, "killpg") and os.getpgid(0) == me:
        try:
            os.killpg(me, signal.SIGKILL)  # this process too
        except OSError:  # pragma: no cover - nothing left to kill
            pass
    _real_exit(code)


def watch_parent(parent: int, poll_seconds: float = PARENT_POLL_SECONDS) -> None:
    """Run in a daemon thread: end the worker once its caller ``parent`` is gone.

    A dead parent's children are handed to another process (init or a subreaper), so
    ``os.getppid()`` changes; the watcher then ends the worker and its group
    (:func:`abandon_worker`), even while the learner's code spins in the main thread.

    Args:
        parent: the caller's pid, read at start-up.
        poll_seconds: how often to look (seconds).
    """
    while os.getppid() == parent:
        threading.Event().wait(poll_seconds)
    abandon_worker()


def abandon_worker() -> None:
    """End this worker's whole process group and tree at once, this process included.

    For when nobody waits for the worker any more (its caller is gone, or never killed it
    after a timeout): the processes of its tree (:func:`.reaper.kill_tree`, on Linux: also
    those that left the group), then the group in one ``killpg``. When the process does not
    lead its group, only it and its tree end (exit code :data:`EXIT_TIMED_OUT`).
    """
    kill_tree(os.getpid())
    if hasattr(os, "killpg") and os.getpgid(0) == os.getpid():
        try:
            os.killpg(os.getpid(), signal.SIGKILL)
        except OSError:  # pragma: no cover - cannot happen for our own group
            pass
    _real_exit(EXIT_TIMED_OUT)


class Session:
    """The worker's state: the checks and the implementation loaded, the channel back.

    Args:
        channel: the private copy of stdout the replies are written to, one JSON per line.
        nonce: the caller's secret for this worker, written before each reply and a space
            ("" writes bare JSON lines).
    """

    def __init__(self, channel: TextIO, nonce: str = "") -> None:
        self.channel = channel
        self.prefix = f"{nonce} " if nonce else ""
        self.pid = os.getpid()  # a copy made by os.fork() in the learner's code is not it
        # bound before the learner's file loads: replacing this module's ``run_check`` (as
        # ``sys.modules["__main__"].run_check = ...``) changes nothing; a determined file can
        # still tamper with the worker it runs in (docs/grading.md)
        self._run_check = run_check
        self.lock = threading.Lock()
        self.checks: dict[str, Callable] = {}
        self.impl: Any = None
        self.names: list[str] = []
        self.is_graded: Callable[[str], bool] = lambda filename: False
        self.skipped = ""
        self.dump_file: TextIO | None = None  # a private copy of stderr for stack dumps

    def send(self, message: dict[str, Any]) -> None:
        """Write one JSON line back to the caller.

        A child the learner's code forked and that returned into the worker (``os.fork()``
        with nothing after it) shares the reply and request pipes: it ends here, silently,
        instead of answering a second time or reading the next request.

        Args:
            message: a reply of the protocol (see the module docstring).
        """
        if os.getpid() != self.pid:
            _real_exit(0)
        self.channel.write(self.prefix + json.dumps(message) + "\n")
        self.channel.flush()

    def load(self, request: dict[str, Any]) -> None:
        """Import the exercise's checks and the implementation; report an import error once.

        Functions that timed out in earlier workers (``request["timed_out"]``) are stubbed
        out, so a check that calls one is skipped at once.

        Args:
            request: the ``load`` request: ``exercise``, ``implementation`` ("exercises",
                "solutions" or "package"), ``path`` (None for the package),
                ``time_limit_seconds`` for the import, and optionally ``timed_out``.
        """
        self.checks = {fn.__name__: fn for fn in collect_checks(
            checks_module(request["exercise"]))}
        error = ""
        self.is_graded = graded_files(request["implementation"], request.get("path"))
        if request["implementation"] == "package":
            import mini_agent
            self.impl = mini_agent
        else:
            path = Path(request["path"])
            # a module-level endless loop: the same watchdog, reported as an import error
            with self.watch(request["time_limit_seconds"], "", loading=path):
                try:
                    self.impl = load_module(path)
                except BaseException as exc:  # noqa: BLE001 - the learner's file (Ctrl-C too)
                    error = import_error(path, exc)
        self.names = callable_names(self.impl) if not error else []
        if not error:
            for spec in request.get("timed_out", []):
                qualname = spec["qualname"]
                if "line" in spec:  # from a stack dump: a method is named by itself
                    qualname = qualname_at(self.impl, qualname, spec["line"])
                message = f"skipped: `{qualname}` timed out in {spec['check']}"
                stub_out(self.impl, spec.get("module"), qualname, message, self.skip)
        self.send({"op": "loaded", "error": error, "names": self.names})

    def skip(self, message: str) -> None:
        """Mark the running check as skipped: it called a function that timed out before.

        Args:
            message: the detail the check reports ("skipped: `f` timed out in check_x").
        """
        self.skipped = self.skipped or message

    def run(self, request: dict[str, Any]) -> None:
        """Run one check under its time limit and send its result (or let the watchdog).

        A check that called a stubbed-out function fails with the skip message, whatever it
        did with the exception.

        Args:
            request: the ``run`` request: ``name`` of the check and ``time_limit_seconds``.
        """
        fn = self.checks[request["name"]]
        self.skipped = ""
        # should the code hold the interpreter, the watchdog cannot report: a C thread then
        # writes every stack to stderr for the caller (mini_agent.grading.stack_dump)
        if self.dump_file is not None:
            faulthandler.dump_traceback_later(request["time_limit_seconds"] + DUMP_AFTER_SECONDS,
                                              file=self.dump_file)
        try:
            with self.watch(request["time_limit_seconds"], fn.__name__, fn=fn) as watch:
                result = self._run_check(fn, self.impl, interrupts=True,
                                         is_graded=self.is_graded)
        finally:
            faulthandler.cancel_dump_traceback_later()
        if not watch.fired:
            passed, detail, raised = result.passed, result.detail, result.raised
            changed = result.changed
            if self.skipped:
                passed, detail, raised, changed = False, self.skipped, None, ""
            self.send({"op": "result", "name": fn.__name__, "passed": passed,
                       "detail": detail, "seconds": result.seconds,
                       "raised": raised.to_dict() if raised else None, "changed": changed})

    def watch(self, seconds: float, name: str, *, fn: Callable | None = None,
              loading: Path | None = None) -> "Watchdog":
        """Make a watchdog for the main thread, reporting a timeout after ``seconds``.

        Args:
            seconds: the time limit (seconds).
            name: the check's name ("" while importing the implementation).
            fn: the check, whose names are the suspects when no stack frame says where.
            loading: the file being imported, when the watchdog guards the import.

        Returns:
            The :class:`Watchdog`, to use as a context manager.
        """
        return Watchdog(self, seconds, name, fn=fn, loading=loading)


class Watchdog:
    """Context manager: after ``seconds``, send a timeout naming where the main thread spins.

    Unless the block ended first; the session lock decides which one speaks.

    Args:
        session: the worker's session (its lock, channel and implementation).
        seconds: the time limit (seconds).
        name: the check's name ("" while importing).
        fn: the check, or None while importing.
        loading: the file being imported, or None while a check runs.
    """

    def __init__(self, session: Session, seconds: float, name: str, *,
                 fn: Callable | None, loading: Path | None) -> None:
        self.session, self.name, self.fn, self.loading = session, name, fn, loading
        self.main = threading.main_thread().ident
        self.fired = self.done = False
        self.timer = threading.Timer(seconds, self.fire)
        self.timer.daemon = True

    def __enter__(self) -> "Watchdog":
        self.timer.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.timer.cancel()
        with self.session.lock:
            self.done = True
        if self.fired:  # the caller kills this process now: say nothing more
            os._exit(EXIT_TIMED_OUT)

    def fire(self) -> None:
        """Report the timeout (where the main thread spins), then end the process soon after."""
        with self.session.lock:
            if self.done:
                return
            self.fired = True
            frame = sys._current_frames().get(self.main)  # noqa: SLF001 - the stuck thread
            stuck = loop_frame(frame, self.session.is_graded)
            where = loop_site(frame, self.session.is_graded)
            function = None
            if stuck is not None:
                function = {"module": stuck.f_globals.get("__name__"),
                            "qualname": stuck.f_code.co_qualname}
            elif self.fn is not None:
                where = " or ".join(names_used(self.fn, self.session.names)) or None
            # the caller kills this process; should the caller be gone, never spin on alone
            threading.Timer(ORPHAN_SECONDS, abandon_worker).start()
            try:
                self.session.send({"op": "timeout", "name": self.name, "where": where or "",
                                   "function": function})
            except (BrokenPipeError, OSError, ValueError):  # nobody reads: the caller is gone
                abandon_worker()


def main() -> None:
    """Serve requests until stdin closes, then exit (``python -m mini_agent.grading.worker``).

    The exit skips atexit handlers and does not wait for the threads the learner's code left
    running.
    """
    become_subreaper()  # first: what the learner's code orphans comes to this process
    start_reaper(os.getppid())  # before any thread, before the learner's code
    guard_exit(os.getpid())
    reply_fd, request_fd = os.dup(1), os.dup(0)
    os.set_inheritable(reply_fd, False)  # a process the learner's code starts never holds it
    os.set_inheritable(request_fd, False)
    channel = os.fdopen(reply_fd, "w", encoding="utf-8")
    requests = os.fdopen(request_fd, "r", encoding="utf-8")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)  # the learner's input() reads nothing
    os.dup2(null, 1)  # the learner's print() goes nowhere
    sys.stdin = open(0, encoding="utf-8", closefd=False)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    nonce = requests.readline().strip()  # the caller's first line, before any learner code
    session = Session(channel, nonce)
    session.dump_file = os.fdopen(os.dup(2), "w", encoding="utf-8")
    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True,
                     name="mini-agent-parent-watch").start()
    session.send({"op": "ready", "pid": os.getpid()})
    for line in requests:
        request = json.loads(line)
        if request["op"] == "load":
            session.load(request)
        elif request["op"] == "run":
            session.run(request)
    # stdin closed: done (or the caller is gone). Exit now, without waiting for threads the
    # learner's code started and never ended, and take what it started with it
    end_worker(0)


if __name__ == "__main__":
    main()
