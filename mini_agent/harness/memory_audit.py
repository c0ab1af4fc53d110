"""Run the hostile path corpus through the kit's memory tool and through the SDK's own check.

:func:`audit_hostile_paths` builds a sandbox in ``workdir``: ``kit/`` (a
:class:`~mini_agent.harness.memory.MemoryTool`), ``sdk/`` (the SDK's
``BetaLocalFilesystemMemoryTool``), and ``outside/`` (a secret file the symlinks point at).
Each path is given to both tools' ``_validate_path`` (only validation: the SDK tool never
writes) and then, as a ``create`` command, to the kit's tool. A row says what each did:

* ``"refused"``: a ToolError, the runner's ``is_error`` tool_result with a message;
* ``"crashed (ValueError)"``: another exception; the runner would return its ``repr``, a
  refusal in effect but with no advice for the model;
* ``"accepted -> memories/X/notes.md"``: where on disk the path would land (inside the
  directory, but under a name the model did not mean, such as ``%2e%2e`` or ``X``).

Taught in ``notebooks/09_memory_and_subagents.ipynb``.

Source:
    004_b74ef821c58ee4ec.txt (memory tool on the client: normalise every path and refuse
    anything outside /memories).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from anthropic.lib.tools import ToolError
from anthropic.tools import BetaLocalFilesystemMemoryTool

from mini_agent.core.hostile_paths import HOSTILE_PATHS, SYMLINK_NAMES
from mini_agent.harness.memory import MemoryTool


def plant_symlinks(memory_root: Path, outside: Path) -> None:
    """Create the corpus's symlinks in ``memory_root`` pointing into ``outside``.

    The links (named by ``SYMLINK_NAMES``) point at ``outside`` itself, at
    ``outside/secret.txt`` and, dangling, at ``outside/missing.md``; a link already there is
    left alone.

    Args:
        memory_root: the memory tool's ``memories`` directory.
        outside: a directory outside it, holding ``secret.txt``.
    """
    targets = (outside, outside / "secret.txt", outside / "missing.md")
    for name, target in zip(SYMLINK_NAMES, targets):
        link = memory_root / name
        if not link.is_symlink():
            os.symlink(target, link)


def _outcome(tool: Any, path: str) -> str:
    root = tool.memory_root.resolve()
    try:
        full = tool._validate_path(path)
    except ToolError:
        return "refused"
    except Exception as exc:  # what the SDK's runner would turn into repr(exc)
        return f"crashed ({type(exc).__name__})"
    try:
        where = full.relative_to(root.parent).as_posix()
    except ValueError:
        where = str(full)
    return f"accepted -> {where}"


def audit_hostile_paths(workdir: str | os.PathLike[str],
                        corpus: tuple[tuple[str, str], ...] = HOSTILE_PATHS) -> list[dict]:
    """Give every corpus path to the kit's tool and to the SDK's tool; report both.

    Args:
        workdir: an existing empty-or-reused directory for the sandbox (kept for inspection).
        corpus: ``(label, path)`` pairs (default: the kit's corpus).
    Returns:
        One dict per path: ``{"label", "path", "kit", "sdk", "kit_message", "created"}`` where
        kit/sdk are outcomes as in the module docstring, kit_message is the kit's refusal
        text and created says whether the kit's ``create`` wrote anything (it must not).
    """
    workdir = Path(workdir)
    outside = workdir / "outside"
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "secret.txt").write_text("the secret outside the memory directory\n")
    kit = MemoryTool(workdir / "kit", expiry_seconds=None)
    sdk = BetaLocalFilesystemMemoryTool(str(workdir / "sdk"))
    for tool in (kit, sdk):
        plant_symlinks(tool.memory_root, outside)
    rows = []
    for label, path in corpus:
        before = sorted(p.as_posix() for p in workdir.rglob("*"))
        message = ""
        try:
            kit.call({"command": "create", "path": path, "file_text": "pwned\n"})
        except ToolError as exc:
            message = str(exc)
        except Exception as exc:  # pragma: no cover - reported, and a test fails on it
            message = f"crashed: {exc!r}"
        created = sorted(p.as_posix() for p in workdir.rglob("*")) != before
        rows.append({"label": label, "path": path, "kit": _outcome(kit, path),
                     "sdk": _outcome(sdk, path), "kit_message": message, "created": created})
    return rows
