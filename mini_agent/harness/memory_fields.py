"""Field checks of a memory command before the memory tool runs it: a clear refusal.

The SDK parses a memory command without checking its field types, so a ``file_text`` that is a
list would be written as its ``repr``, a lone surrogate would fail deep in the write, an empty
``old_str`` would match everywhere and a ``view_range`` of the wrong shape would raise a
``TypeError``. :func:`check_fields` refuses each with the SDK's ``ToolError`` naming the field,
which the tool runner returns to the model as an ``is_error`` result. :func:`clock_seconds`
checks the tool's own clock (a developer's error, not the model's: a ``ValueError`` naming
``clock`` at construction instead of a bare ``TypeError`` deep in a write). Used by
:class:`mini_agent.harness.memory.MemoryTool`. Taught in
``notebooks/09_memory_and_subagents.ipynb``.

Source: 004_b74ef821c58ee4ec.txt (memory tool: validate what the model sends); Anthropic memory
tool docs (the commands and their fields).
"""

from __future__ import annotations

from typing import Any

from anthropic.lib.tools import ToolError

from mini_agent.core.memory_lifecycle import check_seconds

__all__ = ["COMMAND_FIELDS", "TEXT_FIELDS", "check_fields", "clock_seconds"]

COMMAND_FIELDS = {"view": ("path",), "create": ("path", "file_text"),
                  "str_replace": ("path", "old_str", "new_str"),
                  "insert": ("path", "insert_line", "insert_text"), "delete": ("path",),
                  "rename": ("old_path", "new_path")}
"""The memory tool's commands and the fields each must carry."""

TEXT_FIELDS = {"create": "file_text", "str_replace": "new_str", "insert": "insert_text"}
"""The field holding the text a writing command stores (redacted and measured first)."""


def clock_seconds(clock: Any) -> float:
    """Read ``clock.now()`` and check that it is Unix seconds, naming ``clock`` when not.

    Args:
        clock: the memory tool's time source, an object with ``now()`` (``SystemClock``,
            ``ManualClock``).

    Returns:
        The clock's time in seconds, as a float.

    Raises:
        TypeError: ``clock`` has no ``now()`` method (``time.time`` itself was passed).
        ValueError: ``now()`` returned a naive or aware ``datetime``, a string, a bool, NaN
            or infinity; the message says to return ``.timestamp()`` of an aware datetime.
    """
    now = getattr(clock, "now", None)
    if not callable(now):
        raise TypeError(f"clock must have a now() method returning Unix seconds, got "
                        f"{type(clock).__name__} {clock!r:.80} (pass an object with now(), "
                        "e.g. mini_agent.harness.clock.SystemClock())")
    value = now()
    try:
        return check_seconds(value, "now")
    except ValueError:
        raise ValueError(f"clock.now() must return Unix seconds (a finite int or float, as "
                         f"time.time() does), got {type(value).__name__} {value!r:.80}; for "
                         "a datetime clock return its .timestamp(), made aware first (a naive "
                         "one is read in local time)") from None


def check_fields(command: Any) -> None:
    """Refuse an unknown command, a missing field, text that is not UTF-8, a bad ``view_range``.

    Also an empty ``old_str`` (it would match everywhere).

    Args:
        command: the SDK's parsed memory command.

    Raises:
        ToolError: naming the command or the field and what it must be; nothing has been
            written yet.
    """
    name = getattr(command, "command", None)
    if name not in COMMAND_FIELDS:
        raise ToolError(f"unknown memory command {name!r}; use one of "
                        f"{', '.join(COMMAND_FIELDS)}")
    missing = [f for f in COMMAND_FIELDS[name] if getattr(command, f, None) is None]
    if missing:
        raise ToolError(f"{name} needs {', '.join(COMMAND_FIELDS[name])}; missing: "
                        f"{', '.join(missing)}")
    for field in ("file_text", "old_str", "new_str", "insert_text"):
        value = getattr(command, field, None)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ToolError(f"{command.command}: {field} must be a string, got "
                            f"{type(value).__name__}")
        bad = next((i for i, ch in enumerate(value) if "\ud800" <= ch <= "\udfff"), None)
        if bad is not None:
            raise ToolError(f"{command.command}: {field} holds U+{ord(value[bad]):04X} at index "
                            f"{bad}, a lone surrogate that UTF-8 cannot store; send plain text")
    if command.command == "str_replace" and command.old_str == "":
        raise ToolError("str_replace: old_str is empty; give the exact text to replace "
                        "(view the file first), or use insert to add a line")
    view_range = getattr(command, "view_range", None)
    if command.command == "view" and view_range is not None and not (
            isinstance(view_range, (list, tuple)) and len(view_range) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)):
        raise ToolError(f"view: view_range must be two line numbers [first, last] (last -1 "
                        f"for the end of the file), got {view_range!r}")
