"""The policy explorer's chart: series values checked against the report, and the live widget."""

from __future__ import annotations

import pytest

from mini_agent import evaluate_session
from mini_agent.core.cache_policies import request_points
from mini_agent.core.explorer_series import (BOUND, default_policies, explorer_series,
                                             request_points_of)
from mini_agent.core.retention import Fact, retention_curve
from mini_agent.core.sample_sessions import sample_transcript

POLICIES = ["raw", "mask-10", "payback", "breakeven", "summary"]


@pytest.fixture(scope="module")
def session():
    transcript = sample_transcript(40)
    return transcript, evaluate_session(transcript, policies=POLICIES, keep_views=True)


def _by_name(traces):
    return {t["name"]: t for t in traces}


def test_cumulative_usd_ends_at_each_policys_usd_and_the_bound_is_dashed(session):
    _, report = session
    traces = _by_name(explorer_series(report, "usd", POLICIES + [BOUND]))
    for row in report["policies"]:
        y = traces[row["name"]]["y"]
        assert y[-1] == pytest.approx(row["usd"], rel=1e-9)
        assert all(b >= a for a, b in zip(y, y[1:]))  # cumulative, never falls
    bound = traces["bound (hindsight)"]
    assert bound["y"][-1] == pytest.approx(report["bound"]["usd"], rel=1e-9)
    assert bound["line"]["dash"] == "dash"
    # no masking schedule beats the bound; raw masks nothing and costs more
    assert traces["mask-10"]["y"][-1] >= bound["y"][-1] - 1e-12


def test_the_bound_is_drawn_for_cost_only(session):
    _, report = session
    for measure in ("tokens", "hit_rate", "facts"):
        names = [t["name"] for t in explorer_series(report, measure, POLICIES + [BOUND])]
        assert "bound (hindsight)" not in names and BOUND not in names
    names = [t["name"] for t in explorer_series(report, "usd", ["raw"])]
    assert names == ["raw"]  # bound not chosen, not drawn


def test_tokens_and_hit_rates_are_the_records_per_request(session):
    _, report = session
    n = len(report["requests"])
    traces = _by_name(explorer_series(report, "tokens", ["raw", "mask-10"]))
    assert set(traces) == {"raw", "mask-10"}
    raw, masked = traces["raw"]["y"], traces["mask-10"]["y"]
    assert traces["raw"]["x"] == list(range(1, n + 1))
    assert raw == [r["view_tokens"] for r in report["policies"][0]["records"]]
    assert masked[-1] < raw[-1]  # masking sends fewer message tokens by the end
    hits = _by_name(explorer_series(report, "hit_rate", ["payback"]))["payback"]["y"]
    assert hits[0] == 0.0 and all(0.0 <= h <= 1.0 for h in hits) and max(hits) > 0.5


def test_facts_kept_match_the_retention_curve_and_points_are_recovered(session):
    transcript, report = session
    points = request_points(transcript.messages)
    assert request_points_of(report) == points
    facts = [Fact(**f) for f in report["facts"]]
    traces = _by_name(explorer_series(report, "facts", ["raw", "summary"]))
    summary = report["policies"][POLICIES.index("summary")]
    curve = retention_curve([r["view"] for r in summary["records"]], points, facts)
    assert traces["summary"]["y"] == [k for k, _ in curve]
    assert traces["stated so far"]["y"] == [s for _, s in curve]
    assert traces["raw"]["y"] == traces["stated so far"]["y"]  # raw forgets nothing
    assert traces["raw"]["y"][-1] > 0


def test_defaults_unknown_measure_and_reports_without_views(session):
    transcript, report = session
    assert default_policies(report) == ["raw", "mask-10", "payback", "breakeven", BOUND]
    with pytest.raises(ValueError, match="measure"):
        explorer_series(report, "latency", ["raw"])
    bare = evaluate_session(transcript, policies=["raw"])
    with pytest.raises(ValueError, match="keep_views"):
        explorer_series(bare, "usd", ["raw"])


def test_the_widget_redraws_on_each_control(session):
    pytest.importorskip("ipywidgets")
    from mini_agent.ui.explorer_widgets import policy_explorer_widget

    _, report = session
    box = policy_explorer_widget(report)
    explorer = box.explorer
    chart = explorer.chart
    shown = [t["name"] for t in chart.traces]
    assert shown == ["raw", "mask-10", "payback", "breakeven"]  # no bound for tokens
    seen = {repr(chart.traces)}
    for measure in ("usd", "hit_rate", "facts", "tokens"):
        explorer.measure.value = measure
        state = repr(chart.traces)
        assert state not in seen or measure == "tokens"
        seen.add(state)
        if measure == "usd":
            assert chart.traces[-1]["name"] == "bound (hindsight)"
            assert chart.traces[-1]["line"]["dash"] == "dash"
            assert chart.traces[0]["y"][-1] == pytest.approx(report["policies"][0]["usd"])
    explorer.policies.value = ("payback",)
    assert [t["name"] for t in chart.traces] == ["payback"]
    assert chart.plot_layout["yaxis"]["title"]["text"] == "message tokens sent"
    explorer.measure.value = "usd"
    assert [t["name"] for t in chart.traces] == ["payback"]  # bound deselected stays hidden


# --------------------------------------------------------------------------- the recording

def test_the_recorded_series_is_the_files_usage_request_by_request(session):
    from mini_agent.core.explorer_series import RECORDED, recorded_requests

    transcript, report = session
    n = len(report["requests"])
    rows = recorded_requests(transcript.usage, n, report["model"])
    assert rows is not None and len(rows) == n
    chosen = ["raw", RECORDED]
    tokens = _by_name(explorer_series(report, "tokens", chosen, recorded=rows))
    name = "recorded: whole input (system + tools too, kit's own count)"  # a sample: labelled
    assert list(tokens) == ["raw", name]
    # the whole input of each request: what the report's requests say the file recorded,
    # not the view's messages (the system prompt and tools make it larger than raw's)
    assert tokens[name]["y"] == [r["real_input_tokens"] for r in report["requests"]]
    assert all(rec > raw for rec, raw in zip(tokens[name]["y"], tokens["raw"]["y"]))
    usd = explorer_series(report, "usd", chosen + [BOUND], recorded=rows)
    assert [t["name"] for t in usd][-1] == "recorded (the file's usage, kit's own count)"
    assert usd[-1]["y"][-1] == pytest.approx(report["recorded"]["usd"], rel=1e-12)
    assert usd[-1]["line"]["dash"] == "dot"
    # the hit rate of one request, by hand from its usage: reads over the whole input
    u = transcript.usage[5]
    hits = explorer_series(report, "hit_rate", chosen, recorded=rows)[-1]["y"]
    assert hits[0] == 0.0 and hits[5] == pytest.approx(u["cache_read_input_tokens"] / (
        u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"]))
    # the first request writes the cache at 1.25x the input price, output is not counted
    first = transcript.usage[0]
    assert first.get("output_tokens") and not first.get("cache_read_input_tokens")
    from mini_agent.core.pricing import model_price
    per_token = model_price(report["model"]).input_usd_per_mtok / 1e6
    assert rows[0]["cost_usd"] == pytest.approx(
        per_token * (first["input_tokens"] + 1.25 * first["cache_creation_input_tokens"]))
    # no view, no facts: the recording is not drawn there
    assert [t["name"] for t in explorer_series(report, "facts", chosen, recorded=rows)] == \
        ["raw", "stated so far"]


def test_a_session_without_usage_for_every_request_has_no_recorded_series(session):
    from mini_agent.core.explorer_series import RECORDED, policy_choices, recorded_requests

    transcript, report = session
    n, model = len(report["requests"]), report["model"]
    usage = list(transcript.usage)
    assert recorded_requests(None, n, model) is None and recorded_requests([], n, model) is None
    assert recorded_requests(usage[:-1], n, model) is None          # one request short
    assert recorded_requests(usage[:5] + [None] + usage[6:], n, model) is None
    broken = dict(usage[3], cache_read_input_tokens="12")             # not a count: missing
    assert recorded_requests(usage[:3] + [broken] + usage[4:], n, model) is None
    assert RECORDED not in policy_choices(report)
    assert RECORDED not in default_policies(report)
    # chosen by name but with nothing recorded: nothing drawn
    assert [t["name"] for t in explorer_series(report, "usd", ["raw", RECORDED])] == ["raw"]


def test_the_widget_offers_the_recording_only_when_the_session_has_usage(session):
    pytest.importorskip("ipywidgets")
    from mini_agent.ui.explorer_widgets import policy_explorer_widget

    transcript, report = session
    explorer = policy_explorer_widget(report, usage=transcript.usage).explorer
    assert "recorded" in explorer.policies.options and "recorded" in explorer.policies.value
    names = [t["name"] for t in explorer.chart.traces]
    assert names[:4] == ["raw", "mask-10", "payback", "breakeven"]
    assert names[4].startswith("recorded: whole input")
    explorer.measure.value = "usd"
    last = explorer.chart.traces[-1]
    assert last["name"].startswith("recorded") and \
        last["y"][-1] == pytest.approx(report["recorded"]["usd"])
    explorer.measure.value = "facts"
    assert not any(t["name"].startswith("recorded") for t in explorer.chart.traces)
    bare = policy_explorer_widget(report, usage=[None] * len(transcript.usage)).explorer
    assert "recorded" not in bare.policies.options
    assert not any(t["name"].startswith("recorded") for t in bare.chart.traces)
    assert "recorded" not in policy_explorer_widget(report).explorer.policies.options
