"""A live plotly chart whose saved state is the figure only, not the plotly.js library.

Why not plotly's ``FigureWidget``: since plotly 6 it is an anywidget whose front-end module
(its ``_esm`` trait) *is* the whole plotly.js bundle, about 5 MB, and a widget's traits are
stored in the notebook with its widget state. Every chart then adds 5 MB to an executed
notebook (notebook 03 with three charts weighed 15 MB).

:class:`PlotlyChart` is an anywidget too, with a front end of a few kilobytes
(``plotly_chart.js`` beside this file) and three synced traits: ``traces``, ``plot_layout``
and ``config``, the figure as plain JSON (a few kilobytes for the kit's charts). plotly.js
reaches the browser once per page: the first chart asks its kernel with a custom message, the
kernel answers with the installed plotly package's own ``plotly.min.js`` (no network), and
every chart on the page shares that copy. While the kernel is busy (a "Run All"), charts show
a light placeholder and wait with no time limit. The drawn chart is the standard plotly DOM:
a ``.js-plotly-plot`` div whose ``.data`` holds the traces.

Use it like a ``FigureWidget``: build with ``go.Figure`` arguments or methods, edit
``chart.data[i]`` / ``chart.figure.layout`` inside ``with chart.batch_update():`` (one message
to the browser when the block ends), or call :meth:`PlotlyChart.sync` after editing
``chart.figure`` directly. UI only: imported by the notebooks and :mod:`mini_agent.ui`'s
widgets.

Source: plotly 6's ``FigureWidget`` (an anywidget whose ``_esm`` trait is the plotly.js
bundle) and anywidget's custom messages (``model.send`` / ``on_msg``), as measured in the kit
(notebook 03: 15 MB executed with FigureWidget).
"""

from __future__ import annotations

import base64
import json
import time
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import anywidget
import plotly.graph_objects as go
import traitlets
from plotly.utils import PlotlyJSONEncoder

JS_PATH = Path(__file__).with_name("plotly_chart.js")
REQUEST_TYPE = "mini_agent.plotly_js.request"
"""Custom message a chart's front end sends when its page has no plotly.js yet."""
REPLY_TYPE = "mini_agent.plotly_js"
"""Custom message carrying plotly.min.js (UTF-8, as one binary buffer)."""
RESEND_AFTER_SECONDS = 60.0
"""A page asking again this long after it was sent plotly.js gets it again (a lost reply)."""


@lru_cache(maxsize=1)
def plotly_js_bytes() -> bytes:
    """Return the installed plotly package's ``plotly.min.js`` as UTF-8 bytes (read once).

    Returns:
        About 4.8 MB for plotly 7; the same file ``plotly.offline`` embeds in HTML.
    """
    from plotly.offline import get_plotlyjs

    return get_plotlyjs().encode("utf-8")


def _plain(value: Any) -> Any:
    """Lists, dicts and scalars only: numpy arrays, plotly's base64 typed arrays
    (``{"dtype": "f8", "bdata": "..."}``) and tuples become lists."""
    if isinstance(value, dict):
        if set(value) in ({"dtype", "bdata"}, {"dtype", "bdata", "shape"}):
            import numpy as np

            array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
            shape = value.get("shape")
            if shape:
                array = array.reshape([int(n) for n in str(shape).split(",")])
            return array.tolist()
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars, pandas series
        return _plain(value.tolist())
    return value


def figure_state(figure: go.Figure) -> tuple[list[dict], dict]:
    """Return ``(traces, layout)`` of a figure as plain JSON values, without its template.

    The template (plotly.py's default style, about 7 KB) is left out; plotly.js draws with its
    own defaults.

    Args:
        figure: any plotly figure; not modified.
    Returns:
        ``traces``: one dict per trace (``{"type": "scatter", "x": [...], ...}``);
        ``layout``: the layout dict without ``"template"``.

    >>> traces, layout = figure_state(go.Figure(go.Bar(x=[1], y=[2]), layout={"height": 300}))
    >>> traces, layout
    ([{'x': [1], 'y': [2], 'type': 'bar'}], {'height': 300})
    """
    spec = json.loads(json.dumps(_plain(figure.to_plotly_json()), cls=PlotlyJSONEncoder))
    layout = spec.get("layout", {})
    layout.pop("template", None)
    return spec.get("data", []), layout


class PlotlyChart(anywidget.AnyWidget):
    """A plotly chart widget: small saved state, plotly.js sent once per page by the kernel.

    Args:
        data: traces, as for ``go.Figure`` (a trace, a list of traces or dicts), or a whole
            ``go.Figure`` (copied).
        layout: layout dict or ``go.Layout``, as for ``go.Figure``.
        config: plotly.js config (e.g. ``{"displayModeBar": False}``).
    Attributes:
        figure: the ``go.Figure`` the chart shows (validated by plotly.py).
        traces, plot_layout, config: the synced state (plain JSON).
    """

    _esm = JS_PATH.read_text(encoding="utf-8")
    traces = traitlets.List(traitlets.Dict()).tag(sync=True)
    plot_layout = traitlets.Dict().tag(sync=True)
    config = traitlets.Dict().tag(sync=True)

    _pages_sent: dict[str, float] = {}
    """Page id -> time.monotonic() when this kernel sent it plotly.js (shared by all charts)."""

    def __init__(self, data: Any = None, layout: Any = None, *, config: dict | None = None,
                 **kwargs: Any) -> None:
        figure = go.Figure(data) if isinstance(data, go.Figure) else go.Figure(data=data)
        if layout is not None:
            figure.update_layout(layout)
        self.figure = figure
        self._batch_depth = 0
        traces, plot_layout = figure_state(figure)
        super().__init__(traces=traces, plot_layout=plot_layout, config=config or {},
                         **kwargs)
        self.on_msg(self._on_message)

    # -- the figure ---------------------------------------------------------------------------
    @property
    def data(self) -> tuple:
        """The figure's traces (``chart.data[0].y = ...`` inside ``batch_update``)."""
        return self.figure.data

    def sync(self) -> None:
        """Send the figure's current traces and layout to the browser.

        One message for both; none when nothing changed.
        """
        traces, plot_layout = figure_state(self.figure)
        with self.hold_sync():
            self.traces = traces
            self.plot_layout = plot_layout

    @contextmanager
    def batch_update(self) -> Iterator[PlotlyChart]:
        """Edit the figure inside the block; the browser gets the result once, at the end.

        Blocks nest: only the outermost one syncs.

        Yields:
            The chart itself.
        """
        self._batch_depth += 1
        try:
            yield self
        finally:
            self._batch_depth -= 1
            if not self._batch_depth:
                self.sync()

    def _edit(self, method: str, *args: Any, **kwargs: Any) -> PlotlyChart:
        getattr(self.figure, method)(*args, **kwargs)
        if not self._batch_depth:
            self.sync()
        return self

    def add_trace(self, trace: Any, **kwargs: Any) -> PlotlyChart:
        """Call ``go.Figure.add_trace`` on the figure, then sync (unless inside a batch).

        Args:
            trace: a plotly trace (``go.Scatter(...)``) or its dict.
            kwargs: passed on (``row``, ``col``, ``secondary_y``).

        Returns:
            The chart itself, so calls chain.
        """
        return self._edit("add_trace", trace, **kwargs)

    def add_scatter(self, **kwargs: Any) -> PlotlyChart:
        """Call ``go.Figure.add_scatter`` on the figure, then sync (unless inside a batch).

        Args:
            kwargs: the ``go.Scatter`` properties (``x``, ``y``, ``name``, ``mode``...).

        Returns:
            The chart itself, so calls chain.
        """
        return self._edit("add_scatter", **kwargs)

    def add_bar(self, **kwargs: Any) -> PlotlyChart:
        """Call ``go.Figure.add_bar`` on the figure, then sync (unless inside a batch).

        Args:
            kwargs: the ``go.Bar`` properties (``x``, ``y``, ``name``...).

        Returns:
            The chart itself, so calls chain.
        """
        return self._edit("add_bar", **kwargs)

    def add_hline(self, y: float, **kwargs: Any) -> PlotlyChart:
        """Call ``go.Figure.add_hline`` on the figure, then sync (unless inside a batch).

        A line across the plot at ``y``, with its annotation.

        Args:
            y: where the line crosses the y axis (in the axis's units).
            kwargs: passed on (``line_dash``, ``annotation_text``...).

        Returns:
            The chart itself, so calls chain.
        """
        return self._edit("add_hline", y, **kwargs)

    def update_layout(self, *args: Any, **kwargs: Any) -> PlotlyChart:
        """Call ``go.Figure.update_layout`` on the figure, then sync (unless inside a batch).

        Args:
            args: a layout dict, merged into the current layout.
            kwargs: layout properties (``title``, ``xaxis_range``...).

        Returns:
            The chart itself, so calls chain.
        """
        return self._edit("update_layout", *args, **kwargs)

    def update_traces(self, *args: Any, **kwargs: Any) -> PlotlyChart:
        """Call ``go.Figure.update_traces`` on the figure, then sync (unless inside a batch).

        Args:
            args: a dict of trace properties applied to every selected trace.
            kwargs: trace properties, and ``selector`` to pick the traces.

        Returns:
            The chart itself, so calls chain.
        """
        return self._edit("update_traces", *args, **kwargs)

    # -- plotly.js, once per page -------------------------------------------------------------
    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("type") != REQUEST_TYPE:
            return
        page = str(content.get("page", ""))
        now = time.monotonic()
        sent = self._pages_sent.get(page)
        if sent is not None and now - sent < RESEND_AFTER_SECONDS:
            return  # another chart of this page already carried it there
        self._pages_sent[page] = now
        self.send({"type": REPLY_TYPE}, buffers=[plotly_js_bytes()])

    def __repr__(self) -> str:
        return f"PlotlyChart({len(self.traces)} traces)"
