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
