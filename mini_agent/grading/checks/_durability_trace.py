"""Watch an answer's ``write_json_atomic``: which files it fsyncs and what it renames, in order.

Used by exercise 10's durability checks. ``os.fsync`` and ``os.fdatasync`` (either makes the
data durable) and ``os.replace`` and ``os.rename`` are wrapped, on ``os`` and under any name the
answer bound itself (``from os import fsync, replace``), so every correct way of calling them is
seen; ``Path.replace`` and ``shutil.move`` call them through ``os``.

Source: exercise 10 (``solutions/10_checkpoints.py``); lab 1 of 004_b74ef821c58ee4ec.txt (a
progress file that survives a forced kill).
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from unittest import mock

__all__ = ["trace_write"]


def trace_write(impl, target: Path, data) -> list[tuple]:
    """Call ``impl.write_json_atomic(target, data)`` and record its syncs and renames.

    ``os.fsync`` and ``os.fdatasync`` (either makes the data durable) are recorded as
    ``("fsync", "file" | "dir", path)``, ``os.replace`` and ``os.rename`` as ``("rename", src,
    dst)``; also under the names the answer bound itself (``from os import fsync, replace``),
    so every correct way of calling them is seen.

    Args:
        impl: the implementation under test.
        target: the file to write.
        data: what to write.

    Returns:
        The events, in call order.
    """
    events: list[tuple] = []

    def sync(real):
        def call(fd):
            mode = os.fstat(fd).st_mode
            kind = "dir" if stat.S_ISDIR(mode) else "file"
            events.append(("fsync", kind, os.path.realpath(f"/proc/self/fd/{fd}")))
            return real(fd)
        return call

    def rename(real):
        def call(src, dst, *a, **k):
            events.append(("rename", os.path.realpath(src), os.path.realpath(dst)))
            return real(src, dst, *a, **k)
        return call

    wrapped = [(getattr(os, name), wrap(getattr(os, name)))
               for name, wrap in (("fsync", sync), ("fdatasync", sync), ("replace", rename),
                                  ("rename", rename)) if hasattr(os, name)]
    with contextlib.ExitStack() as patches:
        for real, wrapper in wrapped:
            patches.enter_context(mock.patch.object(os, real.__name__, wrapper))
            for name, value in list(vars(impl).items()):
                if value is real:  # from os import fsync
                    patches.enter_context(mock.patch.object(impl, name, wrapper))
        impl.write_json_atomic(target, data)
    return events
