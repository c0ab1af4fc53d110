"""Live widgets for the episode notebooks: token charts, masking sliders, the scorecard.

* :class:`TokenChart`: a :class:`~mini_agent.ui.plotly_chart.PlotlyChart` of raw vs view
  approx tokens per request, fed from ``agent.requests`` (``update``) or one record at a time
  while the agent runs (``on_request``); redraws inside ``batch_update()`` so each update is
  one message to the browser.
* :class:`MaskingExplorer`: ipywidgets sliders for ``keep`` and the threshold over a recorded
  history; the chart redraws at once from :func:`mini_agent.core.masking.masking_curve`.
* :func:`scorecard_widget`: a graded exercise's :class:`~mini_agent.grading.Scorecard` as HTML.

The logic lives in pure helpers (:func:`chart_series`, :func:`curve_totals`,
:func:`threshold_label`, :func:`slider_step`, :func:`scorecard_html`) that tests call without a
browser. Imported only by notebooks (this module pulls in plotly and ipywidgets). Taught in
``notebooks/03_observation_masking.ipynb``.

Source: 000_86e3ff2076a5ae37.txt (``/stats``: raw vs masked approx tokens; keep=4; mask above
8,000 tokens).
"""

from __future__ import annotations

import html
from typing import Any, Iterable, Mapping, Sequence

import ipywidgets as widgets
import plotly.graph_objects as go

from mini_agent.core.masking import KEEP_RECENT_OBSERVATIONS, MASK_THRESHOLD_TOKENS, masking_curve
from mini_agent.core.messages import Message
from mini_agent.core.tokens import approx_tokens
from mini_agent.ui.plotly_chart import PlotlyChart

RAW_COLOR = "#9aa5b1"
VIEW_COLOR = "#d9480f"


def chart_series(requests: Iterable[Mapping[str, Any]]) -> tuple[list[int], list[int], list[int]]:
    """Return the chart's three series from per-request records.

    Args:
        requests: records ``{"raw_tokens": int, "view_tokens": int, ...}`` (the Agent's
            ``agent.requests``), in request order.

    Returns:
        ``(request_numbers, raw_tokens, view_tokens)``; request numbers count from 1 in list
        order.

    >>> chart_series([{"raw_tokens": 10, "view_tokens": 10}, {"raw_tokens": 30, "view_tokens": 12}])
    ([1, 2], [10, 30], [10, 12])
    """
    records = list(requests)
    return (list(range(1, len(records) + 1)), [int(r["raw_tokens"]) for r in records],
            [int(r["view_tokens"]) for r in records])


def curve_totals(curve: Sequence[tuple[int, int, int]]) -> dict[str, float]:
    """Sum a masking curve over its requests.

    Args:
        curve: ``(request, raw_tokens, view_tokens)`` per request, as
            :func:`~mini_agent.core.masking.masking_curve` gives it.

    Returns:
        ``{"requests", "raw_tokens", "view_tokens", "saved_share"}``; saved_share = 1 - view/raw,
        0..1, rounded to 4 places (0 for an empty curve).

    >>> curve_totals([(1, 100, 100), (2, 300, 100)])
    {'requests': 2, 'raw_tokens': 400, 'view_tokens': 200, 'saved_share': 0.5}
    """
    raw = sum(r for _, r, _ in curve)
    view = sum(v for _, _, v in curve)
    return {"requests": len(curve), "raw_tokens": raw, "view_tokens": view,
            "saved_share": round(1 - view / raw, 4) if raw else 0.0}


def threshold_label(threshold_tokens: int) -> str:
    """Return the text beside the dashed threshold line.

    Args:
        threshold_tokens: the masking threshold (tokens).

    Returns:
        The label, with the value's thousands separated.

    >>> threshold_label(8_000)
    'mask threshold: 8,000 tokens'
    """
    return f"mask threshold: {threshold_tokens:,} tokens"


def slider_step(top: int, *values: int, min_positions: int = 100) -> int:
    """Return the largest round step that lands exactly on every one of ``values``.

    A round step is 1, 2 or 5 x 10^k, and it must still give a slider over ``0..top`` at least
    ``min_positions`` positions. A step of ``top // 200`` (8,010 for a top of 40,064) snaps
    8,000 to 8,010, so the chart label disagrees with the prose; a round step that divides 8,000
    does not.

    Args:
        top: the slider's maximum.
        values: the values the slider must be able to show exactly (its start, the prose's).
        min_positions: the least number of steps from 0 to ``top`` (default 100).

    Returns:
        The step (1 when no larger round step divides every value).

    >>> slider_step(40_064, 8_000), slider_step(12_000, 8_000), slider_step(40_064, 8_001)
    (200, 100, 1)
    """
    best, base = 1, 1
    while base * min_positions <= top:
        for step in (base, 2 * base, 5 * base):
            if step * min_positions <= top and all(v % step == 0 for v in values):
                best = step
        base *= 10
    return best


def _figure(title: str, threshold_tokens: int | None) -> PlotlyChart:
    fig = PlotlyChart()
    fig.add_scatter(x=[], y=[], name="raw history (approx tokens)", mode="lines+markers",
                    line={"color": RAW_COLOR})
    fig.add_scatter(x=[], y=[], name="view sent (approx tokens)", mode="lines+markers",
                    line={"color": VIEW_COLOR})
    fig.update_layout(title=title, xaxis_title="request", yaxis_title="approx tokens",
                      height=360, margin={"l": 60, "r": 20, "t": 50, "b": 40},
                      legend={"orientation": "h", "y": -0.25})
    if threshold_tokens is not None:
        fig.add_hline(y=threshold_tokens, line_dash="dot", line_color="#495057",
                      annotation_text=threshold_label(threshold_tokens))
    return fig


class TokenChart:
    """A live chart of raw vs view approx tokens per request.

    Use: ``chart = TokenChart(); chart`` (displays it), then either ``chart.update(
    agent.requests)`` after (or during) a run, or pass ``chart.on_request`` as a per-request
    callback. Attributes: chart (the :class:`PlotlyChart` widget), figure (the
    ``go.Figure`` it shows), requests (the records drawn so far).
    """

    def __init__(self, *, title: str = "Raw history vs the view sent",
                 threshold_tokens: int | None = MASK_THRESHOLD_TOKENS) -> None:
        self.chart = _figure(title, threshold_tokens)
        self.requests: list[Mapping[str, Any]] = []

    @property
    def figure(self) -> go.Figure:
        """The figure the chart shows (edit it inside ``chart.batch_update()``)."""
        return self.chart.figure

    def update(self, requests: Iterable[Mapping[str, Any]]) -> None:
        """Redraw from all records, in one ``batch_update``.

        Args:
            requests: every request's record so far (e.g. ``agent.requests``); see
                :func:`chart_series`.
        """
        self.requests = list(requests)
        x, raw, view = chart_series(self.requests)
        with self.chart.batch_update():
            self.figure.data[0].x, self.figure.data[0].y = x, raw
            self.figure.data[1].x, self.figure.data[1].y = x, view

    def on_request(self, record: Mapping[str, Any], *_: Any) -> None:
        """Add one request's record and redraw (a callback for the agent, one per request).

        Args:
            record: the request's record (``raw_tokens``, ``view_tokens``...).
            _: further callback arguments, ignored.
        """
        self.update([*self.requests, record])

    def _ipython_display_(self) -> None:  # pragma: no cover - notebook display only
        from IPython.display import display
        display(self.chart)


class MaskingExplorer:
    """Sliders for ``keep`` and the threshold over a recorded history; the chart follows.

    Each slider change recomputes :func:`masking_curve` (one linear pass) and redraws in one
    ``batch_update``; a summary line shows the tokens sent over all requests. The threshold
    slider's step is round and lands on ``threshold_tokens`` exactly (:func:`slider_step`).
    Attributes: keep_slider, threshold_slider (``ipywidgets.IntSlider``), chart (the
    :class:`PlotlyChart`), figure (its ``go.Figure``), summary (``ipywidgets.HTML``), widget
    (the ``VBox`` to display), curve (the last computed curve).
    Raises: ValueError for keep < 0 (from masking_curve).
    """

    def __init__(self, history: list[Message], *, keep: int = KEEP_RECENT_OBSERVATIONS,
                 threshold_tokens: int = MASK_THRESHOLD_TOKENS, max_keep: int = 20,
                 chunk: int = 1, title: str = "Masking a recorded run") -> None:
        self.history = history
        self.chunk = chunk
        top = max(approx_tokens(history), threshold_tokens, 1_000)
        step = slider_step(top, threshold_tokens)
        self.keep_slider = widgets.IntSlider(value=keep, min=0, max=max(max_keep, keep),
                                             description="keep")
        self.threshold_slider = widgets.IntSlider(
            value=threshold_tokens, min=0, max=-(-top // step) * step, step=step,
            description="threshold", continuous_update=True)
        self.chart = _figure(title, threshold_tokens)
        self.summary = widgets.HTML()
        self.curve: list[tuple[int, int, int]] = []
        self.keep_slider.observe(self._changed, names="value")
        self.threshold_slider.observe(self._changed, names="value")
        self.widget = widgets.VBox([widgets.HBox([self.keep_slider, self.threshold_slider]),
                                    self.chart, self.summary])
        self.redraw()

    @property
    def figure(self) -> go.Figure:
        """The figure the chart shows."""
        return self.chart.figure

    def _changed(self, _change: Any) -> None:
        self.redraw()

    def redraw(self) -> None:
        """Recompute the curve for the sliders' values and redraw chart and summary."""
        keep, threshold = self.keep_slider.value, self.threshold_slider.value
        self.curve = masking_curve(self.history, keep=keep, threshold_tokens=threshold,
                                   chunk=self.chunk)
        x = [r for r, _, _ in self.curve]
        with self.chart.batch_update():
            self.figure.data[0].x, self.figure.data[0].y = x, [raw for _, raw, _ in self.curve]
            self.figure.data[1].x, self.figure.data[1].y = x, [v for _, _, v in self.curve]
            if self.figure.layout.shapes:  # the dashed line and its label move together
                self.figure.layout.shapes[0].y0 = threshold
                self.figure.layout.shapes[0].y1 = threshold
                self.figure.layout.annotations[0].y = threshold
                self.figure.layout.annotations[0].text = threshold_label(threshold)
        totals = curve_totals(self.curve)
        self.summary.value = (
            f"keep={keep}, threshold={threshold:,} tokens: {totals['requests']} requests sent "
            f"~{totals['view_tokens']:,} tokens instead of ~{totals['raw_tokens']:,} "
            f"(<b>{totals['saved_share']:.0%} saved</b>)")

    def _ipython_display_(self) -> None:  # pragma: no cover - notebook display only
        from IPython.display import display
        display(self.widget)


def scorecard_html(card: Any) -> str:
    """Render a Scorecard as HTML.

    A title naming the score, the file graded and the kit version; an import error (once) if
    the file does not import; a crash that failed several checks (the same exception at the
    same line), once, with its line; a change to the input that failed several checks, once,
    with the hint of the check there to catch it; then one row per check (pass/fail, points,
    hint and what came back, or "crashed" / "changed the input" for the checks of such a
    crash or change, without their hints).
    Hints, paths, code and failure details are HTML-escaped.

    Args:
        card: a :class:`~mini_agent.grading.Scorecard`.

    Returns:
        The HTML fragment.
    """
    rows, crashed, crash_notes = [], {}, []
    for (exception, _, _), found in card.crashes().items():
        raised = found[0].raised
        crashed.update((c.name, raised) for c in found)
        crash_notes.append(
            f"<p style='color:#c92a2a'>The same <code>{html.escape(exception)}</code> at "
            f"{html.escape(raised.place)} failed {len(found)} checks: fix that line first "
            f"(their hints are left out: a hint is about a wrong value, not a crash).<br>"
            + (f"<code>{html.escape(raised.code)}</code><br>" if raised.code else "")
            + f"<small><code>{html.escape(exception)}: {html.escape(raised.message)}"
              f"</code></small></p>")
    changed = {}
    for argument, found in card.changes().items():
        changed.update((c.name, argument) for c in found)
        crash_notes.append(
            f"<p style='color:#c92a2a'>Changing the input (<code>{html.escape(argument)}</code>)"
            f" failed {len(found)} checks: {html.escape(card.change_hint(found))} (their own "
            f"hints are left out: the change failed them, not a wrong value).<br>"
            f"<small><code>{html.escape(found[0].detail)}</code></small></p>")
    for c in card.checks:
        mark = ("<span style='color:#2b8a3e'>&#10004;</span>" if c.passed
                else "<span style='color:#c92a2a'>&#10008;</span>")
        if c.passed or card.error:
            note = ""
        elif c.name in crashed:
            note = (f"crashed: the {html.escape(crashed[c.name].exception)} at "
                    f"{html.escape(crashed[c.name].place)} (above)")
        elif c.name in changed:
            note = f"changed the input (<code>{html.escape(changed[c.name])}</code>) (above)"
        else:
            note = html.escape(c.hint)
            if c.detail:
                note += f"<br><small><code>{html.escape(c.detail)}</code></small>"
            if c.raised is not None:
                note += f"<br><small>{html.escape(card.raised_text(c.raised))}</small>"
        rows.append(f"<tr><td>{mark}</td><td><code>{html.escape(c.name)}</code></td>"
                    f"<td>{c.points}/{c.max_points}</td><td>{note}</td></tr>")
    error = (f"<pre style='color:#c92a2a'>{html.escape(card.error)}</pre>" if card.error
             else "".join(crash_notes))
    return (f"<h4>Exercise {html.escape(card.exercise)}: {card.score}/{card.total} points "
            f"<small>(<code>{html.escape(card.path or card.implementation)}</code>, "
            f"mini-agent {html.escape(card.kit_version)})</small></h4>" + error
            + "<table><tr><th></th><th>check</th><th>points</th><th>hint</th></tr>"
            + "".join(rows) + "</table>")


def scorecard_widget(card: Any) -> widgets.VBox:
    """Show the scorecard as a widget.

    Args:
        card: a :class:`~mini_agent.grading.Scorecard`.

    Returns:
        A ``VBox``: a progress bar of points (green at full marks) and the HTML table.
    """
    bar = widgets.IntProgress(value=card.score, min=0, max=max(card.total, 1),
                              description=f"{card.score}/{card.total}",
                              bar_style="success" if card.full_marks else "warning")
    return widgets.VBox([bar, widgets.HTML(scorecard_html(card))])
