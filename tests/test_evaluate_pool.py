"""Tests for mini_agent.harness.evaluate_pool: when the pool starts, batches, order, the bar,
dead workers in the pool and on Dask."""

from __future__ import annotations

import json

import pytest

from mini_agent.core.sample_sessions import sample_session_jsonl
from mini_agent.harness import evaluate_dask, evaluate_pool
from mini_agent.harness.evaluate_pool import batch_size, run_files

POLICIES = ("raw", "mask-4")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("pool")
    out = []
    for k in range(5):
        path = root / f"s{k}.jsonl"
        path.write_text(sample_session_jsonl(2 + k % 3, variant=k))
        out.append(path)
    bad = root / "bad.jsonl"
    bad.write_text("not a transcript\n")
    out.insert(2, bad)
    return out


def _plain(reports):
    return json.loads(json.dumps(reports))


def test_batch_size_gives_each_worker_about_sixteen_tasks_up_to_eight_files():
    assert [batch_size(n, 2) for n in (1, 10, 32, 64, 100, 256, 1000)] == [1, 1, 1, 2, 3, 8, 8]
    assert batch_size(100, 0) == 6


@pytest.mark.parametrize("size", [1, 2, 4])
def test_pool_reports_come_back_in_file_order_whatever_the_batches(files, monkeypatch, size):
    here = run_files(files, policies=POLICIES, workers=1, progress=False)
    assert [r["path"] for r in here] == [str(f) for f in files] and "error" in here[2]
    started = []
    real = evaluate_pool._run_pool

    def spy(paths, first, *args):
        started.append(first)
        return real(paths, first, *args)
    monkeypatch.setattr(evaluate_pool, "_run_pool", spy)
    monkeypatch.setattr(evaluate_pool, "batch_size", lambda n, w: size)
    pooled = run_files(files, policies=POLICIES, workers=2, progress=False)
    assert started == [0]  # every file in the pool, none here first
    assert _plain(pooled) == _plain(here)


def test_one_file_runs_here(files, monkeypatch):
    # two files or more run in the pool even with workers=1 (tests/test_evaluate_survives.py)
    monkeypatch.setattr(evaluate_pool, "_run_pool", None)  # would fail if called
    for workers in (1, 4):
        assert run_files(files[:1], policies=POLICIES, workers=workers,
                         progress=False)[0]["path"] == str(files[0])


def test_a_short_run_that_kills_its_process_costs_that_file_not_the_command(many, monkeypatch):
    # three quick files: far too little work for the pool to pay for its start, yet none runs
    # in this process, where s01.jsonl would end the command and every report with it
    import os
    from mini_agent.core import replay
    parent, real = os.getpid(), replay.evaluate_session

    def dies(transcript, **kwargs):
        if str(transcript.path).endswith("s01.jsonl"):
            assert os.getpid() != parent, "evaluated in the command's own process"
            os._exit(9)
        return real(transcript, **kwargs)
    monkeypatch.setattr(replay, "evaluate_session", dies)
    reports = run_files(many[:3], policies=POLICIES, workers=2, progress=False)
    assert reports[1] == {"path": str(many[1]), "error": evaluate_pool.WORKER_DIED}
    assert "policies" in reports[0] and "policies" in reports[2]


def test_the_bar_counts_every_file_in_the_pool(files, monkeypatch, capsys):
    run_files(files, policies=POLICIES, workers=2, progress=True)
    assert "6/6" in capsys.readouterr().err
    run_files(files, policies=POLICIES, workers=2, progress=False)
    assert capsys.readouterr().err == ""


@pytest.fixture
def many(tmp_path):
    """Twelve good sessions: s07.jsonl is the one whose worker dies."""
    out = []
    for k in range(12):
        path = tmp_path / f"s{k:02d}.jsonl"
        path.write_text(sample_session_jsonl(2 + k % 3, variant=k))
        out.append(path)
    return out


def _die_on(monkeypatch, name, how):
    """Make evaluating ``name`` end the process that does it (a forked worker inherits it)."""
    import os
    import signal
    from mini_agent.core import replay

    real = replay.evaluate_session

    def dies(transcript, **kwargs):
        if str(transcript.path).endswith(name):
            if how == "exit":
                os._exit(9)
            os.kill(os.getpid(), signal.SIGKILL)
        return real(transcript, **kwargs)
    monkeypatch.setattr(replay, "evaluate_session", dies)


@pytest.mark.parametrize("how", ["exit", "sigkill"])
@pytest.mark.parametrize("size", [1, 3])
def test_a_worker_that_dies_costs_only_the_file_it_was_evaluating(many, monkeypatch, how,
                                                                    size):
    # the worker evaluating s07.jsonl ends abruptly (os._exit, or SIGKILL as the out-of-memory
    # killer would send): that file alone is reported as lost; the files of its batch, of the
    # batches the broken pool dropped and of those never started run again and get their
    # own reports
    here = run_files(many, policies=POLICIES, workers=1, progress=False)
    _die_on(monkeypatch, "s07.jsonl", how)
    monkeypatch.setattr(evaluate_pool, "batch_size", lambda n, w: size)
    reports = run_files(many, policies=POLICIES, workers=2, progress=False)
    assert [r["path"] for r in reports] == [str(f) for f in many]
    assert reports[7] == {"path": str(many[7]), "error": evaluate_pool.WORKER_DIED}
    assert _plain(reports[:7] + reports[8:]) == _plain(here[:7] + here[8:])


def test_two_files_that_kill_their_workers_are_each_blamed_alone(many, monkeypatch):
    _die_on(monkeypatch, "s07.jsonl", "exit")
    _die_on(monkeypatch, "s02.jsonl", "sigkill")  # wraps the first: both die
    reports = run_files(many, policies=POLICIES, workers=2, progress=False)
    died = [n for n, r in enumerate(reports) if r.get("error") == evaluate_pool.WORKER_DIED]
    assert died == [2, 7]
    assert all("policies" in r for n, r in enumerate(reports) if n not in died)


def test_the_bar_counts_a_lost_file_once(many, monkeypatch, capsys):
    _die_on(monkeypatch, "s07.jsonl", "exit")
    run_files(many, policies=POLICIES, workers=2, progress=True)
    assert "12/12" in capsys.readouterr().err


def test_an_unreachable_scheduler_is_a_one_line_error(tmp_path, capsys):
    from mini_agent.harness.evaluate_runner import main_evaluate
    path = tmp_path / "s.jsonl"
    path.write_text(sample_session_jsonl(2))
    pytest.importorskip("distributed")  # first: its defaults must be in dask's config before
    import dask  # the override, or leaving the block removes them for the tests after it
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        status = main_evaluate([str(path)], scheduler="tcp://127.0.0.1:1")
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("mini-agent evaluate: error: cannot reach the Dask scheduler "
                          "tcp://127.0.0.1:1") and "Traceback" not in err


def test_evaluating_a_file_pauses_the_collector_and_gives_it_back(tmp_path, monkeypatch):
    import gc
    from mini_agent.core import replay
    from mini_agent.harness.evaluate_pool import evaluate_file
    path = tmp_path / "s.jsonl"
    path.write_text(sample_session_jsonl(3))
    seen = []
    real = replay.evaluate_session
    monkeypatch.setattr(replay, "evaluate_session",
                        lambda *a, **k: (seen.append(gc.isenabled()), real(*a, **k))[1])
    assert gc.isenabled()
    assert "policies" in evaluate_file(path)
    assert seen == [False] and gc.isenabled()
    gc.disable()  # a caller that turned it off keeps it off
    try:
        evaluate_file(path)
        assert not gc.isenabled()
    finally:
        gc.enable()


# --------------------------------------------------------------------------- Dask workers

@pytest.fixture(scope="module")
def dask_cluster():
    """A LocalCluster of two single-thread worker processes (a thread worker cannot die
    alone), forked rather than spawned (2-3 s to start instead of 12 here, and 0.5 s for a
    nanny to bring a dead worker back), giving a task up after its first worker death (the
    default, 3 retries, only makes a death slower to report)."""
    distributed = pytest.importorskip("distributed")
    import dask
    with dask.config.set({"distributed.worker.multiprocessing-method": "fork",
                          "distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def _dask_batch_dying_on(name, how="exit"):
    """An ``evaluate_batch`` for the Dask workers that ends the worker (or raises) at
    ``name``; pickled by value (a local function), so it reaches workers already running."""
    def batch(paths, policies=POLICIES, model=None, reference=False):
        import os
        from mini_agent.harness.evaluate_pool import evaluate_file
        out = []
        for path in paths:
            if path.endswith(name):
                if how == "raise":
                    raise RuntimeError("the task broke")
                os._exit(9)
            out.append(evaluate_file(path, policies, model, reference))
        return out
    return batch


@pytest.mark.parametrize("size", [1, 3])
def test_a_dask_worker_that_dies_costs_only_the_file_it_was_evaluating(many, monkeypatch, size,
                                                                         dask_cluster):
    here = run_files(many, policies=POLICIES, workers=1, progress=False)
    monkeypatch.setattr(evaluate_pool, "evaluate_batch", _dask_batch_dying_on("s07.jsonl"))
    monkeypatch.setattr(evaluate_pool, "batch_size", lambda n, w: size)
    reports = run_files(many, policies=POLICIES, scheduler=dask_cluster, progress=False)
    assert [r["path"] for r in reports] == [str(f) for f in many]
    assert reports[7] == {"path": str(many[7]), "error": evaluate_dask.DASK_WORKER_DIED}
    # its batch neighbours, and any task queued on the dying worker, still report
    assert _plain(reports[:7] + reports[8:]) == _plain(here[:7] + here[8:])


def test_a_dask_task_that_fails_gives_its_files_an_error_and_the_run_goes_on(
        many, monkeypatch, dask_cluster, capsys):
    monkeypatch.setattr(evaluate_pool, "evaluate_batch",
                        _dask_batch_dying_on("s04.jsonl", how="raise"))
    monkeypatch.setattr(evaluate_pool, "batch_size", lambda n, w: 2)
    reports = run_files(many, policies=POLICIES, scheduler=dask_cluster, progress=True)
    failed = [n for n, r in enumerate(reports) if "error" in r]
    assert failed == [4, 5]                       # the task of s04 and s05
    assert reports[5]["error"] == "the Dask task failed: RuntimeError: the task broke"
    assert all("policies" in r for n, r in enumerate(reports) if n not in failed)
    assert "12/12" in capsys.readouterr().err     # every file counted once


def test_batch_plan_covers_every_file_once_and_ends_in_single_files():
    from mini_agent.harness.evaluate_pool import batch_plan
    sizes = [size for _, size in batch_plan(1000, 2)]
    assert sizes == [8] * 122 + [6, 5, 4, 3, 2, 1, 1, 1, 1]
    assert [size for _, size in batch_plan(100, 2)][-6:] == [3, 2, 2, 1, 1, 1]
    assert batch_plan(3, 4) == [(0, 1), (1, 1), (2, 1)]
    assert batch_plan(0, 2) == []
    for files in range(0, 300, 7):
        for workers in (0, 1, 2, 3, 8):
            plan = batch_plan(files, workers)
            covered = [first + k for first, size in plan for k in range(size)]
            assert covered == list(range(files))
            assert all(0 < size <= batch_size(files, workers) for _, size in plan)
