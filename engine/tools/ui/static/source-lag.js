/* Heron UI: the Kafka lag card (/topologies/sourcelag): the Kafka spouts' consumer lag per
 * component and per partition. Redrawn on every refresh while shown; while no instance
 * reports any, asked every INFO_REFRESH_MS (a spout reports once it has its partitions,
 * so a topology may start showing lag at any time). */

import { getJSON, q } from "./api.js";
import { dataTable, el } from "./dom.js";
import { fmtClock, fmtInt } from "./format.js";
import { INFO_REFRESH_MS } from "./settings.js";

// the card (`card`), and `fetch()` then `draw(answer)` on each refresh; `S` is the page's
// state (when the lag was last asked)
export function sourceLagCard(S, name) {
  const lagNote = el("span", { class: "muted", id: "source-lag-note" });
  const lagBox = el("div", { id: "source-lag-body" });
  const lagCard = el("section", { class: "card", id: "source-lag", hidden: "" },
    el("h2", {}, "Kafka lag ", lagNote), lagBox);

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
      dataTable("source-lag-components", [["component"], ["lag", "num", "summed over its partitions"],
        ["largest", "num", "the largest lag of one partition"], ["partitions", "num"], ["topics"]],
      answer.components.map((c) => el("tr", { "data-component": c.component }, el("td", { text: c.component }),
        cell(c.lag, "lag"), cell(c.max_lag), cell(c.partitions), el("td", { text: c.topics.join(", ") }))), ""),
      el("h3", { text: "Per partition" }),
      dataTable("source-lag-partitions", [["component"], ["instance"], ["topic"], ["partition", "num"],
        ["lag", "num"], ["emitted offset", "num"], ["committed offset", "num"], ["log end offset", "num"]],
      answer.partitions.map((r) => el("tr", {
        "data-partition": `${r.topic}/${r.partition}`, "data-instance": r.instance, class: r.stale_secs != null ? "stale" : null,
        title: r.stale_secs != null ? `stale: last reported ${Math.round(r.stale_secs)} s ago` : null,
      }, el("td", { text: r.component }), el("td", { text: r.instance }), el("td", { text: r.topic }),
      cell(r.partition), cell(r.lag, "lag"), cell(r.emitted_offset), cell(r.committed_offset), cell(r.end_offset))),
      "no partition reported (only totals)"));
  }

  return { card: lagCard, fetch: fetchSourceLag, draw: drawSourceLag };
}
