"""Graded checks for exercise 09 (memory path validation); ``impl`` is the module.

Typical mistakes caught: a string-prefix check (``startswith("/memories")`` lets ``/memoriesX``
and ``/memories/../x`` through), decoding once (or a fixed number of times) instead of until
stable, not decoding at all, turning escapes that are not UTF-8 into U+FFFD, refusing every
``%`` (legal names refused), forgetting backslashes, NUL after decoding, invisible bidi and
zero-width characters (U+202E, U+200B; right-to-left letters are legal), look-alikes that NFKC
does not fold (U+2215), look-alikes that only NFKC folds (U+FF0F), lengths off by one, ``..``
resolved past the root, results with a trailing slash or ``.``/empty names left in.

Source: exercise 09 (``solutions/09_memory_paths.py``) and its seed, 004_b74ef821c58ee4ec.txt
(memory tool: normalise every path, refuse what leaves ``/memories``); Anthropic's memory tool
docs ("Security considerations: path traversal").
"""

from __future__ import annotations

from mini_agent.grading import check

ROOT = "/memories"


def outcome(impl, path, **kwargs):
    """Call ``validate_memory_path`` and say whether it accepted the path.

    Args:
        impl: the implementation under test.
        path: the path to validate.
        kwargs: passed on (``max_path_chars``).

    Returns:
        ``("ok", normalised path)`` or ``("refused", the ValueError's message)``; any other
        exception propagates.
    """
    try:
        return "ok", impl.validate_memory_path(path, **kwargs)
    except NotImplementedError:
        raise
    except ValueError as exc:
        return "refused", str(exc)


def must_refuse(impl, paths, **kwargs):
    """Assert that every path is refused with a ValueError.

    Args:
        impl: the implementation under test.
        paths: the hostile paths.
        kwargs: passed on (``max_path_chars``).

    Raises:
        AssertionError: a path was accepted (the message names it and the result).
    """
    for path in paths:
        kind, got = outcome(impl, path, **kwargs)
        assert kind == "refused", f"validate_memory_path({path!r}) should be refused, got {got!r}"


def must_accept(impl, cases, **kwargs):
    """Assert that every path is accepted and normalised as expected.

    Args:
        impl: the implementation under test.
        cases: ``(path, expected normalised path)`` pairs.
        kwargs: passed on (``max_path_chars``).

    Raises:
        AssertionError: a path was refused, or normalised otherwise.
    """
    for path, expected in cases:
        kind, got = outcome(impl, path, **kwargs)
        assert kind == "ok", f"validate_memory_path({path!r}) refused a valid path: {got}"
        assert got == expected, f"validate_memory_path({path!r}): expected {expected!r}, got {got!r}"


@check(points=2, hint="Decode again as long as the text still changes: one round turns %252e "
                      "into %2e, and only the next one into a dot.")
def check_decode_until_stable(impl):
    for text, expected in [("%252e%252e", ".."), ("%25252e", "."), ("a%20b", "a b"),
                           ("100%", "100%"), ("/memories/plain.md", "/memories/plain.md"),
                           ("%2fmemories", "/memories")]:
        got = impl.decode_until_stable(text)
        assert got == expected, f"decode_until_stable({text!r}): expected {expected!r}, got {got!r}"


@check(points=1, hint="Count the rounds: after max_rounds decodings that still change the "
                      "text, raise a ValueError; honour a max_rounds passed in.")
def check_decode_bounded(impl):
    nested = "%" + "25" * 9 + "2e"  # ten rounds to a dot
    try:
        got = impl.decode_until_stable(nested, max_rounds=8)
    except ValueError:
        pass
    else:
        raise AssertionError(f"decode_until_stable({nested!r}, max_rounds=8) should raise, "
                             f"got {got!r}")
    got = impl.decode_until_stable(nested, max_rounds=12)
    assert got == ".", f"decode_until_stable({nested!r}, max_rounds=12): expected '.', got {got!r}"
    got = impl.decode_until_stable("%25252e", max_rounds=3)  # three layers, three rounds
    assert got == ".", f"decode_until_stable('%25252e', max_rounds=3): expected '.', got {got!r}"
    try:
        got = impl.decode_until_stable("%25252e", max_rounds=2)
    except ValueError:
        return
    raise AssertionError(f"decode_until_stable('%25252e', max_rounds=2) should raise, got {got!r}")


@check(points=1, hint="Escapes that are not UTF-8 (%ff, a lone %c3) are a refusal, not a "
                      "U+FFFD: decode with unquote(text, errors='strict') and raise a "
                      "ValueError when it fails.")
def check_refuses_escapes_that_are_not_utf8(impl):
    for text in ("%ff", "/memories/%ff%fe.md", "/memories/a%c3.md", "/memories/%e2%80.md"):
        try:
            got = impl.decode_until_stable(text)
        except ValueError:
            continue
        raise AssertionError(f"decode_until_stable({text!r}) should raise, got {got!r}")
    must_refuse(impl, [ROOT + "/%ff.md", ROOT + "/a%c3.md", ROOT + "/%25ff.md"])


@check(points=2, hint="Two kinds of look-alike: characters NFKC turns into / \\ or . and "
                      "confusables NFKC leaves alone (see LOOKALIKES). The real / \\ . are not "
                      "look-alikes.")
def check_is_lookalike(impl):
    for char in "\u2215\u2044\u29f8\uff0f\u2024\u2025\uff0e\ufe52\uff3c":
        assert impl.is_lookalike(char) is True, f"is_lookalike(U+{ord(char):04X}) should be True"
    for char in "/\\.a-_日é%":
        assert impl.is_lookalike(char) is False, f"is_lookalike({char!r}) should be False"


@check(points=3, hint="Normalise: drop empty and '.' names, let '..' remove the name before "
                      "it, decode %-escapes, and return no trailing slash.")
def check_accepts_and_normalises(impl):
    must_accept(impl, [
        (ROOT, ROOT), (ROOT + "/", ROOT), (ROOT + "/notes.md", ROOT + "/notes.md"),
        (ROOT + "//a///b.md", ROOT + "/a/b.md"), (ROOT + "/a/./x/../b.md", ROOT + "/a/b.md"),
        (ROOT + "/a%20b.md", ROOT + "/a b.md"), (ROOT + "/100%.md", ROOT + "/100%.md"),
        (ROOT + "/メモ/決定事項.md", ROOT + "/メモ/決定事項.md"),
        (ROOT + "/..notes.md", ROOT + "/..notes.md"), (ROOT + "/a/..", ROOT)])


@check(points=2, hint="A '..' may only remove a name you already have; one that would climb "
                      "above /memories is a refusal, and so is any path not under /memories/.")
def check_refuses_leaving_the_root(impl):
    must_refuse(impl, [ROOT + "/../secret.txt", ROOT + "/a/../../secret.txt", "/etc/passwd",
                       "/", "", "memories/a.md", "../memories/a.md", ROOT + "/./../x",
                       ROOT + "/../memories/a.md"])


@check(points=2, hint="A string prefix is not a directory prefix: /memoriesX starts with "
                      "/memories. Compare with '/memories' + '/' (or the root exactly).")
def check_refuses_the_prefix_trick(impl):
    must_refuse(impl, [ROOT + "X/notes.md", ROOT + "_backup/a.md", ROOT + "../secret.txt",
                       ROOT + "X"])


@check(points=2, hint="Judge the decoded path, not the text as sent: %2e%2e is '..' and %2f "
                      "is '/'.")
def check_refuses_encoded_traversal(impl):
    must_refuse(impl, [ROOT + "/%2e%2e/x", ROOT + "%2f..%2fx", ROOT + "/..%2fx",
                       ROOT + "/%2E%2E/%2E%2E/etc/passwd", "%2fmemories%2f..%2fx"])


@check(points=2, hint="Encoded twice or three times is still traversal: decode until the text "
                      "stops changing before you judge it.")
def check_decodes_until_stable(impl):
    must_refuse(impl, [ROOT + "/%252e%252e/x", ROOT + "/..%252fx", ROOT + "/%25252e%25252e/x",
                       ROOT + "%252f..%252fx"])
    must_accept(impl, [(ROOT + "/a/%252e%252e/b.md", ROOT + "/b.md"),
                       (ROOT + "/%2561.md", ROOT + "/a.md")])


@check(points=1, hint="A backslash is a separator on Windows and an escape elsewhere: refuse "
                      "it, as sent and after decoding.")
def check_refuses_backslashes(impl):
    must_refuse(impl, [ROOT + "\\..\\x", ROOT + "/a\\b.md", ROOT + "/%5c..%5cx",
                       ROOT + "/%255c..%255cx"])


@check(points=1, hint="NUL and other control characters can hide as %00 (or %2500): check "
                      "the decoded path too.")
def check_refuses_nul_and_control_characters(impl):
    must_refuse(impl, [ROOT + "/a\x00.md", ROOT + "/a%00.md", ROOT + "/a%2500.md",
                       ROOT + "/a\nb.md", ROOT + "/a%0d.md"])


INVISIBLE = ("\u202e", "\u202a", "\u202b", "\u202c", "\u202d", "\u2066", "\u2067", "\u2068",
             "\u2069", "\u200e", "\u200f", "\u061c", "\u200b", "\u200c", "\u200d", "\u2060",
             "\ufeff")
"""Invisible formatting characters a path must not hold (the exercise's INVISIBLES; all of
Unicode category "Cf"): a solution that refuses the category or lists them both passes."""


@check(points=1, hint="Invisible characters hide what a path says: U+202E RIGHT-TO-LEFT "
                      "OVERRIDE makes notes\\u202etxt.md display as notesdm.txt, and a "
                      "zero-width space makes two names that look alike. Refuse Unicode "
                      "category \"Cf\" (see INVISIBLES), as sent and after decoding; "
                      "right-to-left letters (Arabic, Hebrew) are names like any other.")
def check_refuses_invisible_characters(impl):
    must_refuse(impl, [f"{ROOT}/notes{char}txt.md" for char in INVISIBLE])
    must_refuse(impl, [ROOT + "/notes%E2%80%AEtxt.md", ROOT + "/a%E2%80%8Bb.md",
                       ROOT + "/%EF%BB%BFnotes.md", ROOT + "/notes%25E2%2580%25AEtxt.md",
                       ROOT + "/a/\u2066b\u2069/c.md"])
    must_accept(impl, [(ROOT + "/ملاحظات.md", ROOT + "/ملاحظات.md"),
                       (ROOT + "/הערות/a.md", ROOT + "/הערות/a.md")])


@check(points=2, hint="Some characters only look like / or .: check every character of the "
                      "path (as sent and decoded) with is_lookalike.")
def check_refuses_lookalikes(impl):
    must_refuse(impl, [ROOT + "\u2215..\u2215x", ROOT + "\uff0f..\uff0fx",
                       ROOT + "/\u2024\u2024/x", ROOT + "/\uff0e\uff0e/x", ROOT + "/\u2025/x",
                       ROOT + "%EF%BC%8F..%EF%BC%8Fx", ROOT + "/..%E2%88%95x"])


@check(points=1, hint="Count characters as sent, limit included; names are limited in UTF-8 "
                      "bytes, not characters; honour max_path_chars.")
def check_length_limits(impl):
    at_limit = ROOT + "/" + "a" * (255 - len(ROOT) - 1)
    must_accept(impl, [(at_limit, at_limit)])
    must_refuse(impl, [at_limit + "b", ROOT + "/" + "%41" * 100])
    must_accept(impl, [(ROOT + "/abc", ROOT + "/abc")], max_path_chars=13)
    must_refuse(impl, [ROOT + "/abcd"], max_path_chars=13)
    must_refuse(impl, [ROOT + "/" + "é" * 128], max_path_chars=1000)  # 256 bytes
    name = "é" * 127 + "a"  # 255 bytes
    must_accept(impl, [(ROOT + "/" + name, ROOT + "/" + name)], max_path_chars=1000)


@check(points=1, hint="A path that is not a str is a refusal (a ValueError), not a crash.")
def check_refuses_non_strings(impl):
    for value in (b"/memories/a.md", None, ["/memories"]):
        kind, got = outcome(impl, value)
        assert kind == "refused", f"validate_memory_path({value!r}) should be refused, got {got!r}"
