"""The memory tool's folder check: ``<base_dir>/memories`` must be a real folder.

The SDK's memory tool resolves every path against ``memories`` itself, so a ``memories`` that
is a symbolic link moves the whole tool elsewhere: it read and wrote where the link pointed,
and expiry removed the files there after 30 days. :func:`check_root` refuses such a folder
(and a file of that name) before anything is touched. Used by
:class:`mini_agent.harness.memory.MemoryTool` when it is made and before every command, expiry
and clear. Taught in ``notebooks/09_memory_and_subagents.ipynb``.

Source: 004_b74ef821c58ee4ec.txt (memory tool: nothing outside the memory directory);
Anthropic memory tool docs ("Security considerations").
"""

from __future__ import annotations

import os
from pathlib import Path

from anthropic.lib.tools import ToolError

__all__ = ["check_root"]


def check_root(root: Path) -> None:
    """Refuse a memories folder that is a symbolic link or a file (a missing one is made later).

    Args:
        root: ``<base_dir>/memories``, as given (not resolved).

    Raises:
        ToolError: ``root`` is a symbolic link (even a dangling one), or exists and is not a
            folder; the message says how to repair it.
    """
    if root.is_symlink():
        raise ToolError(f"{root} is a symbolic link (to {os.readlink(root)}); the memory tool "
                        f"works only in a real folder inside {root.parent}, so that nothing "
                        "outside it is read, written or expired: replace the link by a folder "
                        "(copy what it points to into it first, to keep it)")
    if root.exists() and not root.is_dir():
        raise ToolError(f"{root} is not a folder; the memory tool keeps its files in a folder "
                        "of that name: move the file away and retry")
