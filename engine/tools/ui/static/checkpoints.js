/* Heron UI: the Checkpoints card of an EFFECTIVELY_ONCE topology (/topologies/checkpoints),
 * redrawn on every refresh: the Topology Master's counts, the globally consistent
 * checkpoints, the last resize, the restores, each task's state and each Stream Manager's
 * alignment. Hidden for the other modes. */

import { getJSON, q } from "./api.js";
import { dataTable, el } from "./dom.js";
import { fmtClock, fmtInt, fmtMs, fmtTime } from "./format.js";

// the card (`card`), and `fetch()` then `draw(answer)` on each refresh; `S` is the page's
// state (its plans, and the topology id known to take no checkpoints)
export function checkpointsCard(S, name) {
  const ckptNote = el("span", { class: "muted", id: "checkpoints-note" });
  const ckptBox = el("div", { id: "checkpoints-body" });
  const ckptCard = el("section", { class: "card", id: "checkpoints", hidden: "" },
    el("h2", {}, "Checkpoints ", ckptNote), ckptBox);

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
      dataTable("checkpoint-list", [["checkpoint"], ["completed"], ["duration", "num"], ["bytes", "num"], ["packing plan"]],
        answer.consistent.map((c) => el("tr", { "data-checkpoint": c.checkpoint_id },
          el("td", { text: c.checkpoint_id }), el("td", { text: c.completed_at ? fmtTime(c.completed_at) : "–" }),
          el("td", { class: "num", text: fmtInt(c.duration_secs * 1000) + " ms" }),
          el("td", { class: "num", text: fmtInt(c.bytes) }), el("td", { class: "muted", text: c.packing_plan_id }))),
        "none yet: the first completes one interval after the start"));
    if (tm && tm.last_rescale && tm.last_rescale.length) {
      parts.push(el("h3", { text: "Last resize (keyed state moved by key group)" }),
        dataTable("checkpoint-rescale", [["component"], ["tasks", "num"], ["key groups moved", "num"]],
          tm.last_rescale.map((r) => el("tr", { "data-component": r.component },
            el("td", { text: r.component }), el("td", { class: "num", text: `${r.tasks_before} → ${r.tasks_after}` }),
            el("td", { class: "num", text: fmtInt(r.key_groups_moved) }))), ""));
    }
    if (tm) {
      parts.push(el("h3", { text: "Restores (newest first)" }),
        dataTable("checkpoint-restores", [["kind"], ["restored"], ["reason"]],
          tm.restore_log.map((r) => el("tr", { "data-kind": r.at_start ? "start" : "rollback" },
            el("td", { text: r.at_start ? "start" : "rollback" }),
            el("td", { text: r.checkpoint_id || "empty state" }), el("td", { class: "what", text: r.reason }))),
          "no restore yet"));
    }
    parts.push(el("h3", { text: "State per task" }),
      dataTable("checkpoint-tasks", [["instance"], ["component"], ["task", "num"], ["state bytes", "num", "its last saved state"],
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
        dataTable("checkpoint-stmgrs", [["stream manager"], ["markers sent", "num"], ["alignments abandoned", "num"],
          ["held bytes", "num", "input held back while aligning"], ["discarded after rollback", "num"]],
        answer.stmgrs.map((sm) => el("tr", { "data-stmgr": sm.id }, el("td", { text: sm.id }),
          el("td", { class: "num", text: fmtInt(sm.markers_sent) }), el("td", { class: "num", text: fmtInt(sm.alignments_abandoned) }),
          el("td", { class: "num", text: fmtInt(sm.held_bytes) }), el("td", { class: "num", text: fmtInt(sm.rollback_discarded_messages) }))),
        ""));
    }
    ckptBox.replaceChildren(...parts);
  }

  return { card: ckptCard, fetch: fetchCheckpoints, draw: drawCheckpoints };
}
