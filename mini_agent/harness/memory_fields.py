"""Field checks of a memory command before the memory tool runs it: a clear refusal.

The SDK parses a memory command without checking its field types, so a ``file_text`` that is a
list would be written as its ``repr``, a lone surrogate would fail deep in the write, an empty
``old_str`` would match everywhere and a ``view_range`` of the wrong shape would raise a
``TypeError``. :func:`check_fields` refuses each with the SDK's ``ToolError`` naming the field,
which the tool runner returns to the model as an ``is_error`` result. Used by
:class:`mini_agent.harness.memory.MemoryTool`. Taught in
``notebooks/09_memory_and_subagents.ipynb``.

Source: 004_b74ef821c58ee4ec.txt (memory tool: validate what the model sends); Anthropic memory
tool docs (the commands and their fields).
"""

from __future__ import annotations

from typing import Any

from anthropic.lib.tools import ToolError

__all__ = ["check_fields"]


def check_fields(command: Any) -> None:
    """Refuse text fields that are not UTF-8 strings, an empty ``old_str`` and a bad ``view_range``.

    Args:
        command: the SDK's parsed memory command, its fields already present.

    Raises:
        ToolError: naming the field and what it must be; nothing has been written yet.
    """
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
