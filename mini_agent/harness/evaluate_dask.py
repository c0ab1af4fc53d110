"""Evaluate transcript files on a Dask cluster, honest about workers that die.

:func:`~.evaluate_pool.run_files` comes here when given a scheduler: the same batches as the
local pool (:func:`~.evaluate_pool.batch_size`) go through ``client.map`` then
``as_completed``. A task whose worker died (``KilledWorker``, after the scheduler's retries)
costs only the file that killed it. A cluster that does not bring its workers back (no
nanny, a batch system that does not restart them) and has none left ends the run instead of
waiting for ever: after :data:`DASK_NO_WORKER_SECONDS` without a worker, every file without a
report gets :data:`DASK_NO_WORKERS`.

IO: talks to a Dask scheduler, which runs files in its worker processes.

Source: Dask distributed docs (``Client``, ``Client.map``, ``as_completed``,
``KilledWorker``, ``distributed.scheduler.allowed-failures``).
"""

from __future__ import annotations

from typing import Any

from mini_agent.harness import evaluate_pool  # looked up at call time: tests stand in for its parts


DASK_WORKER_DIED = ("the Dask worker evaluating this file died each time the scheduler tried "
                    "it, with no other file in its task (killed, or out of memory?; the "
                    "scheduler's distributed.scheduler.allowed-failures retries were spent); "
                    "run it again alone")
"""The error of a file whose Dask task failed with ``KilledWorker`` when it ran alone; the
other files of the run get their own reports."""

DASK_NO_WORKERS = ("the Dask cluster had no worker left for {seconds:g} s before this file's "
                   "task finished (its workers died or left and none came back: a nanny "
                   "restarts them, a cluster without one does not); start workers and run it "
                   "again")
"""The error of every file without a report when the cluster has had no worker for
:data:`DASK_NO_WORKER_SECONDS` (``{seconds}``)."""

DASK_NO_WORKER_SECONDS = 30.0
"""How long a run waits with no worker in the cluster before it gives up, in seconds: a
nanny brings a dead worker back in about a second, an adaptive cluster may take longer to
start one."""

DASK_CHECK_SECONDS = 1.0
"""How often a run with tasks pending and none finishing asks the scheduler how many
workers it has, in seconds."""


def run_dask(paths, policies, model, scheduler, results, bar, reference) -> None:
    """Evaluate ``paths`` on a Dask cluster, batch by batch, honest about dead workers.

    A worker that dies (killed, out of memory, ``os._exit``) is restarted by its nanny and
    the scheduler runs the tasks it held again elsewhere; after
    ``distributed.scheduler.allowed-failures`` deaths (default 3) a task fails with
    ``KilledWorker``. Such a task's files are suspects, not culprits: a task queued on the
    same worker fails with it. When one file alone is suspect it gets
    :data:`DASK_WORKER_DIED`; otherwise each suspect runs again in a task of its own, one
    after another (no other task of the run beside it to take down), and those whose
    worker dies again get :data:`DASK_WORKER_DIED`. A task failing in any other way gives
    each of its files an error naming the failure. Every other file gets its own report.

    Args:
        paths: the transcript files, as strings.
        policies: policy names, already checked.
        model: price every session with this model (None: each session's own).
        scheduler: a Dask scheduler address (``"tcp://host:8786"``) or a
            ``distributed.Client`` (left open; a client made here is closed).
        results: one slot per path, filled in place with its report.
        bar: the progress bar, advanced by one per finished file.
        reference: replay with the reference replay (slower, the same figures).
    """
    from distributed import Client
    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        threads = sum(w.get("nthreads", 1) for w in client.scheduler_info()["workers"].values())
        size = evaluate_pool.batch_size(len(paths), threads)
        tasks = [(at, paths[at:at + size]) for at in range(0, len(paths), size)]
        suspects = dask_round(client, tasks, policies, model, reference, results, bar)
        if len(suspects) > 1:   # one at a time: the culprits are told from their neighbours
            suspects = [at for at in suspects
                        if dask_round(client, [(at, [paths[at]])], policies, model,
                                       reference, results, bar)]
        for at in suspects:
            results[at] = {"path": paths[at], "error": DASK_WORKER_DIED}
        bar.update(len(suspects))
    finally:
        if client is not scheduler:
            client.close()


def dask_round(client, tasks, policies, model, reference, results, bar) -> list[int]:
    """Run ``tasks`` (``(first file's index, paths)``) as Dask futures; fill ``results``.

    Args:
        client: a connected ``distributed.Client``.
        tasks: ``(index of the task's first file, its paths)`` pairs.
        policies: policy names, already checked.
        model: price every session with this model (None: each session's own).
        reference: replay with the reference replay.
        results: one slot per file of the run, filled in place.
        bar: the progress bar, advanced by one per finished file.

    Returns:
        The indices of the files whose task failed with ``KilledWorker`` (a worker died
        running it), in file order; a task that failed otherwise gives its files an error.
    """
    from distributed.scheduler import KilledWorker
    futures = client.map(evaluate_pool.evaluate_batch, [batch for _, batch in tasks], policies=policies,
                         model=model, reference=reference, pure=False)
    task_of = {f.key: task for f, task in zip(futures, tasks)}
    lost: list[int] = []
    for future in _finished(client, futures, task_of, results, bar):
        at, batch = task_of[future.key]
        try:
            reports = future.result()
        except KilledWorker:
            lost.extend(range(at, at + len(batch)))
            continue
        except Exception as err:  # noqa: BLE001 - one failed task must not end the run
            reports = [{"path": p, "error": f"the Dask task failed: {type(err).__name__}: "
                        f"{err}"} for p in batch]
        results[at:at + len(reports)] = reports
        bar.update(len(reports))
    return sorted(lost)


def _finished(client, futures, task_of, results, bar):
    """Yield each future as it finishes, until none is pending or the cluster stays empty.

    Every :data:`DASK_CHECK_SECONDS` without a finished task the scheduler is asked for its
    workers; once it has had none for :data:`DASK_NO_WORKER_SECONDS`, the pending futures
    are cancelled and their files get :data:`DASK_NO_WORKERS`.

    Args:
        client: a connected ``distributed.Client``.
        futures: the run's futures.
        task_of: ``{future.key: (first file's index, paths)}``.
        results: one slot per file of the run, filled in place for the abandoned files.
        bar: the progress bar, advanced by one per abandoned file.

    Yields:
        Each finished future, as it finishes.
    """
    import time

    from distributed import wait
    pending, empty_since = set(futures), None
    while pending:
        try:
            done, pending = wait(pending, timeout=DASK_CHECK_SECONDS,
                                 return_when="FIRST_COMPLETED")
        except TimeoutError:  # dask.distributed.TimeoutError is the built-in one
            done = set()
        yield from done
        if done:
            empty_since = None
            continue
        if client.nthreads():
            empty_since = None
        elif empty_since is None:
            empty_since = time.monotonic()
        elif time.monotonic() - empty_since >= DASK_NO_WORKER_SECONDS:
            client.cancel(list(pending))
            error = DASK_NO_WORKERS.format(seconds=DASK_NO_WORKER_SECONDS)
            for future in pending:
                at, batch = task_of[future.key]
                results[at:at + len(batch)] = [{"path": p, "error": error} for p in batch]
                bar.update(len(batch))
            return
