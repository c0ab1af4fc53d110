"""Graded checks for exercise 10 (intent -> execute -> result); ``impl`` is the module under test.

Each check targets a typical mistake: keys that change between runs (time, uuid, counters) or
put the parts in another order; a progress file written in place (a kill leaves it cut), a temp
file elsewhere, no fsync; the result saved before the call or the intent after it; a resume
that re-executes an intent without asking the system of record, or asks and applies anyway;
a failure swallowed. A failing check shows the input, what was expected and what came back.

Source: exercise 10 (``solutions/10_checkpoints.py``) and its seed, 004_b74ef821c58ee4ec.txt
(idempotency keys ``task:target:step``; intent -> execute -> result; on resume, ask the system
of record before executing again).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import tempfile
import time
from pathlib import Path

from mini_agent.grading import check
from mini_agent.grading.checks._durability_trace import trace_write as _trace_write


class Journal(list):
    """Everything the store and the system saw, in order."""


class FakeStore:
    """The store interface of the exercise, logging each durable save with a snapshot."""

    def __init__(self, journal: Journal, items: list[dict], task: str = "ledger") -> None:
        self.task, self.journal = task, journal
        self.items = {i["id"]: {"target": i["id"], "step": "post", "state": "pending",
                                "intent": None, "result": None, **i} for i in items}
        for item in self.items.values():
            item.setdefault("key", f"{task}:{item['target']}:{item['step']}")

    def item(self, item_id: str) -> dict:
        """Read one item as saved.

        Args:
            item_id: the item's id ("inv-7").

        Returns:
            A deep copy of the item (``target``, ``step``, ``state``, ``key``, ``intent``,
            ``result``).
        """
        return copy.deepcopy(self.items[item_id])

    def record_intent(self, item_id: str, key: str) -> None:
        """Save the intent before the external call: the item becomes "in_progress".

        Args:
            item_id: the item's id.
            key: the idempotency key the call will carry.

        Raises:
            ValueError: the item is already done.
        """
        item = self.items[item_id]
        if item["state"] == "done":
            raise ValueError(f"item {item_id} is done")
        item.update(state="in_progress", intent={"key": key, "at": 0.0})
        self.journal.append(("intent", item_id, key))

    def record_result(self, item_id: str, receipt: dict) -> None:
        """Save the result after the external call: the item becomes "done".

        Args:
            item_id: the item's id.
            receipt: what the system of record returned.

        Raises:
            ValueError: the item has no intent (the result came before the intent).
        """
        item = self.items[item_id]
        if not item["intent"]:
            raise ValueError(f"item {item_id} has no intent: record the intent first")
        item.update(state="done", result=copy.deepcopy(receipt))
        self.journal.append(("result", item_id, copy.deepcopy(receipt)))


class FakeSystem:
    """A system of record; ``honours_keys=False`` is one without idempotency support (every
    apply is a new write), where only asking first prevents a duplicate."""

    def __init__(self, journal: Journal, *, honours_keys: bool = True,
                 fail_after_apply: bool = False) -> None:
        self.journal, self.honours_keys = journal, honours_keys
        self.fail_after_apply = fail_after_apply
        self.writes: list[str] = []
        self.receipts: dict[str, dict] = {}

    def apply(self, key: str, payload: dict) -> dict:
        """Apply a write; a key seen before returns its first receipt, when keys are honoured.

        Args:
            key: the idempotency key.
            payload: the write's fields, copied into the receipt.

        Returns:
            The receipt ``{"key", "seq", **payload}``; ``seq`` counts the writes made.

        Raises:
            ConnectionError: once, after the write was applied, when built with
                ``fail_after_apply=True`` (the response was lost).
        """
        self.journal.append(("apply", key))
        if key not in self.receipts or not self.honours_keys:
            self.writes.append(key)
            self.receipts.setdefault(key, {"key": key, "seq": len(self.writes),
                                           **copy.deepcopy(payload)})
        if self.fail_after_apply:
            self.fail_after_apply = False
            raise ConnectionError("response lost after the write was applied")
        return copy.deepcopy(self.receipts[key])

    def lookup(self, key: str) -> dict | None:
        """Ask whether a write with this key was applied.

        Args:
            key: the idempotency key.

        Returns:
            A copy of its receipt, or None when no write carried it.
        """
        self.journal.append(("lookup", key))
        return copy.deepcopy(self.receipts.get(key))


def fresh(items=({"id": "inv-7"},), **system_options):
    """Build a journal, a store holding ``items`` and a system of record sharing that journal.

    Args:
        items: the items' dicts (at least ``id``); default one item "inv-7".
        system_options: passed to :class:`FakeSystem` (``honours_keys``, ``fail_after_apply``).

    Returns:
        ``(journal, store, system)``.
    """
    journal = Journal()
    return journal, FakeStore(journal, [dict(i) for i in items]), FakeSystem(journal,
                                                                           **system_options)


def open_intent(store: FakeStore, item_id: str) -> str:
    """Leave an item as a kill after the intent would: "in_progress" with its intent saved.

    Args:
        store: the store holding the item.
        item_id: the item's id.

    Returns:
        The item's idempotency key.
    """
    key = store.items[item_id]["key"]
    store.items[item_id].update(state="in_progress", intent={"key": key, "at": 0.0})
    return key


# ------------------------------------------------------------------------------ 10.1 keys

@check(points=1, hint="Join the three parts in the order task, target, step with ':' between "
                      "them, and nothing else in the key.")
def check_key_format(impl):
    for parts, want in [(("ledger", "inv-7", "post"), "ledger:inv-7:post"),
                        (("請求", "明細-3", "送信"), "請求:明細-3:送信")]:
        got = impl.idempotency_key(*parts)
        assert got == want, f"idempotency_key{parts}: expected {want!r}, got {got!r}"


@check(points=2, hint="A retry after a crash must present the same key: nothing that changes "
                      "between calls (time, uuid, counters, process ids) may go into it.")
def check_key_is_the_same_on_every_call(impl):
    keys = set()
    for _ in range(3):
        keys.add(impl.idempotency_key("ledger", "inv-7", "post"))
        time.sleep(0.002)                                 # a clock-based key would move
    assert keys == {"ledger:inv-7:post"}, f"three calls with the same parts gave {keys}"
    assert impl.idempotency_key("a", "b", "c") != impl.idempotency_key("a", "c", "b")


@check(points=1, hint="A part that is empty, not a str, or contains ':' makes the key "
                      "ambiguous: raise ValueError.")
def check_key_refuses_ambiguous_parts(impl):
    for parts in [("", "inv-7", "post"), ("ledger", "inv:7", "post"), ("ledger", "inv-7", ""),
                  ("ledger", None, "post")]:
        try:
            got = impl.idempotency_key(*parts)
        except ValueError:
            continue
        raise AssertionError(f"idempotency_key{parts}: expected ValueError, got {got!r}")


# ------------------------------------------------------------------------------ 10.2 atomic

@check(points=1, hint="Serialise with json, write it, and make sure the file reads back equal "
                      "(non-ASCII text included), also when the file already exists.")
def check_atomic_write_round_trip(impl):
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "progress.json"
        data = {"items": [{"id": "inv-7", "state": "done", "note": "完了 ✓"}]}
        impl.write_json_atomic(target, {"old": True})
        impl.write_json_atomic(str(target), data)
        got = json.loads(target.read_text(encoding="utf-8"))
        assert got == data, f"file holds {got}"
        left = sorted(os.listdir(folder))
        assert left == ["progress.json"], f"files left in the folder: {left}"


@check(points=2, hint="Never open the target itself for writing: if serialising or writing "
                      "fails half way, the old file must still be there, whole, and no "
                      "temporary file may be left behind.")
def check_atomic_write_keeps_the_old_file_on_failure(impl):
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "progress.json"
        target.write_text('{"v": 1}', encoding="utf-8")
        try:
            impl.write_json_atomic(target, {"v": 2, "bad": object()})
        except TypeError:
            pass
        else:
            raise AssertionError("expected TypeError for data json cannot serialise")
        got = target.read_text(encoding="utf-8")
        assert got == '{"v": 1}', f"after a failed write the file holds {got!r}"
        left = sorted(os.listdir(folder))
        assert left == ["progress.json"], f"files left in the folder: {left}"


@check(points=2, hint="Write a temporary file in the SAME folder as the target, flush and "
                      "os.fsync (or os.fdatasync) it, then os.replace (or os.rename) it over "
                      "the target: a rename within one folder is atomic, a copy or a rename "
                      "from /tmp is not.")
def check_atomic_write_renames_a_synced_temp_in_the_same_folder(impl):
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder).resolve() / "progress.json"
        target.write_text("{}", encoding="utf-8")
        events = _trace_write(impl, target, {"v": 2})
        renames = [e for e in events if e[0] == "rename" and e[2] == str(target)]
        assert renames, f"no os.replace/os.rename onto the target; calls seen: {events}"
        source = renames[-1][1]
        assert os.path.dirname(source) == str(target.parent), (
            f"the temp file {source} is not in the target's folder {target.parent}")
        before = events[:events.index(renames[-1])]
        assert ("fsync", "file", source) in before, (
            f"the temp file was not fsynced before the rename; calls seen: {events}")


@check(points=1, hint="After the rename, fsync the folder itself (os.open it read-only, "
                      "os.fsync, close), or the rename may not survive a power loss.")
def check_atomic_write_syncs_the_folder_after_the_rename(impl):
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder).resolve() / "progress.json"
        events = _trace_write(impl, target, {"v": 1})
        renames = [n for n, e in enumerate(events) if e[0] == "rename" and e[2] == str(target)]
        assert renames, f"no os.replace/os.rename onto the target; calls seen: {events}"
        after = events[renames[-1] + 1:]
        assert ("fsync", "dir", str(target.parent)) in after, (
            f"the folder was not fsynced after the rename; calls seen: {events}")


# ------------------------------------------------------------------------------ 10.3 run_step

@check(points=3, hint="Three durable steps in this order: record the intent (with the key), "
                      "call system.apply with that key and the payload, record the receipt "
                      "it returned. Return the receipt.")
def check_run_step_intent_execute_result_in_order(impl):
    journal, store, system = fresh()
    payload = {"account": "acct-3", "amount_cents": 1250}
    got = impl.run_step(store, "inv-7", system, payload)
    receipt = {"key": "ledger:inv-7:post", "seq": 1, **payload}
    expected = [("intent", "inv-7", "ledger:inv-7:post"), ("apply", "ledger:inv-7:post"),
                ("result", "inv-7", receipt)]
    assert journal == expected, f"expected the calls {expected}, got {list(journal)}"
    assert got == receipt, f"returned {got}, expected the receipt {receipt}"
    assert payload == {"account": "acct-3", "amount_cents": 1250}, "payload was changed"


@check(points=2, hint="The key sent to the system is idempotency_key(store.task, "
                      "item['target'], item['step']): the same in every run of the job.")
def check_run_step_sends_the_deterministic_key(impl):
    sent = []
    for _ in range(2):
        journal, store, system = fresh([{"id": "line-2", "target": "inv-9", "step": "refund"}])
        impl.run_step(store, "line-2", system, {"amount_cents": 1})
        sent += [e[1] for e in journal if e[0] == "apply"]
    assert sent == ["ledger:inv-9:refund"] * 2, f"keys sent in two runs: {sent}"


@check(points=1, hint="An item already done is not applied again: return its recorded result "
                      "without calling the system.")
def check_run_step_skips_a_done_item(impl):
    journal, store, system = fresh()
    store.items["inv-7"].update(state="done", intent={"key": "ledger:inv-7:post", "at": 0.0},
                                result={"seq": 4})
    got = impl.run_step(store, "inv-7", system, {"amount_cents": 1})
    assert got == {"seq": 4} and list(journal) == [], (
        f"returned {got}; calls made for a done item: {list(journal)}")


@check(points=3, hint="An item with an intent but no result may have been applied already: "
                      "ask the system of record by key first (reconcile), never just apply "
                      "again.")
def check_run_step_reconciles_an_open_intent(impl):
    journal, store, system = fresh(honours_keys=False)
    key = open_intent(store, "inv-7")
    system.apply(key, {"amount_cents": 5})               # it happened before the kill
    journal.clear()
    got = impl.run_step(store, "inv-7", system, {"amount_cents": 5})
    assert system.writes == [key], f"writes in the ledger: {system.writes} (applied twice)"
    assert journal[0] == ("lookup", key), f"first call was {journal[:1]}, expected a lookup"
    assert got == system.receipts[key] and store.items["inv-7"]["state"] == "done"


@check(points=2, hint="If system.apply raises, let the error propagate: the intent stays on "
                      "disk without a result, so the next resume asks the system; never record "
                      "a result you did not get.")
def check_a_lost_response_is_settled_on_resume(impl):
    journal, store, system = fresh(honours_keys=False, fail_after_apply=True)
    try:
        impl.run_step(store, "inv-7", system, {"amount_cents": 5})
    except ConnectionError:
        pass
    else:
        raise AssertionError("run_step swallowed the system's ConnectionError")
    assert store.items["inv-7"]["result"] is None, "a result was recorded after a failure"
    assert store.items["inv-7"]["intent"], "the intent was not recorded before the call"
    impl.run_step(store, "inv-7", system, {"amount_cents": 5})      # the resume
    assert system.writes == ["ledger:inv-7:post"], f"writes in the ledger: {system.writes}"
    assert store.items["inv-7"]["state"] == "done"


# ------------------------------------------------------------------------------ 10.4 reconcile

@check(points=3, hint="reconcile: system.lookup(the intent's key) first; if it returns a "
                      "receipt, record it and apply nothing; return ('found', receipt).")
def check_reconcile_found_records_without_applying(impl):
    journal, store, system = fresh(honours_keys=False)
    key = open_intent(store, "inv-7")
    system.apply(key, {"amount_cents": 5})
    journal.clear()
    got = impl.reconcile(store, "inv-7", system, {"amount_cents": 5})
    receipt = system.receipts[key]
    assert tuple(got) == ("found", receipt), f"returned {got}"
    assert list(journal) == [("lookup", key), ("result", "inv-7", receipt)], (
        f"calls: {list(journal)} (expected one lookup, then the result recorded)")


@check(points=2, hint="If lookup returns None the write never happened: apply it with the SAME "
                      "key as the intent, record the receipt, return ('redone', receipt).")
def check_reconcile_not_found_redoes_with_the_same_key(impl):
    journal, store, system = fresh()
    key = open_intent(store, "inv-7")
    got = impl.reconcile(store, "inv-7", system, {"amount_cents": 5})
    receipt = system.receipts.get(key)
    assert tuple(got) == ("redone", receipt), f"returned {got}"
    assert list(journal) == [("lookup", key), ("apply", key), ("result", "inv-7", receipt)], (
        f"calls: {list(journal)}")


@check(points=1, hint="Nothing to reconcile (no intent, or already done) is a caller's "
                      "mistake: raise ValueError and touch nothing.")
def check_reconcile_refuses_without_an_open_intent(impl):
    journal, store, system = fresh([{"id": "inv-7"}, {"id": "inv-8"}])
    store.items["inv-8"].update(state="done", intent={"key": "ledger:inv-8:post", "at": 0.0},
                                result={"seq": 1})
    for item_id in ("inv-7", "inv-8"):
        with contextlib.suppress(ValueError):
            got = impl.reconcile(store, item_id, system, {"amount_cents": 5})
            raise AssertionError(f"reconcile({item_id!r}) returned {got}; expected ValueError")
    assert list(journal) == [], f"calls made: {list(journal)}"
