"""A live view of a progress file: one square per item coloured by state, the kills marked.

:class:`ProgressView` is an ``ipywidgets.HTML`` you display in a notebook and pass as
``on_event`` to :func:`mini_agent.harness.checkpoint_lab.run_lab`: while the lab runs, it
re-reads the progress file (at most every ``min_interval_seconds``, and at every kill) and
redraws. :func:`progress_html` builds the HTML from a progress document, so tests check it
without a browser. Imported only by notebooks. Taught in
``notebooks/10_checkpoints_and_handoff.ipynb``.

Source: 004_b74ef821c58ee4ec.txt (lab 1: a job killed at forced points and resumed from its
progress file; each item pending, in progress, done or failed).
"""

from __future__ import annotations

import html
import json
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

import ipywidgets as widgets

STATE_COLORS = {"pending": "#ced4da", "in_progress": "#f59f00", "done": "#2f9e44",
                "failed": "#e03131"}
PHASE_LABELS = {"after_intent": "after intent", "after_execute": "after the write",
                "after_result": "after result"}


def progress_html(progress: Mapping[str, Any] | None, *, kills: Iterable[Mapping] = (),
                  title: str = "") -> str:
    """Return the view's HTML: a legend with counts, one square per item, kills marked.

    Args:
        progress: the progress document (None: "waiting for the progress file").
        kills: ``{"item", "phase"}`` points where the worker was killed (marked with a red
            border and listed).
        title: a line shown above the squares (the lab's phase).

    Returns:
        The HTML fragment, every text escaped.
    """
    head = f"<div style='font-weight:600'>{html.escape(title)}</div>" if title else ""
    if not progress:
        return head + "<div>waiting for the progress file...</div>"
    kills = list(kills)
    killed = {k["item"]: k for k in kills}
    counts = dict.fromkeys(STATE_COLORS, 0)
    cells = []
    for item in progress["items"]:
        counts[item["state"]] = counts.get(item["state"], 0) + 1
        mark = killed.get(item["id"])
        border = "2px solid #c92a2a" if mark else "1px solid #fff"
        tip = f"{item['id']}: {item['state']}" + (
            f" (killed {PHASE_LABELS.get(mark['phase'], mark['phase'])})" if mark else "")
        cells.append(f"<span title='{html.escape(tip)}' style='display:inline-block;"
                     f"width:12px;height:12px;margin:1px;box-sizing:border-box;"
                     f"background:{STATE_COLORS.get(item['state'], '#000')};"
                     f"border:{border}'></span>")
    legend = " ".join(
        f"<span style='color:{STATE_COLORS[s]}'>&#9632;</span> {s} {counts[s]}"
        for s in STATE_COLORS)
    kill_list = "; ".join(f"kill {n}: {html.escape(k['item'])} "
                          f"{PHASE_LABELS.get(k['phase'], k['phase'])}"
                          for n, k in enumerate(kills, 1))
    return (head + f"<div style='font-family:monospace;font-size:12px'>{legend}</div>"
            f"<div style='max-width:560px;line-height:0'>{''.join(cells)}</div>"
            + (f"<div style='color:#c92a2a;font-size:12px'>{kill_list}</div>" if kills else ""))


class ProgressView:
    """An HTML widget that follows a progress file during the kill lab.

    Args: min_interval_seconds: least time between two redraws on routine events (a kill or
    a phase change always redraws). Attributes: ``widget`` (display it), ``kills``,
    ``redraws`` (how many times it drew).
    """

    def __init__(self, *, min_interval_seconds: float = 0.25) -> None:
        self.widget = widgets.HTML(progress_html(None))
        self.kills: list[dict] = []
        self.title = ""
        self.redraws = 0
        self.min_interval_seconds = min_interval_seconds
        self._last = 0.0

    def __call__(self, event: Mapping[str, Any]) -> None:
        """Take one lab event (``run_lab(on_event=view)``) and redraw when due."""
        kind = event.get("kind")
        forced = kind in ("killed", "phase")
        if kind == "killed":
            self.kills.append({"item": event["item"], "phase": event["phase"]})
        if kind == "phase":
            self.title = {"reference": "uninterrupted reference run",
                          "killed_run": "the run that gets killed",
                          "finished": "finished"}.get(event["phase"], event["phase"])
        now = time.monotonic()
        if forced or now - self._last >= self.min_interval_seconds:
            self._last = now
            self.show(event.get("progress_path"))

    def show(self, progress_path: str | Path | None) -> None:
        """Redraw from the progress file.

        Args:
            progress_path: the progress file; a missing or torn file (or None) shows as waiting.
        """
        progress = None
        if progress_path and Path(progress_path).exists():
            try:
                progress = json.loads(Path(progress_path).read_text(encoding="utf-8"))
            except ValueError:
                progress = None
        self.widget.value = progress_html(progress, kills=self.kills, title=self.title)
        self.redraws += 1

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
