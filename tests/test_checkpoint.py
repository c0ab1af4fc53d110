"""Tests for mini_agent.harness.checkpoint: atomic writes, the store, lease and version
refusals, intent -> execute -> result and reconciliation."""

from __future__ import annotations

import json
import os

import pytest

from mini_agent.core.progress import job_version, new_progress
from mini_agent.harness.checkpoint import (
                                           LeaseHeldError, LeaseLostError, ProgressStore, ProgressVersionError, reconcile,
                                           resume_checks, run_step, write_json_atomic)

ITEMS = [{"id": "a"}, {"id": "b"}]


class Ledger:
    """An in-memory system of record that honours keys and logs every call."""

    def __init__(self):
        self.ops, self.calls = {}, []

    def apply(self, key, payload):
        self.calls.append(("apply", key))
        if key not in self.ops:
            self.ops[key] = {"key": key, "seq": len(self.ops) + 1, **payload}
        return dict(self.ops[key])

    def lookup(self, key):
        self.calls.append(("lookup", key))
        return dict(self.ops[key]) if key in self.ops else None


class Clock:
    def __init__(self, t=1000.0):
        self.t = t

    def __call__(self):
        return self.t


def make_store(tmp_path, owner="w1", clock=None, **kw):
    store = ProgressStore(tmp_path / "progress.json", owner=owner, clock=clock or Clock(),
                          **kw)
    store.open(new_progress("job", ITEMS))
    return store


def test_write_json_atomic_replaces_and_leaves_no_temp(tmp_path):
    target = tmp_path / "p.json"
    write_json_atomic(target, {"v": 1})
    write_json_atomic(target, {"v": "日本語"})
    assert json.loads(target.read_text(encoding="utf-8")) == {"v": "日本語"}
    assert os.listdir(tmp_path) == ["p.json"]


def test_write_json_atomic_keeps_old_file_on_error(tmp_path):
    target = tmp_path / "p.json"
    write_json_atomic(target, {"v": 1})
    with pytest.raises(TypeError):
        write_json_atomic(target, {"v": object()})
    assert json.loads(target.read_text()) == {"v": 1}
    assert os.listdir(tmp_path) == ["p.json"]


def test_run_step_records_intent_then_result(tmp_path):
    store, ledger = make_store(tmp_path), Ledger()
    receipt = run_step(store, "a", ledger, {"amount": 5})
    assert receipt == {"key": "job:a:apply", "seq": 1, "amount": 5}
    on_disk = json.loads(store.path.read_text())
    item = on_disk["items"][0]
    assert item["state"] == "done" and item["result"] == receipt
    assert item["result_path"] == "results/a.json"
    assert json.loads((tmp_path / "results" / "a.json").read_text())["receipt"] == receipt
    assert ledger.calls == [("apply", "job:a:apply")]
    assert run_step(store, "a", ledger, {"amount": 5}) == receipt  # done: not applied again
    assert ledger.calls == [("apply", "job:a:apply")]


def test_crash_after_execute_is_reconciled_without_a_second_apply(tmp_path):
    store, ledger = make_store(tmp_path), Ledger()
    store.record_intent("a", "job:a:apply")
    ledger.apply("job:a:apply", {"amount": 5})          # happened; the worker died here
    resumed = ProgressStore(store.path, owner="w1", clock=Clock())
    resumed.open()
    assert resume_checks(resumed.progress, ledger, now=1000.0)["open_intents"] == {
        "a": "applied"}
    ledger.calls.clear()
    assert run_step(resumed, "a", ledger, {"amount": 5})["seq"] == 1
    assert ledger.calls == [("lookup", "job:a:apply")]
    assert resumed.item("a")["state"] == "done"


def test_crash_after_intent_is_redone_with_the_same_key(tmp_path):
    store, ledger = make_store(tmp_path), Ledger()
    store.record_intent("b", "job:b:apply")
    outcome, receipt = reconcile(store, "b", ledger, {"amount": 7})
    assert outcome == "redone" and receipt["key"] == "job:b:apply"
    assert ledger.calls == [("lookup", "job:b:apply"), ("apply", "job:b:apply")]
    with pytest.raises(ValueError, match="no open intent"):
        reconcile(store, "b", ledger, {"amount": 7})


def test_second_worker_refused_while_leased_then_takes_over(tmp_path):
    clock = Clock()
    first = make_store(tmp_path, clock=clock)
    second = ProgressStore(first.path, owner="w2", clock=clock, lease_seconds=30)
    with pytest.raises(LeaseHeldError) as info:
        second.open()
    assert info.value.owner == "w1"
    clock.t += 31
    second.open()
    assert second.progress["lease"]["owner"] == "w2"
    assert second.progress["lease"]["generation"] == 2
    with pytest.raises(LeaseLostError):                  # the first worker is fenced off
        first.record_intent("a", "job:a:apply")
    second.record_intent("a", "job:a:apply")


def test_fenced_off_worker_writes_no_result_file(tmp_path):
    clock = Clock()
    first = make_store(tmp_path, clock=clock)
    first.record_intent("a", "job:a:apply")
    clock.t += 31
    second = ProgressStore(first.path, owner="w2", clock=clock, lease_seconds=30)
    second.open()
    with pytest.raises(LeaseLostError):
        first.record_result("a", {"key": "job:a:apply", "by": "w1"})
    assert not (first.results_dir / "a.json").exists()   # nothing of the stale worker's lands
    second.record_result("a", {"key": "job:a:apply", "by": "w2"})
    assert json.loads((second.results_dir / "a.json").read_text())["receipt"]["by"] == "w2"


def test_restarted_owner_renews_its_own_lease(tmp_path):
    clock = Clock()
    make_store(tmp_path, clock=clock)
    again = ProgressStore(tmp_path / "progress.json", owner="w1", clock=clock)
    again.open()
    assert again.progress["lease"]["generation"] == 1


def test_version_refusals(tmp_path):
    store = make_store(tmp_path)
    other = ProgressStore(store.path, expected_job_version=job_version("job", ITEMS[:1]))
    with pytest.raises(ProgressVersionError, match="job_version"):
        other.read()
    data = json.loads(store.path.read_text())
    store.path.write_text(json.dumps({**data, "format": 2}))
    with pytest.raises(ProgressVersionError, match="format is 2"):
        ProgressStore(store.path).read()
    store.path.write_text("{cut")
    with pytest.raises(ValueError, match="not a JSON progress file"):
        ProgressStore(store.path).read()


def test_require_fresh_approvals_names_each_expired_one():
    from mini_agent.core.progress import ApprovalExpiredError, require_fresh_approvals
    progress = new_progress("job", ITEMS, approvals=[
        {"id": "post-ledger", "expires_at": 999.0}, {"id": "close-month", "expires_at": 1000.0},
        {"id": "still-valid", "expires_at": 1000.5}])
    with pytest.raises(ApprovalExpiredError) as err:
        require_fresh_approvals(progress, now=1000.0)
    assert err.value.ids == ["post-ledger", "close-month"]      # expires_at <= now is expired
    assert "post-ledger, close-month" in str(err.value) and "ask for the approval again" in str(err.value)
    require_fresh_approvals(progress, now=999.0 - 1)            # all valid: no error


def test_worker_refuses_to_resume_on_an_expired_approval_and_applies_nothing(tmp_path, capsys):
    from mini_agent.core.checkpoint_lab import build_ledger_job
    from mini_agent.core.progress import ApprovalExpiredError
    from mini_agent.harness.checkpoint import write_json_atomic
    from mini_agent.harness.checkpoint_worker import PROGRESS_FILE, run_worker
    job = build_ledger_job(3, seed=1)
    progress = new_progress(job["task"], job["items"], goal=job["goal"],
                            done_criteria=job["done_criteria"],
                            approvals=[{"id": "post-ledger", "expires_at": 1.0}])
    write_json_atomic(tmp_path / PROGRESS_FILE, progress)
    ledger = Ledger()
    with pytest.raises(ApprovalExpiredError):
        run_worker(tmp_path, ledger, job)
    assert [c for c in ledger.calls if c[0] == "apply"] == []
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert events[-1]["event"] == "refused" and events[-1]["approvals"] == ["post-ledger"]


@pytest.mark.parametrize("item_id", ["../escape", "../../outside", "sub/dir", "/abs/path",
                                     "nul\x00byte", "", "x" * 300])
def test_an_item_id_that_is_not_a_file_name_is_refused_before_any_write(tmp_path, item_id):
    """The result file is ``results/<id>.json``: an id from a job or progress file that would
    put it elsewhere (``../``, a folder) is refused before the intent, so nothing is applied
    and nothing is written outside ``results/``."""
    work = tmp_path / "work"
    store = ProgressStore(work / "progress.json", owner="w1", clock=Clock())
    store.open(new_progress("job", [{"id": item_id, "target": "t"}]))
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    progress_before = store.path.read_text()
    ledger = Ledger()
    with pytest.raises(ValueError, match="not a plain file name"):
        run_step(store, item_id, ledger, {"amount": 5})
    assert ledger.calls == []
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before
    assert store.path.read_text() == progress_before


@pytest.mark.parametrize("data, why", [
    (b'{"task": "t", "note": "\xe9"}', "can't decode byte 0xe9 in position 23"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'{"task": ', "Expecting value"),
])
def test_a_damaged_progress_file_is_a_value_error_naming_it(tmp_path, data, why):
    """A progress file saved as Latin-1 or nested without end used to raise
    UnicodeDecodeError without the path, or RecursionError."""
    path = tmp_path / "progress.json"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=why) as info:
        ProgressStore(path, owner="w1").read()
    assert str(info.value).startswith(f"{path}: not a JSON progress file (")
    assert type(info.value) is ValueError


def test_a_progress_file_damaged_while_the_worker_runs_stops_it_naming_the_file(tmp_path):
    """Damaged on disk between the worker's writes, the file used to raise a bare
    JSONDecodeError without its path; now a ValueError naming it, and nothing is written."""
    store = make_store(tmp_path)
    ledger = Ledger()
    damaged = b'{"format": 1, "items": ['
    store.path.write_bytes(damaged)
    with pytest.raises(ValueError, match="Expecting value") as info:
        run_step(store, "a", ledger, {"amount": 5})
    assert str(info.value).startswith(f"{store.path}: not a JSON progress file (")
    assert type(info.value) is ValueError
    assert ledger.calls == []  # the intent was refused before the call
    assert store.path.read_bytes() == damaged
    assert list((tmp_path / "results").iterdir()) == []
