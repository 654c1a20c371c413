/* Heron UI: numbers and times as the page shows them ("–" for a value not reported yet),
 * and the charts' axis labels and scale. */

export function fmtInt(n) {
  if (n === null || n === undefined || n === "" || Number.isNaN(Number(n))) return "–";
  return Math.round(Number(n)).toLocaleString("en-US");
}
export function fmtRate(n) {
  if (n === null || n === undefined || !Number.isFinite(n)) return "–";
  return n >= 100 ? fmtInt(n) : n.toFixed(1);
}
// Latencies are in milliseconds, shown as `heron metrics` shows them: three decimals
// (bolt execute latencies are often a few microseconds).
export function fmtMs(n) {
  if (n === null || n === undefined || n === "" || !Number.isFinite(Number(n))) return "–";
  return Number(n).toLocaleString("en-US", { minimumFractionDigits: 3, maximumFractionDigits: 3 });
}
export function fmtBytes(n) {
  if (n === null || n === undefined || Number.isNaN(Number(n))) return "–";
  const units = ["B", "KiB", "MiB", "GiB"];
  let value = Number(n);
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
  return (unit ? value.toFixed(1) : String(value)) + " " + units[unit];
}
export function fmtTime(unix) {
  if (!unix) return "–";
  const d = new Date(Number(unix) * 1000);
  return Number.isNaN(d.getTime()) ? String(unix) : d.toLocaleString();
}
export function num(v) { const n = Number(v); return Number.isFinite(n) ? n : 0; }
export function fmtClock(unix) {
  const d = new Date(Number(unix) * 1000);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleTimeString([], { hour12: false });
}
export function fmtAxis(n) {
  if (n >= 1e6) return (n / 1e6).toFixed(n >= 1e7 ? 0 : 1) + "M";
  if (n >= 1e3) return (n / 1e3).toFixed(n >= 1e4 ? 0 : 1) + "k";
  return n >= 10 || Number.isInteger(n) ? String(Math.round(n)) : n.toFixed(n >= 1 ? 1 : 2);
}
// the smallest 1, 2, 2.5 or 5 x 10^k at or above max (the y axis' top)
export function niceMax(max) {
  if (!(max > 0)) return 1;
  const m = Math.pow(10, Math.floor(Math.log10(max)));
  for (const f of [1, 2, 2.5, 5, 10]) if (f * m >= max * (1 - 1e-9)) return f * m;
  return 10 * m;
}
