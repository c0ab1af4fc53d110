"""The word-by-word scans of core/text_scan.py give exactly the plain regex calls' answers."""

from __future__ import annotations

import re

from hypothesis import given, settings, strategies as st

from mini_agent.core import prompt_summary as ps
from mini_agent.core import structured_summary as ss
from mini_agent.core.relevance import _IDENT_RE, identifiers
from mini_agent.core.text_scan import FOLDS_TO_ASCII, findall_in_words, names_a_word

# pieces that make paths, file names, calls and error words, glued by every kind of
# whitespace str.split knows (ideographic space, \x1c, \x85, \u2028 ...), Japanese text and
# the characters Unicode case folding treats specially (Kelvin sign, long s, dotless i)
PIECES = ["src/", "a.py", "b.md", "x.toml", "/", ".", "-", "_", "f", "parse", "()", "(", ")",
          "Foo.bar", "tests/test_a.py", "v1.2", "error", "ERROR", "Failed", "not found",
          "Not  found", "TRACEBACK", "exception", "エラー", "失敗", "パス/ファイル.py", "関数()",
          "\u212a", "\u017f", "\u0131", "\u0130", "é", " ", "  ", "\n", "\r\n", "\t", "\x0b",
          "\x0c", "\x1c", "\x1f", "\x85", "\u2028", "\u3000", "\xa0", ":", ",", "'", '"']
TEXT = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
ANY_TEXT = st.one_of(TEXT, st.text(max_size=60))


@settings(max_examples=400, deadline=None)
@given(ANY_TEXT)
def test_words_scan_equals_findall_of_each_pattern(text):
    assert findall_in_words(ss._PATH_RE, text, (".",)) == ss._PATH_RE.findall(text)
    assert findall_in_words(ss._SYMBOL_RE, text, ("()",)) == ss._SYMBOL_RE.findall(text)
    assert findall_in_words(_IDENT_RE, text, ("/", ".", "(")) == _IDENT_RE.findall(text)
    assert ss._paths_and_symbols(text) == ss._PATH_RE.findall(text) + ss._SYMBOL_RE.findall(text)
    assert identifiers(text) == set(_IDENT_RE.findall(text))


@settings(max_examples=400, deadline=None)
@given(ANY_TEXT)
def test_error_words_equal_the_case_insensitive_search(text):
    for pattern in (ss._ERROR_RE, ps._ERROR_RE):
        words = ss._ERROR_WORDS if pattern is ss._ERROR_RE else ps._ERROR_WORDS
        assert names_a_word(text, words, pattern) == bool(pattern.search(text))


def test_known_cases():
    # a path glued to Japanese text by an ideographic space is still found, the word alone
    text = "見て\u3000src/app.py\u3000と parse(x) と run()"
    assert ss._paths_and_symbols(text) == ["src/app.py", "run()"]
    assert identifiers(text) == {"src/app.py", "parse", "run"}
    assert identifiers("関数パス/ファイル.py を読む") == {"関数パス/ファイル.py"}
    # non-ASCII text goes to the regex: the Kelvin sign folds to "k" there
    assert names_a_word("TRACEBAC\u212a", ss._ERROR_WORDS, ss._ERROR_RE)
    assert names_a_word("処理が失敗しました", ps._ERROR_WORDS, ps._ERROR_RE)
    assert not names_a_word("処理が失敗しました", ss._ERROR_WORDS, ss._ERROR_RE)
    assert names_a_word("Build FAILED", ss._ERROR_WORDS, ss._ERROR_RE)
    assert not names_a_word("all passed", ss._ERROR_WORDS, ss._ERROR_RE)
    assert findall_in_words(re.compile(r"\w+\.py"), "", (".",)) == []


def test_only_the_listed_characters_fold_to_ascii():
    letter = re.compile("[a-z]", re.I)
    found = [c for c in map(chr, range(128, 0x110000)) if not 0xD800 <= ord(c) <= 0xDFFF
             and (letter.fullmatch(c) or any(ord(x) < 128 for x in c.lower()))]
    assert "".join(found) == FOLDS_TO_ASCII


def test_needles_are_one_to_three():
    import pytest
    with pytest.raises(ValueError):
        findall_in_words(ss._PATH_RE, "a.py", ())
    with pytest.raises(ValueError):
        findall_in_words(ss._PATH_RE, "a.py", ("a", "b", "c", "d"))
    assert findall_in_words(ss._PATH_RE, "see a.py and b/c.md", (".", ".")) == ["a.py", "b/c.md"]
