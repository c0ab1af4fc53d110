"""Evaluate many transcript files: here, in a pool of worker processes, or on a Dask cluster.

:func:`run_files` returns one report per file, in the order of the files, whichever way they
ran:

* **here** (this process) when there is one file: no process to start. A file that ends
  the process evaluating it (the out-of-memory killer, a crash in C code) then ends the
  command, which had that one report to give;
* **one child process** for every file when ``workers=1`` (the default) and there are two
  or more: the pool below with a single worker, so a file that kills its process costs its
  own report, as with ``--workers 2``, not the whole run. Measured against running them
  here (``run_files``, 12-exchange generated sessions, 2 cores under a load average of
  8-9): 10 files 0.39 s best, 0.47 s median of 5 in the child against 0.28 s and 0.31 s
  here (the pool's start, :data:`POOL_START_SECONDS`); 100 files 3.26 s and 3.54 s (best,
  median of 3) against 3.42 s and 3.63 s, no cost left to see;
* **a process pool** (``concurrent.futures.ProcessPoolExecutor``) for every file when
  ``workers > 1`` and there are two or more: the workers start once, with the ``fork``
  start method on Linux (a worker is a copy of this process, modules already imported and
  warmed up: nothing is imported again), and are fed batches of files (:func:`batch_plan`),
  so one message to a worker carries several files and one message back carries their
  reports (plain dicts, a few kB pickled). No file runs here first, even when the pool will
  not pay for its start: a file that kills its process would take the whole command down
  with it. That costs the pool's start, :data:`POOL_START_SECONDS`, on a short run, lost
  in the command's own start: ``mini-agent evaluate --workers 2`` over 10 generated
  12-exchange sessions took 1.53 s best, 2.32 s median of 5 (1.72 s, 2.06 s when the first
  files ran here first), 1.24-1.34 s for one file (which runs here), on 2 cores under a
  load average of 9; ``run_files`` alone, 10 files: 0.39-0.45 s best in the pool against
  0.27-0.40 s here;
* **Dask** (``scheduler=ADDRESS`` or a ``distributed.Client``): the same batches through
  ``client.map`` then ``as_completed``. A task whose worker died (Dask's ``KilledWorker``,
  after the scheduler's retries) costs only the file that killed it: its files run again
  one task each, one after another, and the one whose worker dies again is reported as
  :data:`~.evaluate_dask.DASK_WORKER_DIED`
  (:mod:`.evaluate_dask`).

The progress bar (``tqdm.auto``) counts finished files as their batches come back; when it
is not shown, tqdm is not even imported (its import costs more than a short session).
A file that cannot be loaded or evaluated gives ``{"path", "error"}``, never an exception.
Should a pool worker die (killed, out of memory, ``os._exit`` in the code it runs), only the
file it was evaluating is reported as lost (:data:`WORKER_DIED`): each worker marks in shared
memory which file it starts and finishes, the dead one is told from the ones the broken pool
then terminated by its exit code, and every other file without a report runs again in a
fresh pool.

The cyclic garbage collector is paused while one file is evaluated (:func:`gc_paused`): a
session's replay allocates many small objects that live until its report is made, and the
collector's passes over them found nothing to free but cost about a sixth of a 12-exchange
session's time (10.6 against 13.7 ms per session, best of three, 40 generated sessions);
it runs again between files, so garbage with cycles is still freed.

IO: reads files, starts processes.

Source: Python ``concurrent.futures`` and ``multiprocessing`` (start methods, fork on POSIX);
Dask distributed docs (``Client``, ``Client.map``, ``as_completed``, ``LocalCluster``).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import gc
import multiprocessing
import os
import signal
import sys
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Sequence

from mini_agent.core.replay import DEFAULT_POLICIES
from mini_agent.core.transcripts import TranscriptError
from mini_agent.harness.transcript_files import load

POOL_START_SECONDS = 0.1
"""What running files in the worker processes costs in wall time beyond sharing their work
evenly, in seconds: starting them, and a forked worker's first sessions (copy-on-write page
faults, cold caches). Measured 0.07-0.12 s for two workers on a 2-core machine, 10 and 20
generated sessions forced into the pool; the 10-session run of ``benchmarks/policies.py``
took 0.24 s in the pool where 0.18 s was expected here. It is paid on every run of two
files or more, whatever ``workers`` (the price of a run that survives a file killing its
process; see the module doc); with 12-exchange sessions (about 18 ms each) the pool saves
more than it costs from 13 files on."""

MAX_BATCH = 8
"""Most files sent to a worker in one message (12-exchange sessions: about 0.1 s of work)."""


def evaluate_file(path: str | Path, policies: Sequence[str] = DEFAULT_POLICIES,
                  model: str | None = None, reference: bool = False) -> dict[str, Any]:
    """Load one file (text actions as tool calls) and evaluate it; never raises.

    Args:
        path: a transcript file.
        policies: policy names (see :mod:`mini_agent.core.replay`).
        model: price with this model (None: the session's own).
        reference: replay with the reference replay (slower, the same figures).

    Returns:
        The session's report, or ``{"path", "error"}`` when it cannot be read, loaded or
        evaluated (an error of another kind is reported the same way, marked "unexpected").
    """
    from mini_agent.core import replay  # looked up per call: tests replace evaluate_session
    try:
        with gc_paused():
            return replay.evaluate_session(load(path, text_actions="tools"),
                                           policies=policies, model=model, reference=reference)
    except (TranscriptError, ValueError, KeyError, OSError) as err:
        return {"path": str(path), "error": f"{type(err).__name__}: {err}"}
    except Exception as err:  # noqa: BLE001 - one odd file must not end a folder's run
        return {"path": str(path), "error": f"unexpected {type(err).__name__}: {err} (a kit "
                "bug: please report it with the file)"}


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector for the block; restore what it was after.

    Reference counting still frees everything without cycles at once; garbage with cycles
    waits for the next collection after the block (the collector's counts keep growing).

    Yields:
        None.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def evaluate_batch(paths: Sequence[str], policies: Sequence[str] = DEFAULT_POLICIES,
                   model: str | None = None, reference: bool = False) -> list[dict[str, Any]]:
    """Run :func:`evaluate_file` on several files: one task for a worker.

    Args:
        paths: transcript files, as strings (cheap to send to a worker).
        policies: policy names.
        model: price with this model (None: each session's own).
        reference: replay with the reference replay.

    Returns:
        One report per path, in order.
    """
    return [evaluate_file(p, policies, model, reference) for p in paths]


def batch_size(files: int, workers: int) -> int:
    """Choose how many files go to a worker in one task.

    About sixteen tasks per worker, so that the last batches leave no worker idle for long
    (a task costs a worker well under a millisecond beyond its sessions, so small batches
    are cheap); at most :data:`MAX_BATCH`, at least 1.

    Args:
        files: files to share out.
        workers: processes (or Dask threads) taking them.

    Returns:
        The batch size: ``batch_size(10, 2) == 1``, ``batch_size(100, 2) == 3``,
        ``batch_size(1000, 2) == 8``.
    """
    return max(1, min(MAX_BATCH, files // (16 * max(1, workers))))


def batch_plan(files: int, workers: int) -> list[tuple[int, int]]:
    """Cut ``files`` into the pool's tasks: full batches, then smaller ones at the end.

    Batches of :func:`batch_size` files until ``2 * workers`` such batches are left; from
    there each batch takes a ``2 * workers``-th of the files left (at least 1), so the run's
    last tasks are single files and no worker waits long for the one still busy with a full
    batch (with 8-file batches of 12-exchange sessions, that wait was half a batch, about
    15 ms, on average).

    Args:
        files: files to share out.
        workers: processes taking them.

    Returns:
        ``(first, size)`` per task, in order, covering ``range(files)`` exactly once:
        ``batch_plan(1000, 2)`` is 122 batches of 8 files, then batches of 6, 5, 4, 3, 2
        and four single files.
    """
    size, shares = batch_size(files, workers), 2 * max(1, workers)
    plan, first = [], 0
    while first < files:
        left = files - first
        take = size if left > shares * size else max(1, min(size, -(-left // shares)))
        plan.append((first, take))
        first += take
    return plan


class _NoBar:
    """Stands in for a disabled tqdm bar, without importing tqdm."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n: int = 1) -> None:
        """Count nothing.

        Args:
            n: finished files (ignored).
        """


def _bar(total: int, progress: bool | None):
    if not (total > 1 if progress is None else progress):
        return _NoBar()
    from tqdm.auto import tqdm
    return tqdm(total=total, unit="session", desc="evaluate", file=sys.stderr)


def _context():
    """``fork`` on Linux (workers inherit the loaded modules); the platform default elsewhere."""
    return multiprocessing.get_context("fork") if sys.platform == "linux" else None


def run_files(files: Sequence[Path], *, policies: Sequence[str] = DEFAULT_POLICIES,
              model: str | None = None, workers: int = 1, scheduler: Any = None,
              progress: bool | None = None, reference: bool = False) -> list[dict[str, Any]]:
    """Evaluate every file (see the module doc for where); return the reports in file order.

    Args:
        files: transcript files (already expanded from folders).
        policies: policy names, already checked.
        model: price every session with this model (None: each session's own).
        workers: processes for a local pool (default 1: one child process); every file
            runs in the pool when there are two or more, a lone file runs here.
        scheduler: a Dask scheduler address or a ``distributed.Client``; overrides
            ``workers``.
        progress: show the bar (None: when there is more than one file).
        reference: replay with the reference replay (slower, the same figures).

    Returns:
        One report per file, in the order of ``files``.
    """
    paths = [str(f) for f in files]
    policies = tuple(policies)
    results: list[dict[str, Any] | None] = [None] * len(paths)
    with _bar(len(paths), progress) as bar:
        if scheduler is not None:
            from mini_agent.harness.evaluate_dask import run_dask  # Dask is optional
            run_dask(paths, policies, model, scheduler, results, bar, reference)
            return results
        if len(paths) > 1:   # workers=1 too: a file that kills its process costs only itself
            _run_pool(paths, 0, policies, model, workers, results, bar, reference)
            return results
        for at, path in enumerate(paths):
            results[at] = evaluate_file(path, policies, model, reference)
            bar.update(1)
    return results


def _run_pool(paths, first, policies, model, workers, results, bar, reference) -> None:
    """Evaluate ``paths[first:]`` on pools of ``workers`` processes, batch by batch.

    Should a worker die, the file it was evaluating gets :data:`WORKER_DIED`; every other
    file without a report (never started, or lost with a batch cut short) runs again in a
    fresh pool (never here: a file that kills its worker would kill this process), until
    none is left or :data:`BARREN_ROUNDS` pools in a row died before finishing any file.
    """
    todo, barren = list(range(first, len(paths))), 0
    while todo:
        lost = _pool_round(paths, todo, policies, model, workers, results, bar, reference)
        barren = barren + 1 if len(lost) == len(todo) else 0
        if barren >= BARREN_ROUNDS:
            for at in lost:
                results[at] = {"path": paths[at], "error": WORKER_DIED}
            bar.update(len(lost))
            return
        todo = lost


BARREN_ROUNDS = 3
"""Pools in a row whose workers died before any file finished or was blamed, after which
the files left are reported as :data:`WORKER_DIED` instead of tried again."""

_STARTED: Any = None
"""In a pool worker: per file of the round, the pid of the worker that started it (0: not
yet); a ``multiprocessing.RawArray`` shared with the parent, which reads it after a death."""
_FINISHED: Any = None
"""In a pool worker: per file of the round, 1 once its report is made (a RawArray)."""


def _track(started: Any, finished: Any) -> None:
    """Pool initializer: keep the round's shared arrays in the worker's globals.

    Args:
        started: the round's ``_STARTED`` array.
        finished: the round's ``_FINISHED`` array.
    """
    global _STARTED, _FINISHED
    _STARTED, _FINISHED = started, finished


def evaluate_tracked(offset: int, paths: Sequence[str], policies: Sequence[str] = DEFAULT_POLICIES,
                     model: str | None = None, reference: bool = False) -> list[dict[str, Any]]:
    """Run :func:`evaluate_batch` in a pool worker, marking each file started and finished.

    Two stores into shared memory per file: what lets the parent blame a dead worker's file
    alone and run the others again.

    Args:
        offset: the batch's first file's index in the round.
        paths: transcript files, as strings.
        policies: policy names.
        model: price with this model (None: each session's own).
        reference: replay with the reference replay.

    Returns:
        One report per path, in order.
    """
    pid, out = os.getpid(), []
    for n, path in enumerate(paths):
        _STARTED[offset + n] = pid
        out.append(evaluate_file(path, policies, model, reference))
        _FINISHED[offset + n] = 1
    return out


def _pool_round(paths, todo, policies, model, workers, results, bar, reference) -> list[int]:
    """Run the files ``todo`` (indices into ``paths``) in one fresh pool.

    Returns:
        The indices still without a report: none unless a worker died; then the file each
        dead worker was evaluating got :data:`WORKER_DIED` and the others are returned.
    """
    from multiprocessing.sharedctypes import RawArray
    count = len(todo)
    started, finished = RawArray("i", count), RawArray("b", count)
    pool = concurrent.futures.ProcessPoolExecutor(
        max_workers=min(workers, count), mp_context=_context(), initializer=_track,
        initargs=(started, finished))
    broken = False
    try:
        futures = {pool.submit(evaluate_tracked, at, [paths[i] for i in todo[at:at + size]],
                               policies, model, reference): at
                   for at, size in batch_plan(count, workers)}
        # the executor's own process table (the same dict for the pool's life): a worker's
        # exit code tells the one that died from those the broken pool then terminated
        processes = getattr(pool, "_processes", None)
        for future in concurrent.futures.as_completed(futures):
            at = futures[future]
            try:
                reports = future.result()
            except BrokenProcessPool:  # a worker died (killed, out of memory, os._exit)
                broken = True
                continue
            for n, report in enumerate(reports):
                results[todo[at + n]] = report
            bar.update(len(reports))
    except BaseException:
        # Ctrl-C or an error mid-run: drop the batches not started, do not wait for the
        # running ones (the pool's own thread joins the workers)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    # every report is in: join the idle workers before returning (a few ms), so that no
    # thread of this run is still running when the next run forks its workers
    pool.shutdown(wait=True)
    if not broken:
        return []
    dead = {pid for pid, process in dict(processes or {}).items()
            if process.exitcode not in (None, -signal.SIGTERM)}
    lost = []
    for n, at in enumerate(todo):
        if results[at] is not None:
            continue
        if started[n] and not finished[n] and (started[n] in dead or not dead):
            results[at] = {"path": paths[at], "error": WORKER_DIED}
            bar.update(1)
        else:
            lost.append(at)
    return lost


WORKER_DIED = ("a worker process died while evaluating this file (killed, or out of "
               "memory?); run it again alone")
"""The error of a file whose worker process died while evaluating it; the pool's other
files are run again and get their own reports."""
