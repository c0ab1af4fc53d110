"""``--settings FILE``: the hooks of a Claude-Code-shaped settings file for ``mini-agent`` and ``demo``.

The flag is explicit on purpose: no command reads ``.claude/settings.json`` (or any settings
file) by itself, so a workshop's demo never runs a stray hook left in the folder it starts in.
The file is read with :meth:`~mini_agent.harness.hooks.HookManager.from_settings` (shape in
:mod:`mini_agent.harness.hook_settings`); its command hooks run in the current folder, with
``$CLAUDE_PROJECT_DIR`` set to it, as Claude Code runs a project's hooks. A missing or
malformed file is one line on stderr and exit code 2, before any workspace is made.

IO: reads the settings file; writes its skipped entries to stderr.

Source: Claude Code settings and hooks reference; ``notebooks/06_hooks.ipynb``.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO


class SettingsFileError(Exception):
    """``--settings FILE`` names a file that is missing or not a valid settings file.

    The message is the line ``mini-agent`` prints before it exits with code 2.
    """


def load_settings_hooks(path: str, *, err: TextIO | None = None) -> Any:
    """Build the HookManager of a settings file given with ``--settings``.

    Args:
        path: the settings file, as typed on the command line.
        err: where each skipped entry (an event the kit does not fire, a hook type other than
            ``"command"``) is reported, one line each (default: stderr).

    Returns:
        A :class:`~mini_agent.harness.hooks.HookManager` with the file's command hooks.

    Raises:
        SettingsFileError: the file is missing (``"mini-agent: --settings: no such file:
            PATH"``), or the loader refused it: the message is its own ValueError message
            (``hooks.Stop[0] needs a 'hooks' list``, invalid JSON...), after the path.
    """
    from mini_agent.harness.hooks import HookManager
    try:
        manager = HookManager.from_settings(path)
    except FileNotFoundError as exc:
        raise SettingsFileError(f"mini-agent: --settings: no such file: {path}") from exc
    except ValueError as exc:  # HookSettingsError: a malformed entry, not JSON, a directory
        message = str(exc)
        if not message.startswith(str(path)):
            message = f"{path}: {message}"
        raise SettingsFileError(f"mini-agent: --settings: {message}") from exc
    for warning in manager.warnings:
        print(f"mini-agent: --settings: {warning}", file=err or sys.stderr)
    return manager
