"""Drive a notebook in JupyterLab from Playwright and read what the page shows.

What it does: open a notebook in a running Lab (``?reset``, so Lab does not reopen the previous
tab), wait until its kernel exists and is idle, *Run > Run All Cells* through the menu, wait until
every code cell has run, then read the page: plotly charts (the standard plotly.js DOM, a
``.js-plotly-plot`` element whose ``.data`` holds the traces, as rendered both by plotly's
``FigureWidget`` and by any widget that draws with plotly.js), widget error text, ipywidgets
sliders and dropdowns, and the scorecard of a grade cell. What it does not do: start Lab or the
browser (tests/browser/conftest.py does), or decide what is a failure (the test does).

Known traps handled here: the kernel indicator reads "idle" before any kernel exists (wait for
the kernel's name first); a "Select Kernel" dialog (accept the default); the news pop-up.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

WIDGET_ERROR_TEXTS = (
    "Error displaying widget",       # @jupyter-widgets/jupyterlab-manager: model not found
    "Failed to load model",          # loadModelClass / anywidget
    "Failed to load view",           # loadViewClass
    "Failed to create view",         # create_view
    "Failed to initialize model",    # anywidget
    "Could not create a view",
    "Could not instantiate widget",
    "Click to show javascript error",  # @jupyter-widgets/base ErrorWidgetView
)
"""Text the widget front-ends put in an output area when a widget cannot be shown."""

SCORECARD_TITLE = re.compile(r"Exercise (\d\d): (\d+)/(\d+) points \((.+), mini-agent ([^)]+)\)")
"""A scorecard's first line (``mini_agent.ui.widgets.scorecard_html``): exercise, score, total,
path of the file graded, kit version."""

_PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # the notebook in view
_TOOLBAR = f"{_PANEL} .jp-NotebookPanel-toolbar"
_KERNEL_NAME = f"{_TOOLBAR} .jp-KernelName"
_INDICATOR = f"{_TOOLBAR} .jp-Notebook-ExecutionIndicator"

# Run All has finished: the kernel reads idle, no code cell is queued or running ("[*]:"), and
# either every code cell has an execution count ("[12]:") or a traceback stopped the run (the
# cells after it stay "[ ]:"). Notebooks are stored without outputs, so neither holds before.
_RUN_FINISHED_JS = r"""() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  if (!panel) return false;
  const indicator = panel.querySelector('.jp-Notebook-ExecutionIndicator');
  if (!indicator || indicator.dataset.status !== 'idle') return false;
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')]
    .map(p => p.textContent.trim());
  if (prompts.length === 0 || prompts.some(p => p === '[*]:')) return false;
  return prompts.every(p => /^\[\d+\]:$/.test(p))
    || [...panel.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]')]
         .some(o => o.textContent.includes('Traceback (most recent call last)'));
}"""

# Charts of the visible notebook, in page order: per trace its name, type and number of points
# (arrays, typed arrays, or plotly's base64 {"dtype", "bdata"} form), and a signature of all data
# to tell whether a control changed it.
_CHARTS_JS = """() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const sizes = {i1: 1, u1: 1, i2: 2, u2: 2, i4: 4, u4: 4, f4: 4, f8: 8, i8: 8, u8: 8};
  const count = v => {
    if (v == null) return 0;
    if (Array.isArray(v) || ArrayBuffer.isView(v)) return v.length;
    if (typeof v === 'object' && typeof v.bdata === 'string')
      return Math.floor(atob(v.bdata).length / (sizes[v.dtype] || 8));
    return 0;
  };
  const plain = (k, v) => ArrayBuffer.isView(v) ? Array.from(v) : v;
  return [...panel.querySelectorAll('.js-plotly-plot')].map(el => {
    const traces = (el.data || []).map(t => ({
      name: t.name == null ? '' : String(t.name), type: t.type || 'scatter',
      points: Math.max(count(t.x), count(t.y), count(t.values), count(t.z)),
    }));
    const box = el.getBoundingClientRect();
    return {traces, width_px: Math.round(box.width), height_px: Math.round(box.height),
            signature: JSON.stringify((el.data || []).map(t => [t.x, t.y, t.base, t.values]),
                                      plain)};
  });
}"""


@dataclass
class Chart:
    """One ``.js-plotly-plot`` as read from the page."""

    index: int
    traces: list[dict]
    width_px: int
    height_px: int
    signature: str

    @property
    def points(self) -> int:
        """Total points over all traces."""
        return sum(t["points"] for t in self.traces)

    def describe(self) -> str:
        """One line: chart number and each trace's name, type and points."""
        parts = ", ".join(f"{t['name'] or '?'} ({t['type']}, {t['points']} points)"
                          for t in self.traces)
        return f"chart {self.index}: [{parts or 'no traces'}]"


def dismiss_popups(page) -> None:
    """Accept a "Select Kernel" dialog (default kernel) and say no to the news pop-up.

    Both can be mid-animation or re-rendered while clicked: a click that does not land is
    left for the next call (callers poll).
    """
    dialog = page.locator(".jp-Dialog").filter(has_text="Select Kernel")
    news = page.locator(".Toastify__toast").filter(has_text="Jupyter news")
    for popup, button in ((dialog, dialog.locator(".jp-mod-accept")),
                          (news, news.get_by_role("button", name="No", exact=True))):
        if popup.count():
            try:
                button.first.click(timeout=2000)
            except Exception:  # playwright's TimeoutError or a detached element
                pass


def wait_for_kernel_idle(page, *, timeout_seconds: float) -> None:
    """Wait until the visible notebook has a kernel (its name shows) and the kernel is idle.

    The execution indicator reads "idle" before a kernel exists, so the name comes first.
    Raises:
        TimeoutError: no idle kernel within ``timeout_seconds``.
    """
    deadline = time.monotonic() + timeout_seconds
    while time.monotonic() < deadline:
        dismiss_popups(page)
        names = page.locator(_KERNEL_NAME).all_inner_texts()
        status = page.locator(_INDICATOR).first.get_attribute("data-status") \
            if page.locator(_INDICATOR).count() else None
        if any(n.strip() not in ("", "No Kernel", "Kernel") for n in names) and status == "idle":
            return
        page.wait_for_timeout(250)
    raise TimeoutError(f"no idle kernel after {timeout_seconds} s (kernel name {names!r}, "
                       f"indicator {status!r})")


def open_notebook(page, base_url: str, relative_path: str, *, timeout_seconds: float) -> None:
    """Open ``relative_path`` (under Lab's root) alone, with ``?reset``, and wait for its kernel."""
    page.goto(f"{base_url}/lab/tree/{relative_path}?reset")
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook", timeout=timeout_seconds * 1000)
    wait_for_kernel_idle(page, timeout_seconds=timeout_seconds)


def run_all(page, *, timeout_seconds: float) -> list[int]:
    """Run > Run All Cells from the menu bar, then wait until the run has finished.

    Returns:
        The indices (among all cells, from 0) of the code cells that did not run: [] unless a
        traceback stopped the run.
    Raises:
        TimeoutError: cells still queued or running after ``timeout_seconds`` (the message
            names them).
    """
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator("li.lm-Menu-item[data-command='runmenu:run-all']").click()
    try:
        page.wait_for_function(_RUN_FINISHED_JS, timeout=timeout_seconds * 1000, polling=250)
    except Exception as error:  # playwright's TimeoutError
        raise TimeoutError(f"Run All not finished after {timeout_seconds} s: code cells "
                           f"{unrun_cells(page)} have no execution count") from error
    return unrun_cells(page)


def unrun_cells(page) -> list[int]:
    """Indices (among all cells) of the code cells without an execution count."""
    return page.evaluate(r"""() => [...document.querySelectorAll(
        '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell')].flatMap((cell, i) => {
      const prompt = cell.querySelector('.jp-InputArea-prompt');
      return cell.classList.contains('jp-CodeCell')
        && !/^\[\d+\]:$/.test(prompt ? prompt.textContent.trim() : '') ? [i] : [];
    })""")


def read_charts(page) -> list[Chart]:
    """Every plotly chart of the visible notebook, in page order."""
    return [Chart(index=i, **c) for i, c in enumerate(page.evaluate(_CHARTS_JS))]


def wait_for_charts(page, *, timeout_seconds: float, minimum: int = 0) -> list[Chart]:
    """Read the charts until at least ``minimum`` are drawn and each has a trace with points, or
    the time is up; return the last reading (charts still empty then are a finding, not a
    reason to wait longer). A chart still showing its placeholder (plotly.js not yet received
    from a busy kernel) is not drawn yet."""
    deadline = time.monotonic() + timeout_seconds
    charts = read_charts(page)
    while time.monotonic() < deadline and (len(charts) < minimum
                                           or any(c.points == 0 for c in charts)):
        page.wait_for_timeout(250)
        charts = read_charts(page)
    return charts


def widget_errors(page) -> list[str]:
    """Widget error texts in the visible notebook's outputs, one line each (cell and text)."""
    return page.evaluate(r"""(needles) => {
      const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
      const found = [];
      panel.querySelectorAll('.jp-Cell').forEach((cell, i) => {
        const outputs = cell.querySelector('.jp-OutputArea');
        if (!outputs) return;
        const text = outputs.textContent;
        for (const n of needles) if (text.includes(n)) found.push(`cell ${i}: ${n}`);
        if (outputs.querySelector('.jupyter-widgets-error-widget'))
          found.push(`cell ${i}: error widget: ${text.slice(0, 200)}`);
        // no widget manager: Lab falls back to the text repr, e.g. "VBox(children=(..."
        outputs.querySelectorAll('[data-mime-type="text/plain"]').forEach(o => {
          if (/^\s*\w*(Widget|Box|Slider|Dropdown|Progress)\(/.test(o.textContent))
            found.push(`cell ${i}: widget shown as text: ${o.textContent.slice(0, 80)}`);
        });
      });
      return found;
    }""", list(WIDGET_ERROR_TEXTS))


def cell_errors(page) -> list[str]:
    """Python tracebacks shown in the visible notebook's outputs (cell and last line).

    Lab 4 renders an error output as stderr text (``data-mime-type`` is
    "application/vnd.jupyter.stderr", as for warnings), so a traceback is told by its
    "Traceback (most recent call last)" line.
    """
    return page.evaluate(r"""() => {
      const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
      const found = [];
      panel.querySelectorAll('.jp-Cell').forEach((cell, i) => {
        cell.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]').forEach(o => {
          if (!o.textContent.includes('Traceback (most recent call last)')) return;
          const lines = o.textContent.trim().split('\n');
          found.push(`cell ${i}: ${lines[lines.length - 1].slice(0, 200)}`);
        });
      });
      return found;
    }""")


def headings(page) -> list[str]:
    """The text of every ``<h4>`` in the visible notebook's outputs (a scorecard's title is one).

    ``textContent``, not ``innerText``: Lab skips rendering cells out of view
    (``content-visibility``), and ``innerText`` of those is empty.
    """
    return [t.strip() for t in page.locator(f"{_PANEL} .jp-OutputArea h4").all_text_contents()]


def chart_element(page, index: int):
    """Locator of the ``index``-th plotly chart of the visible notebook."""
    return page.locator(f"{_PANEL} .js-plotly-plot").nth(index)


def show_last_scorecard(page) -> None:
    """Scroll the notebook so that the last scorecard's title is at the top of the view."""
    page.locator(f"{_PANEL} .jp-OutputArea h4", has_text=SCORECARD_TITLE).last.evaluate(
        "h => h.scrollIntoView()")


def controls(page):
    """Locators of the ipywidgets sliders and dropdowns of the visible notebook, page order."""
    panel = page.locator(_PANEL)
    return panel.locator(".widget-slider"), panel.locator(".widget-dropdown")


def control_label(control) -> str:
    """The description label of a widget control, or '?'."""
    label = control.locator(".widget-label")
    return ((label.first.text_content() or "").strip() or "?") if label.count() else "?"


def settled_charts(page, *, timeout_seconds: float, quiet_seconds: float = 0.5) -> list[Chart]:
    """Read the charts once the kernel is idle and their data stayed the same for
    ``quiet_seconds`` (one control can redraw several charts, one message each); after
    ``timeout_seconds`` return the last reading as it is."""
    deadline = time.monotonic() + timeout_seconds
    last = read_charts(page)
    while time.monotonic() < deadline:
        page.wait_for_timeout(quiet_seconds * 1000)
        now = read_charts(page)
        idle = page.locator(_INDICATOR).first.get_attribute("data-status") == "idle"
        if idle and [c.signature for c in now] == [c.signature for c in last]:
            return now
        last = now
    return last


def wait_for_data_change(page, before: list[Chart], *, timeout_seconds: float) -> list[int]:
    """Indices of the charts whose data differ from ``before`` within ``timeout_seconds`` ([] if
    none changed); once one changed, wait for the data to settle and compare again."""
    deadline = time.monotonic() + timeout_seconds
    while True:
        after = read_charts(page)
        if any(a.signature != b.signature for a, b in zip(after, before)):
            after = settled_charts(page, timeout_seconds=timeout_seconds)
            return [a.index for a, b in zip(after, before) if a.signature != b.signature]
        if time.monotonic() > deadline:
            return []
        page.wait_for_timeout(100)


def wait_for_data(page, target: list[Chart], *, timeout_seconds: float) -> bool:
    """Wait until every chart's data equal ``target``'s; True if they did in time."""
    deadline = time.monotonic() + timeout_seconds
    while [c.signature for c in read_charts(page)] != [c.signature for c in target]:
        if time.monotonic() > deadline:
            return False
        page.wait_for_timeout(100)
    return True


def move_slider_far(slider) -> tuple[str, str]:
    """Move a slider to its far end from the keyboard, as a keyboard user would: "End" when
    its value is in the lower half, else "Home". Returns (old readout, new readout)."""
    handle = slider.locator(".noUi-handle").first
    handle.scroll_into_view_if_needed()
    low, high, now = (float(handle.get_attribute(a) or 0) for a in
                      ("aria-valuemin", "aria-valuemax", "aria-valuenow"))
    readout = slider.locator(".widget-readout").first
    old = (readout.text_content() or "").strip()
    handle.focus()
    handle.press("End" if now < (low + high) / 2 else "Home")
    return old, (readout.text_content() or "").strip()


def type_slider_value(slider, text: str) -> None:
    """Type ``text`` into the slider's editable readout and press Enter (sets its value)."""
    readout = slider.locator(".widget-readout").first
    readout.scroll_into_view_if_needed()
    readout.fill(text)
    readout.press("Enter")


def check_controls(page, *, timeout_seconds: float) -> tuple[list[str], list[str]]:
    """Move every slider and dropdown of the visible notebook; each must change some chart's
    data within ``timeout_seconds``.

    A dropdown is set to each of its other options in turn, then back, and every choice must
    change the data. A slider may act only under some choice of a dropdown (episode 05's chunk
    size acts on "chunked masking" only), so a slider that changed nothing is moved again after
    each dropdown choice; it fails only if it changed nothing under every choice. Each slider
    is typed back to its value after a move, so the controls are tried one at a time.
    Returns:
        (problems, notes): one line each; notes say which move changed which chart.
    """
    sliders, dropdowns = controls(page)
    problems, notes = [], []
    settled_charts(page, timeout_seconds=timeout_seconds)  # Run All's last updates first
    pending = {i: [] for i in range(sliders.count())}  # slider -> moves that changed nothing

    def choose(i: int, index: int) -> list[int]:
        select = dropdowns.nth(i).locator("select").first
        before = read_charts(page)
        select.scroll_into_view_if_needed()
        select.select_option(index=index)
        changed = wait_for_data_change(page, before, timeout_seconds=timeout_seconds)
        if changed:
            notes.append(f"dropdown {describe(i, index)} changed charts {changed}")
        return changed

    def describe(i: int, index: int) -> str:
        option = dropdowns.nth(i).locator("option").nth(index).text_content() or "?"
        return f"{control_label(dropdowns.nth(i))!r} = {option.replace(chr(160), ' ')!r}"

    def try_sliders(setting: str) -> None:
        """Move each pending slider to a far end, then type its old value back: sliders
        interact (keep=20 hides any threshold), so each is tried with the others as found."""
        for i in list(pending):
            slider = sliders.nth(i)
            before = read_charts(page)
            old, new = move_slider_far(slider)
            changed = wait_for_data_change(page, before, timeout_seconds=timeout_seconds)
            if changed:
                notes.append(f"slider {control_label(slider)!r} {old} -> {new} ({setting}) "
                             f"changed charts {changed}")
                del pending[i]
                type_slider_value(slider, old)
                if not wait_for_data(page, before, timeout_seconds=timeout_seconds):
                    problems.append(f"slider {control_label(slider)!r} typed back to {old}, "
                                    f"but the charts did not return to their data at {old}")
            else:
                pending[i].append(f"{old} -> {new} ({setting})")
                type_slider_value(slider, old)
                settled_charts(page, timeout_seconds=timeout_seconds)

    choices = []  # (dropdown, option index): every other option in turn, then back
    for i in range(dropdowns.count()):
        select = dropdowns.nth(i).locator("select").first
        count, current = select.evaluate("s => [s.options.length, s.selectedIndex]")
        choices += [(i, (current + k) % count) for k in range(1, count + 1)]
    try_sliders("dropdowns as Run All left them")
    for i, index in choices:
        if not choose(i, index):
            problems.append(f"dropdown {describe(i, index)} chosen, but no chart's data "
                            f"changed within {timeout_seconds} s")
        if pending:  # a slider that did nothing yet, tried again under this choice
            try_sliders(describe(i, index))
    for i, moves in pending.items():
        problems.append(f"slider {control_label(sliders.nth(i))!r} moved ({'; '.join(moves)}) "
                        f"but no chart's data changed within {timeout_seconds} s")
    return problems, notes


def shutdown_kernels(page, base_url: str) -> None:
    """Delete every session of the server (their kernels stop), so notebooks run one at a time.

    Uses the page's own cookies (the server wants its ``_xsrf`` cookie echoed in a header).
    """
    xsrf = next((c["value"] for c in page.context.cookies(base_url) if c["name"] == "_xsrf"), "")
    sessions = page.request.get(f"{base_url}/api/sessions").json()
    for session in sessions:
        response = page.request.delete(f"{base_url}/api/sessions/{session['id']}",
                                       headers={"X-XSRFToken": xsrf})
        if not response.ok:
            raise RuntimeError(f"could not stop session {session['id']}: {response.status}")
