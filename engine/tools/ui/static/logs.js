/* Heron UI: the Exceptions card (/topologies/exceptions: each instance's exceptions, the
 * newest first) and the Log files card (/topologies/logfiles: every process's log, with
 * where it ran), each linking to the logs the tracker serves. */

import { el } from "./dom.js";
import { fmtBytes, fmtInt, fmtTime, num } from "./format.js";

// the two tables (`excTable`, `logsTable`), `drawExceptions(list)` and `drawLogs(logfiles)`
export function logViews() {
  const excBody = el("tbody");
  const excTable = el("table", { id: "exceptions" }, el("thead", {}, el("tr", {},
    ...["instance", "count", "last seen", "exception", "log"].map((h) => el("th", { text: h })))), excBody);
  const logsBody = el("tbody");
  const logsTable = el("table", { id: "logfiles" }, el("thead", {}, el("tr", {},
    ...["file", "process", "container", "node", "size", "modified"].map((h) => el("th", { text: h })))), logsBody);

  function drawLogs(logfiles) {
    logsBody.replaceChildren(...logfiles.map((f) => el("tr", {},
      el("td", {}, el("a", { href: f.url, target: "_blank", rel: "noopener", text: f.name })),
      el("td", { text: f.owner }), el("td", { text: f.container === null ? "–" : String(f.container) }),
      el("td", { text: f.host || "this machine" }),
      el("td", { class: "num", text: fmtBytes(f.size) }), el("td", { text: fmtTime(f.mtime) }))));
    if (!logfiles.length) logsBody.replaceChildren(el("tr", {}, el("td", { colspan: "6", class: "muted", text: "no log files found" })));
  }

  function drawExceptions(list) {
    list.sort((a, b) => num(b.lasttime) - num(a.lasttime));
    excBody.replaceChildren(...list.map((e) => el("tr", { "data-instance": e.instance_id },
      el("td", { text: e.instance_id }), el("td", { class: "num", text: fmtInt(e.count) }),
      el("td", { text: fmtTime(e.lasttime) }), el("td", {}, el("pre", { class: "trace", text: e.stacktrace })),
      el("td", {}, e.logfile ? el("a", { href: e.logfile, target: "_blank", rel: "noopener", text: "log" }) : null))));
    if (!list.length) excBody.replaceChildren(el("tr", {}, el("td", { colspan: "5", class: "muted", text: "no exceptions reported" })));
  }

  return { excTable, logsTable, drawExceptions, drawLogs };
}
