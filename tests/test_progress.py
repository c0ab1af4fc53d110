"""Tests for mini_agent.core.progress: keys, transitions, lease and version refusals."""

from __future__ import annotations

import copy

import pytest

from mini_agent.core.progress import (
                                      PROGRESS_FORMAT, LeaseHeldError, ProgressVersionError, check_version, counts, expired,
                                      idempotency_key, job_version, new_progress, open_intents, remaining, take_lease,
                                      with_failure, with_intent, with_result)

ITEMS = [{"id": "a", "priority": 1}, {"id": "b", "priority": 0}, {"id": "c", "priority": 1}]


def test_idempotency_key_is_deterministic_and_ordered():
    assert idempotency_key("job", "inv-1", "post") == "job:inv-1:post"
    assert idempotency_key("job", "inv-1", "post") == idempotency_key("job", "inv-1", "post")
    assert idempotency_key("job", "post", "inv-1") != idempotency_key("job", "inv-1", "post")


@pytest.mark.parametrize("parts", [("", "a", "b"), ("t", "a:b", "c"), ("t", "a", None),
                                   ("t", 3, "s")])
def test_idempotency_key_refuses_ambiguous_or_empty_parts(parts):
    with pytest.raises(ValueError):
        idempotency_key(*parts)


def test_new_progress_items_pending_with_keys_and_version():
    p = new_progress("job", ITEMS, goal="g", done_criteria=["all done"])
    assert p["format"] == PROGRESS_FORMAT
    assert p["job_version"] == job_version("job", ITEMS)
    assert [i["key"] for i in p["items"]] == ["job:a:apply", "job:b:apply", "job:c:apply"]
    assert counts(p) == {"pending": 3, "in_progress": 0, "done": 0, "failed": 0}
    with pytest.raises(ValueError, match="duplicate"):
        new_progress("job", [{"id": "a"}, {"id": "a"}])


def test_transitions_are_pure_and_ordered():
    p = new_progress("job", ITEMS)
    before = copy.deepcopy(p)
    with pytest.raises(ValueError, match="no intent"):
        with_result(p, "a", {"seq": 1}, now=5.0)
    q = with_intent(p, "a", "job:a:apply", now=5.0)
    assert p == before
    assert q["items"][0]["state"] == "in_progress" and q["items"][0]["attempts"] == 1
    assert [i["id"] for i in open_intents(q)] == ["a"]
    r = with_result(q, "a", {"seq": 1}, now=6.0, result_path="results/a.json")
    assert r["items"][0]["state"] == "done"
    assert r["items"][0]["verification"] == {"by": "system_of_record", "key": "job:a:apply",
                                             "at": 6.0}
    with pytest.raises(ValueError, match="done"):
        with_intent(r, "a", "job:a:apply", now=7.0)
    f = with_failure(q, "a", "timeout")
    assert f["items"][0]["state"] == "failed" and f["items"][0]["intent"]  # intent kept


def test_remaining_puts_open_intents_first_then_priority():
    p = new_progress("job", ITEMS)
    assert [i["id"] for i in remaining(p)] == ["b", "a", "c"]
    q = with_intent(p, "c", "job:c:apply", now=1.0)
    assert [i["id"] for i in remaining(q)] == ["c", "b", "a"]


def test_version_refusals_are_named():
    p = new_progress("job", ITEMS)
    check_version(p, expected_job_version=p["job_version"])
    with pytest.raises(ProgressVersionError) as info:
        check_version({**p, "format": 0})
    assert info.value.field == "format" and "format" in str(info.value)
    with pytest.raises(ProgressVersionError) as info:
        check_version(p, expected_job_version=job_version("job", ITEMS[:2]))
    assert info.value.field == "job_version"


def test_lease_refused_while_held_taken_after_expiry():
    p = take_lease(new_progress("job", ITEMS), "w1", now=100.0, ttl_seconds=30)
    assert p["lease"] == {"owner": "w1", "expires_at": 130.0, "generation": 1}
    with pytest.raises(LeaseHeldError) as info:
        take_lease(p, "w2", now=129.9, ttl_seconds=30)
    assert info.value.owner == "w1" and info.value.seconds_left == pytest.approx(0.1)
    renewed = take_lease(p, "w1", now=120.0, ttl_seconds=30)
    assert renewed["lease"] == {"owner": "w1", "expires_at": 150.0, "generation": 1}
    taken = take_lease(p, "w2", now=130.0, ttl_seconds=30)
    assert taken["lease"] == {"owner": "w2", "expires_at": 160.0, "generation": 2}


def test_expired_approvals_and_handles():
    p = new_progress("job", ITEMS, approvals=[{"id": "ok", "expires_at": 50.0},
                                              {"id": "late", "expires_at": 200.0}],
                     handles=[{"id": "h", "kind": "preview", "expires_at": 100.0}])
    assert expired(p, now=100.0) == {"approvals": ["ok"], "handles": ["h"]}
    assert expired(p, now=10.0) == {"approvals": [], "handles": []}
