"""Find where a check spins from the stack dump a worker writes when its interpreter is held.

A loop that never lets go of the interpreter (``sum(itertools.repeat(1))``, a C call that
does not return) keeps the worker's watchdog thread from running: no timeout report says
where the main thread is. For that case the worker arms :func:`faulthandler.dump_traceback_later`
for each check, whose C thread writes every thread's stack to the worker's stderr without the
interpreter. The caller reads that text after its own deadline: :func:`stuck_function` finds
the graded function whose call never returned, so it is blamed and stubbed out as a reported
timeout would be, and the checks after it cost milliseconds, not a time limit each.

The dump names each function by ``co_name`` (``add``, not ``OrderedDrain.add``): the line it
gives lets the worker find the method (:func:`qualname_at`) before
stubbing it out.

Source: the kit's grading design (``docs/grading.md``); Python's ``faulthandler`` docs.
"""

from __future__ import annotations

import dis
import inspect
import re
from types import CodeType
from typing import Any, Callable, NamedTuple

from mini_agent.grading.runner import namespace, site_text

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


def qualname_at(impl: Any, name: str, line: int) -> str:
    """Resolve a function named in a stack dump (``co_name``, line) to its ``__qualname__``.

    A stack dump names a method by its code's name alone (``add``, not ``OrderedDrain.add``):
    :func:`stub_out` needs the qualified name. The candidates are ``impl``'s own functions
    and, in the classes it defines (nested ones too), their functions, static and class
    methods and property getters, setters and deleters. The one whose code is called
    ``name`` and whose lines hold ``line`` ran. When none does (a closure, a function of
    another module) or several do (one decorator's wrapper shared by several methods), the
    name is returned as given, which stubs nothing out: blaming a function that never ran
    would fail the checks that call it.

    Args:
        impl: the implementation under test (the learner's module).
        name: the code object's name from the dump (``co_name``).
        line: the line the dump gives for that frame (1-based).

    Returns:
        The ``__qualname__`` found (``"OrderedDrain.add"``), else ``name`` itself.
    """
    own = getattr(impl, "__name__", None)
    found: set[str] = set()
    for fn in _own_functions(impl, own):
        code = getattr(fn, "__code__", None)
        if isinstance(code, CodeType) and code.co_name == name and \
                code.co_firstlineno <= line <= _last_line(code):
            found.add(getattr(fn, "__qualname__", name))
    return found.pop() if len(found) == 1 else name


def _own_functions(space: Any, own: str | None, depth: int = 0) -> list[Any]:
    """The functions a module (or a class of it) defines, its classes' members included."""
    out: list[Any] = []
    for value in namespace(space).values():
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if isinstance(value, property):
            out += [f for f in (value.fget, value.fset, value.fdel) if f is not None]
        elif inspect.isclass(value):
            if getattr(value, "__module__", None) == own and depth < 8 and value is not space:
                out += _own_functions(value, own, depth + 1)
        elif getattr(value, "__module__", None) == own:
            out.append(value)
    return out


def _last_line(code: CodeType) -> int:
    """The last source line a code object (its nested code included) runs."""
    lines = [ln for _, ln in dis.findlinestarts(code) if ln is not None]
    nested = [_last_line(c) for c in code.co_consts if isinstance(c, CodeType)]
    return max(lines + nested + [code.co_firstlineno])
