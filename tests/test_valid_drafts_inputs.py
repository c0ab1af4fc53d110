"""``blocks_valid``'s flat-input test against ``cache_markers``.

``blocks_valid`` (``core/transcripts/valid_drafts.py``) does not walk a usual ``tool_use``
input (a dict of strings without a ``cache_control`` key) for ``cache_control`` markers:
``cache_markers`` would find none in it. For any input, the block must be accepted exactly
when ``cache_markers`` finds no marker in it.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mini_agent.core.transcripts.drafts import MessageDraft
from mini_agent.core.transcripts.valid_drafts import blocks_valid
from mini_agent.core.wire_rules import cache_markers

KEYS = st.sampled_from(["command", "path", "pattern", "cache_control", "type", "a"])
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
              st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(KEYS, inner, max_size=3)),
    max_leaves=12)
INPUTS = st.one_of(st.dictionaries(KEYS, st.text(max_size=5), max_size=4),
                   st.dictionaries(KEYS, JSON, max_size=4))


def _accepted(tool_input: dict) -> bool:
    block = {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": tool_input}
    return blocks_valid([MessageDraft("assistant", [block], "line", [1])])


@settings(max_examples=500, deadline=None)
@given(tool_input=INPUTS)
def test_tool_use_accepted_exactly_when_no_marker(tool_input):
    assert _accepted(tool_input) == (not cache_markers(tool_input))


def test_markers_anywhere_in_an_input_are_found():
    assert _accepted({"command": "ls", "path": "a"})
    assert _accepted({})
    assert _accepted({"cache_control": None})
    assert not _accepted({"cache_control": {"type": "ephemeral"}})
    assert not _accepted({"edits": [{"text": "x", "cache_control": {"type": "ephemeral"}}]})
    assert not _accepted({"cache_control": "5m"})
