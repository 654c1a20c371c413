/* Heron UI: one topology's page (/ui/topologies/<name>): lays out its cards, keeps the
 * page's state (the window chosen, the plans last read) and refreshes it in place: the
 * plans and log files every INFO_REFRESH_MS (the structure rebuilt only when they change),
 * the numbers, exceptions, checkpoints and Kafka lag every REFRESH_MS, the charts on
 * their own timer (charts.js). */

import { getJSON, q } from "./api.js";
import { chartsView } from "./charts.js";
import { checkpointsCard } from "./checkpoints.js";
import { clusterCard } from "./cluster.js";
import { el, setStatus } from "./dom.js";
import { fmtTime } from "./format.js";
import { healthView } from "./health.js";
import { logViews } from "./logs.js";
import { updateNumbers } from "./numbers.js";
import { planView } from "./plans.js";
import { INFO_REFRESH_MS, RATE_WINDOW, REFRESH_MS, WINDOWS } from "./settings.js";
import { sourceLagCard } from "./source-lag.js";

export function topologyPage(app, name) {
  document.title = name + " · Heron UI";
  const params = new URLSearchParams(location.search);
  const S = {
    name, info: null, layout: null, signature: "", window: Number(params.get("window")) || 600,
    logfiles: [], lastInfo: 0, layoutId: null,
  };

  const plan = planView(name);
  const logs = logViews();
  const cluster = clusterCard();
  const checkpoints = checkpointsCard(S, name);
  const sourceLag = sourceLagCard(S, name);
  const health = healthView();
  const charts = chartsView(S, name, health);

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
      charts.refresh();
    });
    windows.append(button);
  }
  function markWindow() {
    for (const b of windows.querySelectorAll("button")) b.classList.toggle("active", Number(b.dataset.window) === S.window);
  }
  markWindow();

  app.replaceChildren(
    el("p", {}, el("a", { href: "/ui/", text: "← topologies" })),
    el("h1", {}, el("span", { id: "topology-name", text: name }), badge), meta, status, windows,
    el("section", { class: "card", id: "logical-plan" }, el("h2", { text: "Logical plan" }), plan.dagBox),
    el("section", { class: "card" }, el("h2", {}, "Components ", plan.windowNote), plan.compTable),
    checkpoints.card, sourceLag.card,
    charts.card,
    health.card,
    el("section", { class: "card", id: "physical-plan" }, el("h2", { text: "Physical plan" }), plan.containersBox),
    cluster.card,
    el("section", { class: "card" }, el("h2", { text: "Exceptions" }), logs.excTable),
    el("section", { class: "card" }, el("h2", { text: "Log files" }), logs.logsTable));

  async function loadInfo() {
    const [info, logfiles] = await Promise.all([
      getJSON("/topologies/info?" + q({ topology: name })),
      getJSON("/topologies/logfiles?" + q({ topology: name })),
    ]);
    cluster.draw(info.cluster_scheduler);
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
      plan.drawDag(S.layout);
    }
    if (signature !== S.signature) {
      S.signature = signature;
      plan.buildTables(info, S.logfiles);
    }
    logs.drawLogs(S.logfiles);
  }

  async function refresh() {
    clearTimeout(S.timer);
    let ckpt = null, lag = null;  // never reject: drawn even when the metrics fail
    try {
      if (!S.info || Date.now() - S.lastInfo > INFO_REFRESH_MS) await loadInfo();
      ckpt = checkpoints.fetch();
      lag = sourceLag.fetch();
      const win = S.window > 0 ? S.window : RATE_WINDOW;
      const [all, windowed, bp, exc] = await Promise.all([
        getJSON("/topologies/metrics?" + q({ topology: name })),
        getJSON("/topologies/metrics?" + q({ topology: name, interval: win })),
        getJSON("/topologies/backpressure?" + q({ topology: name, interval: win })),
        getJSON("/topologies/exceptions?" + q({ topology: name })),
      ]);
      updateNumbers(plan, S, all, windowed, bp);
      logs.drawExceptions(exc);
      setStatus(status, false, "live · updated " + new Date().toLocaleTimeString());
    } catch (err) {
      if (err.status === 404) S.info = null;  // killed or resubmitted: reload the plans
      setStatus(status, true, (err.status ? `HTTP ${err.status}: ` : "") + err.message);
    }
    if (ckpt) checkpoints.draw(await ckpt);
    if (lag) sourceLag.draw(await lag);
    S.timer = setTimeout(refresh, REFRESH_MS);
  }
  refresh();
  charts.refresh();
}
