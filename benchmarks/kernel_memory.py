"""Peak memory of each notebook's kernel, the figure that sizes a JupyterHub.

Executes every ``notebooks/*.ipynb`` (a temporary copy of the repository's notebooks,
exercises and solutions, so nothing in the repository changes) with ``jupyter nbconvert
--execute``, reads the resident set size (RSS) of the kernel and every process it starts from
``/proc`` every 0.1 seconds, and prints per notebook the peak in MiB and the wall time in
seconds, then the heaviest notebook's peak as a share of a 1 GiB student limit. Linux only
(``/proc``). Used by docs/jupyterhub.md.

Run: ``python benchmarks/kernel_memory.py [NOTEBOOK ...]`` (names or prefixes, e.g. ``03``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
MIB = 1024 * 1024


def _children() -> dict[int, list[int]]:
    """Map each live pid to its child pids, from /proc/<pid>/stat."""
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            tree.setdefault(parent, []).append(int(entry))
    return tree


def _rss_bytes(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_BYTES
    except (OSError, IndexError, ValueError):
        return 0


def descendants_rss_bytes(root: int) -> int:
    """Total RSS in bytes of every process below ``root`` (not ``root`` itself)."""
    tree, total = _children(), 0
    stack = list(tree.get(root, []))
    while stack:
        pid = stack.pop()
        total += _rss_bytes(pid)
        stack.extend(tree.get(pid, []))
    return total


def measure(notebook: Path, workdir: Path) -> tuple[float, float, int]:
    """Execute one notebook; return ``(peak_rss_mib, wall_seconds, exit_code)``."""
    command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
               "--ExecutePreprocessor.timeout=600", "--output-dir", str(workdir / "executed"),
               str(notebook)]
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    started = time.perf_counter()
    proc = subprocess.Popen(command, cwd=notebook.parent, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, descendants_rss_bytes(proc.pid))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    code = proc.wait()
    done.set()
    sampler.join()
    return peak / MIB, time.perf_counter() - started, code


def main(selected: list[str]) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="kernel-memory-"))
    for name in ("notebooks", "exercises", "solutions"):
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, workdir / name)
    notebooks = sorted((workdir / "notebooks").glob("*.ipynb"))
    if selected:
        notebooks = [n for n in notebooks if any(n.name.startswith(s) for s in selected)]
    print(f"{'notebook':34} {'peak RSS MiB':>12} {'seconds':>8}")
    peaks = {}
    for notebook in notebooks:
        peak, seconds, code = measure(notebook, workdir)
        peaks[notebook.stem] = peak
        note = "" if code == 0 else f"  (nbconvert exited {code})"
        print(f"{notebook.stem:34} {peak:12.0f} {seconds:8.1f}{note}", flush=True)
    shutil.rmtree(workdir, ignore_errors=True)
    if peaks:
        heaviest = max(peaks, key=peaks.get)
        print(f"heaviest: {heaviest} at {peaks[heaviest]:.0f} MiB = "
              f"{peaks[heaviest] / 1024:.2f} of a 1 GiB limit")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
