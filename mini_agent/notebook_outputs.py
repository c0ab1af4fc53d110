"""Expected outputs of the notebooks' checked cells, kept beside the notebooks, not inside them.

Notebooks are stored without outputs (clean diffs, no stale numbers). Their key numbers are
still checked: each cell whose first line is ``# NBVAL_CHECK_OUTPUT`` has its expected output
recorded in ``notebooks/expected/<notebook stem>.json``, keyed by the cell's id. The
repository's ``conftest.py`` hands those outputs to nbval before it runs the cells, so
``pytest --nbval-lax`` compares them as if they were stored in the notebook.

``mini-agent record-outputs [NOTEBOOK...]`` executes notebooks with ``nbclient`` and rewrites
their sidecar files; review the diff like any other change of expected values.

Shapes: sidecar ``{"notebook": str, "cells": {cell_id: [nbformat output dicts]}}``.

Source: nbval's ``--nbval-lax`` mode and its ``# NBVAL_CHECK_OUTPUT`` marker (only marked
cells are compared); cell ids from nbformat 4.5 (nbformat >= 5.1).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat

CHECK_MARKER = "# NBVAL_CHECK_OUTPUT"
EXPECTED_DIR = "expected"


def is_checked(cell: Any) -> bool:
    """Tell whether a cell's output is checked.

    Args:
        cell: a notebook cell (an nbformat node or a plain dict).

    Returns:
        True for a code cell whose source starts with ``# NBVAL_CHECK_OUTPUT``.
    """
    return cell.get("cell_type") == "code" and cell.get("source", "").lstrip().startswith(
        CHECK_MARKER)


def sidecar_path(notebook: Path) -> Path:
    """Return where a notebook's expected outputs are kept.

    Args:
        notebook: the notebook's path.

    Returns:
        ``<notebook dir>/expected/<stem>.json``.
    """
    notebook = Path(notebook)
    return notebook.parent / EXPECTED_DIR / f"{notebook.stem}.json"


def load_expected(notebook: Path) -> dict[str, list[dict]]:
    """Read a notebook's expected outputs.

    Args:
        notebook: the notebook's path.

    Returns:
        ``{cell_id: [output dicts]}``; ``{}`` when it has no sidecar file.
    """
    path = sidecar_path(notebook)
    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _clean(output: dict) -> dict:
    """Keep what nbval compares: drop execution counts, widget views and metadata."""
    out = {k: v for k, v in output.items() if k not in ("execution_count", "metadata")}
    if "data" in out:
        out["data"] = {k: v for k, v in out["data"].items()
                       if k == "text/plain" or k.startswith("text/markdown")}
    return out


def record(notebook: Path, *, timeout_seconds: int = 300) -> Path:
    """Execute ``notebook`` (its own folder as working directory) and write its sidecar file.

    The notebook file itself is not modified.

    Args:
        notebook: the notebook's path.
        timeout_seconds: the longest one cell may run (seconds; default 300).

    Returns:
        The sidecar path.

    Raises:
        ValueError: a checked cell has no id (re-save the notebook with nbformat >= 5.1).
        nbclient.exceptions.CellExecutionError: a cell failed (raised by ``nbclient``).
    """
    from nbclient import NotebookClient

    notebook = Path(notebook)
    nb = nbformat.read(notebook, as_version=4)
    NotebookClient(nb, timeout=timeout_seconds, kernel_name="python3",
                   resources={"metadata": {"path": str(notebook.parent)}}).execute()
    cells: dict[str, list[dict]] = {}
    for cell in nb.cells:
        if is_checked(cell):
            if not cell.get("id"):
                raise ValueError(f"{notebook}: a checked cell has no id")
            cells[cell["id"]] = [_clean(dict(o)) for o in cell.get("outputs", [])]
    path = sidecar_path(notebook)
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"notebook": notebook.name, "cells": cells}, indent=1,
                               ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    return path


def strip_outputs(notebook: Path) -> bool:
    """Remove every stored output and execution count from a notebook, in place.

    Args:
        notebook: the notebook's path; rewritten only when something was removed.

    Returns:
        True if it changed.
    """
    notebook = Path(notebook)
    nb = nbformat.read(notebook, as_version=4)
    changed = False
    for cell in nb.cells:
        if cell.get("cell_type") == "code" and (cell.get("outputs") or cell.get("execution_count")):
            cell["outputs"] = []
            cell["execution_count"] = None
            changed = True
    if changed:
        nbformat.write(nb, notebook)
    return changed


def apply_expected(items: list[Any]) -> list[str]:
    """Give nbval's collected cells their expected outputs from the sidecar files.

    Args:
        items: pytest items; nbval's cell items (attribute ``cell``) of checked cells get
            ``cell.outputs`` and an execution count of 1.

    Returns:
        The problems: one line per checked cell with no recorded output (left unrun; the
        repository's ``conftest.py`` stops the run with them).
    """
    problems = []
    cache: dict[Path, dict] = {}
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is None or not is_checked(cell):
            continue
        path = Path(str(item.fspath))
        expected = cache.setdefault(path, load_expected(path))
        outputs = expected.get(cell.get("id", ""))
        if outputs is None:
            problems.append(f"{path.name}: checked cell {cell.get('id')} has no recorded "
                            "output; run `mini-agent record-outputs` and review the diff")
            continue
        cell["outputs"] = [nbformat.from_dict(o) for o in outputs]
        cell["execution_count"] = 1
    return problems


def main_record(paths: list[str]) -> int:
    """Run ``mini-agent record-outputs``: strip, execute and record the given notebooks.

    Args:
        paths: notebook paths; empty means every ``notebooks/*.ipynb`` of the repository.

    Returns:
        0; each notebook's sidecar path is printed.
    """
    from mini_agent.grading import REPO_ROOT

    notebooks = [Path(p) for p in paths] or sorted((REPO_ROOT / "notebooks").glob("*.ipynb"))
    for nb in notebooks:
        strip_outputs(nb)
        print(f"{nb.name}: {record(nb)}")
    return 0
