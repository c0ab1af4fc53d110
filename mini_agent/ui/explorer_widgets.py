"""Episode 11's chart: the policy explorer's report, one measure at a time, live.

:func:`policy_explorer_widget` shows one chart of an
:func:`~mini_agent.core.replay.evaluate_session` report (made with ``keep_views=True``): a
dropdown picks the measure (message tokens sent per request, cumulative input USD with the
hindsight bound dashed, cache hit rate per request, facts kept in each view) and a multiple
selection picks the policies drawn. Given the transcript's usage, the selection also offers
``recorded``: what the session really cost as it ran, request by request (a dotted black
line; its tokens are the whole input the API counted, system prompt and tools included),
when every request has a usage; a session without one has no such choice. The traces come from
:func:`~mini_agent.core.explorer_series.explorer_series`; the chart is a
:class:`~mini_agent.ui.plotly_chart.PlotlyChart`, so the saved state is the figure's JSON.
UI only: imported by ``notebooks/11_evaluating_policies.ipynb``.

Source: the kit's evaluation chapter (cost against the hindsight bound, retention over time);
Anthropic's compaction cookbook (input tokens per approach).
"""

from __future__ import annotations

from typing import Any, Sequence

import ipywidgets as widgets

from mini_agent.core.explorer_series import (AXIS_TITLES, MEASURES, default_policies,
                                             explorer_series, policy_choices,
                                             recorded_requests, request_points_of)
from mini_agent.ui.plotly_chart import PlotlyChart

LEGEND_BELOW = {"orientation": "h", "x": 0, "y": -0.25}
"""Legends go under the plot, as in episode 05's dashboard."""


class PolicyExplorerChart:
    """A measure dropdown and a policy selection over one report; one live chart.

    Args:
        report: an :func:`~mini_agent.core.replay.evaluate_session` report made with
            ``keep_views=True``.
        measure: the starting measure key (``"tokens"``, ``"usd"``, ``"hit_rate"``,
            ``"facts"``; default ``"tokens"``).
        policies: the policies shown at first (default
            :func:`~mini_agent.core.explorer_series.default_policies`).
        points: each request's history length, for the facts measure (default: recovered
            from the report's views).
        usage: the transcript's usage per request (``transcript.usage``): adds the
            ``recorded`` choice when every request has one (default None: no recording).

    Attributes:
        measure: the ``ipywidgets.Dropdown`` of measures.
        policies: the ``SelectMultiple`` of policy names (and ``bound``, and ``recorded``
            when the session has usage).
        recorded: the :func:`~mini_agent.core.explorer_series.recorded_requests` rows, or
            None.
        chart: the :class:`~mini_agent.ui.plotly_chart.PlotlyChart`.
        widget: the ``VBox`` to display.

    Raises:
        ValueError: a report without ``keep_views`` records.
    """

    def __init__(self, report: dict[str, Any], *, measure: str = "tokens",
                 policies: Sequence[str] | None = None,
                 points: Sequence[int] | None = None,
                 usage: Sequence[Any] | None = None) -> None:
        self.report = report
        self.points = list(points) if points is not None else request_points_of(report)
        self.recorded = recorded_requests(usage, len(report["requests"]), report["model"])
        has = self.recorded is not None
        choices = policy_choices(report, recorded=has)
        chosen = default_policies(report, recorded=has) if policies is None else \
            [p for p in choices if p in set(policies)]
        self.measure = widgets.Dropdown(options=list(MEASURES.items()), value=measure,
                                        description="measure",
                                        layout=widgets.Layout(width="360px"))
        self.policies = widgets.SelectMultiple(options=choices, value=tuple(chosen),
                                               rows=min(len(choices), 8),
                                               description="policies")
        self.chart = PlotlyChart()
        self.chart.update_layout(height=380, xaxis_title="request", legend=LEGEND_BELOW,
                                 margin={"t": 50, "b": 40, "r": 30})
        self.measure.observe(self._changed, names="value")
        self.policies.observe(self._changed, names="value")
        self.widget = widgets.VBox([widgets.HBox([self.measure, self.policies]), self.chart])
        self.redraw()

    def _changed(self, _change: Any) -> None:
        self.redraw()

    def redraw(self) -> None:
        """Replace the chart's traces with the selected measure and policies."""
        traces = explorer_series(self.report, self.measure.value, self.policies.value,
                                 points=self.points, recorded=self.recorded)
        label = next(k for k, v in MEASURES.items() if v == self.measure.value)
        with self.chart.batch_update():
            self.chart.figure.data = []
            for trace in traces:
                self.chart.add_trace(trace)
            self.chart.update_layout(
                title=label, yaxis_title=AXIS_TITLES[self.measure.value], yaxis_rangemode="tozero",
                yaxis_range=[-0.05, 1.05] if self.measure.value == "hit_rate" else None)

    def _ipython_display_(self) -> None:  # pragma: no cover - notebook display only
        from IPython.display import display
        display(self.widget)


def policy_explorer_widget(report: dict[str, Any], *,
                           points: Sequence[int] | None = None,
                           usage: Sequence[Any] | None = None) -> widgets.VBox:
    """Build episode 11's chart of a report: a measure dropdown, a policy selection, a chart.

    Args:
        report: an :func:`~mini_agent.core.replay.evaluate_session` report made with
            ``keep_views=True``.
        points: each request's history length (``request_points(messages)``), for the facts
            measure; default recovered from the report's views.
        usage: the transcript's usage per request (``transcript.usage``); with one for
            every request the chart offers (and first shows) ``recorded``, what the
            session cost as it ran; default None.

    Returns:
        The ``VBox`` to display (its ``explorer`` attribute is the
        :class:`PolicyExplorerChart`).

    Raises:
        ValueError: a report without ``keep_views`` records.
    """
    explorer = PolicyExplorerChart(report, points=points, usage=usage)
    box = explorer.widget
    box.explorer = explorer
    return box
