/* Heron UI: what the pages share: how often each part is asked again, the windows one
 * may choose, and the latencies shown per component and instance. */

export const REFRESH_MS = 2000;  // one topology's numbers, checkpoints and Kafka lag
export const LIST_REFRESH_MS = 5000;  // the topology list
export const INFO_REFRESH_MS = 10000;  // the plans and log files
// charts: redrawn from the tracker's recorded snapshots (/topologies/metrics/timeline)
export const CHART_REFRESH_MS = 5000;
export const CHART_REFRESH_LONG_MS = 15000;  // windows over 10 min: more points, fewer redraws
export const WINDOWS = [[60, "1 min"], [600, "10 min"], [3600, "1 h"], [10800, "3 h"], [-1, "all time"]];
export const RATE_WINDOW = 60;
// [metric (ms, averaged over instances), cell class, header, tooltip, spout or bolt metric]
// Spouts report complete latency (with acking); bolts execute and process latency.
export const LATENCIES = [
  ["__complete-latency", "complete-latency", "complete latency ms",
    "spouts: emit to ack of the tuple tree (needs acking)", "spout"],
  ["__execute-latency", "execute-latency", "execute latency ms",
    "bolts: time in execute() per tuple", "bolt"],
  ["__process-latency", "process-latency", "process latency ms",
    "bolts: tuple received to acked by the bolt (sampled)", "bolt"],
];
