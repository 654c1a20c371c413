/* Heron UI: the topology list (/ui/): every topology the tracker knows, by cluster and
 * environ, its state and whether its Topology Master runs; asked again every
 * LIST_REFRESH_MS. */

import { getJSON } from "./api.js";
import { el, setStatus } from "./dom.js";
import { fmtTime } from "./format.js";
import { LIST_REFRESH_MS } from "./settings.js";

export function listPage(app) {
  document.title = "Topologies · Heron UI";
  const status = el("p", { class: "status", text: "loading…" });
  const body = el("tbody");
  const table = el("table", { id: "topologies" },
    el("thead", {}, el("tr", {}, ...["name", "cluster", "environ", "role", "state", "submitted",
      "Topology Master"].map((h) => el("th", { text: h })))), body);
  app.replaceChildren(el("h1", { text: "Topologies" }), status,
    el("section", { class: "card" }, table));

  async function refresh() {
    try {
      const states = await getJSON("/topologies/states");
      const rows = [];
      for (const [cluster, environs] of Object.entries(states)) {
        for (const [environ, topologies] of Object.entries(environs)) {
          for (const [name, t] of Object.entries(topologies)) rows.push([cluster, environ, name, t]);
        }
      }
      rows.sort((a, b) => a[2].localeCompare(b[2]));
      body.replaceChildren(...rows.map(([cluster, environ, name, t]) => el("tr", { "data-topology": name },
        el("td", {}, el("a", { href: "/ui/topologies/" + encodeURIComponent(name), text: name })),
        el("td", { text: cluster }), el("td", { text: environ }), el("td", { text: t.role }),
        el("td", {}, el("span", { class: "badge " + t.state, text: t.state })),
        el("td", { text: fmtTime(t.submission_time) }),
        el("td", { text: t.has_tmanager_location ? "running" : "not running" }))));
      if (!rows.length) body.replaceChildren(el("tr", {}, el("td", { colspan: "7", class: "muted", text: "no topologies" })));
      setStatus(status, false, "updated " + new Date().toLocaleTimeString());
    } catch (err) {
      setStatus(status, true, err.message);
    }
    setTimeout(refresh, LIST_REFRESH_MS);
  }
  refresh();
}
