"""Episode 05's dashboard: one recorded session replayed under masking policies, with caching.

:class:`CacheDashboard` shows, for the policy chosen in a dropdown (and the chunk size of
chunked masking on a slider), the cache hit rate of every request with each cache break
marked and named (:class:`~mini_agent.core.cache_breaks.CacheBreakDetector`), and the
cumulative input cost in USD next to "no masking" and "no caching". Replays go through
:func:`~mini_agent.core.cache_policies.replay_with_cache` (breakpoints, the offline
prompt-cache simulator, server-side clearing), so the numbers are the ones the offline Claude
reports. UI only: imported by ``notebooks/05_prompt_caching.ipynb``.

Source: seed 000 (masking breaks the cache; mask in fixed chunks) and section 4 of
002_4516104fd432e704.txt (the cache break detector); Anthropic's context editing docs
(``clear_tool_uses_20250919``, ``clear_at_least``).
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from mini_agent.core.cache_breaks import BREAK_MIN_DROP_RATIO, BREAK_MIN_DROP_TOKENS, CacheBreakDetector
from mini_agent.core.cache_policies import PaybackMasking, replay_with_cache
from mini_agent.core.masking import ChunkedMasking, ThresholdMasking
from mini_agent.core.messages import Message
from mini_agent.core.pricing import cache_hit_rate, sum_usage
from mini_agent.core.prompt_cache import min_cacheable_tokens
from mini_agent.core.context_edits import clear_tool_uses_edit
from mini_agent.ui.plotly_chart import PlotlyChart

POLICY_NAMES = ("no masking", "naive masking", "chunked masking", "server-side clearing",
                "payback masking")

BREAK_LEGEND = (f"cache break (reads drop by > {BREAK_MIN_DROP_TOKENS:,} tokens "
                f"and > {BREAK_MIN_DROP_RATIO:.0%})")
"""Legend of the break markers: the detector's default rule, so a moved prefix whose reads stay
small (no drop to detect) is not mistaken for a missed break."""

LEGEND_BELOW = {"orientation": "h", "x": 0, "y": -0.3}
"""Legends go under the plot: beside it, the long break legend is cut off in a narrow output."""


def label_positions(x: list[int], *, x_max: int) -> list[str]:
    """Place each break label so that none runs past the plot's edge.

    Args:
        x: the labelled points' x values (request numbers).
        x_max: the right end of the x axis.

    Returns:
        One textposition per point: "top left" for points in the right half of the axis,
        "top right" for the others.

    >>> label_positions([1, 5, 9], x_max=10)
    ['top right', 'top right', 'top left']
    """
    return ["top left" if 2 * v > x_max else "top right" for v in x]


def policy_settings(name: str, *, chunk: int, keep: int, model: str) -> dict[str, Any]:
    """Return ``replay_with_cache`` keyword arguments for a dashboard policy name.

    Args:
        name: one of :data:`POLICY_NAMES`: "no masking"; "naive masking" (mask every turn);
            "chunked masking" (the boundary moves by ``chunk`` results); "server-side clearing"
            (``clear_tool_uses_20250919`` with the same ``keep`` and ``clear_at_least`` = 1,000
            tokens); "payback masking" (:class:`PaybackMasking` with resume breakpoints).
        chunk: results per step of chunked masking.
        keep: tool results kept verbatim.
        model: the model id; payback masking uses its minimum cacheable length (tokens).

    Returns:
        The keyword arguments (``{}`` for "no masking").

    Raises:
        ValueError: an unknown name.
    """
    if name == "no masking":
        return {}
    if name == "naive masking":
        return {"policy": ThresholdMasking(keep=keep, threshold_tokens=0)}
    if name == "chunked masking":
        return {"policy": ChunkedMasking(keep=keep, chunk=chunk, threshold_tokens=0)}
    if name == "server-side clearing":
        return {"server_edit": clear_tool_uses_edit(trigger_input_tokens=0, keep=keep,
                                                    clear_at_least_tokens=1_000)}
    if name == "payback masking":
        return {"policy": PaybackMasking(keep=keep,
                                         min_cacheable_tokens=min_cacheable_tokens(model)),
                "resume": True}
    raise ValueError(f"unknown policy {name!r}; choose from {POLICY_NAMES}")


def replay_policy(history: list[Message], name: str, *, model: str, system: Any = None,
                  tools: list[dict] | None = None, chunk: int = 4, keep: int = 2,
                  caching: bool = True, gap_seconds: float = 20.0) -> list[dict]:
    """Replay ``history`` under the named policy with a fresh cache and a break detector.

    Args:
        history: the full recorded history.
        name: the policy, one of :data:`POLICY_NAMES` (see :func:`policy_settings`).
        model: the model id; prices and the minimum cacheable length follow it.
        system: the system prompt each replayed request carries (None: none).
        tools: the tool definitions each request carries (None: none).
        chunk: results per step of chunked masking (default 4).
        keep: tool results kept verbatim (default 2).
        caching: False replays without prompt caching ("no caching").
        gap_seconds: the time between requests (seconds; default 20, inside the 5-minute TTL).

    Returns:
        One record per request as :func:`replay_with_cache` gives it (``usage``,
        ``cost_usd`` (input only), ``hit_rate``, ``break``...).

    Raises:
        ValueError: an unknown policy name.
    """
    return replay_with_cache(history, model=model, system=system, tools=tools,
                             caching=caching, gap_seconds=gap_seconds,
                             detector=CacheBreakDetector(finer_causes=True),
                             **policy_settings(name, chunk=chunk, keep=keep, model=model))


def totals(records: list[dict]) -> dict[str, float]:
    """Sum a replay's records.

    Args:
        records: what :func:`replay_policy` returned.

    Returns:
        ``{"cost_usd", "hit_rate", "breaks"}``: input cost in USD, the cache hit rate of the
        summed usage, and the number of requests that broke the cache.
    """
    return {"cost_usd": sum(r["cost_usd"] for r in records),
            "hit_rate": cache_hit_rate(sum_usage(r["usage"] for r in records)),
            "breaks": sum(1 for r in records if r["break"])}


class CacheDashboard:
    """Dropdown (policy) + slider (chunk size) over a recorded session; two live charts.

    Args:
        history: a full recorded history.
        model: the model id each replayed request names (prices, minimum cacheable length).
        system: the system prompt each request carries.
        tools: the tool definitions each request carries.
        keep: tool results kept verbatim (default 2).
        chunk: the slider's starting chunk size (default 4; 1 to 16).

    Attributes:
        policy: the ``ipywidgets.Dropdown`` of :data:`POLICY_NAMES`.
        chunk: the ``IntSlider`` of the chunk size.
        hit_figure: the hit rate per request (:class:`~mini_agent.ui.plotly_chart.PlotlyChart`).
        cost_figure: the cumulative input cost in USD (a PlotlyChart).
        summary: an ``HTML`` line of totals.
        widget: the ``VBox`` to display.
        records: the current replay.
    """

    def __init__(self, history: list[Message], *, model: str, system: Any = None,
                 tools: list[dict] | None = None, keep: int = 2, chunk: int = 4) -> None:
        self.history, self.model, self.system, self.tools, self.keep = \
            history, model, system, tools, keep
        self.policy = widgets.Dropdown(options=POLICY_NAMES, value="no masking",
                                       description="policy")
        self.chunk = widgets.IntSlider(value=chunk, min=1, max=16, description="chunk size")
        self.hit_figure = PlotlyChart()
        with self.hit_figure.batch_update():
            self.hit_figure.add_scatter(x=[], y=[], mode="lines+markers", name="hit rate")
            self.hit_figure.add_scatter(x=[], y=[], mode="markers+text", name=BREAK_LEGEND,
                                        marker={"symbol": "x", "size": 12, "color": "#c92a2a"},
                                        textposition="top right", cliponaxis=False,
                                        showlegend=True)
            self.hit_figure.update_layout(
                title="Cache hit rate per request", height=360, legend=LEGEND_BELOW,
                showlegend=True,
                yaxis={"range": [-0.05, 1.15], "title": "read / input"},
                xaxis_title="request", margin={"t": 50, "b": 40, "r": 30})
        self.cost_figure = PlotlyChart()
        with self.cost_figure.batch_update():
            for name in ("selected policy, with caching", "no masking, with caching",
                         "no masking, no caching"):
                self.cost_figure.add_scatter(x=[], y=[], mode="lines", name=name)
            self.cost_figure.update_layout(title="Cumulative input cost (USD)", height=360,
                                           xaxis_title="request", yaxis_title="USD",
                                           legend=LEGEND_BELOW, margin={"t": 50, "b": 40})
        self.summary = widgets.HTML()
        self._reference = {
            "cache": replay_policy(history, "no masking", model=model, system=system,
                                   tools=tools),
            "nocache": replay_policy(history, "no masking", model=model, system=system,
                                     tools=tools, caching=False)}
        self.records: list[dict] = []
        self.policy.observe(self._changed, names="value")
        self.chunk.observe(self._changed, names="value")
        self.widget = widgets.VBox([widgets.HBox([self.policy, self.chunk]), self.hit_figure,
                                    self.cost_figure, self.summary])
        self.redraw()

    def _changed(self, _change: Any) -> None:
        self.redraw()

    def redraw(self) -> None:
        """Replay under the selected policy and chunk size; redraw charts and summary."""
        self.records = replay_policy(self.history, self.policy.value, model=self.model,
                                     system=self.system, tools=self.tools,
                                     chunk=self.chunk.value, keep=self.keep)
        x = [r["request"] for r in self.records]
        breaks = [r for r in self.records if r["break"]]
        with self.hit_figure.batch_update():
            self.hit_figure.data[0].x, self.hit_figure.data[0].y = \
                x, [r["hit_rate"] for r in self.records]
            self.hit_figure.data[1].x = [r["request"] for r in breaks]
            self.hit_figure.data[1].y = [r["hit_rate"] for r in breaks]
            self.hit_figure.data[1].text = [", ".join(r["break"]["causes"]) for r in breaks]
            self.hit_figure.data[1].textposition = label_positions(
                [r["request"] for r in breaks], x_max=max(x, default=1))
        series = [self.records, self._reference["cache"], self._reference["nocache"]]
        with self.cost_figure.batch_update():
            for trace, records in zip(self.cost_figure.data, series):
                running, ys = 0.0, []
                for r in records:
                    running += r["cost_usd"]
                    ys.append(running)
                trace.x, trace.y = [r["request"] for r in records], ys
        mine, cache, nocache = (totals(s) for s in series)
        self.summary.value = (
            f"{self.policy.value}: ${mine['cost_usd']:.4f} input, hit rate "
            f"{mine['hit_rate']:.0%}, {mine['breaks']} breaks; caching alone "
            f"${cache['cost_usd']:.4f}; no caching ${nocache['cost_usd']:.4f}")

    def _ipython_display_(self) -> None:  # pragma: no cover - notebook display only
        from IPython.display import display
        display(self.widget)
