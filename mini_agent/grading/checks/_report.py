"""What a failing check says: the input (short), the expected value and what came back.

Shared by the checks modules; not a checks module itself (its name does not match
``checks_NN_*.py``). Every helper raises ``AssertionError`` with a one-line message that fits
in a scorecard's detail (:data:`mini_agent.grading.runner.DETAIL_CHARS`).

Source: the kit's grading design: every failing check names its input, the expected value
and what came back (``docs/grading.md``; enforced by the kit's tests).
"""

from __future__ import annotations

import copy
from typing import Any, Callable

SHORT_CHARS = 80
"""Longest ``repr`` of one value quoted in a failure message (characters)."""


def short(value: Any, limit: int = SHORT_CHARS) -> str:
    """Show a value briefly.

    Args:
        value: anything; its ``repr`` is shown.
        limit: the longest text kept (characters; default :data:`SHORT_CHARS`).

    Returns:
        ``repr(value)``, cut to ``limit`` characters ending in ``...`` when longer.
    """
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def difference(expected: Any, got: Any, keys: tuple = ()) -> tuple[tuple, Any, Any] | None:
    """Find where ``got`` first differs from ``expected``.

    Descends into dicts with the same keys, and into lists and tuples of the same type and
    length; anything else that differs is the difference itself.

    Args:
        expected: the value the check wanted.
        got: the value that came back.
        keys: the path walked so far (callers leave the default ``()``).

    Returns:
        ``(keys, expected part, got part)`` at the first difference, or None when equal.
    """
    if expected == got:
        return None
    if isinstance(expected, dict) and isinstance(got, dict) and set(expected) == set(got):
        for key in expected:
            found = difference(expected[key], got[key], (*keys, key))
            if found:
                return found
    if (isinstance(expected, (list, tuple)) and type(expected) is type(got)
            and len(expected) == len(got)):
        for k, (a, b) in enumerate(zip(expected, got)):
            found = difference(a, b, (*keys, k))
            if found:
                return found
    return keys, expected, got


def path_text(keys: tuple) -> str:
    """Write a path of keys the way Python indexes it.

    Args:
        keys: the keys and indices from :func:`difference`, e.g. ``(2, "content", 0)``.

    Returns:
        ``"[2]['content'][0]"``.
    """
    return "".join(f"[{k!r}]" for k in keys)


def expect(got: Any, expected: Any, what: str) -> None:
    """Assert ``got == expected``.

    Args:
        got: what came back.
        expected: the right value.
        what: the call and its input, short (``"parse_tool_input(['{', '}'])"``).
    Raises:
        AssertionError: ``"<what>: expected <expected>, got <got>"``; when both are lists or
            dicts of the same shape, only the first part that differs, with its place
            (``"<what>, at [0]['input']: expected {...}, got {}"``).
    """
    found = difference(expected, got)
    if found is None:
        return
    keys, expected, got = found
    where = f", at {path_text(keys)}" if keys else ""
    if isinstance(expected, dict) and isinstance(got, dict) and set(expected) != set(got):
        missing = [k for k in expected if k not in got]
        extra = [k for k in got if k not in expected]
        said = (f"the keys {short(missing, 50)[1:-1]} too" if missing else
                f"no key {short(extra, 50)[1:-1]}")
        raise AssertionError(f"{what}{where}: expected {said}, got {short(got)}")
    raise AssertionError(f"{what}{where}: expected {short(expected)}, got {short(got)}")


def returns(call: Callable[[], Any], expected: Any, what: str) -> Any:
    """Assert that ``call()`` returns ``expected``; an exception it raises is what came back.

    Args:
        call: the call to make, without arguments (a lambda around the learner's function).
        expected: the value it must return.
        what: the input, described briefly for the message.

    Returns:
        The value returned.

    Raises:
        AssertionError: as :func:`expect`, or ``"<what>: expected <expected>, got
            KeyError: 'x'"``. NotImplementedError propagates (an untouched stub).
    """
    got = called(call, what, expected)
    expect(got, expected, what)
    return got


def exception_text(exc: BaseException) -> str:
    """Give ``str(exc)``, or what ``traceback`` prints when the learner's ``__str__`` raises.

    Args:
        exc: any exception, whose class may come from the graded file.

    Returns:
        The message, or ``"<exception str() failed>"`` when computing it raised.
    """
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - the learner's __str__ may raise anything
        return "<exception str() failed>"


def called(call: Callable[[], Any], what: str, expected: Any = None) -> Any:
    """Make a call; an exception other than NotImplementedError fails with ``what``.

    Args:
        call: the call to make, without arguments.
        what: the input, described briefly for the message.
        expected: the value the check wants, shown in the message; None shows "a result".

    Returns:
        What ``call()`` returned.

    Raises:
        AssertionError: ``"<what>: expected <expected>, got KeyError: 'x'"`` (``"expected a
            result"`` when ``expected`` is None). NotImplementedError propagates.
    """
    try:
        return call()
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - the exception is what came back
        wanted = "a result" if expected is None else short(expected)
        raise AssertionError(f"{what}: expected {wanted}, got {type(exc).__name__}: "
                             f"{short(exception_text(exc), 60)}") from None


def expect_raises(error: type[BaseException], call: Callable[[], Any], what: str) -> None:
    """Assert that ``call()`` raises ``error`` (or a subclass).

    Args:
        error: the exception class the call must raise.
        call: the call to make, without arguments.
        what: the input, described briefly for the message.

    Raises:
        AssertionError: ``"<what>: expected ValueError, got <value returned>"`` or ``"...,
            got TypeError: ..."``. NotImplementedError propagates (an untouched stub).
    """
    try:
        got = call()
    except NotImplementedError:
        raise
    except error:
        return
    except Exception as exc:  # noqa: BLE001 - the wrong exception is the finding
        raise AssertionError(f"{what}: expected {error.__name__}, got "
                             f"{type(exc).__name__}: {short(exception_text(exc), 60)}") from None
    raise AssertionError(f"{what}: expected {error.__name__}, got {short(got)} returned")


class InputChanged(AssertionError):
    """A check failed because the code changed an argument it was given, not on a wrong value.

    The scorecard says such a change once for all the checks it failed
    (:meth:`mini_agent.grading.Scorecard.changes`), instead of under each check's hint.

    Args:
        message: the failure message, as an assertion's (``"<what>: expected messages
            unchanged, got a change at messages[2]['content']"``).
        argument: the name of the argument changed (``"messages"``).
    """

    def __init__(self, message: str, argument: str) -> None:
        super().__init__(message)
        self.argument = argument


def snapshot(*values: Any) -> tuple:
    """Copy the arguments of a call deeply, to compare after it with :func:`unchanged`.

    Args:
        values: the arguments the call will receive.

    Returns:
        A tuple of deep copies, in order.
    """
    return copy.deepcopy(values)


def unchanged(before: tuple, *after: Any, what: str, names: tuple[str, ...] = ()) -> None:
    """Assert that each argument still equals its :func:`snapshot` (nothing was mutated).

    Args:
        before: what :func:`snapshot` returned before the call.
        after: the same arguments after the call, in the same order.
        what: the input, described briefly for the message.
        names: the arguments' names for the message (default "argument 1", "argument 2"...).

    Raises:
        InputChanged: an argument changed, ``"<what>: expected events unchanged, got a change
            at events[2]['content_block']"``, naming the argument (an AssertionError).
    """
    for k, (old, new) in enumerate(zip(before, after)):
        found = difference(old, new)
        if found is not None:
            name = names[k] if k < len(names) else f"argument {k + 1}"
            raise InputChanged(f"{what}: expected {name} unchanged, got a change at "
                               f"{name}{path_text(found[0])}", name)
