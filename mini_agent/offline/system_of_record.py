"""A system of record for the checkpoint lab: a ledger over SQLite behind a local HTTP server.

It stands in for the external system a long task writes to (a billing API, a ticket tracker):
a separate process, so killing a worker never kills it, and it honours idempotency keys: a
repeated key returns the first receipt and changes nothing. Run it with
``python -I mini_agent/offline/system_of_record.py --db PATH [--port 0]``; it binds 127.0.0.1,
prints ``READY <port>`` on stdout once it serves, and shuts down cleanly on SIGTERM or SIGINT.

Routes (JSON in and out)::

    GET  /health                      {"ok": true, "pid": int}
    POST /apply   {"task", "key", "item", "account", "amount_cents"}
                  201 {"receipt": R, "replayed": false} | 200 {"receipt": R, "replayed": true}
    GET  /ops/<key>                   200 {"receipt": R} | 404 {"error": ...}
    GET  /state?task=T                {"balances": {account: cents}, "ops": [R...],
                                       "per_item": {item: count}, "requests": int,
                                       "replays": int}
    R = {"key", "item", "account", "amount_cents", "seq", "balance_after_cents"}

``seq`` counts the task's operations from 1, so two runs of the same job in the same order
produce the same receipts. Only the standard library; never imports the harness.
Taught in ``notebooks/10_checkpoints_and_handoff.ipynb``.
Source: 004_b74ef821c58ee4ec.txt (正本 = system of record; idempotency keys; lab 1).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, Sequence

SCHEMA = """
CREATE TABLE IF NOT EXISTS ops (
    key TEXT PRIMARY KEY, task TEXT NOT NULL, item TEXT NOT NULL, account TEXT NOT NULL,
    amount_cents INTEGER NOT NULL, seq INTEGER NOT NULL, balance_after_cents INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS balances (
    task TEXT NOT NULL, account TEXT NOT NULL, cents INTEGER NOT NULL,
    PRIMARY KEY (task, account));
CREATE TABLE IF NOT EXISTS stats (task TEXT PRIMARY KEY, requests INTEGER, replays INTEGER);
"""
APPLY_FIELDS = {"task": str, "key": str, "item": str, "account": str, "amount_cents": int}


class Ledger:
    """The SQLite side: one transaction per apply, receipts keyed by idempotency key."""

    def __init__(self, db_path: str) -> None:
        self.db = sqlite3.connect(db_path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)

    def receipt(self, key: str) -> dict | None:
        """Look a receipt up by key.

        Args:
            key: the idempotency key.

        Returns:
            ``{"key", "item", "account", "amount_cents", "seq", "balance_after_cents"}``, or
            None when no write was done under ``key``.
        """
        row = self.db.execute("SELECT key, item, account, amount_cents, seq, "
                              "balance_after_cents FROM ops WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return dict(zip(("key", "item", "account", "amount_cents", "seq",
                         "balance_after_cents"), row))

    def apply(self, body: dict) -> tuple[dict, bool]:
        """Apply a write once per key, in one transaction.

        A key seen before changes nothing (even with another payload) and counts as a replay.

        Args:
            body: a well-formed /apply body (see :func:`validate_apply`).

        Returns:
            ``(receipt, replayed)``: the new receipt and False, or the first receipt and True.
        """
        task = body["task"]
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.execute("INSERT INTO stats VALUES (?, 0, 0) ON CONFLICT(task) DO NOTHING",
                            (task,))
            self.db.execute("UPDATE stats SET requests = requests + 1 WHERE task = ?", (task,))
            found = self.receipt(body["key"])
            if found is not None:
                self.db.execute("UPDATE stats SET replays = replays + 1 WHERE task = ?", (task,))
                self.db.execute("COMMIT")
                return found, True
            (seq,) = self.db.execute("SELECT COUNT(*) + 1 FROM ops WHERE task = ?",
                                     (task,)).fetchone()
            self.db.execute("INSERT INTO balances VALUES (?, ?, 0) "
                            "ON CONFLICT(task, account) DO NOTHING", (task, body["account"]))
            self.db.execute("UPDATE balances SET cents = cents + ? WHERE task = ? AND "
                            "account = ?", (body["amount_cents"], task, body["account"]))
            (balance,) = self.db.execute("SELECT cents FROM balances WHERE task = ? AND "
                                         "account = ?", (task, body["account"])).fetchone()
            self.db.execute("INSERT INTO ops VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (body["key"], task, body["item"], body["account"],
                             body["amount_cents"], seq, balance))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return self.receipt(body["key"]), False  # type: ignore[return-value]

    def state(self, task: str) -> dict:
        """Read a task's ledger.

        Args:
            task: the task id.

        Returns:
            ``{"balances": {account: cents}, "ops": [receipt by seq], "per_item": {item:
            count}, "requests": int, "replays": int}``.
        """
        balances = dict(self.db.execute("SELECT account, cents FROM balances WHERE task = ? "
                                        "ORDER BY account", (task,)).fetchall())
        keys = [k for (k,) in self.db.execute("SELECT key FROM ops WHERE task = ? ORDER BY seq",
                                              (task,))]
        ops = [self.receipt(k) for k in keys]
        per_item: dict[str, int] = {}
        for op in ops:
            per_item[op["item"]] = per_item.get(op["item"], 0) + 1  # type: ignore[index]
        row = self.db.execute("SELECT requests, replays FROM stats WHERE task = ?",
                              (task,)).fetchone() or (0, 0)
        return {"balances": balances, "ops": ops, "per_item": per_item,
                "requests": row[0], "replays": row[1]}


def validate_apply(body: Any) -> str | None:
    """Check an /apply body.

    Args:
        body: the parsed JSON body.

    Returns:
        Why the body is refused (not an object, or a field of ``APPLY_FIELDS`` missing,
        empty or of the wrong type), or None when it is well formed.
    """
    if not isinstance(body, dict):
        return "body must be a JSON object"
    for name, kind in APPLY_FIELDS.items():
        value = body.get(name)
        if not isinstance(value, kind) or isinstance(value, bool) or value == "":
            return f"field {name!r} must be a non-empty {kind.__name__}"
    return None


class Handler(BaseHTTPRequestHandler):
    """HTTP routes over the server's :class:`Ledger` (one request at a time)."""

    server: "RecordServer"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Stay quiet (the lab prints its own report).

        Args:
            format: the stdlib's log format string; ignored.
            args: its arguments; ignored.
        """

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the caller died after sending: the write stands, the receipt waits by key

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        """/health, /ops/<key>, /state?task=T."""
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/health":
            return self._send(200, {"ok": True, "pid": os.getpid()})
        if url.path.startswith("/ops/"):
            key = urllib.parse.unquote(url.path[len("/ops/"):])
            receipt = self.server.ledger.receipt(key)
            if receipt is None:
                return self._send(404, {"error": f"no operation with key {key!r}"})
            return self._send(200, {"receipt": receipt})
        if url.path == "/state":
            task = urllib.parse.parse_qs(url.query).get("task", [""])[0]
            if not task:
                return self._send(400, {"error": "/state needs ?task=TASK"})
            return self._send(200, self.server.ledger.state(task))
        return self._send(404, {"error": f"no route GET {url.path}"})

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        """/apply."""
        if self.path != "/apply":
            return self._send(404, {"error": f"no route POST {self.path}"})
        try:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"null")
        except (ValueError, OSError) as exc:
            return self._send(400, {"error": f"body is not JSON: {exc}"})
        problem = validate_apply(body)
        if problem:
            return self._send(400, {"error": problem})
        receipt, replayed = self.server.ledger.apply(body)
        return self._send(200 if replayed else 201, {"receipt": receipt, "replayed": replayed})


class RecordServer(HTTPServer):
    """An HTTPServer that owns a :class:`Ledger`."""

    def __init__(self, port: int, db_path: str) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.ledger = Ledger(db_path)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until SIGTERM/SIGINT; print ``READY <port>`` once listening.

    Args:
        argv: ``--db PATH [--port N]`` (None: ``sys.argv[1:]``); port 0 picks a free one.

    Returns:
        0 after a clean shutdown.
    """
    parser = argparse.ArgumentParser(description="the checkpoint lab's system of record")
    parser.add_argument("--db", required=True, help="SQLite file (created if missing)")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    args = parser.parse_args(argv)
    server = RecordServer(args.port, args.db)

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"READY {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.05)
    except SystemExit:
        pass
    finally:
        server.server_close()
        server.ledger.db.close()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
