"""Run checks in this process: one check's outcome, an implementation's import, a loop's site.

The grader runs checks in a worker process (:mod:`.worker`) so a learner's endless loop
cannot hang the caller; this module is what that worker (and the kit's own tests, which grade
in-memory variants of an answer) call in-process. No time limit here. After a function timed
out once, :func:`stub_out` replaces it so that later checks calling it fail at once.

IO: imports Python files by path.

Source: the kit's grading design (``docs/grading.md``: one time limit per check, an endless
loop named by its function, an import error reported once); no seed covers grading.
"""

from __future__ import annotations

import gc
import importlib.util
import inspect
import linecache
import sys
import time
import traceback
import warnings
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any, Callable, Collection

from mini_agent.grading.checks._report import InputChanged, exception_text
from mini_agent.grading.code_sites import (  # noqa: F401 (re-exported)
    graded_files, graded_frames, loop_frame, loop_site, site_text)
from mini_agent.grading.registry import collect_checks
from mini_agent.grading.scorecard import CheckResult, Raised, Scorecard

DETAIL_CHARS = 300
"""Longest failure detail kept per check (characters)."""


def load_module(path: Path, name: str | None = None) -> ModuleType:
    """Import a Python file by path as a fresh module (never cached in ``sys.modules``).

    Args:
        path: the file.
        name: module name (default: derived from the folder and file names).
    Returns:
        The executed module.
    Raises:
        ImportError: the file cannot be loaded; whatever executing the file raises
            (SyntaxError, NameError...).
    """
    name = name or f"_mini_agent_graded_{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling need the module registered
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


def import_error(path: Path, exc: BaseException) -> str:
    """Describe why ``path`` did not import, once, with its line.

    Args:
        path: the learner's file that failed to import (absolute).
        exc: what importing it raised; its traceback gives the innermost line of ``path``.

    Returns:
        ``"could not import /abs/03_masking.py, line 12: SyntaxError: invalid syntax"``
        followed, on a second line, by that line of the file (when known).
    """
    lineno: int | None = None
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename) == path:
        lineno, message = exc.lineno, exc.msg
    else:
        message = exception_text(exc)
        for frame, frame_lineno in traceback.walk_tb(exc.__traceback__):
            if Path(frame.f_code.co_filename) == path:
                lineno = frame_lineno  # the innermost line of the learner's file
    where = f", line {lineno}" if lineno else ""
    text = f"could not import {path}{where}: {type(exc).__name__}: {message}".rstrip(": ")
    source = linecache.getline(str(path), lineno).strip() if lineno else ""
    return f"{text}\n    {source}" if source else text


def crash(exc: BaseException) -> BaseException | None:
    """Find the exception the code raised behind a check's failure, if it crashed.

    A check that calls the code through its helpers (``called``, ``expect_raises``) turns
    the code's exception into an AssertionError "expected ..., got TypeError: ..." raised
    while handling it, ``from None`` (or ``from exc``): the original is the AssertionError's
    ``__context__`` (or ``__cause__``). An AssertionError raised inside some other handler
    without ``from`` (the caller's machinery) is a wrong value, not a crash.

    Args:
        exc: what the check raised.

    Returns:
        ``exc`` itself when it is not an AssertionError; for an AssertionError, the
        exception it was raised while handling (None when there is none: a wrong value).
    """
    if not isinstance(exc, AssertionError):
        return exc
    inner = exc.__cause__ or (exc.__context__ if exc.__suppress_context__ else None)
    if inner is None or isinstance(inner, (AssertionError, NotImplementedError, SkippedCall)):
        return None
    return inner


def raised_at(exc: BaseException, is_graded: Callable[[str], bool] | None) -> Raised:
    """Say which exception failed a check and where the graded code raised it.

    Args:
        exc: the exception (see :func:`crash`).
        is_graded: True for a file of the implementation under test (the learner's
            exercise file); None when unknown (then no place is given).

    Returns:
        A :class:`~.scorecard.Raised` with the innermost frame of ``exc``'s traceback that
        is in a graded file (its absolute path, line and the line's text); ``file`` "" when
        no frame is.
    """
    message = exception_text(exc)[:DETAIL_CHARS]
    file, line = "", None
    for frame, frame_lineno in traceback.walk_tb(exc.__traceback__):
        if is_graded is not None and is_graded(frame.f_code.co_filename):
            file, line = frame.f_code.co_filename, frame_lineno  # innermost wins
    code = linecache.getline(file, line).strip() if file and line else ""
    if file:
        file = str(Path(file).resolve())
    return Raised(type(exc).__name__, message, file, line, code)


def run_check(fn: Callable, impl: Any, *, interrupts: bool = False,
              is_graded: Callable[[str], bool] | None = None) -> CheckResult:
    """Run one check on ``impl``; an exception (assert, NotImplementedError...) fails it.

    Args:
        fn: a ``check_*`` function marked with :func:`~.registry.check`.
        impl: the implementation (a module, or any object with the exercise's names).
        is_graded: True for a file of the implementation under test: when the code raised
            an exception, the result names the innermost line of such a file in its
            traceback (``raised``). Default None: the result names the exception, no place.
        interrupts: also fail the check when the code raises KeyboardInterrupt (or another
            BaseException), detail "raised KeyboardInterrupt". The grading worker sets it: no
            terminal's Ctrl-C reaches it, so the code raised it. Default False: in-process, a
            KeyboardInterrupt is the learner stopping the grading and propagates.
    Returns:
        A CheckResult with ``seconds`` measured; the detail of a failure says what was
        expected and what came back (the assertion's message), or names the exception;
        ``raised`` says which exception the code raised and where, when it crashed;
        ``changed`` names the argument the code changed, when that failed the check
        (:class:`~.checks._report.InputChanged`).
    """
    meta = fn.grading
    started = time.perf_counter()
    detail = changed = ""
    raised: Raised | None = None
    try:
        with warnings.catch_warnings():
            # a stub that raises before awaiting leaves the check's coroutines unawaited;
            # that is the stub's state, not something the learner should see as noise
            warnings.filterwarnings("ignore", "coroutine .* was never awaited", RuntimeWarning)
            try:
                fn(impl)
            except NotImplementedError:
                gc.collect()  # finalise those coroutines while the filter is on
                raise
    except NotImplementedError as exc:
        detail = f"not implemented yet ({exc})"
    except SkippedCall as exc:
        detail = str(exc)
    except BaseException as exc:  # noqa: BLE001 - any failure of the code is a fail
        if not (interrupts or isinstance(exc, (Exception, SystemExit))):
            raise
        detail = exception_text(exc) or type(exc).__name__
        if not isinstance(exc, AssertionError):
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        if not isinstance(exc, (Exception, SystemExit)):
            detail = f"raised {detail}"
        detail = detail[:DETAIL_CHARS]
        inner = crash(exc)
        if inner is not None:
            raised = raised_at(inner, is_graded)
        if isinstance(exc, InputChanged):
            changed = exc.argument
    seconds = time.perf_counter() - started
    if detail:
        return CheckResult(fn.__name__, 0, meta["points"], False, meta["hint"], detail, seconds,
                           raised, changed, meta.get("guards_input", False))
    return CheckResult(fn.__name__, meta["points"], meta["points"], True, seconds=seconds)


def run_checks(exercise: str, checks_module: ModuleType, impl: Any, *,
               implementation: str = "") -> Scorecard:
    """Run every check of ``checks_module`` on ``impl`` in this process, without time limits.

    Checks of async code call ``asyncio.run``, which refuses to start inside a running loop;
    where a loop already runs in this thread (a notebook cell), the checks run in a worker
    thread and this call waits for them.

    Args:
        exercise: the two-digit id ("03") the scorecard carries.
        checks_module: the exercise's checks (see :func:`~.registry.checks_module`).
        impl: the implementation (a module, or any object with the exercise's names).
        implementation: the scorecard's label for ``impl`` (default "").

    Returns:
        A Scorecard labelled ``implementation`` (no path: nothing was read from a file).
    """
    from mini_agent.harness.executor import call_outside_event_loop  # asyncio: only for this path

    source = getattr(impl, "__file__", None)
    is_graded = (None if source is None else
                 lambda f, answer=Path(source).resolve(): Path(f).resolve() == answer)

    def run_all() -> list[CheckResult]:
        return [run_check(fn, impl, is_graded=is_graded) for fn in collect_checks(checks_module)]
    return Scorecard(exercise, implementation, call_outside_event_loop(run_all))


class SkippedCall(Exception):
    """A check called a function that already ran out of time in an earlier check."""


def stub_out(impl: Any, module: str | None, qualname: str, message: str,
             on_call: Callable[[str], None]) -> bool:
    """Replace a function that timed out, so that calling it again fails at once.

    Later checks of the same grading that call the function (directly, or through another
    function of the implementation, which looks it up in its module's globals) then fail in
    milliseconds with ``message`` instead of each waiting a full time limit. Every other name
    bound to the same object in the owner or in ``impl`` is replaced too: after
    ``mask_old_observations = _mask_impl``, the loop reports ``_mask_impl`` but the checks
    call ``mask_old_observations``.

    Args:
        impl: the implementation under test (a module, or any object with the exercise's names).
        module: ``__name__`` of the module that defines the function; None or ``impl``'s own
            name means ``impl`` itself; another name is looked up in ``sys.modules``.
        qualname: the function's ``__qualname__`` (``"should_mask"``, ``"Drain.put"``); a
            function nested in another (``"outer.<locals>.inner"``) stubs out ``outer``.
        message: what the failing check reports, e.g. "skipped: `should_mask` timed out in
            check_should_mask_threshold".
        on_call: called with ``message`` each time the replacement is called (the worker
            marks the running check as skipped, whatever the check does with the exception).

    Returns:
        True when the function was found and replaced; False when the name does not resolve
        (``<module>``, ``<lambda>``, a module not loaded), and nothing changed.
    """
    parts = qualname.split(".<locals>.")[0].split(".")
    if not parts or any(not p.isidentifier() for p in parts):
        return False
    own = getattr(impl, "__name__", None)
    owner = impl if module in (None, own) else sys.modules.get(module)
    if owner is None:
        return False
    for part in parts[:-1]:
        owner = getattr(owner, part, None)
        if owner is None:
            return False
    name = parts[-1]
    original = inspect.getattr_static(owner, name, None)
    if original is None:
        return False

    def skipped(*args: Any, **kwargs: Any) -> Any:
        on_call(message)
        raise SkippedCall(message)
    replacement: Any = (property(skipped, skipped, skipped)  # get, set and delete
                        if isinstance(original, property) else skipped)
    if isinstance(original, (staticmethod, classmethod)):
        replacement = staticmethod(skipped)
    setattr(owner, name, replacement)
    if owner is not impl and len(parts) == 1 and getattr(impl, name, None) is original:
        setattr(impl, name, replacement)  # the package re-exports the defining module's name
    for space in (owner, impl):  # every other name of the same object: an alias
        for alias, value in list(namespace(space).items()):
            if value is original:
                setattr(space, alias, replacement)
    return True


def namespace(space: Any) -> dict[str, Any]:
    """Copy the names an object holds in its own ``__dict__``.

    Args:
        space: a module, a class or any object.

    Returns:
        Name -> value, a copy; empty when the object has no ``__dict__``.
    """
    try:
        return dict(vars(space))
    except TypeError:
        return {}


def names_used(fn: Callable, names: Collection[str]) -> list[str]:
    """List the implementation's callables that a check refers to, in first-use order.

    These are the suspects when a check runs out of time and no stack says where.

    Args:
        fn: the check function; its code and the code nested in it are read, never run.
        names: the implementation's public callables (:func:`callable_names`).

    Returns:
        The names of ``names`` that ``fn`` mentions, each once.
    """
    def walk(code: CodeType) -> list[str]:
        found = list(code.co_names)
        for const in code.co_consts:
            if isinstance(const, CodeType):
                found += walk(const)
        return found
    return list(dict.fromkeys(n for n in walk(fn.__code__) if n in names))


def callable_names(impl: Any) -> list[str]:
    """List the public callables of an implementation (functions and classes).

    Args:
        impl: the implementation under test; for a module with ``__all__`` (the package),
            those names are read without importing what they name.

    Returns:
        The names, sorted.
    """
    public = getattr(impl, "__all__", None)
    if public is not None:
        return sorted(public)
    return sorted(n for n in dir(impl) if not n.startswith("_") and callable(getattr(impl, n)))
