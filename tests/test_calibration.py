"""Tests for mini_agent.core.calibration: features by kind, the fit, per-request error."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from mini_agent.core.cache_policies import request_points
from mini_agent.core import calibration as cal
from mini_agent.core.calibration import (Calibration, estimate_requests, fit_calibration,
                                         median_abs_error, message_features, request_features)


def test_message_features_split_characters_by_kind():
    message = {"role": "user", "content": [
        {"type": "text", "text": "fix it ```x = 1``` 日本語"},
        {"type": "tool_result", "tool_use_id": "t", "content": '{"a": 1}'},
        {"type": "tool_result", "tool_use_id": "u", "content": "def f():\n    return 1\n"},
        {"type": "tool_result", "tool_use_id": "v", "content": "all good here\nnothing odd"}]}
    before = copy.deepcopy(message)
    f = message_features(message)
    assert message == before
    # "fix it " + " " = 8 prose, the fence "```x = 1```" = 11 code chars, 3 CJK
    assert (f["prose"], f["cjk"], f["json"]) == (8, 3, 8)
    assert f["code"] == 11 + len("def f():\n    return 1\n")
    assert f["tool_output"] == len("all good here\nnothing odd") and f["blocks"] == 4
    use = message_features({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t", "name": "Read", "input": {"path": "a.py"}}]})
    assert use["json"] == len("Read") + len('{"path": "a.py"}')


def test_request_features_are_cumulative():
    messages = [{"role": "user", "content": "abcd"}, {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "efgh"}, {"role": "assistant", "content": "ok"}]
    rows = request_features(messages, [1, 3])
    assert [r["prose"] for r in rows] == [4, 10] and [r["blocks"] for r in rows] == [1, 3]


def _session(cpt: dict[str, float], per_block: float, overhead: int, steps: int):
    features, usage = [], []
    total = dict.fromkeys(cal.FEATURES, 0)
    for k in range(steps):
        step = {"prose": 100 * (k * 7 % 11), "code": 300 * (k * 5 % 7),
                "json": 40 * (k * 3 % 13), "tool_output": 200 * (k * 11 % 5),
                "cjk": 30 * (k * 13 % 6), "blocks": 1 + k * 17 % 4}
        total = {key: total[key] + step[key] for key in total}
        features.append(dict(total))
        tokens = overhead + sum(total[k2] / cpt[k2] for k2 in cal.KINDS) + total["blocks"] * per_block
        usage.append({"input_tokens": 5, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": round(tokens) - 5})
    return features, usage


def test_fit_recovers_known_chars_per_token():
    truth = {"prose": 4.2, "code": 2.8, "json": 2.5, "tool_output": 3.3, "cjk": 1.3}
    sessions = [(f"s{n}", *_session(truth, 5.0, 20_000 + 1000 * n, 30)) for n in range(3)]
    fitted = fit_calibration(sessions, prior_weight=0.0)
    for kind, value in truth.items():
        assert fitted.chars_per_token[kind] == pytest.approx(value, rel=0.02), kind
    assert fitted.tokens_per_block == pytest.approx(5.0, rel=0.05)
    assert fitted.fitted_on == ("s0", "s1", "s2") and fitted.requests == 87
    assert "prose" in fitted.describe() and "fitted on 3 sessions" in fitted.describe()


def test_fit_needs_usage():
    with pytest.raises(ValueError, match="at least two requests"):
        fit_calibration([("s", [{"prose": 4}], [None])])


def test_estimate_learns_overhead_from_first_usage():
    c = Calibration({k: 4.0 for k in cal.KINDS}, 0.0)
    features = [{"prose": 400}, {"prose": 800}, {"prose": 1200}]
    usage = [None, {"input_tokens": 1200}, {"input_tokens": 1250}]
    rows, overhead = estimate_requests(features, usage, calibration=c)
    assert overhead == 1000  # 1200 real - 200 estimated at the first request with usage
    assert [r.estimated_input_tokens for r in rows] == [1100, 1200, 1300]
    assert rows[0].error is None and rows[1].error == 0.0
    assert rows[2].error == pytest.approx(50 / 1250)
    assert median_abs_error(rows) == pytest.approx(0.04)  # the anchor is skipped
    rows, overhead = estimate_requests(features, [None] * 3, calibration=c,
                                       overhead_features={"prose": 40})
    assert overhead == 10 and rows[0].estimated_input_tokens == 110


def test_held_out_error_on_real_sessions(shared_data):
    """Fitted on half of the Claude Code sessions, within 10% on each of the others."""
    from mini_agent.harness.transcript_files import load
    sessions = []
    for path in sorted((shared_data / "claude-code").glob("*.jsonl")):
        t = load(path)
        sessions.append((path.name, request_features(t.messages, request_points(t.messages)),
                         t.usage))
    fit, held_out = sessions[::2], sessions[1::2]
    c = fit_calibration(fit)
    for name, features, usage in held_out:
        rows, _ = estimate_requests(features, usage, calibration=c)
        assert median_abs_error(rows) <= 0.10, name


def test_tool_output_is_code_from_exactly_40_percent_of_its_lines():
    from mini_agent.core.calibration import _output_kind
    prose = ["plain words here"] * 3
    assert _output_kind("\n".join(["x = 1", "y = 2"] + prose)) == "code"          # 2 of 5
    assert _output_kind("\n".join(prose + ["x = 1"] + ["more words"])) == "tool_output"  # 1/5
    assert _output_kind("\n".join(prose + ["", "x = 1", "y = 2"])) == "code"      # blanks skipped
    assert _output_kind("") == "tool_output" and _output_kind('{"a": 1}') == "json"


_LINE_PARTS = st.sampled_from(["  ", " ", "\t", "x", "1", "12", ":", "→", "def", "class ",
                               "(", "=", "]", "a", "é", "\u3000", "for", "format", "if", "\n"])


@given(st.lists(_LINE_PARTS, max_size=12).map("".join))
@settings(max_examples=400, deadline=None)
def test_the_code_line_test_in_two_parts_equals_the_one_expression(line):
    two_parts = cal._CODE_CHAR_RE.search(line) or cal._CODE_START_RE.match(line)
    assert bool(two_parts) == bool(cal._CODE_LINE_RE.search(line))


def test_request_features_add_up_message_features():
    from mini_agent.core.sample_sessions import sample_transcript
    messages = sample_transcript(6).messages
    points = request_points(messages)
    features = request_features(messages, points)
    for point, got in zip(points, features):
        want = {k: sum(cal.message_features(m)[k] for m in messages[:point])
                for k in cal.FEATURES + ("image_tokens",)}
        assert got == want
    assert features[-1]["tool_output"] + features[-1]["code"] > 0


_TEXT_PARTS = st.sampled_from(["  ", " ", "\t", "x", "1", "12", ":", "→", "def", "class ", "(",
                               "=", "]", "a", "é", "\u3000", "for", "format", "if", "\n", "\n",
                               "\n\n", "\r", "\r\n", "\x0c", "\u2028", "\x1f", "{", "[", "\"a\"",
                               "words here", "  return x"])


_ASCII_PARTS = st.sampled_from(["  ", " ", "\t", "\x1f", "x", "12", ":", "def", "(", "=", "]",
                                "a b", "\n", "\n", "\n  \n", "if", "words here"])


@given(st.one_of(st.lists(_TEXT_PARTS, max_size=40), st.lists(_ASCII_PARTS, max_size=60))
       .map("".join))
@settings(max_examples=800, deadline=None)
def test_the_fast_output_kind_equals_the_line_by_line_reference(text):
    assert cal._output_kind(text) == cal._output_kind_by_lines(text)


@pytest.mark.parametrize("extra", [0, 1, 2, 250])
def test_the_output_kind_reads_only_the_first_200_lines(extra):
    # 199 prose lines, then code: the 200-line cut decides which lines are counted
    text = "\n".join(["plain words"] * 120 + ["x = 1"] * (80 + extra)) + "\n"
    assert cal._output_kind(text) == cal._output_kind_by_lines(text)
    text = "\n".join(["x = 1"] * 79 + ["plain"] * 121 + ["y = 2"] * extra)
    assert cal._output_kind(text) == cal._output_kind_by_lines(text)


@pytest.mark.parametrize("n_lines, width", [(150, 200), (199, 120), (200, 120), (201, 90),
                                            (300, 100)])
def test_a_long_output_is_cut_to_its_first_200_lines_like_the_reference(n_lines, width):
    # texts past output_kind's 16,000-character cut, with fewer and more than 200 lines
    code, plain = "x = (1)".ljust(width, "y"), "plain words".ljust(width, "z")
    for k in (0, 60, 79, 80, 81, 120, n_lines):
        lines = [plain] * (n_lines - k) + [code] * k
        for text in ("\n".join(lines), "\n".join(lines) + "\n", "\n".join(lines[::-1])):
            assert len(text) > 16_000
            assert cal._output_kind(text) == cal._output_kind_by_lines(text)


@given(st.dictionaries(st.sampled_from(["prose", "code", "json", "tool_output", "cjk", "blocks",
                                        "image_tokens"]),
                       st.one_of(st.integers(-5, 10**7), st.floats(allow_nan=False)), max_size=7))
@settings(max_examples=300, deadline=None)
def test_calibration_tokens_equal_the_sum_over_kinds(features):
    from mini_agent.core.calibration import KINDS, Calibration
    cal = Calibration()
    want = sum(features.get(k, 0) / cal.chars_per_token[k] for k in KINDS) \
        + features.get("blocks", 0) * cal.tokens_per_block + features.get("image_tokens", 0)
    got = cal.tokens(features)
    assert got == want or (got != got and want != want)
    assert str(got) == str(want)


@given(st.integers(1, 99), st.integers(0, 10**6), st.none() | st.integers(1, 10**6),
       st.none() | st.floats(-2, 2), st.floats(0.1, 4))
@settings(max_examples=100, deadline=None)
def test_the_fast_estimate_row_is_the_dataclass_s_own(request, estimated, real, error, scale):
    import dataclasses
    import pickle
    fast = cal._estimate_row(request, estimated, real, error, scale)
    plain = cal.RequestEstimate(request, estimated, real, error, scale)
    assert type(fast) is cal.RequestEstimate and fast == plain and hash(fast) == hash(plain)
    assert list(vars(fast).items()) == list(vars(plain).items()) and repr(fast) == repr(plain)
    assert dataclasses.asdict(fast) == dataclasses.asdict(plain)
    assert pickle.loads(pickle.dumps(fast)) == plain
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.scale = 2.0


def _report_row(row) -> dict:
    """The explorer's request row as it was built from a :class:`RequestEstimate`."""
    out = {"request": row.request, "estimated_input_tokens": row.estimated_input_tokens}
    if row.real_input_tokens is not None:
        out["real_input_tokens"] = row.real_input_tokens
        out["error"] = row.error
    return out


_USAGE = st.none() | st.fixed_dictionaries({}, optional={
    "input_tokens": st.integers(0, 50_000), "cache_read_input_tokens": st.integers(0, 90_000),
    "cache_creation_input_tokens": st.none() | st.integers(0, 9_000)})
_FEATURES = st.fixed_dictionaries({k: st.integers(0, 80_000) for k in cal._COUNTS})


@given(st.lists(_FEATURES, max_size=12), st.lists(_USAGE, max_size=14),
       st.none() | _FEATURES, st.booleans())
@settings(max_examples=150, deadline=None)
def test_the_report_rows_equal_the_estimate_rows(features, usage, fixed, fitted):
    """``request_rows`` gives the rows, median error and overhead ``estimate_requests`` does."""
    table = None if fitted else Calibration(chars_per_token=dict(cal.PRIOR_CHARS_PER_TOKEN),
                                            tokens_per_block=3.0)
    rows, overhead = estimate_requests(features, usage, calibration=table,
                                       overhead_features=fixed)
    want = ([_report_row(r) for r in rows], cal.median_abs_error(rows), overhead)
    got = cal.request_rows(features, usage, calibration=table, overhead_features=fixed)
    assert repr(got) == repr(want) and got == want
