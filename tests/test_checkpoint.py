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
