"""Hooks from a Claude-Code-style ``settings.json``: the ``hooks`` section, checked entry by entry.

Shape: ``{"hooks": {event: [{"matcher": regex, "hooks": [{"type": "command", "command": str,
"timeout": seconds}]}]}}``. :func:`add_settings_hooks` registers each command hook on a
:class:`~mini_agent.harness.hooks.HookManager` (``HookManager.from_settings`` calls it); events
the kit does not fire and hook types other than ``"command"`` are skipped with a warning; a
malformed entry raises :class:`HookSettingsError` naming its path in the file.

IO: reads the settings file. Taught in ``notebooks/06_hooks.ipynb``.

Source:
    Claude Code settings and hooks reference.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mini_agent.core.hook_output import EVENTS
from mini_agent.harness.command_hooks import DEFAULT_TIMEOUT_SECONDS, MAX_HOOK_TIMEOUT_SECONDS


def add_settings_hooks(manager: Any, settings: str | Path | dict, *,
                       cwd: str | Path | None = None) -> Any:
    """Register the command hooks of ``settings`` (a file path or its parsed dict) on ``manager``.

    Args:
        manager: a HookManager (its ``add_command`` and ``warnings`` are used).
        settings: the settings file, or its parsed JSON.
        cwd: where the commands run (default: the payload's ``cwd``, else the current
            directory); ``$CLAUDE_PROJECT_DIR`` is set to it.
    Returns:
        ``manager``; skipped entries are listed in ``manager.warnings``.
    Raises:
        HookSettingsError: (a ValueError) naming the path of a malformed entry, or the file's
            path when it cannot be read as JSON (a directory, not UTF-8, invalid or too deeply
            nested JSON; a json.JSONDecodeError is its ``__cause__``).
        FileNotFoundError: a missing file.
    """
    if not isinstance(settings, dict):
        settings = _read_settings(Path(settings))
    if not isinstance(settings, dict):
        raise HookSettingsError(f"settings must be a JSON object, got "
                                f"{type(settings).__name__}")
    table = settings.get("hooks", {})
    if not isinstance(table, dict):
        raise HookSettingsError("settings.hooks must be an object of event -> list")
    for event, groups in table.items():
        if event not in EVENTS:
            manager.warnings.append(f"hooks.{event}: event not fired by mini-agent; skipped")
            continue
        if not isinstance(groups, list):
            raise HookSettingsError(f"hooks.{event} must be a list")
        for i, group in enumerate(groups):
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                raise HookSettingsError(f"hooks.{event}[{i}] needs a 'hooks' list")
            for j, spec in enumerate(group["hooks"]):
                where = f"hooks.{event}[{i}].hooks[{j}]"
                if not isinstance(spec, dict):
                    raise HookSettingsError(f"{where} must be an object")
                if spec.get("type", "command") != "command":
                    manager.warnings.append(f"{where}: type {spec.get('type')!r} "
                                            "not supported; skipped")
                    continue
                if not isinstance(spec.get("command"), str) or not spec["command"].strip():
                    raise HookSettingsError(f"{where} needs a non-empty 'command'")
                timeout = spec.get("timeout", DEFAULT_TIMEOUT_SECONDS)
                if (not isinstance(timeout, (int, float)) or isinstance(timeout, bool)
                        or not 0 < timeout < float("inf")):
                    raise HookSettingsError(f"{where}.timeout must be a positive number")
                if timeout > MAX_HOOK_TIMEOUT_SECONDS:
                    raise HookSettingsError(f"{where}.timeout must be a positive number "
                                            f"of seconds up to {MAX_HOOK_TIMEOUT_SECONDS:g}")
                if group.get("matcher") is not None and not isinstance(
                        group["matcher"], str):
                    raise HookSettingsError(f"hooks.{event}[{i}].matcher must be a string")
                try:
                    manager.add_command(event, spec["command"], matcher=group.get("matcher"),
                                        timeout_seconds=float(timeout), cwd=cwd)
                except ValueError as exc:
                    raise HookSettingsError(f"hooks.{event}[{i}].matcher: {exc}") from exc
    return manager


class HookSettingsError(ValueError):
    """A settings.json ``hooks`` section is malformed, or the file cannot be read as JSON.

    The message names the entry (``hooks.PreToolUse[0].hooks[1]``) or the file.
    """


def _read_settings(path: Path) -> Any:
    """Parse a settings file.

    Raises:
        FileNotFoundError: the file does not exist.
        HookSettingsError: naming ``path``, for anything else that keeps it from being JSON.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:  # a directory, a permission problem
        raise HookSettingsError(f"{path}: cannot read the settings file "
                                f"({type(exc).__name__}: {exc.strerror or exc})") from exc
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise HookSettingsError(f"{path}: the settings file is not UTF-8 (byte "
                                f"{exc.start})") from exc
    except RecursionError as exc:
        raise HookSettingsError(f"{path}: the settings JSON is nested too deeply") from exc
    except ValueError as exc:
        raise HookSettingsError(f"{path}: the settings file is not valid JSON ({exc})") from exc
