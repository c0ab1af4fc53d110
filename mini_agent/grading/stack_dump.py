"""Find where a check spins from the stack dump a worker writes when its interpreter is held.

A loop that never lets go of the interpreter (``sum(itertools.repeat(1))``, a C call that
does not return) keeps the worker's watchdog thread from running: no timeout report says
where the main thread is. For that case the worker arms :func:`faulthandler.dump_traceback_later`
for each check, whose C thread writes every thread's stack to the worker's stderr without the
interpreter. The caller reads that text after its own deadline: :func:`stuck_function` finds
the graded function whose call never returned, so it is blamed and stubbed out as a reported
timeout would be, and the checks after it cost milliseconds, not a time limit each.

The dump names each function by ``co_name`` (``add``, not ``OrderedDrain.add``): the line it
gives lets the worker find the method (:func:`~mini_agent.grading.runner.qualname_at`) before
stubbing it out.

Source: the kit's grading design (``docs/grading.md``); Python's ``faulthandler`` docs.
"""

from __future__ import annotations

import re
from typing import Callable, NamedTuple

from mini_agent.grading.runner import site_text

DUMP_AFTER_SECONDS = 1.0
"""The dump comes this long after a check's time limit (seconds): after the watchdog's own
report would have come, before the caller's deadline (the limit plus 3 s)."""

_GRADER = "/mini_agent/grading/"
"""Part of the path of the grader's own files: the thread that runs a check has them."""
_FRAME = re.compile(r'^\s+File "(?P<file>.*)", line (?P<line>\d+) in (?P<name>\S+)\s*$')
_THREAD = re.compile(r"^(Thread 0x[0-9a-fA-F]+|Current thread 0x[0-9a-fA-F]+) .*:\s*$")


class Stuck(NamedTuple):
    """The graded call a stack dump shows never returned.

    Attributes: name: the function's ``co_name``; where: the site as a reported timeout
    writes it (:func:`~mini_agent.grading.runner.site_text`); line: the line of that frame.
    """

    name: str
    where: str
    line: int


def dump_threads(text: str) -> list[list[tuple[str, int, str]]]:
    """Parse the last stack dump in a worker's stderr into one frame list per thread.

    Args:
        text: the end of the worker's stderr; the dump starts at a line ``Timeout (h:mm:ss)!``.

    Returns:
        Per thread, its frames as ``(file, line, function name)``, innermost first (the dump's
        "most recent call first" order); empty when the text holds no dump.
    """
    start = text.rfind("Timeout (")
    if start < 0:
        return []
    threads: list[list[tuple[str, int, str]]] = []
    for line in text[start:].splitlines()[1:]:
        if _THREAD.match(line):
            threads.append([])
        elif (frame := _FRAME.match(line)) and threads:
            threads[-1].append((frame["file"], int(frame["line"]), frame["name"]))
        elif line.strip() and not line.startswith(" "):
            break  # the dump ended: the learner's own stderr goes on
    return threads


def stuck_function(text: str, is_graded: Callable[[str], bool]) -> Stuck | None:
    """Name the graded function whose call never returned, from a worker's stack dump.

    The thread that spun is the one running the check: its stack holds the grader's own
    frames (``mini_agent/grading/``) below the graded ones. The dump labels no thread as
    current and lists the newest first, so a thread the learner's code started in a graded
    function (a poller parked in ``time.sleep``) would come first; it is blamed only when no
    thread runs a check. The outermost graded frame is the call that never returned, as
    :func:`~mini_agent.grading.runner.loop_frame` decides for a live stack.

    Args:
        text: the end of the worker's stderr.
        is_graded: True for a file name that belongs to the implementation under test.

    Returns:
        A :class:`Stuck` ``(name, where, line)``, where reads like a reported timeout's site:
        ``"approx_tokens (03_masking.py, line 41)"``, with ``", calls helper"`` when the stack
        was inside other graded functions; None when no dump or no graded frame is found.
    """
    threads = dump_threads(text)
    threads.sort(key=lambda frames: not any(_GRADER in f[0].replace("\\", "/") for f in frames))
    for frames in threads:
        graded = [f for f in frames if is_graded(f[0])]
        if not graded:
            continue
        file, line, name = graded[-1]
        return Stuck(name, site_text(name, file, line, [f[2] for f in reversed(graded[:-1])]),
                     line)
    return None
