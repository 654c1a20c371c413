/* Heron UI: one topology's numbers, updated in place on every refresh from
 * /topologies/metrics (since start and over the window) and /topologies/backpressure:
 * counts, rates and latencies per component (table and DAG node) and per instance,
 * restarts, crash loops and stale figures, and each Stream Manager's backpressure. */

import { fmtBytes, fmtInt, fmtMs, fmtRate, num } from "./format.js";
import { LATENCIES } from "./settings.js";

const LATENCY_METRICS = new Set(LATENCIES.map(([metric]) => metric));
function emptyComponent() { return { sums: {}, latencies: {}, errors: [], looping: new Map() }; }
// failing again and again with no progress: the component in its process, or the process
const CRASH_LOOPING = new Set(["__crash-looping", "__process-crash-looping"]);
function mean(values) { return values && values.length ? values.reduce((x, y) => x + y, 0) / values.length : null; }
function perComponent(metricsAnswer) {
  const out = {};
  for (const [metric, byInstance] of Object.entries(metricsAnswer.metrics)) {
    for (const [instance, value] of Object.entries(byInstance)) {
      const comp = metricsAnswer.components[instance];
      const c = (out[comp] = out[comp] || emptyComponent());
      if (LATENCY_METRICS.has(metric)) (c.latencies[metric] = c.latencies[metric] || []).push(num(value));
      else if (metric === "__last-error") { if (value) c.errors.push(String(value)); }
      else if (metric === "__process-last-error") { /* read with the crash-loop flag */ }
      else if (metric === "__report-age") { /* read from the answer's "stale" */ }
      else if (CRASH_LOOPING.has(metric)) {
        if (num(value) === 1 && !c.looping.has(instance)) {
          const error = value === null ? "" : (metric === "__crash-looping"
            ? metricsAnswer.metrics["__last-error"]?.[instance]
            : metricsAnswer.metrics["__process-last-error"]?.[instance]);
          c.looping.set(instance, String(error || ""));
        }
      }
      else c.sums[metric] = (c.sums[metric] || 0) + num(value);
    }
  }
  return out;
}
function value(answer, metric, instance) {
  const byInstance = answer.metrics[metric];
  return byInstance && instance in byInstance ? byInstance[instance] : null;
}
function setCell(row, cls, text) {
  const cell = row && row.querySelector("." + cls);
  if (cell && cell.textContent !== text) cell.textContent = text;
}

// `view`: the plans' elements (plans.js); `S`: the page's state (its window and plans);
// `all` and `win`: /topologies/metrics since start and over the window; `bp`: backpressure
export function updateNumbers(view, S, all, win, bp) {
  const { windowNote, compBody, dagBox, containersBox } = view;
  const span = win.starttime !== null ? win.endtime - win.starttime : 0;
  const rate = (v) => (span > 0 && v !== null ? num(v) / span : null);
  const shown = S.window > 0 ? win : all;
  windowNote.textContent = S.window > 0
    ? `(counts over the last ${Math.round(span)} s of ${S.window} s asked; rates over ${Math.round(span)} s)`
    : `(counts since start; rates over the last ${Math.round(span)} s)`;
  const compAll = perComponent(all);
  const compShown = perComponent(shown);
  const compWin = perComponent(win);
  const lp = S.info.logical_plan;
  for (const c of lp.component_order) {
    const spout = c in lp.spouts;
    const a = compAll[c] || emptyComponent();
    const s = compShown[c] || emptyComponent();
    const w = compWin[c] || emptyComponent();
    const row = compBody.querySelector(`tr[data-component="${CSS.escape(c)}"]`);
    setCell(row, "emitted", fmtInt(s.sums["__emit-count"] ?? null));
    setCell(row, "executed", spout ? "–" : fmtInt(s.sums["__execute-count"] ?? null));
    setCell(row, "acked", fmtInt(s.sums["__ack-count"] ?? null));
    setCell(row, "failed", fmtInt(s.sums["__fail-count"] ?? null));
    setCell(row, "emit-rate", fmtRate(rate(w.sums["__emit-count"] ?? null)));
    setCell(row, "execute-rate", spout ? "–" : fmtRate(rate(w.sums["__execute-count"] ?? null)));
    for (const [metric, cls, , , kind] of LATENCIES) {
      setCell(row, cls, (kind === "spout") === spout ? fmtMs(mean(a.latencies[metric])) : "–");
    }
    const restarts = a.sums["__restart-count"] ?? a.sums["__process-restarts"] ?? null;
    setCell(row, "restarts", fmtInt(restarts === null ? null
      : (a.sums["__restart-count"] || 0) + (a.sums["__process-restarts"] || 0)));
    const looping = [...a.looping.entries()];
    // figures not reported for over 5 s: their process is dead, stuck or unreachable
    const stale = Object.entries(all.stale || {}).filter(([i]) => all.components[i] === c);
    if (row) row.classList.toggle("crash-looping", looping.length > 0);
    if (row) row.classList.toggle("stale", stale.length > 0 && looping.length === 0);
    setCell(row, "last-error", looping.length
      ? `crash-looping (${looping.map(([i]) => i).join(", ")}): ${looping[0][1]}`
      : stale.length
        ? `stale (${stale.map(([i, age]) => `${i}: last reported ${Math.round(age)} s ago`).join(", ")}): its figures are its last ones`
        : (a.errors[0] || ""));
    const node = dagBox.querySelector(`g.dag-node[data-component="${CSS.escape(c)}"]`);
    if (node) {
      const emitted = a.sums["__emit-count"] || 0;
      const executed = a.sums["__execute-count"] || 0;
      node.setAttribute("data-emitted", String(emitted));
      node.setAttribute("data-executed", String(executed));
      const r = rate(spout ? (w.sums["__emit-count"] ?? null) : (w.sums["__execute-count"] ?? null));
      const live = spout ? `${fmtInt(emitted)} emitted · ${fmtRate(r)}/s` : `${fmtInt(executed)} executed · ${fmtRate(r)}/s`;
      const text = node.querySelector("text.live");
      if (text.textContent !== live) text.textContent = live;
    }
  }
  const instances = S.info.physical_plan ? S.info.physical_plan.instances : {};
  for (const row of containersBox.querySelectorAll("tr[data-instance]")) {
    const id = row.dataset.instance;
    const spout = instances[id] ? instances[id].name in lp.spouts : false;
    setCell(row, "emitted", fmtInt(value(shown, "__emit-count", id)));
    setCell(row, "executed", spout ? "–" : fmtInt(value(shown, "__execute-count", id)));
    setCell(row, "emit-rate", fmtRate(rate(value(win, "__emit-count", id))));
    setCell(row, "execute-rate", spout ? "–" : fmtRate(rate(value(win, "__execute-count", id))));
    for (const [metric, cls, , , kind] of LATENCIES) {
      setCell(row, cls, (kind === "spout") === spout ? fmtMs(value(all, metric, id)) : "–");
    }
    const age = (all.stale || {})[id];
    row.classList.toggle("stale", age !== undefined);
    row.title = age !== undefined ? `stale: last reported ${Math.round(age)} s ago (dead, stuck or unreachable)` : "";
    const b = bp.instances[id];
    if (b) {
      const label = b.throttled ? "spout throttled" : (b.stmgr_initiated ? "stmgr initiated" : "none");
      setCell(row, "bp", label);
      row.classList.toggle("bp-throttled", b.throttled);
      row.classList.toggle("bp-initiated", !b.throttled && b.stmgr_initiated);
    }
  }
  const pressured = new Set();
  for (const box of containersBox.querySelectorAll("div[data-stmgr]")) {
    const sm = bp.stmgrs[box.dataset.stmgr];
    if (!sm) continue;
    const state = box.querySelector(".bp-state");
    const paused = sm.time_paused_ms === null ? "" : ` · spouts paused ${fmtInt(sm.time_paused_ms)} ms`;
    state.textContent = (sm.initiated ? "backpressure (initiated)" : sm.paused ? "backpressure" : "no backpressure") + paused;
    state.className = "badge bp-state " + (sm.initiated ? "bad" : sm.paused ? "warn" : "ok");
    box.querySelector(".buffered").textContent = "buffered " + fmtBytes(sm.buffered_bytes);
    if (sm.initiated) for (const id of sm.instance_ids) pressured.add(bp.instances[id] ? bp.instances[id].component : "");
  }
  for (const node of dagBox.querySelectorAll("g.dag-node")) node.classList.toggle("backpressure", pressured.has(node.dataset.component));
}
