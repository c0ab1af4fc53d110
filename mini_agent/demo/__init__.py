"""The bundled demo task: a small invoicing library with two real bugs and failing tests.

``project/`` is a stdlib-only Python project (about 700 lines: five modules, five test files,
a README with the pricing rules, and ``run_tests.py``, which prints a report without timings
or absolute paths so observations are deterministic). Its tests fail: the bulk discount
starts one unit too late (``>`` instead of ``>=``), and fixing that exposes a one-cent
rounding error (banker's rounding instead of half up). The offline brain
(``mini_agent.offline.demo_brain.DemoBrain``) solves it; so can the real API.

:func:`copy_demo_workspace` copies the project to a fresh directory for each run, so the
bundled copy is never edited. Used by ``mini-agent demo`` and ``notebooks/03_observation_masking.ipynb``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

PROJECT_DIR = Path(__file__).parent / "project"
"""The pristine demo project inside the package (never run tools here)."""

DEMO_TASK = ("The tests of this invoicing project fail. Find the cause, fix the code (not the "
             "tests), and run the test suite until it passes. Then summarise what was wrong.")
"""The user prompt of the demo run."""

TEST_COMMAND = "python3 run_tests.py"
"""The command the README gives for running the demo project's tests."""

_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.bak", ".pytest_cache")


def copy_demo_workspace(dest: str | Path | None = None) -> Path:
    """Copy the demo project to ``dest`` (or a new temp directory) and return that path.

    Args: dest: a directory that does not exist yet or is empty; None makes a fresh
    ``tempfile.mkdtemp(prefix="mini-agent-demo-")`` directory (the caller removes it).
    Returns: the workspace root (absolute Path). Raises: FileExistsError if ``dest`` exists
    and is not an empty directory.
    """
    if dest is None:
        root = Path(tempfile.mkdtemp(prefix="mini-agent-demo-")) / "invoicing-project"
    else:
        root = Path(dest).absolute()
        if root.exists():
            if not root.is_dir() or any(root.iterdir()):
                raise FileExistsError(f"{root} exists and is not an empty directory")
            root.rmdir()
    shutil.copytree(PROJECT_DIR, root, ignore=_SKIP)
    return root
