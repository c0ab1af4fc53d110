"""Tests for the retention lab: the kit conversations, the prompt-following offline summariser
and the before/after table (the revised prompt keeps at least 9 of 10 facts in both)."""

from __future__ import annotations

import copy

import pytest

from mini_agent.core.compaction import SUMMARY_PROMPT
from mini_agent.core.retention import retained_facts
from mini_agent.core.messages import validate_messages
from mini_agent.core.prompt_summary import (REVISED_SUMMARY_PROMPT, SHORT_SUMMARY_PROMPT,
                                            format_lab_table, lab_rows, prompt_sections,
                                            prompt_summary)
from mini_agent.core.sample_conversations import (LABEL_EN, LABEL_JA, english_conversation,
                                                  japanese_conversation)


@pytest.mark.parametrize("build,label", [(english_conversation, LABEL_EN),
                                         (japanese_conversation, LABEL_JA)])
def test_conversations_are_long_labelled_valid_and_prove_their_facts(build, label):
    messages, facts = build()
    validate_messages(messages)
    assert sum(1 for m in messages if m["role"] == "assistant") >= 30
    assert label in messages[0]["content"]
    assert len(facts) == 10 and len({f.text for f in facts}) == 10
    assert {f.kind for f in facts} == {"decision", "open_problem", "identifier", "number"}
    assert all(retained_facts(messages, facts))  # each fact is stated verbatim somewhere
    assert all(f.proof for f in facts)
    assert max(f.message for f in facts) < len(messages) - 20  # stated well before the end


def test_prompt_sections_and_unknown_headings():
    assert [h for h, _ in prompt_sections(REVISED_SUMMARY_PROMPT)] == [
        "Task", "User instructions", "Decisions", "Current state", "Identifiers",
        "Numbers and ids", "Open problems", "Next steps"]
    messages, _ = english_conversation()
    before = copy.deepcopy(messages)
    text = prompt_summary(messages, "## Task\nx\n## Weather\nthe forecast")
    assert messages == before
    assert text.startswith("## Task\n" + LABEL_EN)
    assert text.endswith("## Weather\n(not extracted offline)")
    with pytest.raises(ValueError, match="no '## Section'"):
        prompt_summary(messages, "no sections here")
    with pytest.raises(ValueError):
        prompt_summary([], SUMMARY_PROMPT)


def test_revising_the_prompt_changes_what_is_kept():
    messages, facts = english_conversation()
    original = prompt_summary(messages, SUMMARY_PROMPT)
    revised = prompt_summary(messages, REVISED_SUMMARY_PROMPT)
    assert "FIN-2041" not in original and "FIN-2041" in revised  # user instruction section
    assert "KeyError: 'currency' in row 1187" in revised  # every error line, not the newest 6


def test_lab_table_before_and_after():
    rows = lab_rows()
    kept = {(r["summary"], r["conversation"]): r["kept"] for r in rows}
    assert kept[("kit summary (structured_summary)", "en")] == 5
    assert kept[("kit summary (structured_summary)", "ja")] == 5
    for lang in ("en", "ja"):
        assert kept[("revised prompt", lang)] >= 9 and kept[("revised, shorter", lang)] >= 9
    chars = {(r["summary"], r["conversation"]): r["summary_chars"] for r in rows}
    assert chars[("revised, shorter", "en")] < chars[("revised prompt", "en")]
    table = format_lab_table(rows)
    assert table.splitlines()[0].split()[:3] == ["summary", "en", "kept"]
    assert "10/10" in table.splitlines()[4]
    assert SHORT_SUMMARY_PROMPT.count("## ") == 6
