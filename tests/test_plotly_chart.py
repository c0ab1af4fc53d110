"""Tests for mini_agent.ui.plotly_chart: a small saved state, one message per update, and
plotly.js sent once per page by the kernel."""

from __future__ import annotations

import json
import re

import numpy as np
import plotly.graph_objects as go
import pytest

from mini_agent.ui import plotly_chart
from mini_agent.ui.plotly_chart import (JS_PATH, REPLY_TYPE, REQUEST_TYPE, PlotlyChart,
                                        figure_state, plotly_js_bytes)


@pytest.fixture(autouse=True)
def fresh_pages(monkeypatch):
    """Each test starts with a kernel that has sent plotly.js to no page."""
    monkeypatch.setattr(PlotlyChart, "_pages_sent", {})


def recorded(chart: PlotlyChart) -> list[tuple[dict, list]]:
    """Capture what the chart sends to the browser: ``[(message, buffers), ...]``."""
    sent: list[tuple[dict, list]] = []
    chart._send = lambda msg, buffers=None: sent.append((msg, list(buffers or [])))
    return sent


def saved_state_bytes(chart: PlotlyChart) -> int:
    """Size of the chart's state as stored in a notebook's widget metadata."""
    return len(json.dumps(chart.get_state(), separators=(",", ":")))


def test_saved_state_is_the_figure_not_plotly_js():
    x = list(range(1, 201))
    chart = PlotlyChart(layout={"title": {"text": "tokens"}, "height": 360})
    chart.add_scatter(x=x, y=[n * 97 for n in x], name="raw", mode="lines+markers")
    chart.add_scatter(x=x, y=[n * 31 for n in x], name="view", mode="lines+markers")
    chart.add_hline(y=8_000, line_dash="dot", annotation_text="threshold")
    size = saved_state_bytes(chart)
    assert size < 15_000, size  # a FigureWidget with the same figure stores ~5,000,000
    assert len(chart._esm) < 10_000
    head = plotly_js_bytes()[:200].decode()
    assert "plotly.js v" in head
    assert "plotly.js v" not in json.dumps(chart.get_state())
    assert [t["name"] for t in chart.traces] == ["raw", "view"]
    assert chart.traces[1]["y"][-1] == 200 * 31
    assert chart.plot_layout["shapes"][0]["y0"] == 8_000
    assert "template" not in chart.plot_layout


def test_figure_state_plain_json_without_template():
    figure = go.Figure(go.Scatter(x=np.arange(3), y=np.array([1.5, 2.5, 4.0]), name="a"),
                       layout={"height": 300, "title": {"text": "t"}})
    traces, layout = figure_state(figure)
    assert traces == [{"name": "a", "x": [0, 1, 2], "y": [1.5, 2.5, 4.0], "type": "scatter"}]
    assert layout == {"height": 300, "title": {"text": "t"}}
    assert figure.layout.template is not None  # the figure itself keeps its template
    heat, _ = figure_state(go.Figure(go.Heatmap(z=np.arange(6).reshape(2, 3))))
    assert heat[0]["z"] == [[0, 1, 2], [3, 4, 5]]


def test_batch_update_sends_one_message_with_the_new_data():
    chart = PlotlyChart(layout={"height": 300})
    chart.add_bar(x=[1, 2], y=[3, 4], name="bars")
    chart.add_scatter(x=[1, 2], y=[5, 6], name="line")
    sent = recorded(chart)
    with chart.batch_update():
        chart.data[0].y = [30, 40]
        chart.data[1].x, chart.data[1].y = [1, 2, 3], [7, 8, 9]
        chart.figure.layout.title = "after"
    assert len(sent) == 1
    message, buffers = sent[0]
    assert message["method"] == "update" and buffers == []
    assert message["state"]["traces"][0]["y"] == [30, 40]
    assert message["state"]["traces"][1]["x"] == [1, 2, 3]
    assert message["state"]["plot_layout"]["title"] == {"text": "after"}
    assert chart.traces[1]["y"] == [7, 8, 9]


def test_nothing_sent_when_nothing_changed_and_edits_outside_a_batch_sync():
    chart = PlotlyChart([go.Scatter(x=[1], y=[1], name="one")])
    sent = recorded(chart)
    chart.sync()
    with chart.batch_update():
        pass
    assert sent == []
    chart.update_layout(height=250)
    chart.add_scatter(x=[1], y=[2], name="two")
    assert [m["state"] for m, _ in sent] == [
        {"plot_layout": {"height": 250}},
        {"traces": [{"name": "one", "x": [1], "y": [1], "type": "scatter"},
                    {"name": "two", "x": [1], "y": [2], "type": "scatter"}]}]


def test_nested_batches_send_once_at_the_outer_end():
    chart = PlotlyChart([go.Scatter(x=[1], y=[1])])
    sent = recorded(chart)
    with chart.batch_update():
        with chart.batch_update():
            chart.data[0].y = [2]
        assert sent == []
        chart.data[0].y = [3]
    assert len(sent) == 1 and sent[0][0]["state"]["traces"][0]["y"] == [3]


def test_plotly_js_sent_once_per_page_by_the_kernel():
    first, second = PlotlyChart(), PlotlyChart()
    sent_first, sent_second = recorded(first), recorded(second)
    first._on_message(first, {"type": REQUEST_TYPE, "page": "page-a"}, [])
    assert len(sent_first) == 1
    message, buffers = sent_first[0]
    assert message == {"method": "custom", "content": {"type": REPLY_TYPE}}
    assert buffers == [plotly_js_bytes()] and len(buffers[0]) > 1_000_000
    # a second chart of the same page (Run All: requests queued while the kernel was busy)
    second._on_message(second, {"type": REQUEST_TYPE, "page": "page-a"}, [])
    first._on_message(first, {"type": REQUEST_TYPE, "page": "page-a"}, [])
    assert len(sent_first) == 1 and sent_second == []
    # another page (a second browser tab) gets its own copy; other messages are ignored
    second._on_message(second, {"type": REQUEST_TYPE, "page": "page-b"}, [])
    second._on_message(second, {"type": "something else"}, [])
    second._on_message(second, "not a dict", [])
    assert len(sent_second) == 1


def test_a_page_still_waiting_long_after_is_sent_it_again(monkeypatch):
    chart = PlotlyChart()
    sent = recorded(chart)
    clock = iter([100.0, 100.0 + plotly_chart.RESEND_AFTER_SECONDS + 1])
    monkeypatch.setattr(plotly_chart.time, "monotonic", lambda: next(clock))
    chart._on_message(chart, {"type": REQUEST_TYPE, "page": "p"}, [])
    chart._on_message(chart, {"type": REQUEST_TYPE, "page": "p"}, [])
    assert len(sent) == 2


def test_front_end_matches_the_python_side_and_never_downloads():
    js = JS_PATH.read_text(encoding="utf-8")
    assert f'"{REQUEST_TYPE}"' in js and f'"{REPLY_TYPE}"' in js
    for trait in ("traces", "plot_layout", "config"):
        assert f'model.get("{trait}")' in js and f'"change:{trait}"' in js
    assert not re.search(r"https?://", js)  # plotly.js comes from the kernel, not a CDN
    # a busy kernel answers late: the wait for plotly.js has no timeout, only a placeholder
    assert "Promise.race" not in js and "reject" not in js
    assert "PLACEHOLDER_DELAY_MS = 2000" in js
    assert PlotlyChart._esm == js
