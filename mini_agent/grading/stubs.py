"""Generate ``exercises/NN_topic.py`` from ``solutions/NN_topic.py`` (a maintainer's job).

``solutions/NN_topic.py`` is the source of truth; answer bodies sit between
``# BEGIN SOLUTION`` and ``# END SOLUTION`` lines (the nbgrader convention). Each marked region
becomes ``raise NotImplementedError("Exercise NN.k")`` at the marker's indentation, so the stub
keeps the signature and docstring (minitorch's stubs). A learner's copy may have no
``solutions/``: then there is nothing to generate, and saying "in sync" would be a lie.

IO: reads ``solutions/``, writes ``exercises/``.

Source: nbgrader's ``BEGIN SOLUTION`` / ``END SOLUTION`` markers and minitorch's stubs
(signature and docstring kept, body raising ``NotImplementedError``).
"""

from __future__ import annotations

import re
from pathlib import Path

from mini_agent.grading.grader import find_root

BEGIN = "# BEGIN SOLUTION"
END = "# END SOLUTION"

_MARKER = re.compile(r"^(?P<indent>[ \t]*)# (?P<kind>BEGIN|END) SOLUTION\s*$")


def make_stub(source: str, exercise: str) -> str:
    """Return the exercise stub for a solution file's text.

    Each ``# BEGIN SOLUTION`` ... ``# END SOLUTION`` region (markers included) becomes
    ``raise NotImplementedError("Exercise NN.k")`` at the BEGIN marker's indentation, k
    counting regions from 1.

    Args:
        source: the text of ``solutions/NN_topic.py``.
        exercise: the two-digit id ("03") written into each ``NotImplementedError``.

    Returns:
        The stub's text; lines outside the markers are kept as they are.

    Raises:
        ValueError: unbalanced or nested markers (the message names the line).

    >>> make_stub("def f():\\n    # BEGIN SOLUTION\\n    return 1\\n    # END SOLUTION\\n", "03")
    'def f():\\n    raise NotImplementedError("Exercise 03.1")\\n'
    """
    out: list[str] = []
    inside = False
    k = 0
    for lineno, line in enumerate(source.splitlines(keepends=True), 1):
        m = _MARKER.match(line.rstrip("\n"))
        if m and m["kind"] == "BEGIN":
            if inside:
                raise ValueError(f"line {lineno}: nested {BEGIN}")
            inside = True
            k += 1
            out.append(f'{m["indent"]}raise NotImplementedError("Exercise {exercise}.{k}")\n')
        elif m and m["kind"] == "END":
            if not inside:
                raise ValueError(f"line {lineno}: {END} without {BEGIN}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{BEGIN} without {END} at end of file")
    return "".join(out)


STUB_HEADER = ("# Generated from solutions/{name} by `mini-agent make-exercises`.\n"
               "# Replace each `raise NotImplementedError(...)` with your code, then run\n"
               "# `mini-agent grade {exercise}`. `mini-agent make-exercises` keeps your edits;\n"
               "# only `--force` resets this file to the stubs.\n")


MAINTAINERS_ONLY = ("make-exercises is a maintainer command that generates exercises/ from "
                    "solutions/; a copy without solutions/ has nothing to generate (your "
                    "exercises/ files are yours to edit)")


def solution_files(root: Path | str | None) -> tuple[Path, list[Path]]:
    """Find the folder holding ``solutions/`` and its solution files.

    Args:
        root: that folder, or None to look from the current directory upwards.

    Returns:
        ``(folder, files)``: the folder (absolute) and its ``solutions/NN_*.py``, sorted.

    Raises:
        FileNotFoundError: no solution file; the message says the command is for
            maintainers, whose copy has ``solutions/``.
    """
    try:
        folder = Path(root).resolve() if root is not None else find_root(folder="solutions")
    except FileNotFoundError:
        raise FileNotFoundError(f"no solutions/ folder in {Path.cwd()} or any folder above "
                                f"it: {MAINTAINERS_ONLY}") from None
    found = sorted((folder / "solutions").glob("[0-9][0-9]_*.py"))
    if not found:
        raise FileNotFoundError(f"no solutions/NN_*.py under {folder}: {MAINTAINERS_ONLY}")
    return folder, found


def make_exercises(*, root: Path | str | None = None, check: bool = False,
                   force: bool = False) -> list[str]:
    """Write (or with ``check=True`` only compare) ``exercises/NN_*.py`` from ``solutions/``.

    A missing exercise file is created. An existing one whose text differs (the learner's
    work) is left alone unless ``force=True``, which overwrites it and discards those edits;
    ``make_exercises(check=True)`` afterwards lists the files that were left alone.

    Args:
        root: the folder holding ``solutions/`` (default: the current directory or the
            nearest folder above it that has one).
        check: only compare, write nothing.
        force: overwrite edited exercise files.
    Returns:
        The exercise paths (relative to root) written, or with ``check`` those that differ
        from what would be written (empty: in sync).
    Raises:
        FileNotFoundError: no ``solutions/`` folder, or no solution file in it.
        ValueError: unbalanced markers in a solution file (with the file and line).
    """
    root, solutions = solution_files(root)
    changed = []
    for sol in solutions:
        exercise = sol.name[:2]
        try:
            stub = make_stub(sol.read_text(encoding="utf-8"), exercise)
        except ValueError as exc:
            raise ValueError(f"{sol}: {exc}") from None
        text = STUB_HEADER.format(name=sol.name, exercise=exercise) + stub
        target = root / "exercises" / sol.name
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == text or (not check and current is not None and not force):
            continue
        changed.append(str(target.relative_to(root)))
        if not check:
            target.parent.mkdir(exist_ok=True)
            target.write_text(text, encoding="utf-8")
    return changed
