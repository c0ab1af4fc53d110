"""Talk to the checkpoint lab's system of record, and start or stop its server process.

* :class:`RecordClient`: ``apply(key, payload)``, ``lookup(key)``, ``state()`` and
  ``health()`` over HTTP on 127.0.0.1 (standard library ``urllib``); the interface
  :func:`mini_agent.harness.checkpoint.run_step` expects.
* :class:`RecordServer`: runs ``mini_agent/offline/system_of_record.py`` as its own
  process in its own session (so a signal to a worker's process group never reaches it), on a
  free port it reports, waits until ``/health`` answers, and stops it with SIGTERM (SIGKILL
  after a grace period). Use it as a context manager.

The server is a separate program, started by path: the harness never imports
``mini_agent.offline``. Taught in ``notebooks/10_checkpoints_and_handoff.ipynb``.

Source:
    004_b74ef821c58ee4ec.txt (the system of record; idempotency keys; lab 1).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

SERVER_SCRIPT = Path(__file__).resolve().parents[1] / "offline" / "system_of_record.py"
"""The server program: standard library only, run by path in isolated mode (``python -I``) so
it starts in a fraction of a second and shares nothing with the worker's imports."""
START_TIMEOUT_SECONDS = 30.0
STOP_GRACE_SECONDS = 5.0


class RecordError(RuntimeError):
    """The system of record refused a request (status and its error message) or is down."""


class RecordClient:
    """HTTP client of the system of record for one task.

    Args:
        url: ``http://127.0.0.1:PORT`` (a trailing ``/`` is dropped).
        task: the task id sent with every write.
        timeout_seconds: the limit per request in seconds (default 10).
    """

    def __init__(self, url: str, task: str, *, timeout_seconds: float = 10.0) -> None:
        self.url, self.task, self.timeout_seconds = url.rstrip("/"), task, timeout_seconds

    def _request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_seconds) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")
        except (urllib.error.URLError, OSError) as exc:
            raise RecordError(f"system of record at {self.url} unreachable: {exc}") from None

    def apply(self, key: str, payload: dict) -> dict:
        """Apply one write: POST /apply with the key, this client's task and the payload.

        Args:
            key: the idempotency key.
            payload: ``{"item": str, "account": str, "amount_cents": int}``.

        Returns:
            The receipt; the first one when the key was seen before (nothing changes then).

        Raises:
            RecordError: the server refused the write (status other than 200/201) or is
                unreachable.
        """
        status, body = self._request("POST", "/apply", {**payload, "task": self.task,
                                                         "key": key})
        if status not in (200, 201):
            raise RecordError(f"apply {key!r} refused ({status}): {body.get('error')}")
        return body["receipt"]

    def lookup(self, key: str) -> dict | None:
        """Ask by key whether a write happened: GET /ops/<key>.

        Args:
            key: the idempotency key (URL-quoted on the wire).

        Returns:
            The receipt of the write done under ``key``, or None (a 404).

        Raises:
            RecordError: any other status than 200 or 404, or the server is unreachable.
        """
        status, body = self._request("GET", "/ops/" + urllib.parse.quote(key, safe=""))
        if status == 404:
            return None
        if status != 200:
            raise RecordError(f"lookup {key!r} failed ({status}): {body.get('error')}")
        return body["receipt"]

    def state(self, task: str | None = None) -> dict:
        """Read a task's ledger: GET /state?task=T.

        Args:
            task: the task id (default: this client's).

        Returns:
            ``{"balances": {account: cents}, "ops": [receipt], "per_item": {item: count},
            "requests": int, "replays": int}``.

        Raises:
            RecordError: a status other than 200, or the server is unreachable.
        """
        query = urllib.parse.urlencode({"task": task or self.task})
        status, body = self._request("GET", "/state?" + query)
        if status != 200:
            raise RecordError(f"state failed ({status}): {body.get('error')}")
        return body

    def health(self) -> dict:
        """Check the server: GET /health.

        Returns:
            ``{"ok": True, "pid": int}``.

        Raises:
            RecordError: a status other than 200, or the server is down.
        """
        status, body = self._request("GET", "/health")
        if status != 200:
            raise RecordError(f"health check failed ({status})")
        return body


class RecordServer:
    """The system-of-record server as a child process (a context manager).

    Args:
        db_path: the SQLite file (kept after stop, so a restarted server sees the same
            ledger); its folder is created.
        python: the interpreter (default: this one).
        env: extra environment variables, over this process's.

    Attributes:
        url: ``http://127.0.0.1:PORT`` after :meth:`start` (``""`` before).
        port: the port the server reported (0 before start).
        process: the child process (None before start).
    """

    def __init__(self, db_path: str | os.PathLike[str], *, python: str | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.db_path = Path(db_path)
        self.python = python or sys.executable
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen | None = None
        self.port = 0
        self.url = ""

    @property
    def pid(self) -> int | None:
        """The server's process id (None before start)."""
        return self.process.pid if self.process else None

    def start(self, *, timeout_seconds: float = START_TIMEOUT_SECONDS) -> "RecordServer":
        """Start the server on a free port and wait until ``/health`` answers.

        Args:
            timeout_seconds: how long to wait for ``READY <port>``, then again for
                ``/health`` (default ``START_TIMEOUT_SECONDS`` = 30).

        Returns:
            This server, started.

        Raises:
            RecordError: the server exited or stayed silent past ``timeout_seconds``
                (it is stopped first).
        """
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [self.python, "-I", str(SERVER_SCRIPT), "--db", str(self.db_path), "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env,
            start_new_session=True)
        line = read_line(self.process, timeout_seconds)
        if not line.startswith("READY "):
            err = self.process.stderr.read().decode(errors="replace") if (
                self.process.poll() is not None and self.process.stderr) else ""
            self.stop()
            raise RecordError(f"system of record did not start: {line!r} {err[-500:]}")
        self.port = int(line.split()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + timeout_seconds
        while True:
            try:
                RecordClient(self.url, "-").health()
                return self
            except RecordError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise
                time.sleep(0.02)

    def alive(self) -> bool:
        """Tell whether the server still serves.

        Returns:
            True while the process runs and ``/health`` answers ``"ok"``.
        """
        if self.process is None or self.process.poll() is not None:
            return False
        try:
            return bool(RecordClient(self.url, "-").health().get("ok"))
        except RecordError:
            return False

    def stop(self) -> int | None:
        """Stop the server: SIGTERM, wait up to ``STOP_GRACE_SECONDS`` (5 s), then SIGKILL.

        Returns:
            The process's exit code, or None when it was never started.
        """
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream:
                stream.close()
        return self.process.returncode

    def client(self, task: str) -> RecordClient:
        """Make a client for one task on this server.

        Args:
            task: the task id.

        Returns:
            A :class:`RecordClient` for ``task`` at :attr:`url`.
        """
        return RecordClient(self.url, task)

    def __enter__(self) -> "RecordServer":
        return self.start() if self.process is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class LineReader:
    """Lines of a child's stdout, read by a daemon thread into a queue.

    No read blocks the caller, and no line is lost in a buffer between polls.

    Args:
        stream: the child's binary stdout; lines are decoded as UTF-8 (errors replaced).
    """

    def __init__(self, stream: Any) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: Any) -> None:
        try:
            for raw in iter(stream.readline, b""):
                self.lines.put(raw.decode(errors="replace").rstrip("\n"))
        except (OSError, ValueError):
            pass  # the stream was closed under us
        self.lines.put(None)

    def get(self, timeout_seconds: float) -> str | None:
        """Take the next line.

        Args:
            timeout_seconds: how long to wait for it.

        Returns:
            The line without its newline; None at the end of the stream; ``""`` when nothing
            came within the timeout.
        """
        try:
            return self.lines.get(timeout=timeout_seconds)
        except queue.Empty:
            return ""


def read_line(process: subprocess.Popen, timeout_seconds: float) -> str:
    """Read the first line of a child's stdout within a time limit.

    Args:
        process: the child, started with ``stdout=PIPE``.
        timeout_seconds: how long to wait.

    Returns:
        The line, or ``""`` on timeout or when the child exited without one.
    """
    return LineReader(process.stdout).get(timeout_seconds) or ""


__all__ = ["LineReader", "RecordClient", "RecordError", "RecordServer", "read_line"]
