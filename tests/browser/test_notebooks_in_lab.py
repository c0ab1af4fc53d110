"""Every notebook in a real browser: JupyterLab + Chromium, Run All, then read the page.

Per notebook (one Lab server and one page for all, notebooks in sequence): open it with
``?reset``, run all cells from the menu, wait until the kernel is idle and every code cell has
an execution count, then assert what a student would see: no Python traceback and no widget
error text; every plotly chart (standard plotly.js DOM: ``.js-plotly-plot`` with ``.data``) has
traces with points; every ipywidgets slider and dropdown, when moved, changes some chart's data
within a few seconds; the grade cell shows a scorecard for a file of the notebook's own copy of
the kit. Screenshots of each chart, each scorecard and the end of each notebook go to
``$MINI_AGENT_BROWSER_ARTIFACTS`` (default: a temporary folder, printed).

Run alone: ``pytest -m browser tests/browser``; deselect: ``pytest -m "not browser"``.

A chart with no traces at all whose controls change nothing means its front-end model never
applied the kernel's messages. Seen here (plotly 7.1, anywidget 0.11) under load: each plotly
``FigureWidget`` is an anywidget whose JavaScript (``_esm``) is plotly's whole 5 MB bundle,
imported afresh from a Blob URL for every chart; anywidget rejects a model whose module is not
ready within 2 s ("[anywidget] Failed to initialize model", shown nowhere on the page) and then
drops every later message for it, so the chart stays at its constructor state (no traces) and
never updates. With the machine loaded, evaluating the bundle took 5-13 s.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lab_driver import (SCORECARD_TITLE, cell_errors, chart_element, check_controls, headings,
                        open_notebook, run_all, show_last_scorecard, shutdown_kernels,
                        wait_for_charts, widget_errors)

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p.name for p in (REPO / "notebooks").glob("*.ipynb"))
OPEN_SECONDS = 60
RUN_ALL_SECONDS = 150
CHART_SETTLE_SECONDS = 30
CONTROL_RESPONSE_SECONDS = 5

NO_TRACES_HINT = ("the chart's front-end model never applied the kernel's updates; seen when "
                  "anywidget gave up loading the widget's JavaScript after 2 s: see this "
                  "module's docstring")

MIN_CHARTS = {"02": 1, "03": 3, "04": 1, "05": 2, "08": 1}
"""Charts each notebook shows at least (a chart that fails to render is not in the DOM at all,
so without this floor a broken chart would pass as "no charts")."""


@pytest.mark.parametrize("name", NOTEBOOKS, ids=[n.removesuffix(".ipynb") for n in NOTEBOOKS])
def test_notebook_runs_and_renders_in_jupyterlab(name, lab_server, lab_page, artifacts_dir,
                                                  browser_summary):
    base_url, root = lab_server
    page, console_errors = lab_page
    console_errors.clear()
    number, stem = name[:2], name.removesuffix(".ipynb")
    problems: list[str] = []

    started = time.perf_counter()
    try:
        open_notebook(page, base_url, f"notebooks/{name}", timeout_seconds=OPEN_SECONDS)
        opened = time.perf_counter()
        try:
            unrun = run_all(page, timeout_seconds=RUN_ALL_SECONDS)
        finally:
            page.screenshot(path=str(artifacts_dir / f"{stem}-end.png"))
        ran = time.perf_counter()

        problems += [f"traceback in {e}" for e in cell_errors(page)]
        if unrun:
            problems.append(f"Run All stopped: code cells {unrun} did not run")
        problems += [f"widget error in {e}" for e in widget_errors(page)]

        charts = wait_for_charts(page, timeout_seconds=CHART_SETTLE_SECONDS,
                                 minimum=MIN_CHARTS.get(number, 0))
        if len(charts) < MIN_CHARTS.get(number, 0):
            problems.append(f"{len(charts)} plotly charts rendered, expected at least "
                            f"{MIN_CHARTS[number]}")
        for chart in charts:
            chart_element(page, chart.index).screenshot(
                path=str(artifacts_dir / f"{stem}-chart{chart.index}.png"))
            if chart.points == 0:
                problems.append(f"no points {CHART_SETTLE_SECONDS} s after Run All finished: "
                                f"{chart.describe()}"
                                + (f" ({NO_TRACES_HINT})" if not chart.traces else ""))

        control_notes = []
        if charts and not any(c.points for c in charts):
            problems.append("sliders and dropdowns not moved: no chart has data to change")
        else:
            control_problems, control_notes = check_controls(
                page, timeout_seconds=CONTROL_RESPONSE_SECONDS)
            problems += control_problems

        shown = headings(page)
        titles = [SCORECARD_TITLE.search(h) for h in shown if SCORECARD_TITLE.search(h)]
        if not titles:
            problems.append(f"no scorecard shown by the grade cell (output headings: {shown})")
        for title in titles:
            if not title.group(4).startswith(str(root)):
                problems.append(f"scorecard graded {title.group(4)}, not a file of the "
                                f"notebook's own copy {root}")
        if titles:  # the last scorecard's title at the top of the view
            show_last_scorecard(page)
            page.screenshot(path=str(artifacts_dir / f"{stem}-scorecard.png"))
    finally:
        shutdown_kernels(page, base_url)

    browser_summary.append(
        f"{stem}: open {opened - started:.1f} s, run all {ran - opened:.1f} s, checks "
        f"{time.perf_counter() - ran:.1f} s; {len(charts)} charts"
        + "".join(f"\n  {c.describe()}" for c in charts)
        + "".join(f"\n  {n}" for n in control_notes)
        + "".join(f"\n  console error: {e[:200]}" for e in console_errors[:5]))
    assert not problems, f"{stem} in JupyterLab:\n" + "\n".join(problems)
