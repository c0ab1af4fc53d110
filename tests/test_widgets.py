"""Tests for mini_agent.ui.widgets: the pure helpers, and that the widgets redraw."""

from __future__ import annotations

from mini_agent.grading import CheckResult, Scorecard
from mini_agent.core.masking import masking_curve
from mini_agent.ui.widgets import (
                                   MaskingExplorer, TokenChart, chart_series, curve_totals, scorecard_html, scorecard_widget,
                                   threshold_label)

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
