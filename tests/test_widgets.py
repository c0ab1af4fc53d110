"""Tests for mini_agent.ui.widgets: the pure helpers, and that the widgets redraw."""

from __future__ import annotations

from mini_agent.grading import CheckResult, Scorecard
from mini_agent.core.masking import masking_curve
from mini_agent.core.tokens import approx_tokens
from mini_agent.ui.widgets import (
    MaskingExplorer, TokenChart, chart_series, curve_totals, scorecard_html, scorecard_widget,
    slider_step, threshold_label)

OUTPUT = "\n".join("x" * 79 for _ in range(10))  # 10 lines, 799 chars


def history(n: int) -> list[dict]:
    messages = [{"role": "user", "content": "Fix it."}]
    for k in range(n):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{k}", "name": "read_file", "input": {}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"t{k}", "content": OUTPUT}]})
    return messages


def test_chart_series_and_totals():
    records = [{"raw_tokens": 5, "view_tokens": 5, "turn": 1},
               {"raw_tokens": 50, "view_tokens": 20, "usage": {}}]
    assert chart_series(records) == ([1, 2], [5, 50], [5, 20])
    assert chart_series([]) == ([], [], [])
    assert curve_totals([]) == {"requests": 0, "raw_tokens": 0, "view_tokens": 0,
                                "saved_share": 0.0}
    assert curve_totals([(1, 10, 10), (2, 90, 30)])["saved_share"] == 0.6


def test_threshold_label_names_the_value():
    assert threshold_label(8_000) == "mask threshold: 8,000 tokens"
    assert threshold_label(0) == "mask threshold: 0 tokens"


def test_masking_explorer_label_follows_the_threshold_slider():
    explorer = MaskingExplorer(history(8), keep=4, threshold_tokens=8_000)
    assert explorer.figure.layout.annotations[0].text == "mask threshold: 8,000 tokens"
    explorer.threshold_slider.value = 1_000
    label = explorer.figure.layout.annotations[0]
    assert (label.y, label.text) == (1_000, "mask threshold: 1,000 tokens")
    assert explorer.figure.layout.shapes[0].y0 == explorer.figure.layout.shapes[0].y1 == 1_000


def test_token_chart_update_and_callback():
    chart = TokenChart(threshold_tokens=100)
    chart.update([{"raw_tokens": 10, "view_tokens": 10}])
    chart.on_request({"raw_tokens": 200, "view_tokens": 60})
    assert chart.figure.data[0].x == (1, 2)
    assert chart.figure.data[0].y == (10, 200)
    assert chart.figure.data[1].y == (10, 60)
    assert chart.figure.layout.shapes[0].y0 == 100
    # what the browser gets: the chart widget's synced traces
    assert chart.chart.traces[0]["y"] == [10, 200] and chart.chart.traces[1]["y"] == [10, 60]


def test_masking_explorer_sliders_redraw():
    h = history(8)
    explorer = MaskingExplorer(h, keep=4, threshold_tokens=0)
    assert explorer.curve == masking_curve(h, keep=4, threshold_tokens=0)
    assert explorer.figure.data[1].y[-1] == explorer.curve[-1][2]
    explorer.keep_slider.value = 1
    assert explorer.curve == masking_curve(h, keep=1, threshold_tokens=0)
    assert explorer.figure.data[1].y == tuple(v for _, _, v in explorer.curve)
    explorer.threshold_slider.value = 10**6 if explorer.threshold_slider.max >= 10**6 \
        else explorer.threshold_slider.max
    assert explorer.figure.layout.shapes[0].y0 == explorer.threshold_slider.value
    label = explorer.figure.layout.annotations[0]
    assert (label.y, label.text) == (explorer.threshold_slider.value,
                                     threshold_label(explorer.threshold_slider.value))
    assert "requests sent" in explorer.summary.value
    # a threshold at the top of the range: nothing is masked, view == raw
    assert all(raw == view for _, raw, view in explorer.curve)
    assert explorer.chart.traces[1]["y"] == [v for _, _, v in explorer.curve]
    assert explorer.chart.plot_layout["shapes"][0]["y0"] == explorer.threshold_slider.value


def test_slider_step_is_round_and_lands_on_the_values():
    assert slider_step(40_064, 8_000) == 200  # top // 200 = 200: fine here...
    assert slider_step(53_400, 8_000) == 500  # ...but 267 here, which snapped 8,000 to 8,010
    assert slider_step(12_000, 8_000) == 100
    assert slider_step(12_000, 8_000, 2_500) == 100
    assert slider_step(12_000, 8_000, 2_550) == 50
    assert slider_step(40_000, 8_001) == 1
    assert slider_step(50, 0) == 1


def test_threshold_slider_positions_include_the_threshold():
    long = history(258)  # ~53,400 approx tokens: the old step (top // 200) was 267
    top = approx_tokens(long)
    assert 8_000 % (top // 200) != 0  # the old slider could not show 8,000
    explorer = MaskingExplorer(long, keep=4, threshold_tokens=8_000)
    slider = explorer.threshold_slider
    assert top <= slider.max < top + slider.step
    assert slider.step == 500 and slider.max % slider.step == 0
    assert (slider.value - slider.min) % slider.step == 0 and slider.value == 8_000
    assert explorer.chart.plot_layout["annotations"][0]["text"] == threshold_label(8_000)


def test_chart_states_are_small():
    """Executed notebooks store every widget's state: a chart must not carry plotly.js."""
    import json

    explorer = MaskingExplorer(history(60), keep=4, threshold_tokens=8_000)
    assert len(json.dumps(explorer.chart.get_state())) < 15_000
    chart = TokenChart()
    chart.update([{"raw_tokens": 100 * n, "view_tokens": 40 * n} for n in range(1, 61)])
    assert len(json.dumps(chart.chart.get_state())) < 15_000


def test_scorecard_html_escapes_and_widget():
    card = Scorecard("03", "exercises/03_masking.py", [
        CheckResult("check_a", 2, 2, True),
        CheckResult("check_b", 0, 1, False, "use <b>keep</b>", "assert 1 == 2")])
    text = scorecard_html(card)
    assert "Exercise 03: 2/3 points" in text
    assert "use &lt;b&gt;keep&lt;/b&gt;" in text and "<b>keep</b>" not in text
    assert text.count("<tr>") == 3
    box = scorecard_widget(card)
    assert box.children[0].value == 2 and box.children[0].max == 3
    assert box.children[1].value == text


def test_cache_dashboard_break_legend_states_the_detector_rule():
    from mini_agent.ui.cache_widgets import BREAK_LEGEND

    assert BREAK_LEGEND == "cache break (reads drop by > 2,000 tokens and > 5%)"


def test_cache_dashboard_dropdown_changes_the_chart_data_and_labels_stay_inside():
    import json

    from mini_agent.core.models import DEFAULT_MODEL
    from mini_agent.core.long_session import long_session
    from mini_agent.ui.cache_widgets import CacheDashboard, label_positions

    assert label_positions([1, 5, 6, 10], x_max=10) == [
        "top right", "top right", "top left", "top left"]
    messages, _ = long_session(20)
    dashboard = CacheDashboard(messages, model=DEFAULT_MODEL, system="You are careful.")
    hit, cost = dashboard.hit_figure, dashboard.cost_figure
    assert all(len(json.dumps(c.get_state())) < 15_000 for c in (hit, cost))
    assert hit.traces[1]["x"] == []  # no masking: no break
    before = cost.traces[0]["y"]
    dashboard.policy.value = "chunked masking"
    breaks = [r["request"] for r in dashboard.records if r["break"]]
    assert breaks and hit.traces[1]["x"] == breaks
    assert hit.traces[1]["textposition"] == label_positions(breaks, x_max=len(dashboard.records))
    assert hit.traces[1]["cliponaxis"] is False
    assert cost.traces[0]["y"] != before and cost.traces[1]["y"] == before
    assert hit.plot_layout["legend"]["orientation"] == "h"  # below the plot, never cut off
