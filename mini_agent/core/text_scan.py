"""Cheaper equivalents of two regex scans the offline summaries and the relevance rule run.

What this module does: :func:`findall_in_words` returns ``pattern.findall(text)`` while running
the pattern only on the whitespace-separated words that can hold a match, and
:func:`names_a_word` answers ``bool(pattern.search(text))`` for a case-insensitive list of
words without the regex when the text is ASCII. Both give exactly the plain call's answer;
``tests/test_text_scan.py`` compares them with it on generated text (Japanese included).
What it does not do: choose the patterns (``core/structured_summary.py``,
``core/prompt_summary.py`` and ``core/relevance.py`` own theirs). Pure; no state.

Why: a regex such as the path pattern tries every position of every word and backtracks over
it, ~200 ns a character in CPython's ``re``; most words of a tool result ("def", "return",
"x") cannot match at all. ``str.split`` and ``in`` run at C speed.

Source: the identifier and error patterns of seed 004's summary sections and seed 003's
relevance rule (see the modules that own them).
"""

from __future__ import annotations

import re


def findall_in_words(pattern: re.Pattern[str], text: str, needles: tuple[str, ...],
                     words: list[str] | None = None) -> list[str]:
    """Return ``pattern.findall(text)``, searching only the words that contain a needle.

    Equal to the plain call when the pattern has no groups, no match of it holds whitespace,
    every match (with what its lookahead needs) holds one of ``needles``, and its lookarounds
    and ``\\b`` treat a whitespace character as they treat the string's edge (whitespace is
    never ``\\w`` nor a character a lookaround asks for). Then every match lies inside one
    word of ``text.split()``, a word's matches are the same searched alone (its neighbours are
    whitespace or the edge), and a word without a needle has none; the matches come back in
    text order, duplicates kept. The words kept are searched as one string joined by spaces.

    Args:
        pattern: the compiled pattern (a ``str`` pattern without groups).
        text: the text to search; "" gives [].
        needles: one to three substrings of which every match's word holds at least one
            (e.g. "/" and ".").
        words: ``text.split()`` when the caller has it already (None: split here).

    Returns:
        The matched strings in the order ``pattern.findall(text)`` gives them.

    Raises:
        ValueError: ``needles`` is empty or has more than three.
    """
    if not 1 <= len(needles) <= 3:
        raise ValueError(f"findall_in_words takes 1 to 3 needles, got {len(needles)}")
    # ``any(n in word for n in needles)`` spelt out: a generator per word would cost more
    # than the regex it saves; a short tuple is padded by repeating its first needle
    a, b, c = (*needles, needles[0], needles[0])[:3]
    if not (a in text or b in text or c in text):  # no needle at all: no word to search
        return []
    kept = [word for word in (text.split() if words is None else words)
            if a in word or b in word or c in word]
    # the kept words joined by spaces: one regex call instead of one per word, the same
    # matches (a space is whitespace, which no match holds and which acts as an edge)
    return pattern.findall(" ".join(kept)) if kept else []


FOLDS_TO_ASCII = "\u0130\u0131\u017f\u212a"
"""The non-ASCII characters that ``re.I`` matches with an ASCII letter or whose ``lower()``
holds one: İ, dotless ı, long ſ and the Kelvin sign (``tests/test_text_scan.py`` checks every
code point)."""


def names_a_word(text: str, words: tuple[str, ...], pattern: re.Pattern[str]) -> bool:
    """Return ``bool(pattern.search(text))`` for a case-insensitive alternation of words.

    ``pattern`` must be ``re.compile("(w1|w2|...)", re.I)`` over exactly ``words``, each
    lowercase ASCII or made of characters without case (Japanese). Unless ``text`` holds one
    of :data:`FOLDS_TO_ASCII`, a match can only be made of ASCII letters and spaces or of
    caseless characters, for which ``re.I`` is plain lowercasing, and ``lower()`` turns no
    other character into ASCII: the answer is whether ``text.lower()`` contains a word.
    A text holding one of them is searched with ``pattern`` (its Unicode case folding, e.g.
    the Kelvin sign matching "k", stays the regex's).

    Args:
        text: the text to test.
        words: the pattern's alternatives, lowercase.
        pattern: the compiled case-insensitive pattern they come from.

    Returns:
        True when ``pattern`` finds a match in ``text``.
    """
    if text.isascii() or not any(c in text for c in FOLDS_TO_ASCII):
        low = text.lower()
        return any(w in low for w in words)
    return pattern.search(text) is not None
