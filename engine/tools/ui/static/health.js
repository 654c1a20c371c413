/* Heron UI: the Health Manager's records (/topologies/health): what each says, the
 * status line above the charts (on or off, its mode, records kept) and the Health Manager
 * timeline card, the records of the charts' window, newest first. */

import { el } from "./dom.js";
import { fmtTime } from "./format.js";

export function recordWhat(r) {
  const detail = (d) => Object.entries(d || {}).map(([k, v]) => `${k} ${Array.isArray(v) ? v.join(", ") : v}`).join(" · ");
  if (r.type === "action") {
    const change = r.kind === "scale" ? `${r.current ?? "?"} → ${r.target ?? "?"} instances`
      : `container ${r.container ?? "?"}`;
    return `${r.status}: ${change}; ${r.reason}${r.note ? " (" + r.note + ")" : ""}`;
  }
  if (r.type === "diagnosis") {
    return [`from ${(r.symptoms || []).join(", ") || "–"}`, (r.instances || []).join(", "), detail(r.detail)]
      .filter(Boolean).join(" · ");
  }
  if (r.type === "symptom") return [(r.instances || []).join(", "), detail(r.detail)].filter(Boolean).join(" · ");
  return r.message || "";
}
export function recordKind(r) { return r.type === "note" ? "note" : `${r.type}: ${r.kind}`; }

// the status line (`status`, shown in the charts' card), the timeline card (`card`) and
// `draw(health, start, end)`
export function healthView() {
  const healthStatus = el("p", { class: "status", id: "health-status", text: "Health Manager: …" });
  const healthBody = el("tbody");
  const healthTable = el("table", { id: "health-records" }, el("thead", {}, el("tr", {},
    ...["time", "kind", "component", "what"].map((h) => el("th", { text: h })))), healthBody);
  const healthCard = el("section", { class: "card", id: "health" }, el("h2", { text: "Health Manager timeline" }),
    healthTable);

  function drawHealth(health, start, end) {
    const records = health.records || [];
    const shown = records.filter((r) => r.time >= start && r.time <= end).reverse();
    const actions = records.filter((r) => r.type === "action" && r.status === "applied").length;
    healthStatus.className = "status";
    healthStatus.dataset.enabled = String(!!health.enabled);
    healthStatus.textContent = health.enabled
      ? `Health Manager: on (${health.mode}) · ${records.length} records kept, ${actions} actions applied · marks: actions (full height), diagnoses (half), symptoms and notes (ticks)`
      : `Health Manager: off${records.length ? ` · ${records.length} records kept from when it ran` : ""} (heron.topology.healthmgr.mode: ${health.mode})`;
    healthBody.replaceChildren(...shown.map((r) => el("tr", {
      "data-type": r.type, "data-kind": r.kind || "note", "data-component": r.component || "",
      class: r.type === "action" ? "health-action " + (r.status || "") : null,
    }, el("td", { text: fmtTime(r.time) }), el("td", { text: recordKind(r) }),
    el("td", { text: r.component || "–" }), el("td", { class: "what", text: recordWhat(r) }))));
    if (!shown.length) {
      healthBody.replaceChildren(el("tr", {}, el("td", { colspan: "4", class: "muted", text: health.enabled
        ? "no record in this window" : (records.length ? "no record in this window" : "Health Manager: off") })));
    }
  }

  return { status: healthStatus, card: healthCard, draw: drawHealth };
}
