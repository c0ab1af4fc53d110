"""``mini-agent evaluate`` survives a file that kills its process with the default
``--workers 1`` (one child process for two files or more), and a Dask run whose cluster has
no worker left ends with a clear error instead of waiting for ever."""

import os
import signal
import threading
import time

import pytest

from mini_agent.core.replay import DEFAULT_POLICIES
from mini_agent.core.sample_sessions import sample_session_jsonl
from mini_agent.harness import evaluate_dask, evaluate_pool
from mini_agent.harness.evaluate_pool import run_files

POLICIES = DEFAULT_POLICIES[:2]


@pytest.fixture
def sessions(tmp_path):
    out = []
    for k in range(6):
        path = tmp_path / f"s{k:02d}.jsonl"
        path.write_text(sample_session_jsonl(2 + k % 3, variant=k))
        out.append(path)
    return out


def _plain(reports):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in reports]


def _record_pids(monkeypatch, log, die_on=None, how="exit"):
    """Make each evaluation append its process id to ``log``; end the process at ``die_on``."""
    from mini_agent.core import replay

    real = replay.evaluate_session

    def evaluate(transcript, **kwargs):
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\n")
        if die_on and str(transcript.path).endswith(die_on):
            if how == "exit":
                os._exit(9)
            os.kill(os.getpid(), signal.SIGKILL)
        return real(transcript, **kwargs)
    monkeypatch.setattr(replay, "evaluate_session", evaluate)


@pytest.mark.parametrize("how", ["exit", "sigkill"])
def test_with_one_worker_a_file_that_kills_its_process_costs_only_its_report(
        sessions, monkeypatch, tmp_path, how):
    clean = run_files(sessions, policies=POLICIES, workers=1, progress=False)
    _record_pids(monkeypatch, tmp_path / "pids.txt", die_on="s03.jsonl", how=how)
    reports = run_files(sessions, policies=POLICIES, workers=1, progress=False)
    assert [r["path"] for r in reports] == [str(f) for f in sessions]
    assert reports[3] == {"path": str(sessions[3]), "error": evaluate_pool.WORKER_DIED}
    assert _plain(reports[:3] + reports[4:]) == _plain(clean[:3] + clean[4:])
    pids = set((tmp_path / "pids.txt").read_text().split())
    assert str(os.getpid()) not in pids   # this process evaluated nothing: it is alive
    assert len(pids) == 2                  # one child, then a fresh one after the death


def test_with_one_worker_a_lone_file_runs_here_and_two_run_in_one_child(
        sessions, monkeypatch, tmp_path):
    log = tmp_path / "pids.txt"
    _record_pids(monkeypatch, log)
    [report] = run_files(sessions[:1], policies=POLICIES, workers=1, progress=False)
    assert "policies" in report
    assert log.read_text().split() == [str(os.getpid())]
    log.unlink()
    run_files(sessions[:3], policies=POLICIES, workers=1, progress=False)
    pids = log.read_text().split()
    assert len(pids) == 3 and len(set(pids)) == 1 and pids[0] != str(os.getpid())


def test_a_dask_run_whose_workers_all_left_ends_with_a_clear_error(sessions, monkeypatch):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(evaluate_dask, "DASK_NO_WORKER_SECONDS", 1.0)
    monkeypatch.setattr(evaluate_dask, "DASK_CHECK_SECONDS", 0.2)

    def slow_batch(paths, policies=POLICIES, model=None, reference=False):
        time.sleep(3)
        return [evaluate_pool.evaluate_file(p, policies, model, reference) for p in paths]

    monkeypatch.setattr(evaluate_pool, "evaluate_batch", slow_batch)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        timer = threading.Timer(0.5, cluster.scale, (0,))   # no nanny brings it back
        timer.start()
        started = time.perf_counter()
        reports = run_files(sessions, policies=POLICIES, scheduler=client, progress=False)
        seconds = time.perf_counter() - started
        timer.cancel()
    error = evaluate_dask.DASK_NO_WORKERS.format(seconds=1.0)
    assert error.startswith("the Dask cluster had no worker left for 1 s before this file's")
    finished = [r for r in reports if "policies" in r]
    assert [r for r in reports if "policies" not in r] == [
        {"path": str(f), "error": error} for f in sessions[len(finished):]]
    assert len(finished) < len(sessions)
    assert seconds < 15
