"""Where in the graded code a check spun: the frames of the graded files on a running stack.

When a check runs out of time, the worker reads the stuck thread's stack: the outermost frame
of a graded file is the call that never returned (the function to blame and stub out), the
inner ones are what it was calling. :func:`graded_files` says which files are graded.

Source: the kit's grading design (``docs/grading.md``: an endless loop named by its function
and line).
"""

from __future__ import annotations

from pathlib import Path
from types import FrameType
from typing import Callable


def graded_frames(frame: FrameType | None, is_graded: Callable[[str], bool]) -> list[FrameType]:
    """List the frames of graded files on a running stack, innermost first.

    Args:
        frame: the innermost frame of the stuck thread.
        is_graded: True for a file name that belongs to the implementation under test.

    Returns:
        The frames whose code lives in a graded file, from the innermost to the outermost
        (empty when none does).
    """
    found: list[FrameType] = []
    while frame is not None:
        if is_graded(frame.f_code.co_filename):
            found.append(frame)
        frame = frame.f_back
    return found


def loop_frame(frame: FrameType | None, is_graded: Callable[[str], bool]) -> FrameType | None:
    """Find the outermost frame of a graded file on a running stack: the call that never returned.

    A check calls ``mask_old_observations``, which spins calling a correct ``approx_tokens``:
    the innermost graded frame is often the helper, where the time goes, but the function
    whose call never returned is ``mask_old_observations``, the one to blame and stub out.

    Args:
        frame: the innermost frame of the stuck thread.
        is_graded: True for a file name that belongs to the implementation under test.

    Returns:
        That frame, or None when no frame of the stack is in a graded file.
    """
    found = graded_frames(frame, is_graded)
    return found[-1] if found else None


def loop_site(frame: FrameType | None, is_graded: Callable[[str], bool]) -> str | None:
    """Name the graded function whose call never returned, and what it was calling.

    Args:
        frame: the innermost frame of the stuck thread.
        is_graded: True for a file name that belongs to the implementation under test.

    Returns:
        ``"mask_old_observations (03_masking.py, line 80)"``, with ``", calls approx_tokens"``
        before the parenthesis closes when the stack was inside other graded functions
        (``"calls helper, then approx_tokens"`` for a longer chain); None when no frame of
        the stack is in a graded file.
    """
    found = graded_frames(frame, is_graded)
    if not found:
        return None
    outer = found[-1]
    code = outer.f_code
    return site_text(code.co_qualname, code.co_filename, outer.f_lineno,
                     [f.f_code.co_qualname for f in reversed(found[:-1])])


def site_text(name: str, filename: str, line: int, callees: list[str]) -> str:
    """Write where a check spun, as the timeout's detail names it.

    Args:
        name: the graded function whose call never returned.
        filename: its file (only the file's name is shown).
        line: the line it was on (1-based).
        callees: the graded functions it was inside of, outermost first (repeats and
            ``name`` itself are dropped; more than three show the first and the last).

    Returns:
        ``"mask_old_observations (03_masking.py, line 80, calls _count, then approx_tokens)"``.
    """
    callees = [callee for callee in dict.fromkeys(callees) if callee != name]
    if len(callees) > 3:
        callees = [callees[0], "...", callees[-1]]
    calls = f", calls {', then '.join(callees)}" if callees else ""
    return f"{name} ({Path(filename).name}, line {line}{calls})"


def graded_files(implementation: str | None, path: str | None) -> Callable[[str], bool]:
    """Tell the files of the implementation under test from every other file.

    Args:
        implementation: ``"package"`` for the kit itself, else an answer file is graded.
        path: the answer file (unused for the package).

    Returns:
        ``is_graded(filename) -> bool``: for the package, a file of ``mini_agent`` outside
        ``mini_agent/grading``; else the answer file itself (paths compared resolved).
    """
    if implementation == "package":
        import mini_agent
        kit = Path(mini_agent.__file__).resolve().parent
        return lambda f: (Path(f).resolve().is_relative_to(kit)
                          and not Path(f).resolve().is_relative_to(kit / "grading"))
    answer = Path(path).resolve()
    return lambda f: Path(f).resolve() == answer
