/* Heron UI: the topology list and one topology's page, drawn from the tracker's REST API
 * (same origin) and refreshed in place. Every value from the API is set as text
 * (textContent / attributes), never parsed as markup. The DAG is inline SVG built from the
 * layout the tracker computes (/topologies/logicalplan/layout); the charts over time are
 * drawn by uPlot (uPlot.iife.min.js beside this file, vendored at a pinned version with
 * its license: nothing is loaded from elsewhere). */
"use strict";

(function () {
  const REFRESH_MS = 2000;
  const LIST_REFRESH_MS = 5000;
  const INFO_REFRESH_MS = 10000;
  const WINDOWS = [[60, "1 min"], [600, "10 min"], [3600, "1 h"], [10800, "3 h"], [-1, "all time"]];
  const RATE_WINDOW = 60;
  // charts: redrawn from the tracker's recorded snapshots (/topologies/metrics/timeline)
  const CHART_REFRESH_MS = 5000;
  const CHART_REFRESH_LONG_MS = 15000;  // windows over 10 min: more points, fewer redraws
  const CHART = { w: 240, h: 128 };  // a chart's canvas, title and latest value above it
  // a line's colour per chart (CSS variables of heron-ui.css; the canvas needs the value)
  const CHART_COLOURS = { backpressure: "--bad", parallelism: "--spout", latency: "#7a4fb0" };
  const MAX_POINTS = 240;  // a longer series is averaged into this many time buckets
  const BP_PREFIX = "__time_spent_back_pressure_by_compid/";
  // [key, title, unit, kinds drawn for]; latency is a spout's complete latency, a bolt's
  // execute latency; backpressure is the time the component's instances caused it
  const CHARTS = [
    ["emit-rate", "emit rate", "tuples/s", ["spout", "bolt"]],
    ["execute-rate", "execute rate", "tuples/s", ["bolt"]],
    ["latency", "latency", "ms", ["spout", "bolt"]],
    ["backpressure", "backpressure time", "ms/s", ["spout", "bolt"]],
    ["parallelism", "parallelism", "instances", ["spout", "bolt"]],
  ];
  const SVG_NS = "http://www.w3.org/2000/svg";
  // [metric (ms, averaged over instances), cell class, header, tooltip, spout or bolt metric]
  // Spouts report complete latency (with acking); bolts execute and process latency.
  const LATENCIES = [
    ["__complete-latency", "complete-latency", "complete latency ms",
      "spouts: emit to ack of the tuple tree (needs acking)", "spout"],
    ["__execute-latency", "execute-latency", "execute latency ms",
      "bolts: time in execute() per tuple", "bolt"],
    ["__process-latency", "process-latency", "process latency ms",
      "bolts: tuple received to acked by the bolt (sampled)", "bolt"],
  ];

  // -- small helpers ------------------------------------------------------------------
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === null || value === undefined) continue;
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "text") node.textContent = value;
      else node.setAttribute(key, String(value));
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  function fmtInt(n) {
    if (n === null || n === undefined || n === "" || Number.isNaN(Number(n))) return "–";
    return Math.round(Number(n)).toLocaleString("en-US");
  }
  function fmtRate(n) {
    if (n === null || n === undefined || !Number.isFinite(n)) return "–";
    return n >= 100 ? fmtInt(n) : n.toFixed(1);
  }
  // Latencies are in milliseconds, shown as `heron metrics` shows them: three decimals
  // (bolt execute latencies are often a few microseconds).
  function fmtMs(n) {
    if (n === null || n === undefined || n === "" || !Number.isFinite(Number(n))) return "–";
    return Number(n).toLocaleString("en-US", { minimumFractionDigits: 3, maximumFractionDigits: 3 });
  }
  function fmtBytes(n) {
    if (n === null || n === undefined || Number.isNaN(Number(n))) return "–";
    const units = ["B", "KiB", "MiB", "GiB"];
    let value = Number(n);
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
    return (unit ? value.toFixed(1) : String(value)) + " " + units[unit];
  }
  function fmtTime(unix) {
    if (!unix) return "–";
    const d = new Date(Number(unix) * 1000);
    return Number.isNaN(d.getTime()) ? String(unix) : d.toLocaleString();
  }
  function q(params) {
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined) search.append(k, v);
    return search.toString();
  }
  function num(v) { const n = Number(v); return Number.isFinite(n) ? n : 0; }
  function fmtClock(unix) {
    const d = new Date(Number(unix) * 1000);
    return Number.isNaN(d.getTime()) ? "" : d.toLocaleTimeString([], { hour12: false });
  }
  function fmtAxis(n) {
    if (n >= 1e6) return (n / 1e6).toFixed(n >= 1e7 ? 0 : 1) + "M";
    if (n >= 1e3) return (n / 1e3).toFixed(n >= 1e4 ? 0 : 1) + "k";
    return n >= 10 || Number.isInteger(n) ? String(Math.round(n)) : n.toFixed(n >= 1 ? 1 : 2);
  }
  // the smallest 1, 2, 2.5 or 5 x 10^k at or above max (the y axis' top)
  function niceMax(max) {
    if (!(max > 0)) return 1;
    const m = Math.pow(10, Math.floor(Math.log10(max)));
    for (const f of [1, 2, 2.5, 5, 10]) if (f * m >= max * (1 - 1e-9)) return f * m;
    return 10 * m;
  }

  class ApiError extends Error {
    constructor(status, detail) { super(detail); this.status = status; }
  }

  async function getJSON(path) {
    let response;
    try {
      response = await fetch(path, { headers: { Accept: "application/json" }, cache: "no-store" });
    } catch (err) {
      throw new ApiError(0, "the server did not answer (" + err.message + ")");
    }
    let body = null;
    try { body = await response.json(); } catch (err) { body = null; }
    if (!response.ok) {
      const detail = body && typeof body.detail === "string" ? body.detail : response.statusText;
      throw new ApiError(response.status, detail || ("HTTP " + response.status));
    }
    return body;
  }

  function setStatus(node, error, text) {
    node.className = error ? "status error" : "status";
    node.textContent = text;
  }

  const app = document.getElementById("app");

  // -- the topology list -----------------------------------------------------------------
  function listPage() {
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

  // -- one topology ------------------------------------------------------------------------
  function topologyPage(name) {
    document.title = name + " · Heron UI";
    const params = new URLSearchParams(location.search);
    const S = {
      name, info: null, layout: null, signature: "", window: Number(params.get("window")) || 600,
      logfiles: [], lastInfo: 0, layoutId: null,
    };

    const status = el("p", { class: "status", id: "status", text: "loading…" });
    const badge = el("span", { class: "badge", id: "state" });
    const meta = el("p", { class: "meta", id: "meta" });
    const windows = el("div", { class: "windows" }, el("span", { class: "muted", text: "window:" }));
    for (const [secs, label] of WINDOWS) {
      const button = el("button", { type: "button", "data-window": String(secs), text: label });
      button.addEventListener("click", () => {
        S.window = secs;
        const url = new URL(location.href);
        url.searchParams.set("window", String(secs));
        history.replaceState(null, "", url);
        markWindow();
        refresh();
        refreshCharts();
      });
      windows.append(button);
    }
    function markWindow() {
      for (const b of windows.querySelectorAll("button")) b.classList.toggle("active", Number(b.dataset.window) === S.window);
    }
    markWindow();

    const dagBox = el("div", { id: "dag" });
    const compBody = el("tbody");
    const compTable = el("table", { id: "components" }, el("thead", {}, el("tr", {},
      ...[["component"], ["kind"], ["tasks", "num"], ["emitted", "num"], ["executed", "num"], ["acked", "num"],
        ["failed", "num"], ["emit/s", "num"], ["execute/s", "num"],
        ...LATENCIES.map(([, , h, tip]) => [h, "num", tip]),
        ["restarts", "num"], ["last error"]].map(([h, c, tip]) => el("th", { class: c || null, title: tip, text: h })))), compBody);
    const containersBox = el("div", { class: "containers", id: "containers" });
    const excBody = el("tbody");
    const excTable = el("table", { id: "exceptions" }, el("thead", {}, el("tr", {},
      ...["instance", "count", "last seen", "exception", "log"].map((h) => el("th", { text: h })))), excBody);
    const logsBody = el("tbody");
    const logsTable = el("table", { id: "logfiles" }, el("thead", {}, el("tr", {},
      ...["file", "process", "container", "node", "size", "modified"].map((h) => el("th", { text: h })))), logsBody);
    // a cluster scheduler's view (Slurm): hidden for a topology on the local scheduler
    const clusterBox = el("div", { id: "cluster-status" });
    // an EFFECTIVELY_ONCE topology's checkpoints and restores: hidden for the other modes
    const ckptNote = el("span", { class: "muted", id: "checkpoints-note" });
    const ckptBox = el("div", { id: "checkpoints-body" });
    const ckptCard = el("section", { class: "card", id: "checkpoints", hidden: "" },
      el("h2", {}, "Checkpoints ", ckptNote), ckptBox);
    // Kafka spouts' consumer lag per partition: hidden while no instance reports any
    const lagNote = el("span", { class: "muted", id: "source-lag-note" });
    const lagBox = el("div", { id: "source-lag-body" });
    const lagCard = el("section", { class: "card", id: "source-lag", hidden: "" },
      el("h2", {}, "Kafka lag ", lagNote), lagBox);
    const clusterCard = el("section", { class: "card", id: "cluster", hidden: "" },
      el("h2", { text: "Cluster" }), clusterBox);
    const windowNote = el("span", { class: "muted", id: "window-note" });
    const chartNote = el("span", { class: "muted", id: "chart-note" });
    const healthStatus = el("p", { class: "status", id: "health-status", text: "Health Manager: …" });
    const chartsBox = el("div", { id: "chart-rows" });
    const healthBody = el("tbody");
    const healthTable = el("table", { id: "health-records" }, el("thead", {}, el("tr", {},
      ...["time", "kind", "component", "what"].map((h) => el("th", { text: h })))), healthBody);

    app.replaceChildren(
      el("p", {}, el("a", { href: "/ui/", text: "← topologies" })),
      el("h1", {}, el("span", { id: "topology-name", text: name }), badge), meta, status, windows,
      el("section", { class: "card", id: "logical-plan" }, el("h2", { text: "Logical plan" }), dagBox),
      el("section", { class: "card" }, el("h2", {}, "Components ", windowNote), compTable),
      ckptCard, lagCard,
      el("section", { class: "card", id: "charts" }, el("h2", {}, "Over time ", chartNote),
        healthStatus, chartsBox),
      el("section", { class: "card", id: "health" }, el("h2", { text: "Health Manager timeline" }),
        healthTable),
      el("section", { class: "card", id: "physical-plan" }, el("h2", { text: "Physical plan" }), containersBox),
      clusterCard,
      el("section", { class: "card" }, el("h2", { text: "Exceptions" }), excTable),
      el("section", { class: "card" }, el("h2", { text: "Log files" }), logsTable));

    // -- structure: built when the plans change --------------------------------------------
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

    function buildTables(info) {
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
      for (const f of S.logfiles) logsByOwner[f.owner] = f.url;
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

    function drawLogs() {
      logsBody.replaceChildren(...S.logfiles.map((f) => el("tr", {},
        el("td", {}, el("a", { href: f.url, target: "_blank", rel: "noopener", text: f.name })),
        el("td", { text: f.owner }), el("td", { text: f.container === null ? "–" : String(f.container) }),
        el("td", { text: f.host || "this machine" }),
        el("td", { class: "num", text: fmtBytes(f.size) }), el("td", { text: fmtTime(f.mtime) }))));
      if (!S.logfiles.length) logsBody.replaceChildren(el("tr", {}, el("td", { colspan: "6", class: "muted", text: "no log files found" })));
    }

    // the cluster scheduler's jobs, the nodes it gave up on and how long each recovery took
    function drawCluster(status) {
      clusterCard.hidden = !status;
      if (!status) return;
      const table = (id, heads, rows) => el("table", { id }, el("thead", {}, el("tr", {},
        ...heads.map(([h, c]) => el("th", { class: c || null, text: h })))), el("tbody", {}, ...rows));
      const jobs = table("cluster-jobs", [["container", "num"], ["job"], ["node"], ["state"], ["incarnation", "num"]],
        status.jobs.map((j) => el("tr", { "data-container": String(j.container) },
          el("td", { class: "num", text: String(j.container) }), el("td", { text: j.job_id }),
          el("td", { text: j.node || "–" }), el("td", { text: j.state }),
          el("td", { class: "num", text: String(j.incarnation) }))));
      const recoveries = status.recoveries.length
        ? table("cluster-recoveries", [["container", "num"], ["cause"], ["noticed after", "num"],
          ["running after", "num"], ["recovered in", "num"], ["measured from"]],
          status.recoveries.map((r) => el("tr", {}, el("td", { class: "num", text: String(r.container) }),
            el("td", { text: r.cause }),
            el("td", { class: "num", text: r.detected_after == null ? "–" : r.detected_after.toFixed(1) + " s" }),
            el("td", { class: "num", text: r.running_after == null ? "–" : r.running_after.toFixed(1) + " s" }),
            el("td", { class: "num", text: r.seconds.toFixed(1) + " s" }),
            el("td", { text: r.measured_from === "last report" ? "its last report" : "the loss noticed" }))))
        : el("p", { class: "muted", text: "no container has been replaced" });
      clusterBox.replaceChildren(
        el("p", { class: "muted", text: `${status.scheduler} scheduler · excluded nodes: ${status.excluded_nodes.join(", ") || "none"}` }),
        jobs, el("h3", { text: "Recoveries" }), recoveries);
    }

    async function loadInfo() {
      const [info, logfiles] = await Promise.all([
        getJSON("/topologies/info?" + q({ topology: name })),
        getJSON("/topologies/logfiles?" + q({ topology: name })),
      ]);
      drawCluster(info.cluster_scheduler);
      S.info = info;
      S.logfiles = logfiles;
      S.lastInfo = Date.now();
      badge.textContent = info.state;
      badge.className = "badge " + info.state;
      const e = info.execution_state;
      meta.replaceChildren(el("span", { text: "id " + info.id }),
        el("span", { text: `${info.cluster} / ${info.environ} / ${info.role}` }),
        el("span", { text: "submitted " + fmtTime(e ? e.submission_time : null) }),
        info.working_dir ? el("span", { text: info.working_dir }) : null);
      const pp = info.physical_plan;
      const signature = JSON.stringify([info.id, pp ? Object.keys(pp.instances).sort() : null,
        pp ? Object.values(pp.stmgrs).map((s) => [s.id, s.pid]) : null, !!info.tmanager_location,
        logfiles.map((f) => f.name)]);
      if (S.layoutId !== info.id) {  // a resubmitted topology may have another plan
        S.layout = await getJSON("/topologies/logicalplan/layout?" + q({ topology: name }));
        S.layoutId = info.id;
        drawDag(S.layout);
      }
      if (signature !== S.signature) {
        S.signature = signature;
        buildTables(info);
      }
      drawLogs();
    }

    // -- checkpoints (EFFECTIVELY_ONCE): the card, redrawn on every refresh ------------------
    // Another mode's answer says it takes none: the card stays hidden and is not asked
    // again until the topology is resubmitted (a new id may have another mode).
    async function fetchCheckpoints() {
      if (S.info && S.noCheckpointsFor === S.info.id) return null;
      try {
        return await getJSON("/topologies/checkpoints?" + q({ topology: name }));
      } catch (err) {
        return { error: (err.status ? `HTTP ${err.status}: ` : "") + err.message };
      }
    }
    function ckptTable(id, heads, rows, empty) {
      const body = el("tbody", {}, ...rows);
      if (!rows.length) body.append(el("tr", {}, el("td", { colspan: String(heads.length), class: "muted", text: empty })));
      return el("table", { id }, el("thead", {}, el("tr", {},
        ...heads.map(([h, c, tip]) => el("th", { class: c || null, title: tip || null, text: h })))), body);
    }
    // a count and its label ("1 rollback", "2 rollbacks"; "abandoned" and "completed" stay)
    function figure(key, value, label, tip) {
      const text = value === "1" && label.endsWith("s") ? label.slice(0, -1) : label;
      return el("span", { class: "figure", "data-figure": key, title: tip || null },
        el("b", { text: value }), " " + text);
    }
    function drawCheckpoints(answer) {
      if (!answer) return;
      if (answer.error) {  // keep what was drawn; say why it is not fresh
        if (!ckptCard.hidden) ckptNote.textContent = `(not updated: ${answer.error})`;
        return;
      }
      ckptCard.dataset.effectivelyOnce = String(answer.effectively_once);
      ckptCard.hidden = !answer.effectively_once;
      if (!answer.effectively_once) {
        if (S.info) S.noCheckpointsFor = S.info.id;
        return;
      }
      ckptNote.textContent = `(effectively-once${answer.interval_secs ? ` · every ${answer.interval_secs} s` : ""}` +
        `${answer.endtime ? " · updated " + fmtClock(answer.endtime) : ""})`;
      const tm = answer.tmanager;
      const parts = [];
      if (tm) {
        const last = tm.last_checkpoint_id
          ? `${tm.last_checkpoint_id} in ${fmtInt(tm.last_duration_ms)} ms, ${fmtInt(tm.last_bytes)} bytes` : "none yet";
        parts.push(el("p", { class: "figures", id: "checkpoint-figures" },
          figure("completed", fmtInt(tm.completed), "completed"),
          figure("abandoned", fmtInt(tm.abandoned), "abandoned",
            "given up on: timed out aligning, a failure came, or storage failed (never a stall)"),
          figure("restores", fmtInt(tm.restores), "restores", "the restore at start included"),
          figure("rollbacks", fmtInt(tm.rollbacks), "rollbacks", "restores after a failure, in the restore log"),
          el("span", { class: "figure", "data-figure": "last" }, "last: ", el("b", { text: last }))));
      }
      if (answer.note) parts.push(el("p", { class: "muted", id: "checkpoint-note", text: answer.note }));
      parts.push(el("h3", { text: "Globally consistent checkpoints (newest first)" }),
        ckptTable("checkpoint-list", [["checkpoint"], ["completed"], ["duration", "num"], ["bytes", "num"], ["packing plan"]],
          answer.consistent.map((c) => el("tr", { "data-checkpoint": c.checkpoint_id },
            el("td", { text: c.checkpoint_id }), el("td", { text: c.completed_at ? fmtTime(c.completed_at) : "–" }),
            el("td", { class: "num", text: fmtInt(c.duration_secs * 1000) + " ms" }),
            el("td", { class: "num", text: fmtInt(c.bytes) }), el("td", { class: "muted", text: c.packing_plan_id }))),
          "none yet: the first completes one interval after the start"));
      if (tm && tm.last_rescale && tm.last_rescale.length) {
        parts.push(el("h3", { text: "Last resize (keyed state moved by key group)" }),
          ckptTable("checkpoint-rescale", [["component"], ["tasks", "num"], ["key groups moved", "num"]],
            tm.last_rescale.map((r) => el("tr", { "data-component": r.component },
              el("td", { text: r.component }), el("td", { class: "num", text: `${r.tasks_before} → ${r.tasks_after}` }),
              el("td", { class: "num", text: fmtInt(r.key_groups_moved) }))), ""));
      }
      if (tm) {
        parts.push(el("h3", { text: "Restores (newest first)" }),
          ckptTable("checkpoint-restores", [["kind"], ["restored"], ["reason"]],
            tm.restore_log.map((r) => el("tr", { "data-kind": r.at_start ? "start" : "rollback" },
              el("td", { text: r.at_start ? "start" : "rollback" }),
              el("td", { text: r.checkpoint_id || "empty state" }), el("td", { class: "what", text: r.reason }))),
            "no restore yet"));
      }
      parts.push(el("h3", { text: "State per task" }),
        ckptTable("checkpoint-tasks", [["instance"], ["component"], ["task", "num"], ["state bytes", "num", "its last saved state"],
          ["keyed keys", "num", "keys in its keyed state"], ["key groups", "num", "key groups it owns that hold keyed state"],
          ["save ms", "num", "its last save"], ["saves", "num"], ["restores", "num"], ["restore ms", "num", "its last restore"]],
        answer.tasks.map((t) => el("tr", {
          "data-instance": t.instance, "data-component": t.component, class: t.stale_secs != null ? "stale" : null,
          title: t.stale_secs != null ? `stale: last reported ${Math.round(t.stale_secs)} s ago` : null,
        }, el("td", { text: t.instance }), el("td", { text: t.component + (t.stateful ? "" : " (stateless)") }),
        el("td", { class: "num", text: t.task_id == null ? "–" : String(t.task_id) }),
        el("td", { class: "num state-bytes", text: fmtInt(t.state_bytes) }),
        el("td", { class: "num keyed-keys", text: fmtInt(t.keyed_keys) }),
        el("td", { class: "num key-groups", text: fmtInt(t.key_groups) }),
        el("td", { class: "num", text: fmtMs(t.save_ms) }), el("td", { class: "num", text: fmtInt(t.saves) }),
        el("td", { class: "num", text: fmtInt(t.restores) }), el("td", { class: "num", text: fmtMs(t.restore_ms) }))),
        "no task has reported yet"));
      if (answer.stmgrs.length) {
        parts.push(el("h3", { text: "Stream Managers" }),
          ckptTable("checkpoint-stmgrs", [["stream manager"], ["markers sent", "num"], ["alignments abandoned", "num"],
            ["held bytes", "num", "input held back while aligning"], ["discarded after rollback", "num"]],
          answer.stmgrs.map((sm) => el("tr", { "data-stmgr": sm.id }, el("td", { text: sm.id }),
            el("td", { class: "num", text: fmtInt(sm.markers_sent) }), el("td", { class: "num", text: fmtInt(sm.alignments_abandoned) }),
            el("td", { class: "num", text: fmtInt(sm.held_bytes) }), el("td", { class: "num", text: fmtInt(sm.rollback_discarded_messages) }))),
          ""));
      }
      ckptBox.replaceChildren(...parts);
    }

    // -- Kafka lag (/topologies/sourcelag): redrawn on every refresh while shown; while no
    // instance reports any, asked every INFO_REFRESH_MS (a spout reports once it has its
    // partitions, so a topology may start showing lag at any time) ---------------------------
    async function fetchSourceLag() {
      if (lagCard.hidden && Date.now() - (S.lagAsked || 0) < INFO_REFRESH_MS) return null;
      S.lagAsked = Date.now();
      try {
        return await getJSON("/topologies/sourcelag?" + q({ topology: name }));
      } catch (err) {
        return { error: (err.status ? `HTTP ${err.status}: ` : "") + err.message };
      }
    }
    function drawSourceLag(answer) {
      if (!answer) return;
      if (answer.error) {  // keep what was drawn; say why it is not fresh
        if (!lagCard.hidden) lagNote.textContent = `(not updated: ${answer.error})`;
        return;
      }
      lagCard.hidden = !answer.components.length;
      if (lagCard.hidden) return;
      lagNote.textContent = "(log end offset minus the spout's position" +
        `${answer.endtime ? " · updated " + fmtClock(answer.endtime) : ""})`;
      const cell = (v, cls) => el("td", { class: "num" + (cls ? " " + cls : ""), text: fmtInt(v) });
      lagBox.replaceChildren(
        ckptTable("source-lag-components", [["component"], ["lag", "num", "summed over its partitions"],
          ["largest", "num", "the largest lag of one partition"], ["partitions", "num"], ["topics"]],
        answer.components.map((c) => el("tr", { "data-component": c.component }, el("td", { text: c.component }),
          cell(c.lag, "lag"), cell(c.max_lag), cell(c.partitions), el("td", { text: c.topics.join(", ") }))), ""),
        el("h3", { text: "Per partition" }),
        ckptTable("source-lag-partitions", [["component"], ["instance"], ["topic"], ["partition", "num"],
          ["lag", "num"], ["emitted offset", "num"], ["committed offset", "num"], ["log end offset", "num"]],
        answer.partitions.map((r) => el("tr", {
          "data-partition": `${r.topic}/${r.partition}`, "data-instance": r.instance, class: r.stale_secs != null ? "stale" : null,
          title: r.stale_secs != null ? `stale: last reported ${Math.round(r.stale_secs)} s ago` : null,
        }, el("td", { text: r.component }), el("td", { text: r.instance }), el("td", { text: r.topic }),
        cell(r.partition), cell(r.lag, "lag"), cell(r.emitted_offset), cell(r.committed_offset), cell(r.end_offset))),
        "no partition reported (only totals)"));
    }

    // -- numbers: updated on every refresh ----------------------------------------------------
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

    function updateNumbers(all, win, bp) {
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

    function drawExceptions(list) {
      list.sort((a, b) => num(b.lasttime) - num(a.lasttime));
      excBody.replaceChildren(...list.map((e) => el("tr", { "data-instance": e.instance_id },
        el("td", { text: e.instance_id }), el("td", { class: "num", text: fmtInt(e.count) }),
        el("td", { text: fmtTime(e.lasttime) }), el("td", {}, el("pre", { class: "trace", text: e.stacktrace })),
        el("td", {}, e.logfile ? el("a", { href: e.logfile, target: "_blank", rel: "noopener", text: "log" }) : null))));
      if (!list.length) excBody.replaceChildren(el("tr", {}, el("td", { colspan: "5", class: "muted", text: "no exceptions reported" })));
    }

    // -- charts over the chosen window, and the Health Manager's timeline -------------------
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
    function thin(points, start, end) {
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

    function chartSeries(timeline, parallelism) {
      const owners = timeline.components || {};
      const instances = S.info && S.info.physical_plan ? S.info.physical_plan.instances : {};
      const ownerOf = (id) => owners[id] || (instances[id] ? instances[id].name : null);
      const tl = timeline.timeline;
      const emit = {}, execute = {}, latency = {}, bp = {};
      counterRates(tl["__emit-count"], ownerOf, emit);
      counterRates(tl["__execute-count"], ownerOf, execute);
      const lp = S.info.logical_plan;
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

    function recordWhat(r) {
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
    function recordKind(r) { return r.type === "note" ? "note" : `${r.type}: ${r.kind}`; }

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
        const series = chartSeries(timeline, parallelism);
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
        drawHealth(health, from, end);
      } catch (err) {
        if (err.status === 404) S.info = null;
        chartNote.textContent = "(charts: " + (err.status ? `HTTP ${err.status}: ` : "") + err.message + ")";
      }
      S.chartTimer = setTimeout(refreshCharts, S.window > 0 && S.window <= 600 ? CHART_REFRESH_MS : CHART_REFRESH_LONG_MS);
    }

    async function refresh() {
      clearTimeout(S.timer);
      let checkpoints = null, lag = null;  // never reject: drawn even when the metrics fail
      try {
        if (!S.info || Date.now() - S.lastInfo > INFO_REFRESH_MS) await loadInfo();
        checkpoints = fetchCheckpoints();
        lag = fetchSourceLag();
        const win = S.window > 0 ? S.window : RATE_WINDOW;
        const [all, windowed, bp, exc] = await Promise.all([
          getJSON("/topologies/metrics?" + q({ topology: name })),
          getJSON("/topologies/metrics?" + q({ topology: name, interval: win })),
          getJSON("/topologies/backpressure?" + q({ topology: name, interval: win })),
          getJSON("/topologies/exceptions?" + q({ topology: name })),
        ]);
        updateNumbers(all, windowed, bp);
        drawExceptions(exc);
        setStatus(status, false, "live · updated " + new Date().toLocaleTimeString());
      } catch (err) {
        if (err.status === 404) S.info = null;  // killed or resubmitted: reload the plans
        setStatus(status, true, (err.status ? `HTTP ${err.status}: ` : "") + err.message);
      }
      if (checkpoints) drawCheckpoints(await checkpoints);
      if (lag) drawSourceLag(await lag);
      S.timer = setTimeout(refresh, REFRESH_MS);
    }
    refresh();
    refreshCharts();
  }

  const match = location.pathname.match(/^\/ui\/topologies\/([^/]+)\/?$/);
  if (match) topologyPage(decodeURIComponent(match[1]));
  else listPage();
})();
