/* Heron UI: the charts' series, computed from the tracker's recorded snapshots
 * (/topologies/metrics/timeline and /topologies/metrics/parallelism): per component, the
 * emit and execute rates (from cumulative counters, restarts allowed for), the latency
 * (mean over its instances), the time in backpressure and the parallelism over time;
 * a long series is thinned to MAX_POINTS time buckets. */

import { num } from "./format.js";

const MAX_POINTS = 240;  // a longer series is averaged into this many time buckets
export const BP_PREFIX = "__time_spent_back_pressure_by_compid/";

// add `value` at time `t` to series[component] (a Map of time -> [sum, count])
function addPoint(series, component, t, value) {
  const m = (series[component] = series[component] || new Map());
  const cell = m.get(t) || [0, 0];
  cell[0] += value; cell[1] += 1;
  m.set(t, cell);
}
function sorted(points) {
  return Object.entries(points).map(([t, v]) => [Number(t), num(v)]).sort((a, b) => a[0] - b[0]);
}
// a cumulative counter per instance -> per-second increase, summed per component
function counterRates(byInstance, ownerOf, series) {
  for (const [id, points] of Object.entries(byInstance || {})) {
    const comp = ownerOf(id);
    if (!comp) continue;
    const pts = sorted(points);
    for (let i = 1; i < pts.length; i++) {
      const dt = pts[i][0] - pts[i - 1][0];
      if (dt <= 0) continue;
      // a counter that went down restarted with its process: its increase is its value
      const inc = pts[i][1] >= pts[i - 1][1] ? pts[i][1] - pts[i - 1][1] : pts[i][1];
      addPoint(series, comp, pts[i][0], inc / dt);
    }
  }
}
function gaugeMeans(byInstance, ownerOf, series) {
  for (const [id, points] of Object.entries(byInstance || {})) {
    const comp = ownerOf(id);
    if (comp) for (const [t, v] of sorted(points)) addPoint(series, comp, t, v);
  }
}
// Map(time -> [sum, count]) -> [[time, value]] sorted, sums or means
function flatten(m, mean) {
  return m ? [...m.entries()].map(([t, [sum, n]]) => [t, mean ? sum / n : sum]).sort((a, b) => a[0] - b[0]) : [];
}
// at most MAX_POINTS points: the mean of each time bucket
export function thin(points, start, end) {
  if (points.length <= MAX_POINTS || end <= start) return points;
  const buckets = new Map();
  for (const [t, v] of points) {
    const b = Math.min(MAX_POINTS - 1, Math.floor((t - start) / (end - start) * MAX_POINTS));
    const cell = buckets.get(b) || [0, 0, 0];
    cell[0] += t; cell[1] += v; cell[2] += 1;
    buckets.set(b, cell);
  }
  return [...buckets.values()].map(([t, v, n]) => [t / n, v / n]).sort((a, b) => a[0] - b[0]);
}

// {component: {chart key: [[time, value]]}} for the components of `info` (the topology's
// info: its plans say which instance is whose)
export function chartSeries(timeline, parallelism, info) {
  const owners = timeline.components || {};
  const instances = info && info.physical_plan ? info.physical_plan.instances : {};
  const ownerOf = (id) => owners[id] || (instances[id] ? instances[id].name : null);
  const tl = timeline.timeline;
  const emit = {}, execute = {}, latency = {}, bp = {};
  counterRates(tl["__emit-count"], ownerOf, emit);
  counterRates(tl["__execute-count"], ownerOf, execute);
  const lp = info.logical_plan;
  // spouts: complete latency; bolts: execute latency (mean over the instances)
  gaugeMeans(tl["__complete-latency"], (id) => { const c = ownerOf(id); return c in lp.spouts ? c : null; }, latency);
  gaugeMeans(tl["__execute-latency"], (id) => { const c = ownerOf(id); return c in lp.bolts ? c : null; }, latency);
  for (const [metric, byStmgr] of Object.entries(tl)) {
    if (!metric.startsWith(BP_PREFIX)) continue;
    const comp = ownerOf(metric.slice(BP_PREFIX.length));
    // one Stream Manager reports each instance: its ms in backpressure per second
    if (comp) counterRates(byStmgr, () => comp, bp);
  }
  const out = {};
  for (const c of lp.component_order) {
    out[c] = {
      "emit-rate": flatten(emit[c], false),
      "execute-rate": flatten(execute[c], false),
      "latency": flatten(latency[c], true),
      "backpressure": flatten(bp[c], false),
      "parallelism": sorted((parallelism.parallelism || {})[c] || {}),
    };
  }
  return out;
}
