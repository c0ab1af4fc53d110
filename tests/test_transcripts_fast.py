"""The loader's fast text test against the expression it replaces.

``clean_blocks`` (``core/transcripts/repair.py``) and ``validate_messages`` keep a usual text
(a non-empty ``str`` with a non-whitespace character) after ``isinstance``, truth and
``str.isspace`` tests, and judge anything else by the old expression,
``not str(text or "").strip()``. The two must agree on every value.
"""

from __future__ import annotations

import sys

from mini_agent.core.transcripts.drafts import MessageDraft
from mini_agent.core.transcripts.repair import clean_blocks

ODD_TEXTS = ["", " ", "\n", "\t \r\n", "\u3000", "\u00a0", "\u200b", "\x1c", "\x85", "a",
             " a ", "\u3000x", None, 0, 5, 0.0, [], ["x"], {}, {"a": 1}, False, True]


def old_rule_drops(text) -> bool:
    """The expression ``clean_blocks`` used for every text block before its fast test."""
    return not str(text or "").strip()


def test_isspace_and_strip_agree_on_every_code_point():
    # the fast test reads "has a non-whitespace character" as ``not text.isspace()``:
    # true exactly when ``strip()`` leaves something, for every character there is
    for code in range(sys.maxunicode + 1):
        c = chr(code)
        assert c.isspace() == (c.strip() == ""), hex(code)


def test_clean_blocks_drops_exactly_the_texts_the_old_expression_dropped():
    for text in ODD_TEXTS + [c * 3 for c in (" ", "\u3000", "\x1f")]:
        drafts = [MessageDraft("user", [{"type": "text", "text": text}], "line", [1])]
        repairs: list[str] = []
        clean_blocks(drafts, repairs)
        assert (drafts[0].blocks == []) == old_rule_drops(text), repr(text)
        assert bool(repairs) == old_rule_drops(text)
    missing = [MessageDraft("user", [{"type": "text"}], "line", [1])]
    clean_blocks(missing, [])
    assert missing[0].blocks == []  # no text key: str("") is empty, dropped as before
