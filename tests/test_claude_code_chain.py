"""The Claude Code reader's check for one unbroken chain against the full walk.

``claude_code_drafts`` (``core/transcripts/claude_code.py``) asks ``linear_chain``
(``core/transcripts/linear_chain.py``) first: for the usual file (message entries only, each one's parent the entry before it) it answers the
walk's ``(candidates, chain)`` without reading each entry in a Python loop; for anything else
it says None and ``_follow_chain`` walks as before. Whatever the entries, the drafts, repairs
and info must equal those of the walk alone. Likewise ``join_split_responses`` copies the
list when no two drafts share a ``msg_id``, and must equal the fold, ``_join_split_slowly``.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_agent.core.transcripts import claude_code
from mini_agent.core.transcripts.claude_code import (_follow_chain, _join_split_slowly,
                                                     claude_code_drafts, join_split_responses)
from mini_agent.core.transcripts.linear_chain import linear_chain
from mini_agent.core.transcripts.drafts import TranscriptError

# one change to an entry of an otherwise unbroken chain (None: left as it is)
CHANGES = [None, ("type", "system"), ("type", "progress"), ("type", ["user"]),
           ("isSidechain", True), ("isSidechain", 1), ("uuid", 7), ("uuid", "dup"),
           ("parentUuid", "elsewhere"), ("parentUuid", None), ("parentUuid", 3),
           ("logicalParentUuid", None), ("logicalParentUuid", "u0000"), ("message", "text"),
           ("message.id", 5), ("message.id", None), ("message.model", "<synthetic>"),
           ("drop", "isSidechain"), ("drop", "parentUuid"), ("drop", "message"),
           ("drop", "uuid"), ("subtype", "compact_boundary")]


def _entry(k: int, assistant: bool, msg_id: str) -> dict:
    message = ({"role": "assistant", "id": msg_id, "model": "claude-x",
                "content": [{"type": "text", "text": f"step {k}"},
                            {"type": "tool_use", "id": f"toolu_{k}", "name": "grep",
                             "input": {"pattern": "x"}}],
                "usage": {"input_tokens": k, "output_tokens": 1}}
               if assistant else
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{k - 1}",
                                             "content": "ok"}] if k else "task"})
    return {"type": "assistant" if assistant else "user", "uuid": f"u{k:04d}",
            "parentUuid": f"u{k - 1:04d}" if k else None, "isSidechain": False,
            "timestamp": f"2026-01-02T17:{k % 60:02d}:00.000Z", "message": message}


@st.composite
def entry_lists(draw):
    """An unbroken chain of user and assistant entries, with a few changes drawn."""
    size = draw(st.integers(0, 12))
    entries = []
    for k in range(size):
        assistant = k % 2 == 1 if draw(st.booleans()) else draw(st.booleans())
        entries.append((k + 1, _entry(k, assistant, f"msg_{draw(st.integers(0, k))}")))
    for _ in range(draw(st.integers(0, 3))):
        if not entries:
            break
        change = draw(st.sampled_from(CHANGES))
        if change is None:
            continue
        e = entries[draw(st.integers(0, len(entries) - 1))][1]
        key, value = change
        if key == "drop":
            e.pop(value, None)
        elif key.startswith("message."):
            if isinstance(e.get("message"), dict):
                e["message"][key.split(".")[1]] = value
        elif key == "uuid" and value == "dup":
            e["uuid"] = entries[0][1].get("uuid")
        else:
            e[key] = value
    return entries


def _load(entries, compaction, monkeypatch, fast: bool):
    with monkeypatch.context() as patch:
        if not fast:
            patch.setattr(claude_code, "linear_chain", lambda entries: None)
        repairs: list[str] = []
        info: dict = {}
        try:
            drafts = claude_code_drafts(copy.deepcopy(entries), repairs, info, compaction)
        except (TranscriptError, TypeError, AttributeError, KeyError) as err:
            # the loader reports the last three as a malformed transcript
            return ("error", type(err), str(err), repairs, list(info.items()))
        return drafts, repairs, list(info.items())


@settings(max_examples=400, deadline=None)
@given(entries=entry_lists(), compaction=st.sampled_from(["restart", "full"]))
def test_drafts_equal_the_full_walk(entries, compaction):
    monkeypatch = pytest.MonkeyPatch()
    assert _load(entries, compaction, monkeypatch, True) == _load(entries, compaction,
                                                                  monkeypatch, False)


@settings(max_examples=200, deadline=None)
@given(entries=entry_lists())
def test_linear_chain_answers_the_walk_when_it_answers(entries):
    linear = linear_chain(entries)
    if linear is None:
        return
    candidates, chain = linear
    walked = _follow_chain(entries, [], {}, "restart")
    assert list(candidates) == walked[0]
    assert chain == walked[1]


def test_the_usual_file_takes_the_linear_answer():
    entries = [(k + 1, _entry(k, k % 2 == 1, f"msg_{k}")) for k in range(6)]
    linear = linear_chain(entries)
    assert linear is not None
    candidates, chain = linear
    assert [c[0] for c in candidates] == [1, 2, 3, 4, 5, 6]
    assert [c[4] for c in candidates] == [False, True] * 3
    assert chain == {f"u{k:04d}" for k in range(6)}
    # one broken link, a sidechain or a stray key each send the file to the walk
    for key, value in (("parentUuid", "u0000"), ("isSidechain", True),
                       ("logicalParentUuid", None), ("type", "system")):
        changed = copy.deepcopy(entries)
        changed[3][1][key] = value
        assert linear_chain(changed) is None, key
    assert linear_chain([]) is None


def _drafts_of(entries):
    try:
        return claude_code_drafts(copy.deepcopy(entries), [], {}, "restart")
    except (TranscriptError, TypeError, AttributeError, KeyError):
        return []


@settings(max_examples=300, deadline=None)
@given(entries=entry_lists(), split=st.lists(st.integers(0, 11), max_size=4))
def test_join_equals_the_fold(entries, split):
    # split responses: some assistant entries share the msg_id of an earlier one
    drafts = _drafts_of(entries)
    assistants = [d for d in drafts if d.role == "assistant"]
    for k in split:
        if len(assistants) > 1:
            assistants[k % len(assistants)].msg_id = assistants[(k + 1) % len(assistants)].msg_id
    copies = [d.copied() for d in drafts]
    joined = join_split_responses(drafts)
    assert joined == _join_split_slowly(copies)


def test_join_folds_a_split_response_and_copies_an_unsplit_list():
    entries = [(k + 1, _entry(k, k % 2 == 1, f"msg_{k}")) for k in range(6)]
    drafts = _drafts_of(entries)
    joined = join_split_responses(drafts)
    assert joined == drafts and joined is not drafts
    drafts[3].msg_id = drafts[1].msg_id  # lines 2 and 4: one response, a result between
    joined = join_split_responses(drafts)
    assert [d.positions for d in joined] == [[1], [2, 4], [3], [5], [6]]
