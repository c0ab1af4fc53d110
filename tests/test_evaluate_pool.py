"""Tests for mini_agent.harness.evaluate_pool: when the pool starts, batches, order, the bar."""

from __future__ import annotations

import json

import pytest

from mini_agent.core.sample_sessions import sample_session_jsonl
from mini_agent.harness import evaluate_pool
from mini_agent.harness.evaluate_pool import batch_size, pool_pays, run_files

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


def test_pool_pays_only_for_time_it_saves_beyond_its_start(monkeypatch):
    monkeypatch.setattr(evaluate_pool, "POOL_START_SECONDS", 0.05)
    assert not pool_pays(10.0, 1, 2)          # one file left: nothing to share
    assert not pool_pays(0.01, 9, 2)          # 0.09 s here, 0.045 s saved < 0.05 s start
    assert pool_pays(0.02, 9, 2)              # 0.18 s here, 0.09 s saved
    assert pool_pays(0.01, 9, 8) and not pool_pays(0.01, 9, 1)


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
    monkeypatch.setattr(evaluate_pool, "POOL_START_SECONDS", 0.0)
    monkeypatch.setattr(evaluate_pool, "_run_pool", spy)
    monkeypatch.setattr(evaluate_pool, "batch_size", lambda n, w: size)
    pooled = run_files(files, policies=POLICIES, workers=2, progress=False)
    assert started == [1]  # the first file ran here, the other five in the pool
    assert _plain(pooled) == _plain(here)


def test_short_runs_stay_in_this_process(files, monkeypatch):
    monkeypatch.setattr(evaluate_pool, "POOL_START_SECONDS", 1e9)
    monkeypatch.setattr(evaluate_pool, "_run_pool", None)  # would fail if called
    assert len(run_files(files, policies=POLICIES, workers=2, progress=False)) == len(files)
    assert run_files(files[:1], policies=POLICIES, workers=4, progress=False)[0]["path"] \
        == str(files[0])


def test_the_bar_counts_every_file_in_and_out_of_the_pool(files, monkeypatch, capsys):
    monkeypatch.setattr(evaluate_pool, "POOL_START_SECONDS", 0.0)
    run_files(files, policies=POLICIES, workers=2, progress=True)
    assert "6/6" in capsys.readouterr().err
    run_files(files, policies=POLICIES, workers=2, progress=False)
    assert capsys.readouterr().err == ""


def test_a_worker_that_dies_costs_its_files_an_error_row_not_the_run(files, monkeypatch):
    # the worker evaluating bad.jsonl ends abruptly (as the out-of-memory killer would end it):
    # the files of lost batches get an error row, the finished ones keep their reports
    import os
    from mini_agent.core import replay

    real = replay.evaluate_session

    def dies_on_s3(transcript, **kwargs):
        if str(transcript.path).endswith("s3.jsonl"):
            os._exit(9)
        return real(transcript, **kwargs)
    monkeypatch.setattr(replay, "evaluate_session", dies_on_s3)  # the forked workers inherit it
    monkeypatch.setattr(evaluate_pool, "POOL_START_SECONDS", 0.0)
    monkeypatch.setattr(evaluate_pool, "batch_size", lambda n, w: 1)
    reports = run_files(files, policies=POLICIES, workers=2, progress=False)
    assert [r["path"] for r in reports] == [str(f) for f in files]
    died = [r for r in reports if r.get("error") == evaluate_pool.WORKER_DIED]
    assert str(files[4]) in [r["path"] for r in died]  # files[4] is s3.jsonl
    assert "error" not in reports[0] and reports[2]["error"] != evaluate_pool.WORKER_DIED


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
