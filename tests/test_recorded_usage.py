"""The recorded-usage row: what a session cost as it ran, counted like a policy's row."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_agent.core.pricing import UnknownModelError
from mini_agent.core.recorded_usage import cache_breaks, recorded_row

WRITE = {"input_tokens": 3, "cache_creation_input_tokens": 1_000, "cache_read_input_tokens": 0,
         "output_tokens": 500}
READ = {"input_tokens": 5, "cache_creation_input_tokens": 200, "cache_read_input_tokens": 1_000,
        "output_tokens": 700}


def test_row_sums_whole_input_and_prices_input_side_only():
    row = recorded_row([WRITE, READ], 2, "claude-sonnet-4-6")
    assert row["tokens_sent"] == 3 + 1_000 + 5 + 200 + 1_000
    # $3/MTok input: writes 1.25x, reads 0.1x; the 1,200 output tokens are not counted
    expected = (3 + 1_000 * 1.25 + 5 + 200 * 1.25 + 1_000 * 0.1) * 3 / 1e6
    assert row["usd"] == pytest.approx(expected, rel=1e-12)
    assert row["hit_rate"] == pytest.approx(1_000 / 2_208)
    assert row["cache_breaks"] == 0


def test_one_hour_writes_cost_twice_the_input_price():
    one_hour = dict(WRITE, cache_creation={"ephemeral_1h_input_tokens": 1_000,
                                           "ephemeral_5m_input_tokens": 0})
    row = recorded_row([one_hour], 1, "claude-sonnet-4-6")
    assert row["usd"] == pytest.approx((3 + 2_000) * 3 / 1e6)


def test_a_request_without_usage_gives_no_row():
    assert recorded_row([WRITE, None], 2, "claude-sonnet-4-6") is None
    assert recorded_row([WRITE, {}], 2, "claude-sonnet-4-6") is None
    assert recorded_row([WRITE], 2, "claude-sonnet-4-6") is None      # fewer usages
    assert recorded_row([], 0, "claude-sonnet-4-6") is None


def test_usages_past_the_last_request_are_not_counted():
    row = recorded_row([WRITE, READ, READ], 2, "claude-sonnet-4-6")
    assert row["tokens_sent"] == 2_208


def test_breaks_count_requests_reading_less_than_the_cached_part_before():
    assert cache_breaks([WRITE, READ]) == 0
    lost = {"input_tokens": 1_200, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0}
    assert cache_breaks([WRITE, lost]) == 1
    # nothing cached before: a request that reads nothing is no break
    assert cache_breaks([lost, lost]) == 0
    # READ cached 1,200; reading 1,199 is a break, 1,200 is not
    assert cache_breaks([READ, dict(READ, cache_read_input_tokens=1_199)]) == 1
    assert cache_breaks([READ, dict(READ, cache_read_input_tokens=1_200)]) == 0


def test_unknown_model_is_an_error():
    with pytest.raises(UnknownModelError):
        recorded_row([WRITE], 1, "no-such-model")


# ----------------------------------------------------------------------------- in the report

def test_the_explorer_report_carries_the_recorded_row():
    from mini_agent.core.explorer_tables import format_report
    from mini_agent.core.replay import evaluate_session
    from mini_agent.core.sample_sessions import sample_transcript
    transcript = sample_transcript(6, variant=2)
    report = evaluate_session(transcript, policies=("raw", "mask-10"))
    assert report["recorded"] == recorded_row(transcript.usage, len(report["requests"]),
                                              report["model"])
    # the sample's usage is cached like Claude Code's: every request after the first reads
    # what the one before cached, so the hit rate is high but not 100%
    assert 0.5 < report["recorded"]["hit_rate"] < 1.0
    assert report["recorded"]["cache_breaks"] == 0
    assert report["recorded"]["tokens_sent"] == sum(r["real_input_tokens"]
                                                    for r in report["requests"])
    recorded_lines = [line for line in format_report(report).splitlines()
                      if line.startswith("recorded ")]
    assert len(recorded_lines) == 1
    assert f"{report['recorded']['tokens_sent']:,}" in recorded_lines[0]


def test_a_transcript_without_usage_has_no_recorded_row():
    from mini_agent.core.explorer_tables import format_report
    from mini_agent.core.replay import evaluate_session
    from mini_agent.core.transcripts import Transcript
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    report = evaluate_session(Transcript(messages=messages, usage=[None], repairs=[],
                                         source_format="messages"),
                              policies=("raw",))
    assert report["recorded"] is None
    assert not any(line.startswith("recorded") for line in format_report(report).splitlines())


def test_raw_replay_is_within_a_quarter_of_what_real_sessions_cost(shared_data):
    """The kit's replay of a session against the session's own usage: the replay counts
    message content at about 4 characters per token (Claude counts code at 2.3-2.9), so it
    sends 0.79-0.95 of the recorded tokens; the hit rates agree within 5 points."""
    from mini_agent.core.replay import evaluate_session
    from mini_agent.harness.evaluate_runner import transcript_files
    from mini_agent.harness.transcript_files import load
    ratios = []
    for path in transcript_files([shared_data / "claude-code"]):
        report = evaluate_session(load(path), policies=("raw",))
        raw, rec = report["policies"][0], report["recorded"]
        assert rec is not None, path.name
        ratios.append(raw["tokens_sent"] / rec["tokens_sent"])
        assert abs(raw["hit_rate"] - rec["hit_rate"]) < 0.05, path.name
    assert len(ratios) >= 8
    assert all(0.75 < r < 1.0 for r in ratios), ratios


def test_a_compacted_session_says_its_history_starts_after_the_compaction(shared_data):
    from mini_agent.core.explorer_tables import format_report
    from mini_agent.core.replay import evaluate_session
    from mini_agent.harness.transcript_files import load
    transcript = load(shared_data / "claude-code" / "entire-opus45-rewind-agent-compacted.jsonl")
    report = evaluate_session(transcript, policies=("raw",))
    assert report["compactions"] == 1
    # the loaded history is the 10 requests after the compaction (the file holds 20)
    assert len(report["requests"]) == 10
    assert "10 requests, after its last compaction)" in format_report(report).splitlines()[0]


def test_generated_samples_are_labelled_in_the_report():
    from mini_agent.core.explorer_tables import format_report
    from mini_agent.core.replay import evaluate_session
    from mini_agent.core.sample_sessions import is_generated, sample_transcript
    sample = sample_transcript(4, variant=1)
    assert is_generated(sample.messages)
    report = evaluate_session(sample, policies=("raw",))
    assert report["generated"] is True and report["compactions"] == 0
    text = format_report(report)
    assert "[kit-generated sample, not a recording]" in text.splitlines()[0]
    assert "vs the sample's usage (the kit's own count, not a check)" in text
    assert "which the kit computed" in text.splitlines()[-1]
    real = [{"role": "user", "content": [{"type": "text", "text": "Fix parse()."}]}]
    assert not is_generated(real) and not is_generated([])


def test_csv_has_a_recorded_row_per_session_with_usage(tmp_path):
    import csv
    from mini_agent.harness.evaluate_runner import main_evaluate
    target = tmp_path / "out.csv"
    out, err = __import__("io").StringIO(), __import__("io").StringIO()
    assert main_evaluate([], samples=2, policies=["raw", "breakeven"], csv_path=str(target),
                         stdout=out, stderr=err) == 0
    rows = list(csv.DictReader(target.open(newline="", encoding="utf-8")))
    assert [r["name"] for r in rows] == ["raw", "breakeven", "recorded"] * 2
    recorded = [r for r in rows if r["name"] == "recorded"]
    assert all(r["vs_best"] == "" and r["retained_facts"] == "" for r in recorded)
    assert int(recorded[0]["tokens_sent"]) > int(rows[0]["tokens_sent"]) > 0
    # the samples' temporary folder is gone after the run: they are named by file name
    assert [r["path"] for r in rows[::3]] == ["kit-sample-00.jsonl", "kit-sample-01.jsonl"]
    assert "kit-sample-00.jsonl  (claude-code" in out.getvalue()


@pytest.mark.parametrize("bad", [
    {"input_tokens": float("nan")}, {"input_tokens": float("inf")}, {"input_tokens": -500},
    {"input_tokens": 1.5}, {"cache_read_input_tokens": "x"}, {"input_tokens": "12"},
    [1, 2], "usage", {"input_tokens": 1, "cache_creation": {"ephemeral_5m_input_tokens": "3"}},
    {"input_tokens": 1, "cache_creation": "bad"}, {"input_tokens": None}])
def test_a_usage_that_is_not_counts_is_missing_and_the_session_is_still_replayed(bad):
    import dataclasses
    from mini_agent.core.recorded_usage import clean_usage
    from mini_agent.core.replay import evaluate_session
    from mini_agent.core.sample_sessions import sample_transcript
    assert clean_usage(bad) is None
    assert clean_usage(READ) == READ and clean_usage({"input_tokens": 2.0}) is not None
    transcript = sample_transcript(6, variant=2)
    usage = list(transcript.usage)
    usage[1] = bad
    hostile = dataclasses.replace(transcript, usage=usage)
    report = evaluate_session(hostile, policies=("raw",))
    assert report["recorded"] is None          # a request without a usage: no row
    assert report["policies"][0]["tokens_sent"] > 0
    assert hostile.usage[1] is bad             # the caller's transcript is left as it was


def test_the_loader_ignores_a_usage_that_is_not_counts_with_a_note(tmp_path):
    import json
    from mini_agent.core.sample_sessions import sample_session_jsonl
    from mini_agent.harness.analyze import analyze, format_analysis
    from mini_agent.harness.transcript_files import load
    entries = [json.loads(line) for line in sample_session_jsonl(3).splitlines()]
    first = next(e for e in entries if e.get("message", {}).get("usage"))
    first["message"]["usage"]["input_tokens"] = "x"
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n", encoding="utf-8")
    transcript = load(path)
    assert transcript.usage[0] is None and transcript.usage[1] is not None
    assert sum("a usage that does not hold token counts ignored" in r
               for r in transcript.repairs) == 1
    assert "real input tokens recorded" in format_analysis(analyze(transcript))


def _clean_usage_field_by_field(usage):
    """The reference form of ``clean_usage``: every field asked on its own."""
    import collections.abc
    import math

    def count(value):
        if value is None:
            return True
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return math.isfinite(value) and value >= 0 and value == int(value)
    keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens",
            "cache_read_input_tokens")
    if not isinstance(usage, collections.abc.Mapping):
        return None
    if not all(count(usage.get(k)) for k in keys) or all(usage.get(k) is None for k in keys):
        return None
    breakdown = usage.get("cache_creation")
    if breakdown is not None and not (isinstance(breakdown, collections.abc.Mapping) and all(
            count(breakdown.get(k)) for k in ("ephemeral_5m_input_tokens",
                                              "ephemeral_1h_input_tokens"))):
        return None
    return dict(usage)


_FIELD = st.one_of(st.none(), st.integers(-3, 10**6), st.booleans(), st.floats(),
                   st.sampled_from(["1", "x"]))


@given(st.dictionaries(st.sampled_from(["input_tokens", "output_tokens",
                                        "cache_creation_input_tokens",
                                        "cache_read_input_tokens", "other"]), _FIELD),
       st.one_of(st.none(), st.just("bad"),
                 st.dictionaries(st.sampled_from(["ephemeral_5m_input_tokens",
                                                  "ephemeral_1h_input_tokens"]), _FIELD)))
@settings(max_examples=400, deadline=None)
def test_clean_usage_equals_the_field_by_field_reference(fields, breakdown):
    from mini_agent.core.pricing import clean_usage
    usage = dict(fields)
    if breakdown is not None:
        usage["cache_creation"] = breakdown
    assert clean_usage(usage) == _clean_usage_field_by_field(usage)


@given(st.lists(st.fixed_dictionaries({}, optional={
    "input_tokens": st.integers(0, 10**6), "cache_creation_input_tokens": st.integers(0, 10**6),
    "cache_read_input_tokens": st.integers(0, 10**6), "output_tokens": st.integers(0, 10**5),
    "cache_creation": st.fixed_dictionaries({"ephemeral_1h_input_tokens": st.integers(0, 10**5)}),
    "iterations": st.lists(st.fixed_dictionaries({
        "type": st.sampled_from(["compaction", "message"]),
        "input_tokens": st.integers(0, 10**5)}), max_size=2)}), max_size=6),
       st.booleans())
@settings(max_examples=200, deadline=None)
def test_usages_cost_usd_is_the_sum_of_cost_usd_to_the_last_bit(usages, output):
    from mini_agent.core.pricing import cost_usd, usages_cost_usd
    model = "claude-sonnet-4-5-20250929"
    assert usages_cost_usd(usages, model, include_output=output) == sum(
        cost_usd(u, model, include_output=output) for u in usages)


_COUNT = st.one_of(st.none(), st.integers(0, 10**6), st.sampled_from([0.0, 3.0, 12.0]))


@given(st.lists(st.one_of(st.fixed_dictionaries({}, optional={
    "input_tokens": _COUNT, "cache_creation_input_tokens": _COUNT,
    "cache_read_input_tokens": _COUNT, "output_tokens": _COUNT,
    "cache_creation": st.one_of(st.none(), st.fixed_dictionaries({}, optional={
        "ephemeral_1h_input_tokens": _COUNT, "ephemeral_5m_input_tokens": _COUNT})),
    "iterations": st.lists(st.fixed_dictionaries({
        "type": st.sampled_from(["compaction", "message"]),
        "input_tokens": st.integers(0, 10**5)}), max_size=2),
    "inference_geo": st.sampled_from(["global", "us", "not_available", None])})),
    min_size=1, max_size=8),
       st.sampled_from(["claude-sonnet-4-5-20250929", "claude-opus-4-1", "claude-haiku-4-5"]))
@settings(max_examples=300, deadline=None)
def test_the_one_pass_row_equals_the_row_from_the_pricing_functions(usages, model):
    """``recorded_row``'s one pass over plain dicts gives the pricing functions' row, bit for
    bit (or hands them the usages it does not model)."""
    from mini_agent.core.pricing import sum_usage, usages_cost_usd, cache_hit_rate
    from mini_agent.core.recorded_usage import _plain_row
    usages = [u for u in usages if any(u.get(k) for k in ("input_tokens", "output_tokens",
              "cache_creation_input_tokens", "cache_read_input_tokens"))] or [
        {"input_tokens": 5}]
    total = sum_usage(usages)
    want = {"tokens_sent": total["input_tokens"] + total["cache_creation_input_tokens"]
            + total["cache_read_input_tokens"],
            "usd": usages_cost_usd(usages, model, include_output=False),
            "hit_rate": cache_hit_rate(total), "cache_breaks": cache_breaks(usages)}
    got = _plain_row(usages, model)
    if any(u.get("iterations") or u.get("inference_geo") == "us" for u in usages):
        assert got is None
    else:
        assert got == want and type(got["usd"]) is type(want["usd"])
    assert recorded_row(usages, len(usages), model) == want


_WHOLE = st.one_of(st.integers(-2, 10**6), st.booleans(), st.none())


@given(st.fixed_dictionaries({"input_tokens": _WHOLE, "output_tokens": _WHOLE,
                              "cache_creation_input_tokens": _WHOLE,
                              "cache_read_input_tokens": _WHOLE},
                             optional={"other": st.text(max_size=2),
                                       "cache_creation": st.one_of(st.none(), st.just("bad"),
                                                                   st.just({}))}))
@settings(max_examples=400, deadline=None)
def test_clean_usage_of_four_counts_equals_the_reference(usage):
    # the usual usage (four counts as plain ints) takes clean_usage's short path
    from mini_agent.core.pricing import clean_usage
    mine = clean_usage(usage)
    assert mine == _clean_usage_field_by_field(usage)
    assert mine is not usage


def test_model_price_kept_per_id_equals_the_table_row():
    from mini_agent.core.models import UnknownModelError as Unknown, model_spec
    from mini_agent.core.pricing import ModelPrice, model_price
    for model in ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", "claude-haiku-4-5@20251001"):
        spec = model_spec(model)
        expected = ModelPrice(spec.input_usd_per_mtok, spec.output_usd_per_mtok,
                              spec.cache_read_multiplier)
        assert model_price(model) == expected and model_price(model) == expected
    assert model_spec("claude-sonnet-4-5-20250929") is model_spec("claude-sonnet-4-5")
    for _ in range(2):  # an unknown id raises every time (errors are not kept)
        with pytest.raises(Unknown):
            model_price("claude-opus-4-9")
        with pytest.raises(Unknown):
            model_spec("claude-opus-4-9-20250101")


_USAGE_COUNTS = st.one_of(st.none(), st.integers(0, 300), st.sampled_from([0.0, 50.5, 100.0]))


@given(st.lists(st.fixed_dictionaries({}, optional={
    "cache_read_input_tokens": _USAGE_COUNTS, "cache_creation_input_tokens": _USAGE_COUNTS,
    "input_tokens": _USAGE_COUNTS}), max_size=12))
@settings(max_examples=300, deadline=None)
def test_cache_breaks_in_one_pass_equal_the_pairwise_count(usages):
    from mini_agent.core.recorded_usage import _cache_breaks_pairwise, cache_breaks
    assert cache_breaks(usages) == _cache_breaks_pairwise(usages)
    assert cache_breaks(tuple(usages)) == _cache_breaks_pairwise(usages)


def test_cache_breaks_count_a_drop_after_a_cached_request_only():
    from mini_agent.core.recorded_usage import cache_breaks
    usages = [{"cache_read_input_tokens": 0}, {"cache_read_input_tokens": 0},
              {"cache_creation_input_tokens": 100}, {"cache_read_input_tokens": 100},
              {"cache_read_input_tokens": 99, "cache_creation_input_tokens": 1},
              {"cache_read_input_tokens": 100}, {}]
    assert cache_breaks(usages) == 2
