"""The loader's one-pass forms against the code they replace.

Covers: ``repair._pair`` (the previous assistant's ids carried over, the results sorted in the
same pass) equals the reference that rebuilt both per draft; ``claude_code_drafts`` asking
``_clean_ids``' usual-entry test inline equals running it on entries cleaned first;
``_jsonl_format`` equals the two ``any()`` scans it replaces; ``owned_blocks`` equals
``content_blocks`` and ``claude_code_drafts(owned=True)`` its copying form; ``seconds`` equals
its two-function form.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import math

from hypothesis import given, settings, strategies as st

from mini_agent.core.messages import NO_RESULT_TEXT
from mini_agent.core.transcripts import _jsonl_format
from mini_agent.core.transcripts.claude_code import _clean_ids, claude_code_drafts
from mini_agent.core.transcripts.drafts import (MessageDraft, content_blocks, owned_blocks,
                                                seconds)
from mini_agent.core.transcripts.repair import _pair


def reference_pair(drafts: list[MessageDraft], repairs: list[str]) -> bool:
    """``_pair`` as it was: the asked ids and the result order rebuilt for every draft."""
    changed = False
    for i, draft in enumerate(drafts):
        if draft.role == "assistant":
            ids = [b.get("id") for b in draft.blocks if b.get("type") == "tool_use"]
            nxt = drafts[i + 1] if i + 1 < len(drafts) and drafts[i + 1].role == "user" else None
            answered = {b.get("tool_use_id") for b in nxt.blocks} if nxt else set()
            missing = [x for x in ids if x not in answered]
            if missing:
                filler = [{"type": "tool_result", "tool_use_id": x, "content": NO_RESULT_TEXT,
                           "is_error": True} for x in missing]
                if nxt is None:
                    drafts.insert(i + 1, MessageDraft("user", filler, f"after {draft.where}", []))
                else:
                    nxt.blocks = filler + nxt.blocks
                repairs.append(f"{draft.where}: tool_use {', '.join(missing)} had no tool_result; "
                               "added an is_error result saying so")
                changed = True
        else:
            previous = drafts[i - 1] if i > 0 and drafts[i - 1].role == "assistant" else None
            asked = {b.get("id") for b in previous.blocks
                     if b.get("type") == "tool_use"} if previous else set()
            kept, seen = [], set()
            for block in draft.blocks:
                if block.get("type") == "tool_result":
                    tid = block.get("tool_use_id")
                    if tid not in asked or tid in seen:
                        why = "duplicate" if tid in seen else "orphan"
                        size = len(json.dumps(block.get("content"), ensure_ascii=False))
                        repairs.append(f"{draft.where}: dropped {why} tool_result {tid} "
                                       f"({size} chars; its tool_use is not in the previous "
                                       "assistant message)" if why == "orphan" else
                                       f"{draft.where}: dropped duplicate tool_result {tid}")
                        changed = True
                        continue
                    seen.add(tid)
                kept.append(block)
            results = [b for b in kept if b.get("type") == "tool_result"]
            others = [b for b in kept if b.get("type") != "tool_result"]
            if kept != results + others:
                repairs.append(f"{draft.where}: tool_result blocks moved before the user's text")
                changed = True
            draft.blocks = results + others
    return changed


_IDS = st.sampled_from(["t1", "t2", "t3"])
_BLOCK = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(["go", "ok"])),
    st.builds(lambda i: {"type": "tool_use", "id": i, "name": "grep", "input": {}}, _IDS),
    st.builds(lambda i, c: {"type": "tool_result", "tool_use_id": i, "content": c}, _IDS,
              st.sampled_from(["out", "a\nb"])))
_DRAFT = st.builds(lambda role, blocks, n: MessageDraft(role, blocks, "line", [n]),
                   st.sampled_from(["user", "assistant"]), st.lists(_BLOCK, max_size=4),
                   st.integers(1, 9))


@settings(max_examples=400, deadline=None)
@given(st.lists(_DRAFT, max_size=6))
def test_pair_equals_the_reference(drafts):
    mine, theirs = copy.deepcopy(drafts), copy.deepcopy(drafts)
    notes_mine: list[str] = []
    notes_theirs: list[str] = []
    assert _pair(mine, notes_mine) == reference_pair(theirs, notes_theirs)
    assert notes_mine == notes_theirs
    assert [(d.role, d.blocks, d.where) for d in mine] == \
        [(d.role, d.blocks, d.where) for d in theirs]


def test_pair_moves_results_first_and_drops_orphans():
    drafts = [MessageDraft("assistant", [{"type": "tool_use", "id": "t1", "name": "x",
                                          "input": {}}], "line", [2]),
              MessageDraft("user", [{"type": "text", "text": "hi"},
                                    {"type": "tool_result", "tool_use_id": "t1", "content": "a"},
                                    {"type": "tool_result", "tool_use_id": "t9", "content": "b"}],
                           "line", [3])]
    notes: list[str] = []
    assert _pair(drafts, notes)
    assert [b["type"] for b in drafts[1].blocks] == ["tool_result", "text"]
    assert notes == ["line 3: dropped orphan tool_result t9 (3 chars; its tool_use is not in "
                     "the previous assistant message)",
                     "line 3: tool_result blocks moved before the user's text"]


_LINK = st.one_of(st.none(), st.sampled_from(["u1", "u2", "u3"]), st.integers(0, 3),
                  st.just(["u1"]))


def _entry(kind, uuid, parent, mid, side):
    entry = {"type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": side,
             "timestamp": "2026-01-01T00:00:01.000Z"}
    if kind in ("user", "assistant"):
        content = ([{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]
                   if kind == "user" else [{"type": "text", "text": "hi"}])
        entry["message"] = {"role": kind, "content": content, "id": mid, "model": "m"}
    return entry


@settings(max_examples=300, deadline=None)
@given(st.lists(st.builds(_entry, st.sampled_from(["user", "assistant", "progress"]), _LINK,
                          _LINK, _LINK, st.booleans()), min_size=1, max_size=6))
def test_inline_id_check_equals_cleaning_first(raw):
    entries = list(enumerate(raw, 1))
    cleaned_notes: list[str] = []
    cleaned = [(n, _clean_ids(n, e, cleaned_notes)) for n, e in entries]
    results = []
    for given_entries, notes in ((entries, []), (cleaned, cleaned_notes)):
        info: dict = {}
        try:
            drafts = claude_code_drafts(given_entries, notes, info, "restart")
        except Exception as err:  # noqa: BLE001 (the same error both ways)
            results.append((type(err), str(err)))
            continue
        results.append(([(d.role, d.blocks, d.positions, d.msg_id, d.time) for d in drafts],
                        notes, info))
    assert results[0] == results[1]


@given(st.lists(st.fixed_dictionaries(
    {"type": st.sampled_from(["message", "user", "assistant", "meta", "progress"])},
    optional={"uuid": st.just("u")}), max_size=5))
def test_jsonl_format_equals_the_two_scans(raw):
    entries = list(enumerate(raw, 1))
    if any(e.get("type") == "message" and "uuid" not in e for _, e in entries):
        expected = "mini-agent-session"
    elif any(e.get("type") in ("user", "assistant") for _, e in entries):
        expected = "claude-code"
    else:
        expected = None
    assert _jsonl_format(entries) == expected


class _Block(dict):
    """A dict subclass block: ``content_blocks`` turns it into a plain dict."""


_CONTENT = st.one_of(
    st.none(), st.text(max_size=3), st.integers(),
    st.lists(st.one_of(_BLOCK, st.integers(), st.text(max_size=2), st.none(),
                       _BLOCK.map(_Block)), max_size=4))


@settings(max_examples=300, deadline=None)
@given(_CONTENT)
def test_owned_blocks_equal_content_blocks(content):
    mine, theirs = owned_blocks(content), content_blocks(content)
    assert mine == theirs
    assert [type(b) for b in mine] == [type(b) for b in theirs]
    if isinstance(content, list):
        assert mine is not content
        # a plain dict block is taken as it is, anything else is made as content_blocks makes it
        assert all((b is c) == (type(c) is dict) for b, c in zip(mine, content))


def _entry_with(kind, uuid, parent, mid, side, content):
    entry = _entry(kind, uuid, parent, mid, side)
    if "message" in entry:
        entry["message"]["content"] = content
    return entry


@settings(max_examples=300, deadline=None)
@given(st.lists(st.builds(_entry_with, st.sampled_from(["user", "assistant", "progress"]),
                          _LINK, _LINK, _LINK, st.booleans(), _CONTENT),
                min_size=1, max_size=6), st.sampled_from(["restart", "full"]))
def test_owned_drafts_equal_copied_drafts(raw, compaction):
    entries = list(enumerate(raw, 1))
    before = copy.deepcopy(entries)
    results = []
    for owned in (False, True):
        notes: list[str] = []
        info: dict = {}
        try:
            drafts = claude_code_drafts(entries, notes, info, compaction, owned=owned)
        except Exception as err:  # noqa: BLE001 (the same error both ways)
            results.append((type(err), str(err)))
            continue
        results.append(([(d.role, d.blocks, d.positions, d.usage, d.msg_id, d.time)
                         for d in drafts], notes, info))
    assert results[0] == results[1]
    assert entries == before  # neither form changes the entries


def _reference_seconds(value):
    """``seconds`` as it was: the ISO string read by a second function."""
    def iso(text):
        try:
            when = dt.datetime.fromisoformat(text)
        except ValueError:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.timezone.utc)
        return when.timestamp()
    if type(value) is str:
        return iso(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value) if abs(value) <= 2 ** 53 else None
    if not isinstance(value, str):
        return None
    return iso(value)


class _Text(str):
    """A str subclass: read as the string it holds."""


_TIMES = st.one_of(
    st.datetimes(timezones=st.one_of(st.none(), st.timezones())).map(dt.datetime.isoformat),
    st.datetimes().map(lambda d: d.isoformat(timespec="milliseconds") + "Z"),
    st.text(max_size=12), st.integers(), st.floats(), st.booleans(), st.none(),
    st.just("2026-01-12T10:00:00.123Z").map(_Text), st.just(10 ** 400), st.just([1]))


@settings(max_examples=500, deadline=None)
@given(_TIMES)
def test_seconds_equals_the_two_function_form(value):
    mine, theirs = seconds(value), _reference_seconds(value)
    assert mine == theirs or (mine != mine and theirs != theirs)
    assert seconds("1970-01-01T00:01:00.5Z") == 60.5
    assert seconds("1970-01-01T00:01:00") == 60.0


def _reference_message_times(drafts):
    """``message_times`` as it was: the known times gathered first, then one pass."""
    known = [t.time for t in drafts if t.time is not None]
    if not known:
        return None
    times, last = [], known[0]
    for draft in drafts:
        last = draft.time if draft.time is not None else last
        times.append(last)
    return times


@given(st.lists(st.one_of(st.none(), st.floats(-10, 10)), max_size=6))
def test_message_times_equals_the_reference(times):
    from mini_agent.core.transcripts.repair import message_times
    drafts = [MessageDraft("user", [], "line", [i], time=t) for i, t in enumerate(times)]
    assert message_times(drafts) == _reference_message_times(drafts)
    assert message_times([MessageDraft("user", [], "line", [1], time=2.0),
                          MessageDraft("user", [], "line", [2])]) == [2.0, 2.0]


def test_skipped_entries_counted_per_type():
    entries = list(enumerate([{"type": "progress"}, {"type": "system"}, {"type": "progress"},
                              {"type": "user", "uuid": "u1", "parentUuid": None,
                               "message": {"role": "user", "content": "hi"}}], 1))
    info: dict = {}
    claude_code_drafts(entries, [], info, "restart")
    assert info["skipped_entries"] == {"progress": 2, "system": 1}
    assert list(info["skipped_entries"]) == ["progress", "system"]
