"""Tests for mini_agent.core.explorer_tables: the explorer's printed tables."""

from __future__ import annotations

import pytest

from mini_agent.core.cache_policies import request_points
from mini_agent.core.explorer_tables import (format_cumulative_cost, format_hit_rates,
                                             format_report, format_requests, format_retention)
from mini_agent.core.replay import evaluate_session
from mini_agent.core.retention import Fact
from mini_agent.core.sample_sessions import sample_transcript


@pytest.fixture(scope="module")
def sample():
    return sample_transcript(8)


@pytest.fixture(scope="module")
def report(sample):
    return evaluate_session(sample, policies=("raw", "mask-1"), keep_views=True)


def test_report_table_rows(report):
    lines = format_report(report).splitlines()
    assert lines[0].startswith("<sample>  (claude-code") and "9 requests" in lines[0]
    assert lines[3].split() == ["policy", "tokens", "sent", "USD", "vs", "best", "hit", "rate",
                                "breaks", "facts", "kept"]
    raw = lines[5].split()
    assert raw[0] == "raw" and raw[1] == f"{report['policies'][0]['tokens_sent']:,}"
    assert format_report({"path": "x", "error": "boom"}) == "x: error: boom"


def test_per_request_tables_pick_every_nth_and_the_last(report, sample):
    text = format_requests(report, every=4)
    assert [line.split()[0] for line in text.splitlines()[2:]] == ["1", "5", "9"]
    assert text.splitlines()[2].split()[3] == "55"  # the task message alone, in every view
    cost = format_cumulative_cost(report, every=8).splitlines()
    last = cost[-1].split()
    assert last[0] == "9" and float(last[1]) == pytest.approx(report["bound"]["usd"], abs=1e-4)
    assert float(last[2]) == pytest.approx(report["policies"][0]["usd"], abs=1e-4)
    assert format_hit_rates(report, every=8).splitlines()[2].split()[1:] == ["0%", "0%"]
    facts = [Fact("src/parser.py", "identifier", message=0), Fact("nowhere", "number", message=3)]
    ret = format_retention(report, points=request_points(sample.messages), every=8,
                           facts=facts).splitlines()
    assert ret[2].split() == ["1", "1/1", "1/1"] and ret[3].split() == ["9", "1/2", "1/2"]


def test_tables_need_views_and_a_positive_step(sample, report):
    bare = evaluate_session(sample, policies=("raw",))
    with pytest.raises(ValueError, match="keep_views"):
        format_requests(bare)
    with pytest.raises(ValueError, match="every"):
        format_hit_rates(report, every=0)


def test_the_header_says_when_a_session_is_priced_as_another_model(sample):
    from mini_agent.core.explorer_tables import priced_as
    from mini_agent.core.models import DEFAULT_MODEL
    own = evaluate_session(sample, policies=("raw",))
    assert own["recorded_model"] == own["model"] == sample.model
    assert priced_as(own) == sample.model
    forced = evaluate_session(sample, policies=("raw",), model="claude-haiku-4-5")
    assert priced_as(forced) == f"{sample.model}, priced as claude-haiku-4-5"
    foreign = evaluate_session(sample.__class__(**{**vars(sample), "model": "deepseek/x"}),
                               policies=("raw",))
    assert foreign["recorded_model"] == "deepseek/x" and foreign["model"] == DEFAULT_MODEL
    assert format_report(foreign).splitlines()[0].startswith(
        f"<sample>  (claude-code, deepseek/x, priced as {DEFAULT_MODEL}, ")
    unknown = evaluate_session(sample.__class__(**{**vars(sample), "model": None}),
                               policies=("raw",))
    assert priced_as(unknown) == f"model not recorded, priced as {DEFAULT_MODEL}"


def test_per_request_tables_show_whole_policy_names_in_aligned_columns():
    from mini_agent.core.cache_policies import request_points
    from mini_agent.core.explorer_tables import (format_cumulative_cost, format_hit_rates,
                                                 format_requests, format_retention)
    from mini_agent.core.replay import evaluate_session
    from mini_agent.core.sample_sessions import sample_transcript
    sample = sample_transcript(3)
    report = evaluate_session(sample, policies=("raw", "micro_compact", "server_compact"),
                              keep_views=True)
    tables = [format_requests(report), format_hit_rates(report),
              format_cumulative_cost(report),
              format_retention(report, points=request_points(sample.messages))]
    for table in tables:
        lines = table.splitlines()
        assert lines[0].split()[-2:] == ["micro_compact", "server_compact"]
        assert len({len(line) for line in lines}) == 1, table   # every row as wide as the head


def test_the_loader_repairs_reach_the_report_and_its_text(tmp_path):
    from mini_agent.core.explorer_tables import MAX_REPAIR_LINES
    from mini_agent.core.sample_sessions import sample_session_jsonl
    from mini_agent.harness.evaluate_pool import evaluate_file
    lines = sample_session_jsonl(6, variant=1).splitlines()
    clean = tmp_path / "clean.jsonl"
    clean.write_text("\n".join(lines) + "\n")
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines[:5] + ["garbage{"] + lines[5:]) + "\n")
    ok, bad = evaluate_file(clean), evaluate_file(broken)
    assert ok["repairs"] == [] and "\nrepairs (" not in format_report(ok)
    assert len(bad["repairs"]) == 1 and bad["repairs"][0].startswith("line 6:")
    text = format_report(bad).splitlines()
    assert text[3] == "repairs (1):" and text[4] == "  - " + bad["repairs"][0]
    assert text[5].split()[0] == "policy"
    many = dict(bad, repairs=[f"line {n}: skipped" for n in range(MAX_REPAIR_LINES + 3)])
    shown = format_report(many).splitlines()
    assert shown[3] == f"repairs ({MAX_REPAIR_LINES + 3}):"
    assert shown[4 + MAX_REPAIR_LINES] == "  ... and 3 more (--json lists all)"
