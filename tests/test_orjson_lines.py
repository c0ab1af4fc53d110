"""The JSONL reader with orjson against the reader without it (``core/transcripts/orjson_lines.py``).

``parse_jsonl`` takes a line from ``orjson`` only where it is what ``json.loads`` reads. Every
test here reads the same text twice, with orjson (when a usable one is installed) and with
the plain reader alone, and asks for the same entries and the same repairs. Values are
compared through ``repr``, which tells ``1`` from ``1.0`` and ``True``, ``-0.0`` from ``0.0``
and one key order from another (``==`` tells none of these apart).
"""

from __future__ import annotations

import json
import sys
import types

import pytest
from hypothesis import given, settings, strategies as st

from mini_agent.core.transcripts import claude_code, orjson_lines
from mini_agent.core.transcripts.claude_code import parse_jsonl
from mini_agent.core.transcripts.orjson_lines import value_levels

needs_orjson = pytest.mark.skipif(orjson_lines.LOADS is None,
                                  reason="no orjson 3.9.15 or later installed")


def both_ways(text: str, monkeypatch) -> tuple[str, str]:
    """``repr`` of ``(entries, repairs)`` read with orjson, then with the plain reader."""
    fast_repairs: list[str] = []
    fast = parse_jsonl(text, fast_repairs)
    with monkeypatch.context() as patch:
        patch.setattr(claude_code, "LOADS", None)
        plain_repairs: list[str] = []
        plain = parse_jsonl(text, plain_repairs)
    return repr((fast, fast_repairs)), repr((plain, plain_repairs))


def assert_same(text: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        fast, plain = both_ways(text, patch)
    assert fast == plain, text[:200]


LINES = [
    # what orjson refuses and json.loads reads
    '{"a": NaN}', '{"a": Infinity}', '{"a": -Infinity}', '{"a": 1e400}', '{"a": -1e400}',
    '{"a": "\\ud800"}', '{"a": "\\udc00\\ud800"}', '{"\\ud800": 1}', '{"a": "\ud800"}',
    # integers past 64 bits: orjson would give floats
    '{"a": 18446744073709551616}', '{"a": -9223372036854775809}',
    '{"a": [1, {"b": 123456789012345678901234567890}]}', '{"a": 1' + "0" * 5000 + '}',
    # the edges of orjson's integers, and floats
    '{"a": 18446744073709551615}', '{"a": -9223372036854775808}', '{"a": 9223372036854775807}',
    '{"a": -0.0, "b": 0.0, "c": -0}', '{"a": 5e-324, "b": 2.4703282292062328e-324}',
    '{"a": 0.1000000000000000055511151231257827, "b": 1.7976931348623157e308}',
    '{"a": 0.30000000000000004, "b": 2.2250738585072011e-308, "c": 1e-400}',
    '{"a": 9223372036854775807.0, "b": 1e19, "c": -1e19}', '{"a": 1E2, "b": 1e-2}',
    # duplicate keys: the first position, the last value
    '{"a": 1, "b": 2, "a": 3}', '{"a": {"x": 1}, "a": [2], "c": {"d": 1, "d": null}}',
    # whitespace around values, around the line, inside it
    '{ "a" : [ 1 , 2 ] , "b" :{}}', '{"a": 1}  ', '{"a": 1}\t', '{"a": 1}\r', ' {"a": 1}',
    '\t{"a": 1}', '{"a": 1}\x0b', '{"a": 1}\x0c', '{"a": 1}\u3000', '\u3000', ' \t ',
    # not one object
    '[1, 2]', '"text"', '12', 'null', '{"a": 1}{"b": 2}', '{"a": 1} x', '{"a": 1,}', '{',
    '{"a": [', '}', '\ufeff{"a": 1}',
    # strings
    '{"a": "\\u0000", "b": "\x7f", "c": "\\/"}', '{"a": "\\u00e9\\uD83D\\uDE00", "b": "é😀"}',
    '{"a": "\t"}', '{"a": "\\x"}', '{"\\u0061": "\\"\\\\"}', '{"a": "\u2028\u2029\x85"}',
    '{"a": "\ufeff"}', '{"a": "𝄞 and 🍣"}',
    # literals
    '{"a": true, "b": false, "c": null}', '{"a": True}', "{'a': 1}", '{"a": nan}',
]


@pytest.mark.parametrize("line", LINES)
def test_each_odd_line_reads_the_same_alone_between_good_lines_and_last(line):
    good = json.dumps({"type": "user", "n": 1, "x": [0.5, {"y": None}]})
    assert_same(line)
    assert_same(f"{good}\n{line}\n{good}\n")
    assert_same(f"{good}\n{good}\n{line}")
    assert_same(f"{line}\n{line}\n\n{good}")


def test_all_odd_lines_in_one_file_read_the_same():
    assert_same("\n".join(LINES))
    assert_same("\r\n".join(LINES))


@needs_orjson
def test_usual_lines_are_taken_from_orjson_and_equal_the_plain_reader(monkeypatch):
    text = "\n".join(json.dumps({"type": "user", "i": i, "v": [i / 3, -0.0, 2 ** 63 - 1, None],
                                 "s": "é\n😀"}) for i in range(20)) + "\n\n"
    fast, plain = both_ways(text, monkeypatch)
    assert fast == plain
    taken, rest, index = orjson_lines.orjson_prefix(text)
    assert (len(taken), rest, index) == (20, -1, 21)
    assert repr(taken) == repr(parse_jsonl(text, []))


@needs_orjson
def test_orjson_stops_at_the_first_line_it_cannot_take():
    text = '{"a": 1}\n\n   \n{"b": NaN}\n{"c": 2}'
    taken, rest, index = orjson_lines.orjson_prefix(text)
    assert (taken, rest, index) == ([(1, {"a": 1})], text.index('{"b"'), 3)
    assert orjson_lines.orjson_prefix(' {"a": 1}') == ([], 0, 0)
    assert orjson_lines.orjson_prefix("") == ([], -1, 0)


@needs_orjson
def test_a_big_integer_after_good_lines_sends_every_line_to_the_plain_reader(monkeypatch):
    text = '{"a": 1}\n{"b": [{"c": 18446744073709551616}]}\n'
    fast, plain = both_ways(text, monkeypatch)
    assert fast == plain == repr(([(1, {"a": 1}), (2, {"b": [{"c": 2 ** 64}]})], []))


def nested(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


@pytest.mark.parametrize("depth", [1, 50, 900, 990, 1000, 1024, 1025, 1100, 20_000])
def test_deep_lines_read_the_same(depth):
    # orjson reads 1,024 levels, json.loads as many as the recursion limit leaves
    assert_same(nested(depth) + "\n" + nested(2) + "\n")
    assert_same("[" * depth + "]" * depth)


@pytest.mark.parametrize("left", [8, 20, 60, 200])
def test_lines_read_the_same_near_the_recursion_limit(left):
    # called with only about ``left`` levels to spare: the plain reader refuses what is deeper
    text = "\n".join(nested(d) for d in (1, 10, 30, 100, 150, 400)) + "\n"

    def room(n=0):  # how many more calls the recursion limit allows from here
        try:
            return room(n + 1)
        except RecursionError:
            return n

    def read_at(n):
        if n > 0:
            return read_at(n - 1)
        repairs: list[str] = []
        return parse_jsonl(text, repairs), repairs

    depth = room() - left
    with pytest.MonkeyPatch.context() as patch:
        fast = read_at(depth)
        patch.setattr(claude_code, "LOADS", None)
        plain = read_at(depth)
    assert repr(fast) == repr(plain)
    assert plain[1]  # the deepest lines are refused


def test_value_levels_counts_levels_and_refuses_floats_of_2_to_the_63():
    assert value_levels([]) == 0
    assert value_levels([1, "a", None]) == 1
    assert value_levels([{}]) == 1
    assert value_levels([{"a": [1]}]) == 3
    assert value_levels([{"a": 1}, {"b": {"c": {"d": []}}}]) == 4
    assert value_levels([{"a": [[[[[]]]]]}]) == 6
    assert value_levels([{"a": 1.5, "b": [-(2.0 ** 63) + 1024, 2.0 ** 63 - 1024]}]) == 3
    for big in (2.0 ** 63, -(2.0 ** 63), 2.0 ** 64, 1e300, float("inf"), float("-inf")):
        assert value_levels([{"a": {"b": [1, big]}}]) is None
        assert value_levels([big]) is None
    assert value_levels([{"a": float("nan")}]) is None


def test_referents_of_parsed_values_are_their_values():
    assert orjson_lines._referents_are_values(json.loads)
    if orjson_lines.LOADS is not None:
        assert orjson_lines._referents_are_values(orjson_lines.LOADS)


def test_orjson_older_than_3_9_15_or_missing_is_not_used(monkeypatch):
    # 3.9.14 and older have no nesting limit: a deep line overflows the C stack
    fake = types.ModuleType("orjson")
    fake.loads = json.loads
    for version, usable in (("3.8.3", False), ("3.9.14", False), ("3.9.15", True),
                            ("3.10.0", True), ("4.0.0rc1", True)):
        fake.__version__ = version
        monkeypatch.setitem(sys.modules, "orjson", fake)
        assert (orjson_lines._usable_loads() is json.loads) is usable, version
    monkeypatch.setitem(sys.modules, "orjson", None)  # import orjson raises ImportError
    assert orjson_lines._usable_loads() is None


# --------------------------------------------------------------------------- properties

_floats = st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                    st.sampled_from([-0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
                                     0.1, 1 / 3, 2.0 ** 63, -(2.0 ** 63), 2.0 ** 53 + 1]))
_ints = st.one_of(st.integers(), st.integers(-2 ** 64 - 2, 2 ** 64 + 2),
                  st.sampled_from([2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, 2 ** 64, -2 ** 63,
                                   -2 ** 63 - 1, 10 ** 30]))
_texts = st.one_of(st.text(st.characters(exclude_categories=())), st.text(max_size=4),
                   st.sampled_from(["\x00", "\ud800", "\udc00x", "\ufeff", "😀", "\u2028",
                                    "a\nb", '"\\', "é"]))
_scalars = st.one_of(st.none(), st.booleans(), _ints, _floats, _texts)
_values = st.recursive(
    _scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                      st.dictionaries(_texts, inner, max_size=4)),
    max_leaves=12)


def _dump(value, ensure_ascii: bool, spaced: bool) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii,
                      separators=(", ", ": ") if spaced else (",", ":"))


@st.composite
def _object_lines(draw) -> str:
    """One JSONL line: an object (duplicate keys possible), or now and then a bad line."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(LINES))
    ensure_ascii, spaced = draw(st.booleans()), draw(st.booleans())
    pairs = draw(st.lists(st.tuples(st.sampled_from(["a", "b", "type", "é"]) | _texts, _values),
                          max_size=5))
    inner = (", " if spaced else ",").join(
        f"{_dump(k, ensure_ascii, spaced)}{': ' if spaced else ':'}"
        f"{_dump(v, ensure_ascii, spaced)}" for k, v in pairs)
    return "{" + inner + "}" + draw(st.sampled_from(["", "", " ", "\r", "\t "]))


@given(st.lists(_object_lines(), max_size=8), st.sampled_from(["\n", "\n\n", "\r\n"]),
       st.booleans())
@settings(max_examples=400, deadline=None)
def test_any_jsonl_text_reads_the_same_with_and_without_orjson(lines, newline, last_newline):
    assert_same(newline.join(lines) + (newline if last_newline else ""))


@given(_values)
@settings(max_examples=400, deadline=None)
def test_a_value_loads_as_json_loads_reads_it_or_orjson_refuses(value):
    # the equivalence the reader rests on, for one value: orjson reads it as json.loads does,
    # refuses it, or gives a float of 2**63 or more that value_levels sends back
    if orjson_lines.LOADS is None:
        return
    for ensure_ascii in (True, False):
        text = json.dumps({"v": value}, ensure_ascii=ensure_ascii)
        try:
            got = orjson_lines.LOADS(text)
        except ValueError:
            continue
        if value_levels([got]) is not None:
            assert repr(got) == repr(json.loads(text))
