/* Heron UI: one topology's structure, built when its plans change: the logical plan as
 * an SVG DAG (laid out by the tracker, /topologies/logicalplan/layout), the components
 * table, and the physical plan (a box per container with its instances and log links).
 * The numbers in them are filled in by numbers.js on every refresh. */

import { el, svg } from "./dom.js";
import { LATENCIES } from "./settings.js";

// the elements: `dagBox` (logical plan), `compTable`/`compBody` (components), `containersBox`
// (physical plan), `windowNote` (what the components' counts cover)
export function planView(name) {
  const dagBox = el("div", { id: "dag" });
  const compBody = el("tbody");
  const compTable = el("table", { id: "components" }, el("thead", {}, el("tr", {},
    ...[["component"], ["kind"], ["tasks", "num"], ["emitted", "num"], ["executed", "num"], ["acked", "num"],
      ["failed", "num"], ["emit/s", "num"], ["execute/s", "num"],
      ...LATENCIES.map(([, , h, tip]) => [h, "num", tip]),
      ["restarts", "num"], ["last error"]].map(([h, c, tip]) => el("th", { class: c || null, title: tip, text: h })))), compBody);
  const containersBox = el("div", { class: "containers", id: "containers" });
  const windowNote = el("span", { class: "muted", id: "window-note" });

  function drawDag(layout) {
    const root = svg("svg", {
      class: "dag", viewBox: `0 0 ${layout.width} ${layout.height}`, width: layout.width,
      height: layout.height, role: "img", "aria-label": "logical plan of " + name,
    });
    root.append(svg("defs", {}, svg("marker", {
      id: "arrow", viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "8",
      markerHeight: "8", orient: "auto-start-reverse",
    }, svg("path", { d: "M 0 0 L 10 5 L 0 10 z" }))));
    for (const edge of layout.edges) {
      root.append(svg("g", { class: "dag-edge" + (edge.back ? " back" : ""), "data-source": edge.source, "data-target": edge.target },
        svg("path", { d: edge.path, "marker-end": "url(#arrow)" }),
        svg("text", { x: edge.label_x, y: edge.label_y, "text-anchor": "middle", text: edge.label })));
    }
    for (const node of layout.nodes) {
      root.append(svg("g", { class: "dag-node " + node.kind, "data-component": node.name, transform: `translate(${node.x} ${node.y})` },
        svg("title", { text: `${node.name} (${node.kind}, ${node.parallelism} task${node.parallelism === 1 ? "" : "s"})` }),
        svg("rect", { width: node.width, height: node.height, rx: 8, ry: 8 }),
        svg("text", { class: "name", x: 12, y: 21, text: node.name }),
        svg("text", { class: "kind", x: 12, y: 39, text: `${node.kind} × ${node.parallelism}` }),
        svg("text", { class: "live", x: 12, y: 57, text: "–" })));
    }
    dagBox.replaceChildren(root);
  }

  // the components' rows and the containers' boxes, their numbers "–" until the next refresh
  function buildTables(info, logfiles) {
    const lp = info.logical_plan;
    const rows = lp.component_order.map((c) => {
      const kind = c in lp.spouts ? "spout" : "bolt";
      const par = (lp.spouts[c] || lp.bolts[c]).parallelism;
      const cells = ["emitted", "executed", "acked", "failed", "emit-rate", "execute-rate",
        ...LATENCIES.map(([, cls]) => cls), "restarts"]
        .map((k) => el("td", { class: "num " + k, text: "–" }));
      return el("tr", { "data-component": c }, el("td", { text: c }), el("td", { text: kind }),
        el("td", { class: "num", text: String(par) }), ...cells, el("td", { class: "last-error muted", text: "" }));
    });
    compBody.replaceChildren(...rows);

    const pp = info.physical_plan;
    if (!pp) {
      containersBox.replaceChildren(el("p", { class: "muted", text: "The physical plan is not built yet (waiting for every Stream Manager)." }));
      return;
    }
    const logsByOwner = {};
    for (const f of logfiles) logsByOwner[f.owner] = f.url;
    const boxes = [];
    const tmLinks = el("div", { class: "logs" });
    for (const owner of ["heron-tmanager", "executor-0", "scheduler"]) {
      if (logsByOwner[owner]) tmLinks.append(el("a", { href: logsByOwner[owner], target: "_blank", rel: "noopener", text: owner + ".log" }));
    }
    const tm = info.tmanager_location;
    boxes.push(el("div", { class: "container", "data-container": "0" },
      el("h3", {}, "container 0 · Topology Master",
        el("span", { class: "badge " + (tm ? "ok" : "bad"), text: tm ? "running" : "not running" })),
      tm ? el("p", { class: "muted", text: "controller " + tm.controller_endpoint }) : null, tmLinks));
    const stmgrs = Object.values(pp.stmgrs).sort((a, b) => (a.container ?? 0) - (b.container ?? 0));
    for (const sm of stmgrs) {
      const links = el("div", { class: "logs" });
      for (const [proc, url] of Object.entries(sm.logfiles)) links.append(el("a", { href: url, target: "_blank", rel: "noopener", text: proc + ".log" }));
      const ibody = el("tbody");
      for (const id of sm.instance_ids) {
        const inst = pp.instances[id];
        ibody.append(el("tr", { "data-instance": id, "data-component": inst.name },
          el("td", { text: id }), el("td", { text: inst.name }), el("td", { class: "num", text: String(inst.task_id) }),
          ...["emitted", "executed", "emit-rate", "execute-rate", ...LATENCIES.map(([, cls]) => cls)]
            .map((k) => el("td", { class: "num " + k, text: "–" })),
          el("td", { class: "bp", text: "–" }),
          el("td", {}, inst.logfile ? el("a", { href: inst.logfile, target: "_blank", rel: "noopener", text: "log" }) : el("span", { class: "muted", text: "–" }))));
      }
      boxes.push(el("div", { class: "container", "data-stmgr": sm.id, "data-container": String(sm.container) },
        el("h3", {}, `container ${sm.container} · ${sm.id}`, el("span", { class: "muted", text: sm.pid ? "pid " + sm.pid : "" }),
          el("span", { class: "badge bp-state", text: "–" }), el("span", { class: "muted buffered", text: "" })),
        links,
        el("table", {}, el("thead", {}, el("tr", {}, ...[["instance"], ["component"], ["task", "num"], ["emitted", "num"],
          ["executed", "num"], ["emit/s", "num"], ["execute/s", "num"],
          ...LATENCIES.map(([, , h, tip]) => [h.replace(" latency", ""), "num", tip]), ["backpressure"], ["log"]]
          .map(([h, c, tip]) => el("th", { class: c || null, title: tip, text: h })))), ibody)));
    }
    containersBox.replaceChildren(...boxes);
  }

  return { dagBox, compBody, compTable, containersBox, windowNote, drawDag, buildTables };
}
