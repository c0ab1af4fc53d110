// Front end of mini_agent.ui.plotly_chart.PlotlyChart (an anywidget module).
//
// The widget's state holds only the figure (traces, layout, config). plotly.js itself is not
// in the state: the first chart on a page asks its kernel for the installed plotly package's
// plotly.min.js with a custom message, and every chart on the page then shares that one copy
// (globalThis.__miniAgentPlotly). Nothing is fetched from the network.
//
// While plotly.js has not arrived (the kernel answers only when it is free, e.g. after a whole
// "Run All"), the chart shows a light placeholder after PLACEHOLDER_DELAY_MS and keeps
// waiting, with no time limit. Once drawn, the chart is a standard plotly div
// (class "js-plotly-plot", its .data holding the traces), redrawn with Plotly.react on every
// change and resized with its container, so it fills the output's width.

const PLACEHOLDER_DELAY_MS = 2000;
const REQUEST = "mini_agent.plotly_js.request";
const REPLY = "mini_agent.plotly_js";

function shared() {
  if (!globalThis.__miniAgentPlotly) {
    let resolve;
    const promise = new Promise((r) => { resolve = r; });
    globalThis.__miniAgentPlotly = {
      promise,
      resolve,
      loaded: false,
      page: `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`,
    };
    if (globalThis.Plotly && typeof globalThis.Plotly.react === "function") {
      globalThis.__miniAgentPlotly.loaded = true;
      resolve(globalThis.Plotly);
    }
  }
  return globalThis.__miniAgentPlotly;
}

async function evaluate(source) {
  // plotly.min.js is a UMD bundle: give it a CommonJS-style `module` and take its export.
  const wrapped = `const module = { exports: {} }; const exports = module.exports;\n${source}\n` +
    "export default module.exports;";
  const url = URL.createObjectURL(new Blob([wrapped], { type: "text/javascript" }));
  try {
    return (await import(/* webpackIgnore: true */ url)).default;
  } finally {
    URL.revokeObjectURL(url);
  }
}

function receive(msg, buffers) {
  const page = shared();
  if (!msg || msg.type !== REPLY || page.loaded || !buffers || !buffers.length) return;
  page.loaded = true;
  const buffer = buffers[0];
  const bytes = buffer instanceof DataView
    ? new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
    : new Uint8Array(buffer.buffer || buffer);
  evaluate(new TextDecoder().decode(bytes)).then(
    (Plotly) => page.resolve(Plotly),
    (error) => { page.loaded = false; console.error("mini-agent: plotly.js failed", error); },
  );
}

function placeholder(model) {
  // a few lines of text, no plotly: the title and each trace's name and number of points
  const box = document.createElement("div");
  box.className = "mini-agent-chart-placeholder";
  box.style.cssText = "border:1px dashed #adb5bd;border-radius:4px;padding:8px 12px;" +
    "color:#495057;font:13px sans-serif;box-sizing:border-box;";
  const layout = model.get("plot_layout") || {};
  const title = layout.title && (layout.title.text || layout.title);
  const line = (text, bold) => {
    const div = document.createElement("div");
    div.textContent = text;
    if (bold) div.style.fontWeight = "600";
    box.appendChild(div);
  };
  if (typeof title === "string") line(title, true);
  line("Waiting for plotly.js, which the kernel sends once it is free " +
    "(in a saved notebook: run the cell).");
  for (const t of model.get("traces") || []) {
    line(`\u2022 ${t.name || t.type || "trace"}: ${(t.y || t.x || []).length} points`);
  }
  return box;
}

function figure(model) {
  const layout = { ...(model.get("plot_layout") || {}), autosize: true };
  delete layout.width;
  // Plotly.react mutates what it is given: hand it copies, the model keeps its own
  return {
    data: structuredClone(model.get("traces") || []),
    layout: structuredClone(layout),
    config: { responsive: true, displaylogo: false, ...(model.get("config") || {}) },
  };
}

export default {
  initialize({ model }) {
    model.on("msg:custom", receive);
    const page = shared();
    if (!page.loaded) {
      // one request per model; the kernel answers once per page (a model restored from a
      // saved notebook has no kernel behind it, and its request goes nowhere)
      model.send({ type: REQUEST, page: page.page });
    }
    return () => model.off("msg:custom", receive);
  },

  render({ model, el }) {
    const page = shared();
    const plot = document.createElement("div");
    plot.style.width = "100%";
    el.style.width = "100%";
    el.appendChild(plot);
    let Plotly = null;
    let hint = null;
    let observer = null;

    const draw = () => {
      if (!Plotly) return;
      const { data, layout, config } = figure(model);
      Plotly.react(plot, data, layout, config);
    };
    const onChange = () => draw();
    model.on("change:traces", onChange);
    model.on("change:plot_layout", onChange);
    model.on("change:config", onChange);

    const timer = setTimeout(() => {
      if (!Plotly) {
        hint = placeholder(model);
        el.insertBefore(hint, plot);
      }
    }, PLACEHOLDER_DELAY_MS);

    page.promise.then((loaded) => {  // no time limit: a busy kernel answers when it is free
      Plotly = loaded;
      clearTimeout(timer);
      if (hint) hint.remove();
      draw();
      if (typeof ResizeObserver === "function") {
        observer = new ResizeObserver(() => {
          if (plot.offsetWidth > 0 && plot.classList.contains("js-plotly-plot")) {
            Plotly.Plots.resize(plot);
          }
        });
        observer.observe(el);
      }
    });

    return () => {
      clearTimeout(timer);
      if (observer) observer.disconnect();
      model.off("change:traces", onChange);
      model.off("change:plot_layout", onChange);
      model.off("change:config", onChange);
      if (Plotly) Plotly.purge(plot);
    };
  },
};
