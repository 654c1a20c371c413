/* Heron UI: the "Over time" card: per component, a row of uPlot charts (uPlot.iife.min.js,
 * vendored beside this file at a pinned version with its license) of its rates, latency,
 * backpressure and parallelism over the chosen window, with the Health Manager's records
 * marked on them; redrawn from the tracker's recorded snapshots every CHART_REFRESH_MS
 * (CHART_REFRESH_LONG_MS for windows over 10 min). */

import { getJSON, q } from "./api.js";
import { BP_PREFIX, chartSeries, thin } from "./chart-series.js";
import { el } from "./dom.js";
import { fmtAxis, fmtClock, niceMax } from "./format.js";
import { recordKind, recordWhat } from "./health.js";
import { CHART_REFRESH_LONG_MS, CHART_REFRESH_MS, RATE_WINDOW, WINDOWS } from "./settings.js";

const CHART = { w: 240, h: 128 };  // a chart's canvas, title and latest value above it
// a line's colour per chart (CSS variables of heron-ui.css; the canvas needs the value)
const CHART_COLOURS = { backpressure: "--bad", parallelism: "--spout", latency: "#7a4fb0" };
// [key, title, unit, kinds drawn for]; latency is a spout's complete latency, a bolt's
// execute latency; backpressure is the time the component's instances caused it
const CHARTS = [
  ["emit-rate", "emit rate", "tuples/s", ["spout", "bolt"]],
  ["execute-rate", "execute rate", "tuples/s", ["bolt"]],
  ["latency", "latency", "ms", ["spout", "bolt"]],
  ["backpressure", "backpressure time", "ms/s", ["spout", "bolt"]],
  ["parallelism", "parallelism", "instances", ["spout", "bolt"]],
];

function cssColour(name) {
  return name.startsWith("--") ? getComputedStyle(document.documentElement).getPropertyValue(name).trim() : name;
}
// the Health Manager's records over the plot, as elements (each with its tooltip):
// actions span the plot; diagnoses half of it; symptoms and notes tick the axis
function placeMarks(u, marks, start, end) {
  for (const old of u.over.querySelectorAll(".health-mark")) old.remove();
  for (const r of marks) {
    if (r.time < start || r.time > end) continue;
    const mark = el("div", {
      class: `health-mark ${r.type}${r.status ? " " + r.status : ""}`,
      "data-type": r.type, "data-time": r.time,
      title: `${fmtClock(r.time)} ${recordKind(r)}: ${recordWhat(r)}`,
    });
    mark.style.left = u.valToPos(r.time, "x").toFixed(1) + "px";
    mark.style.top = r.type === "action" ? "0" : r.type === "diagnosis" ? "50%" : "calc(100% - 7px)";
    u.over.append(mark);
  }
}

// one chart: a uPlot of the component's metric over [start, end], y from 0; the
// element carries data-component, data-metric and data-points (the points drawn)
function drawChart(component, key, title, unit, points, marks, start, end, step) {
  const shown = thin(points.filter(([t]) => t >= start && t <= end), start, end);
  const top_ = niceMax(Math.max(0, ...shown.map(([, v]) => v)) || (key === "parallelism" ? 1 : 0));
  const last = shown.length ? shown[shown.length - 1][1] : null;
  const box = el("div", {
    class: "chart", role: "img", "data-component": component, "data-metric": key,
    "data-points": shown.length, "aria-label": `${title} of ${component}`,
  }, el("div", { class: "chart-head" }, el("span", { class: "chart-title", text: `${title} (${unit})` }),
    el("span", {
      class: "latest", text: last === null ? "no data yet" : `latest ${fmtAxis(last)}`,
      title: last === null ? `${title}: no data yet` : `${title}: latest ${fmtAxis(last)} ${unit}`,
    })));
  const xs = shown.map(([t]) => t), ys = shown.map(([, v]) => v);
  if (step && shown.length) { xs.push(Math.max(end, xs[xs.length - 1])); ys.push(last); }  // the last value holds until now
  const colour = cssColour(CHART_COLOURS[key] || "--bolt");
  const axis = { font: "10px system-ui, sans-serif", stroke: cssColour("--muted"), ticks: { size: 3 },
    grid: { stroke: cssColour("--line"), width: 1, dash: [3, 3] } };
  const u = new uPlot({
    width: CHART.w, height: CHART.h, legend: { show: false }, padding: [8, 24, 0, 0],
    cursor: { y: false, points: { show: false } },
    scales: { x: { time: true, range: [start, Math.max(end, start + 1)] }, y: { range: [0, top_] } },
    axes: [
      { ...axis, size: 22, grid: { show: false }, space: 100, values: (_, splits) => splits.map(fmtClock) },
      { ...axis, size: 34, gap: 3, space: 30, values: (_, splits) => splits.map(fmtAxis) },
    ],
    series: [{}, {
      label: title, stroke: colour, width: key === "parallelism" ? 2 : 1.6,
      paths: step ? uPlot.paths.stepped({ align: 1 }) : undefined,
      points: { show: shown.length === 1, size: 5, fill: colour, stroke: colour },
    }],
    hooks: { draw: [(p) => placeMarks(p, marks, start, end)] },
  }, [xs, ys], box);
  box.uplot = u;  // the page's tests read the points drawn from here
  if (!shown.length) u.over.append(el("div", { class: "empty", text: "no data yet" }));
  return box;
}

// the card (`card`) and `refresh()`, which draws it and asks again on a timer; `S` is the
// page's state (its window and plans), `healthManager` the Health Manager's view (health.js)
export function chartsView(S, name, healthManager) {
  const chartNote = el("span", { class: "muted", id: "chart-note" });
  const chartsBox = el("div", { id: "chart-rows" });
  const chartsCard = el("section", { class: "card", id: "charts" }, el("h2", {}, "Over time ", chartNote),
    healthManager.status, chartsBox);

  async function refreshCharts() {
    clearTimeout(S.chartTimer);
    try {
      if (!S.info) {  // the first refresh() reads the plans
        S.chartTimer = setTimeout(refreshCharts, 500);
        return;
      }
      const now = Date.now() / 1000;
      const start = S.window > 0 ? now - S.window : 0;
      const names = ["__emit-count", "__execute-count", "__execute-latency", "__complete-latency", BP_PREFIX + "*"];
      const [timeline, parallelism, health] = await Promise.all([
        getJSON("/topologies/metrics/timeline?" + q({ topology: name, starttime: start.toFixed(3) }) + "&" +
          names.map((n) => "metricname=" + encodeURIComponent(n)).join("&")),
        getJSON("/topologies/metrics/parallelism?" + q({ topology: name, starttime: start.toFixed(3) })),
        getJSON("/topologies/health?" + q({ topology: name })),
      ]);
      const series = chartSeries(timeline, parallelism, S.info);
      const end = timeline.endtime;
      // from the oldest point kept (or Health Manager record) when the tracker has watched
      // for less than the window (all time: always), so a young topology's history is not squeezed into a corner
      let oldest = Infinity;
      for (const byKey of Object.values(series)) for (const pts of Object.values(byKey)) if (pts.length) oldest = Math.min(oldest, pts[0][0]);
      for (const r of health.records || []) if (S.window <= 0 || r.time >= end - S.window) oldest = Math.min(oldest, r.time);
      let from = S.window > 0 ? Math.max(end - S.window, Math.min(oldest, end - 10)) : oldest;
      if (!Number.isFinite(from)) from = end - (S.window > 0 ? S.window : RATE_WINDOW);
      const lp = S.info.logical_plan;
      const rows = [];
      for (const c of lp.component_order) {
        const kind = c in lp.spouts ? "spout" : "bolt";
        const marks = (health.records || []).filter((r) => !r.component || r.component === c);
        const charts = CHARTS.filter(([, , , kinds]) => kinds.includes(kind)).map(([key, title, unit]) =>
          drawChart(c, key, title, unit, series[c][key], marks, from, end, key === "parallelism"));
        rows.push(el("div", { class: "chart-row", "data-component": c },
          el("h3", {}, c, el("span", { class: "muted", text: kind })), el("div", { class: "chart-list" }, ...charts)));
      }
      for (const old of chartsBox.querySelectorAll(".chart")) if (old.uplot) old.uplot.destroy();
      chartsBox.replaceChildren(...rows);
      const label = S.window > 0 ? "last " + (WINDOWS.find(([secs]) => secs === S.window) || [0, S.window + " s"])[1]
        : "all the tracker kept";
      const short = S.window > 0 && from > end - S.window + 1 ? `, of which the tracker has ${Math.round(end - from)} s` : "";
      chartNote.textContent = `(${label}${short}: one point per tracker snapshot)`;
      healthManager.draw(health, from, end);
    } catch (err) {
      if (err.status === 404) S.info = null;
      chartNote.textContent = "(charts: " + (err.status ? `HTTP ${err.status}: ` : "") + err.message + ")";
    }
    S.chartTimer = setTimeout(refreshCharts, S.window > 0 && S.window <= 600 ? CHART_REFRESH_MS : CHART_REFRESH_LONG_MS);
  }

  return { card: chartsCard, refresh: refreshCharts };
}
