"""Grade the learner's files: find the folder they work in, run its exercise's checks.

Grading follows the learner's files, never the install: ``grade("03")`` grades
``exercises/03_*.py`` of the folder holding the current directory (walking up to the first
folder with an ``exercises/`` folder; a notebook kernel's current directory is the notebook's
folder), or of ``root``. The checks come from the installed package. Each check runs in a
worker process under a time limit (:mod:`.supervisor`).

IO: reads the folder, starts worker processes.

Source: the kit's grading design (``docs/grading.md``); no seed covers grading.
"""

from __future__ import annotations

from pathlib import Path

from mini_agent.grading.registry import (
                                         DEFAULT_TIME_LIMIT_SECONDS, checks_module, collect_checks, exercise_ids, normalize_exercise)
from mini_agent.grading.scorecard import Scorecard, Scorecards
from mini_agent.grading.supervisor import run_in_worker

IMPLEMENTATIONS = ("exercises", "solutions", "package")
"""What can be graded: the learner's ``exercises/``, the reference ``solutions/``, or the
``mini_agent`` package itself (its public names, ``from mini_agent import ...``)."""


def find_root(start: Path | str | None = None, folder: str = "exercises") -> Path:
    """Return the folder that holds ``folder/``: ``start`` or the nearest folder above it.

    Args:
        start: where to begin (default: the current directory).
        folder: the sub-folder to look for ("exercises" or "solutions").
    Returns:
        An absolute path.
    Raises:
        FileNotFoundError: no such folder up to the file system's root; the message says
            to run inside the copy of the kit or to pass the folder (``--root`` on the
            command line, ``root=`` in Python).
    """
    here = Path(start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / folder).is_dir():
            return candidate
    loose = sorted(p.name for p in here.glob("[0-9][0-9]_*.py"))
    if loose:  # the files were copied without their folder (`cp exercises/* here`)
        raise FileNotFoundError(
            f"no {folder}/ folder in {here} or any folder above it, but {here} holds "
            f"{', '.join(loose[:3])}{', ...' if len(loose) > 3 else ''}: put them in a folder "
            f"named {folder}/ (mkdir {folder} && mv [0-9][0-9]_*.py {folder}/) and run from "
            "the folder that holds it")
    raise FileNotFoundError(f"no {folder}/ folder in {here} or any folder above it: run this "
                            "inside your copy of the kit, or pass the folder that holds it (--root DIR on "
                            "the command line, root=DIR in Python)")


def find_file(folder: str, exercise: str, *, root: Path) -> Path:
    """Find one exercise's file in a folder.

    Args:
        folder: "exercises" or "solutions".
        exercise: the two-digit id ("03").
        root: the folder holding ``folder/``.

    Returns:
        ``<root>/<folder>/<exercise>_*.py``, absolute (the first in name order).

    Raises:
        FileNotFoundError: no such file; the message says what to do: pass a folder when
            ``root`` is missing or a file, pass the folder above when ``root`` is the
            ``folder`` itself, run ``make-exercises`` in a copy that has
            ``solutions/``, else copy the file again from the kit.
    """
    root = Path(root)
    matches = sorted((root / folder).glob(f"{exercise}_*.py"))
    if matches:
        return matches[0].resolve()
    if not root.is_dir():
        what = "a file, not a folder" if root.exists() else "not there (no such folder)"
        raise FileNotFoundError(f"the folder to grade, {root}, is {what}: pass the folder "
                                f"that holds {folder}/ (--root DIR, or root=DIR in Python)")
    how = ""
    if root.name == folder and any(root.glob("[0-9][0-9]_*.py")):
        how = f": {root} is {folder}/ itself; pass the folder that holds it (--root {root.parent}, or root= in Python)"
    elif folder == "exercises" and (root / "solutions").is_dir():
        how = "; `mini-agent make-exercises` creates the missing exercise files"
    elif folder == "exercises":
        how = (f"; copy the exercise files again from the kit's exercises/ folder into "
               f"{root / folder}")
    raise FileNotFoundError(f"no {folder}/{exercise}_*.py under {root}{how}")


def resolve_root(implementation: str, root: Path | str | None) -> Path | None:
    """Find the folder to grade for ``implementation``.

    Args:
        implementation: "exercises", "solutions" or "package".
        root: the folder the caller named, or None to search from the current directory.

    Returns:
        The absolute folder, or None for "package" (nothing is read from a folder).

    Raises:
        ValueError: an unknown implementation.
        FileNotFoundError: no folder found (see :func:`find_root`).
    """
    if implementation not in IMPLEMENTATIONS:
        raise ValueError(f"implementation must be one of {', '.join(IMPLEMENTATIONS)}, "
                         f"got {implementation!r}")
    if implementation == "package":
        return None
    return Path(root).expanduser().resolve() if root is not None \
        else find_root(folder=implementation)


def grade(exercise: str | int, *, implementation: str = "exercises",
          root: Path | str | None = None,
          time_limit_seconds: float = DEFAULT_TIME_LIMIT_SECONDS) -> Scorecard:
    """Grade one exercise with its checks, each in a worker process under a time limit.

    Args:
        exercise: "03", also 3, "3", "03_masking" or "03_masking.py".
        implementation: "exercises" (the learner's), "solutions" (the reference) or
            "package" (``mini_agent`` itself: the kit's own functions).
        root: the folder holding ``exercises/`` (or ``solutions/``); default: the current
            directory or the nearest folder above it that has one. Unused for "package".
        time_limit_seconds: limit of each check that declares none (seconds; default 10).

    Returns:
        A Scorecard naming the absolute path graded. A file that does not import scores 0,
        with the error (and its line) once in ``error``; a check that runs out of time fails
        ("timed out after N s: look for an endless loop in <function>") and the later checks
        calling that function fail at once ("skipped: `<function>` timed out in <check>").

    Raises:
        FileNotFoundError: an unknown exercise (the message lists the valid ids), no folder to
            grade, or a missing implementation file.
        ValueError: an unknown implementation.
        WorkerError: a worker process could not start.
    """
    number = normalize_exercise(exercise)
    folder = resolve_root(implementation, root)
    checks = collect_checks(checks_module(number))
    if folder is None:
        import mini_agent
        path = Path(mini_agent.__file__).resolve().parent
        load = {"implementation": "package", "path": None}
        cwd = Path.cwd()
    else:
        path = find_file(implementation, number, root=folder)
        load = {"implementation": implementation, "path": str(path)}
        cwd = folder
    results, error = run_in_worker(number, checks, load, cwd=cwd,
                                   default_seconds=time_limit_seconds)
    return Scorecard(number, implementation, results, path=str(path), error=error)


def grade_all(*, implementation: str = "exercises", root: Path | str | None = None,
              time_limit_seconds: float = DEFAULT_TIME_LIMIT_SECONDS) -> Scorecards:
    """Grade every exercise that has checks, in one call (one worker process per exercise).

    Args:
        implementation: "exercises" (default), "solutions" or "package", as for :func:`grade`.
        root: the folder holding ``exercises/`` (or ``solutions/``); default: found from the
            current directory, as for :func:`grade`.
        time_limit_seconds: limit of each check that declares none (seconds; default 10).

    Returns:
        Scorecards in exercise order; a missing exercise file is that exercise's ``error``
        (its checks listed, none run), never a reason to stop.

    Raises:
        FileNotFoundError: no folder to grade.
        ValueError: an unknown implementation.
        WorkerError: a worker process could not start.
    """
    folder = resolve_root(implementation, root)
    cards = []
    for number in exercise_ids():
        try:
            cards.append(grade(number, implementation=implementation, root=folder,
                               time_limit_seconds=time_limit_seconds))
        except FileNotFoundError as exc:  # only the file can be missing: the id is valid
            cards.append(_not_run(number, implementation, str(exc)))
    import mini_agent
    where = folder or Path(mini_agent.__file__).resolve().parent
    return Scorecards(str(where), implementation, cards)


def _not_run(number: str, implementation: str, error: str) -> Scorecard:
    """A scorecard whose checks could not run (``error`` says why), worth 0."""
    from mini_agent.grading.scorecard import CheckResult
    checks = [CheckResult(fn.__name__, 0, fn.grading["points"], False, fn.grading["hint"],
                          "not run") for fn in collect_checks(checks_module(number))]
    return Scorecard(number, implementation, checks, error=error)
