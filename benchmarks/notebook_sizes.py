"""Size of each notebook once executed with its widget state stored, against a 2 MB budget.

An executed notebook is what CI keeps, what an autograder collects and what a student shares;
its charts show on GitHub or nbviewer only if the widget state is stored in it, as ``jupyter
nbconvert --execute`` does (nbclient's ``store_widget_state``, on by default) and as
JupyterLab does with its "save widget state" setting. This executes every
``notebooks/*.ipynb`` that way, in a temporary copy of the repository's notebooks, exercises
and solutions (nothing in the repository changes), and prints per notebook the executed size
in MB, the share of it that is widget state, the number of widget models and the wall time.
It exits 1 when a notebook is over the budget or fails to execute.

Run: ``python benchmarks/notebook_sizes.py [NOTEBOOK ...]`` (names or prefixes, e.g. ``03``).
The copy has no shared data folder beside it, so the real-session sections run on their
generated fallback; set ``MINI_AGENT_SHARED_DATA`` to the folder to measure with real sessions.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUDGET_BYTES = 2_000_000
"""At most 2 MB per executed notebook."""
WIDGET_STATE_MIME = "application/vnd.jupyter.widget-state+json"


def widget_state(notebook: dict) -> tuple[int, int]:
    """Return ``(state_bytes, model_count)`` of an executed notebook's stored widget state."""
    state = notebook.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE_MIME, {})
    models = state.get("state", {})
    return len(json.dumps(state, separators=(",", ":"))), len(models)


def execute(notebook: Path, out_dir: Path) -> tuple[Path, float, int, str]:
    """Execute one notebook with nbconvert; return ``(output path, seconds, exit code, stderr tail)``."""
    command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
               "--ExecutePreprocessor.timeout=600", "--output-dir", str(out_dir), str(notebook)]
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=notebook.parent, env=env, capture_output=True, text=True)
    tail = "\n".join(proc.stderr.strip().splitlines()[-3:])
    return out_dir / notebook.name, time.perf_counter() - started, proc.returncode, tail


def main(selected: list[str]) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="notebook-sizes-"))
    for name in ("notebooks", "exercises", "solutions"):
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, workdir / name)
    notebooks = sorted((workdir / "notebooks").glob("*.ipynb"))
    if selected:
        notebooks = [n for n in notebooks if any(n.name.startswith(s) for s in selected)]
    print(f"{'notebook':34} {'MB':>6} {'widget MB':>9} {'models':>6} {'seconds':>7}")
    failed = 0
    for notebook in notebooks:
        path, seconds, code, tail = execute(notebook, workdir / "executed")
        if code != 0 or not path.exists():
            failed += 1
            print(f"{notebook.stem:34} nbconvert exited {code}: {tail}", flush=True)
            continue
        size = path.stat().st_size
        state_bytes, models = widget_state(json.loads(path.read_text(encoding="utf-8")))
        over = "  OVER 2 MB" if size > BUDGET_BYTES else ""
        failed += bool(over)
        print(f"{notebook.stem:34} {size / 1e6:6.2f} {state_bytes / 1e6:9.2f} {models:6} "
              f"{seconds:7.1f}{over}", flush=True)
    shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
