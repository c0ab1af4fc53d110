"""Memory lifecycle (core), its store (harness) and the four information layers."""

import copy
import json

import pytest

from mini_agent.core.clock import ManualClock
from mini_agent.core import memory_lifecycle as ml
from mini_agent.core.info_layers import (ConversationHistory, LongTermMemory, SystemOfRecord,
                                         TaskState, resolve)
from mini_agent.core.memory_lifecycle import MemoryState, Observation
from mini_agent.harness.memory_store import MemoryStore

T0 = 1_767_225_600.0
DAY = 86_400.0


def obs(value, source="user", at=T0, evidence="s1", key="user.editor", confirmed=False):
    return Observation(key, value, source, at, evidence, confirmed)


def test_a_one_off_fact_is_held_not_promoted():
    state = ml.observe(MemoryState(), obs("vim"))
    assert state.items == {} and [o.value for o in state.candidates["user.editor"]] == ["vim"]
    assert state.log[-1]["event"] == "held"


def test_repetition_with_distinct_evidence_promotes():
    state = ml.observe(MemoryState(), obs("vim", evidence="s1"))
    same = ml.observe(state, obs("vim", evidence="s1", at=T0 + 1))
    assert same.items == {}, "the same evidence twice is one sighting"
    state = ml.observe(state, obs("vim", evidence="s2", at=T0 + DAY))
    item = state.items["user.editor"]
    assert (item.value, item.sightings, item.promoted_because) == ("vim", 2, "seen 2 times")
    assert item.expires_at == T0 + DAY + ml.DEFAULT_TTL_SECONDS
    assert state.candidates == {} and state.index["vim"] == ("user.editor",)


def test_confirmation_or_system_of_record_promotes_at_once():
    state = ml.observe(MemoryState(), obs("emacs", confirmed=True))
    assert state.items["user.editor"].promoted_because == "confirmed by the user"
    state = ml.observe(MemoryState(), obs("EUR", "system_of_record", key="account.currency"))
    assert state.items["account.currency"].promoted_because == "from the system of record"


def test_conflicts_by_authority_then_recency_with_a_change_log():
    state = ml.observe(MemoryState(), obs("vim", confirmed=True))
    before = copy.deepcopy(state)
    lower = ml.observe(state, obs("nano", "model", at=T0 + DAY, evidence="guess"))
    assert state == before, "observe must not mutate its input"
    assert lower.items["user.editor"].value == "vim" and lower.items["user.editor"].needs_recheck
    assert lower.log[-1]["event"] == "kept" and lower.log[-1]["value"] == "nano"
    newer = ml.observe(state, obs("helix", "user", at=T0 + DAY, evidence="s9"))
    assert newer.items["user.editor"].value == "helix"
    assert {k: newer.log[-1][k] for k in ("event", "value", "previous", "reason")} == {
        "event": "replaced", "value": "helix", "previous": "vim",
        "reason": "same authority (user), newer"}
    older = ml.observe(state, obs("helix", "user", at=T0 - DAY, evidence="s0"))
    assert older.items["user.editor"].value == "vim"
    record = ml.observe(state, obs("code", "system_of_record", at=T0 - DAY, evidence="hr-db"))
    assert record.items["user.editor"].value == "code", "authority beats recency"
    assert newer.index.get("vim") is None and newer.index["helix"] == ("user.editor",)


def test_expiry_and_recheck():
    state = ml.observe(MemoryState(), obs("vim", confirmed=True))
    assert ml.due_for_recheck(state, now=T0 + 29 * DAY) == []
    now = T0 + 31 * DAY
    assert ml.due_for_recheck(state, now=now) == ["user.editor"]
    renewed = ml.recheck(state, "user.editor", "vim", now=now)
    assert renewed.items["user.editor"].expires_at == now + ml.DEFAULT_TTL_SECONDS
    changed = ml.recheck(state, "user.editor", "emacs", now=now)
    assert changed.items["user.editor"].value == "emacs" and changed.log[-1]["previous"] == "vim"
    gone = ml.recheck(state, "user.editor", None, now=now)
    assert "user.editor" not in gone.items and gone.log[-1]["event"] == "deleted"


def test_deletion_propagates_to_index_summaries_candidates_and_log():
    state = ml.observe(MemoryState(), obs("Kyoto office", confirmed=True, key="user.office"))
    state = ml.observe(state, obs("vim", confirmed=True))
    state = ml.observe(state, obs("Osaka office", "model", at=T0 + 1, key="user.office",
                                  evidence="guess"))
    state = ml.add_summary(state, "profile", ["user.office", "user.editor"])
    state = ml.add_summary(state, "tools", ["user.editor"])
    assert "Kyoto" in state.summaries["profile"].text
    gone = ml.delete(state, "user.office", now=T0 + 2)
    text = json.dumps(gone.to_dict())
    assert "Kyoto" not in text and "Osaka" not in text and "kyoto" not in text
    assert set(gone.summaries) == {"tools"} and "user.office" not in gone.items
    assert all("user.office" not in keys for keys in gone.index.values())
    assert gone.log[-1]["event"] == "deleted" and gone.log[-1]["value"] is None
    assert gone.items["user.editor"].value == "vim"
    assert MemoryState.from_dict(json.loads(text)) == gone


def test_store_persists_and_deletes_on_disk(tmp_path):
    clock = ManualClock(T0)
    store = MemoryStore(tmp_path / "memory.json", clock=clock)
    store.observe("user.office", "Kyoto office", source="user", evidence="s1")
    clock.advance(DAY)
    store.observe("user.office", "Kyoto office", source="user", evidence="s2")
    assert MemoryStore(tmp_path / "memory.json").state.items["user.office"].sightings == 2
    store.summarise("profile", ["user.office"])
    assert not store.deleted_everywhere("Kyoto")
    store.delete("user.office")
    assert store.deleted_everywhere("Kyoto")
    assert MemoryStore(tmp_path / "memory.json").state.summaries == {}
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a memory state"):
        MemoryStore(tmp_path / "bad.json")
    assert (tmp_path / "bad.json").read_text() == "[1, 2]"


def test_store_rechecks_due_items(tmp_path):
    clock = ManualClock(T0)
    store = MemoryStore(tmp_path / "m.json", clock=clock, ttl_seconds=DAY)
    store.observe("plan", "pro", source="user", evidence="s1", confirmed=True)
    store.observe("seat", "12", source="user", evidence="s1", confirmed=True)
    clock.advance(2 * DAY)
    assert store.recheck_due({"plan": "team", "seat": None}.get) == ["plan", "seat"]
    assert store.state.items["plan"].value == "team" and "seat" not in store.state.items
    clock.advance(2 * DAY)
    assert store.recheck_due() == ["plan"] and store.state.items == {}


def test_four_layers_the_system_of_record_wins():
    history = ConversationHistory([
        {"role": "user", "content": "Did the refund go through?"},
        {"role": "assistant", "content": [{"type": "text",
                                           "text": "Yes.\nrefund A-1001: done"}]}])
    task = TaskState({"refund A-1001": "in_progress"})
    memory = LongTermMemory(ml.observe(MemoryState(), obs("done", key="refund A-1001",
                                                          confirmed=True)))
    ledger = SystemOfRecord({"refund A-1001": "not refunded"}, system="payments")
    result = resolve("refund A-1001", [history, memory, task, ledger])
    assert result.winner.layer == "system of record" and result.winner.value == "not refunded"
    assert [c.layer for c in result.overruled] == ["conversation history", "long-term memory",
                                                   "task state"]
    assert result.winner.where == "payments:refund A-1001"
    without = resolve("refund A-1001", [history, memory, task])
    assert without.winner.layer == "task state"
    assert resolve("unknown", [history, ledger]).winner is None
    agree = resolve("refund A-1001", [history, SystemOfRecord({"refund A-1001": "done"})])
    assert agree.agree and history.lookup("refund A-1001").where == "messages[1]"


@pytest.mark.parametrize("when", [
    __import__("datetime").datetime(2026, 1, 1, 9, 0),  # naive
    __import__("datetime").datetime(2026, 1, 1, 9, 0,
                                    tzinfo=__import__("datetime").timezone.utc),  # aware
    float("nan"), float("inf"), True, "1767225600"])
def test_a_time_that_is_not_finite_seconds_is_refused_by_name(when):
    """A datetime used to be held as a candidate silently (and broke the JSON file later); a
    NaN made an item whose expiry never came due."""
    with pytest.raises(ValueError, match=r"observed_at must be Unix seconds .*\.timestamp\(\)"):
        Observation("user.tz", "UTC", "user", when, "session 1")
    state = ml.observe(MemoryState(), Observation("user.tz", "UTC", "user", 10.0, "s1",
                                                  confirmed=True))
    for call in (lambda: ml.due_for_recheck(state, now=when),
                 lambda: ml.recheck(state, "user.tz", "UTC", now=when),
                 lambda: ml.delete(state, "user.tz", now=when)):
        with pytest.raises(ValueError, match="now must be Unix seconds"):
            call()
    assert ml.check_seconds(1_767_225_600) == 1_767_225_600.0


def test_a_store_whose_clock_gives_a_datetime_writes_no_file(tmp_path):
    import datetime

    class DatetimeClock:
        def now(self):
            return datetime.datetime(2026, 1, 1, 9, 0)

    store = MemoryStore(tmp_path / "m.json", clock=DatetimeClock())
    with pytest.raises(ValueError, match="observed_at must be Unix seconds"):
        store.observe("user.tz", "UTC", source="user", evidence="s1")
    assert list(tmp_path.iterdir()) == []  # no half-written m.json.tmp holding the value


def test_a_state_json_cannot_hold_leaves_no_half_written_temp_file(tmp_path):
    store = MemoryStore(tmp_path / "m.json", clock=ManualClock())
    store.observe("user.tz", "UTC", source="user", evidence="s1", confirmed=True)
    before = (tmp_path / "m.json").read_text(encoding="utf-8")
    with pytest.raises(TypeError):
        store.observe("user.editor", object(), source="user", evidence="s2")  # type: ignore
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]
    assert (tmp_path / "m.json").read_text(encoding="utf-8") == before
