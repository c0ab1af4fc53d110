"""Memory path validation (core) and redaction of secrets."""

import pytest
from hypothesis import given, strategies as st

from mini_agent.core.hostile_paths import HOSTILE_PATHS, SYMLINK_NAMES
from mini_agent.core.memory_paths import (INVISIBLES, MAX_PATH_CHARS, MemoryPathError,
                                          decode_until_stable, is_lookalike,
                                          validate_memory_path)
from mini_agent.core.secrets import redact_secrets


@pytest.mark.parametrize("path, expected", [
    ("/memories", "/memories"),
    ("/memories/", "/memories"),
    ("/memories/notes.md", "/memories/notes.md"),
    ("/memories//a///b.md", "/memories/a/b.md"),
    ("/memories/a/./x/../b.md", "/memories/a/b.md"),
    ("/memories/a%20b.md", "/memories/a b.md"),
    ("/memories/100%.md", "/memories/100%.md"),
    ("/memories/%2561.md", "/memories/a.md"),
    ("/memories/メモ/決定事項.md", "/memories/メモ/決定事項.md"),
    ("/memories/..notes.md", "/memories/..notes.md"),
])
def test_accepts_and_normalises(path, expected):
    assert validate_memory_path(path) == expected


def test_corpus_is_large_and_every_textual_path_is_refused():
    assert len(HOSTILE_PATHS) >= 40
    for label, path in HOSTILE_PATHS:
        if any(name in path for name in SYMLINK_NAMES):
            continue  # hostile only on disk (tests/test_memory.py)
        with pytest.raises(MemoryPathError, match="Use a path under /memories/"):
            validate_memory_path(path)


def test_refusal_messages_name_the_reason():
    cases = {"/memories/../x": "climbs above", "/memoriesX/a": "not /memories or under",
             "/memories/a\\b": "backslash", "/memories/a\x00": r"U\+0000",
             "/memories/\u2215x": "DIVISION SLASH", "/memories/%ff": "not UTF-8",
             "/memories/" + "a" * 300: "characters long"}
    for path, reason in cases.items():
        with pytest.raises(MemoryPathError, match=reason):
            validate_memory_path(path)


@pytest.mark.parametrize("path", [
    "/memories/notes\u202etxt.md",  # displays as notesdm.txt
    "/memories/notes%E2%80%AEtxt.md", "/memories/notes%25E2%2580%25AEtxt.md",
    "/memories/no\u200btes.md", "/memories/\ufeffnotes.md", "/memories/a\u2066b\u2069.md",
    "/memories/a\u00adb.md",  # soft hyphen, also "Cf"
    "/memories/a\U000e0041b.md",  # a tag character: invisible text
])
def test_invisible_formatting_characters_are_refused_by_name(path):
    with pytest.raises(MemoryPathError, match=r"U\+[0-9A-F]{4,5} \([A-Z -]+\), an invisible"):
        validate_memory_path(path)


def test_every_listed_invisible_is_refused_and_right_to_left_names_are_not():
    assert len(INVISIBLES) == 17
    for char in INVISIBLES:
        with pytest.raises(MemoryPathError, match="invisible formatting character"):
            validate_memory_path(f"/memories/a{char}b.md")
    for name in ("ملاحظات.md", "הערות.md", "cafe\u0301.md", "メモ.md"):
        assert validate_memory_path("/memories/" + name) == "/memories/" + name


@pytest.mark.parametrize("mutant, check", [
    ("mutant_18_invisibles_accepted", "check_refuses_invisible_characters"),
    ("mutant_21_invalid_utf8_replaced", "check_refuses_escapes_that_are_not_utf8")])
def test_a_solution_missing_one_refusal_loses_that_check_only(mutant, check):
    from pathlib import Path

    from mini_agent.grading import checks_module, load_module, run_checks
    mutants = Path(__file__).resolve().parent / "mutants" / "09"
    card = run_checks("09", checks_module("09"), load_module(mutants / f"{mutant}.py"))
    assert [c.name for c in card.checks if not c.passed] == [check]
    assert card.score == card.total - 1


def test_decoding_is_repeated_until_stable_and_bounded():
    assert decode_until_stable("%25252e") == "."
    with pytest.raises(MemoryPathError, match="decoding rounds"):
        decode_until_stable("%" + "25" * 9 + "2e", max_rounds=8)
    with pytest.raises(MemoryPathError):
        validate_memory_path("/memories/%" + "25" * 9 + "2e/x")


def test_max_path_chars_parameter_is_honoured():
    assert validate_memory_path("/memories/abc", max_path_chars=13) == "/memories/abc"
    with pytest.raises(MemoryPathError):
        validate_memory_path("/memories/abcd", max_path_chars=13)
    with pytest.raises(MemoryPathError):
        validate_memory_path(b"/memories/a")  # type: ignore[arg-type]
    assert MAX_PATH_CHARS == 255


def test_lookalikes():
    for char in "\u2215\u2044\u29f8\uff0f\u2024\u2025\uff0e\ufe52\uff3c":
        assert is_lookalike(char), hex(ord(char))
    for char in "/.\\aé日":
        assert not is_lookalike(char)


@given(st.lists(st.sampled_from(["a", "b", ".", "..", "", "x.md"]), max_size=8))
def test_result_never_leaves_the_root(names):
    path = "/memories/" + "/".join(names)
    try:
        out = validate_memory_path(path)
    except MemoryPathError:
        return
    assert out == "/memories" or out.startswith("/memories/")
    assert ".." not in out.split("/") and "" not in out.split("/")[1:]
    assert validate_memory_path(out) == out  # idempotent


def test_redact_secrets_each_kind():
    key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----"
    text = (f"api sk-ant-api03-{'x' * 24}\nAuthorization: Bearer abcdefghijklmnopqrstuv\n"
            f"{key}\nAKIAABCDEFGHIJKLMNOP\naws_secret_access_key = {'A1b2' * 10}\nok")
    out, found = redact_secrets(text)
    assert found == {"anthropic_api_key": 1, "bearer_token": 1, "private_key": 1,
                     "aws_access_key_id": 1, "aws_secret_access_key": 1}
    for secret in ("x" * 24, "abcdefghijklmnopqrstuv", "MIIEow", "AKIAABCDEFGHIJKLMNOP",
                   "A1b2" * 10):
        assert secret not in out
    assert out.endswith("\nok") and "Authorization: Bearer [REDACTED]" in out
    assert redact_secrets("nothing secret here") == ("nothing secret here", {})
