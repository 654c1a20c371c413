/* Heron UI: the Cluster card, a cluster scheduler's view (Slurm): its jobs, the nodes it
 * gave up on and how long each recovery took. Hidden for a topology on the local
 * scheduler (its info has no cluster_scheduler). */

import { el } from "./dom.js";

// the card (`card`) and `draw(status)` with the info's cluster_scheduler
export function clusterCard() {
  const clusterBox = el("div", { id: "cluster-status" });
  const clusterCard = el("section", { class: "card", id: "cluster", hidden: "" },
    el("h2", { text: "Cluster" }), clusterBox);

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

  return { card: clusterCard, draw: drawCluster };
}
