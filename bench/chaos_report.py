"""The chaos soak's report (bench/chaos.py): recovery percentiles per kind, RSS and open
file descriptors per kind in the first and last thirds, the summary tables, the live
status line and the chart (matplotlib, Agg backend)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from rich.console import Console
from rich.table import Table
from rich.text import Text

from bench.chaos_monkey import KINDS, Kill, ResourceSample
from bench.series import moving_average


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest rank."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def _r(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def recovery_figures(kills: Sequence[Kill]) -> dict:
    """Per kind and ``all``: kills, recovered, p50/p99/max of the recovery time (kill to
    process back and the sink recording at 80 % of the offered rate again) and of the time
    until the process was back."""
    out = {}
    kinds = [k for k in KINDS if any(x.kind == k for x in kills)]
    kinds += sorted({x.kind for x in kills} - set(kinds))
    for kind in [*kinds, "all"]:
        group = [k for k in kills if kind == "all" or k.kind == kind]
        rec = [k.recovered_s for k in group if k.recovered_s is not None]
        back = [k.back_s for k in group if k.back_s is not None]
        out[kind] = {
            "kills": len(group), "recovered": len(rec),
            "resubmitted": sum(k.resubmitted for k in group),
            "overlapped": sum(k.overlapped for k in group),
            "p50_s": _r(percentile(rec, 50)), "p99_s": _r(percentile(rec, 99)),
            "max_s": _r(max(rec) if rec else None),
            "back_p50_s": _r(percentile(back, 50)), "back_max_s": _r(max(back) if back else None),
        }
    return out


def resource_figures(samples: Sequence[ResourceSample], start: float, end: float) -> dict:
    """Per kind, the mean RSS (MB) and open file descriptors of one process of the kind,
    over the samples of the first third and of the last third of [start, end]."""
    third = (end - start) / 3
    out = {}
    kinds = [k for k in KINDS if any(s.kind == k for s in samples)]
    kinds += sorted({s.kind for s in samples} - set(kinds))
    for kind in kinds:
        row = {}
        for label, lo, hi in (("first", start, start + third), ("last", end - third, end)):
            group = [s for s in samples if s.kind == kind and lo <= s.t <= hi]
            row[label] = {
                "samples": len(group),
                "rss_mb": _r(statistics.fmean(s.rss for s in group) / 2**20, 1) if group else None,
                "rss_max_mb": _r(max(s.rss for s in group) / 2**20, 1) if group else None,
                "fds": _r(statistics.fmean(s.fds for s in group), 1) if group else None,
                "fds_max": max((s.fds for s in group), default=None),
            }
        first, last = row["first"]["rss_mb"], row["last"]["rss_mb"]
        row["rss_change_pct"] = (_r(100 * (last - first) / first, 1)
                                 if first and last is not None else None)
        f_fds, l_fds = row["first"]["fds"], row["last"]["fds"]
        row["fds_change"] = (
            _r(l_fds - f_fds, 1) if f_fds is not None and l_fds is not None else None
        )
        out[kind] = row
    return out


class Status:
    """The live status line."""

    def __init__(self) -> None:
        self.text = Text("starting")

    def line(self, text: str, style: str = "") -> None:
        self.text = Text(text, style=style)

    def __rich__(self) -> Text:
        return self.text


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def print_summary(console: Console, figures: dict) -> None:
    ids = figures["ids"]
    table = Table(title="ids (every spout partition's corpus prefix)", title_justify="left")
    for column in ("emitted", "acked", "recorded", "lost", "duplicates delivered",
                   "tuples emitted (incl. replays)"):
        table.add_column(column, justify="right")
    table.add_row(f"{ids['emitted']:,}", f"{ids['acked']:,}", f"{ids['recorded']:,}",
                  Text(f"{ids['lost']:,}", style="bold green" if ids["lost"] == 0 else "bold red"),
                  f"{ids['duplicates']:,} ({ids['duplicate_pct']:.2f} %)",
                  f"{ids['tuples_emitted']:,}")
    console.print(table)

    rec = Table(title="recovery after kill -9 (s): from the kill until the process is back and "
                      "the sink records >= 80 % of the offered rate over 2 s",
                title_justify="left")
    for column in ("kind", "kills", "recovered", "p50", "p99", "max", "process back p50",
                   "back max", "resubmitted"):
        rec.add_column(column, justify="left" if column == "kind" else "right")
    for kind, r in figures["recovery"].items():
        rec.add_row(kind, str(r["kills"]), str(r["recovered"]), _s(r["p50_s"]), _s(r["p99_s"]),
                    _s(r["max_s"]), _s(r["back_p50_s"]), _s(r["back_max_s"]),
                    str(r["resubmitted"]), style="bold" if kind == "all" else "")
    console.print(rec)

    res = Table(title="per process of each kind: RSS (MB) and open fds, first vs last third",
                title_justify="left")
    for column in ("kind", "RSS first", "RSS last", "change", "fds first", "fds last",
                   "fds max last"):
        res.add_column(column, justify="left" if column == "kind" else "right")
    for kind, r in figures["resources"].items():
        change = r["rss_change_pct"]
        res.add_row(kind, _s(r["first"]["rss_mb"]), _s(r["last"]["rss_mb"]),
                    "-" if change is None else f"{change:+.1f} %", _s(r["first"]["fds"]),
                    _s(r["last"]["fds"]), str(r["last"]["fds_max"] or "-"))
    console.print(res)

    all_ = figures["recovery"].get("all", {})
    per_kind = ", ".join(f"{k} {v['kills']}" for k, v in figures["recovery"].items() if k != "all")
    console.print(
        f"{figures['minutes']:g} min of chaos: {all_.get('kills', 0)} kills "
        f"({per_kind}); "
        f"recovery p50 {_s(all_.get('p50_s'))} s, p99 {_s(all_.get('p99_s'))} s, "
        f"max {_s(all_.get('max_s'))} s; {figures['resubmits']} resubmission(s) by the bench.")
    console.print(
        f"words counted (de-duplicated) {ids['words_counted']:,} = "
        f"corpus {ids['words_expected']:,}: "
        f"{'yes' if ids['words_counted'] == ids['words_expected'] else 'NO'}; "
        f"word counts that differ from the corpus: {ids['wrong_word_counts']}; "
        f"drained in {_s(figures['drain_s'])} s"
    )
    for note in figures["notes"]:
        console.print(f"note: {note}", style="yellow")
    verdict = "OK" if figures["ok"] else "FAILED"
    console.print(f"{verdict}: lost {ids['lost']}, every kill recovered: "
                  f"{figures['every_kill_recovered']}; chart: {figures['chart']}",
                  style="bold green" if figures["ok"] else "bold red")


#: a colour per kind for the kill markers
COLOURS = {"spout instance": "#e8590c", "bolt instance": "#f59f00", "stream manager": "#1c7ed6",
           "metrics manager": "#ae3ec9", "topology master": "#7048e8", "executor": "#d6336c",
           "scheduler": "#212529", "scheduler service": "#868e96", "health manager": "#15aabf"}
RECORDED = "#2f9e44"


def draw(path: Path, t0: float, per_second: Sequence[tuple[float, float]], rate: float,
         kills: Sequence[Kill], monkey_end: float, resubmits: Sequence[float], title: str,
         size: tuple[int, int] = (1100, 580)) -> None:
    """Top: distinct ids recorded per second (thin) and its 5 s mean over time, the offered
    rate (dashed), each resubmission by the bench (dotted) and where the monkey stopped.
    Below, on the same time axis, one row per kind with a tick at each of its kills."""
    fig = Figure(figsize=(size[0] / 100, size[1] / 100), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    kinds = [k for k in KINDS if any(x.kind == k for x in kills)]
    kinds += sorted({x.kind for x in kills} - set(kinds))
    ax, rug = fig.subplots(2, 1, sharex=True, height_ratios=[3, 0.25 * max(len(kinds), 2)])
    ts = [t - t0 for t, _ in per_second]
    values = [v for _, v in per_second]
    ax.plot(ts, values, color="#adb5bd", linewidth=0.6)
    ax.plot(ts, moving_average(values, 5), color=RECORDED, linewidth=1.6)
    ax.axhline(rate, color="#495057", linewidth=1, linestyle=(0, (4, 4)))
    for t in resubmits:
        ax.axvline(t - t0, color="#e03131", linewidth=1.2, linestyle=(0, (1, 1)))
    for a in (ax, rug):
        a.axvline(monkey_end - t0, color="#000000", linewidth=1.5, linestyle=(0, (6, 3)))
    for row, kind in enumerate(kinds):
        xs = [k.t - t0 for k in kills if k.kind == kind]
        rug.scatter(xs, [row] * len(xs), marker="|", s=90, linewidths=1.6,
                    color=COLOURS.get(kind, "#868e96"))
    rug.set_yticks(range(len(kinds)), [f"{k} ({sum(x.kind == k for x in kills)})"
                                       for k in kinds], fontsize=8)
    rug.set_ylim(len(kinds) - 0.5, -0.5)
    rug.grid(axis="y", color="#f1f3f5")
    rug.set_xlabel("time (s)")
    ax.set_xlim(0, max(ts[-1] if ts else 1.0, 1.0))
    ax.set_ylim(bottom=0, top=max([rate * 1.6, *values]) if values else rate * 1.6)
    ax.grid(axis="y", color="#e1e5ea")
    ax.set_title(title, loc="left", fontsize=11)
    ax.set_ylabel("distinct ids recorded / s")
    handles = [Line2D([], [], color=RECORDED, linewidth=1.6, label="recorded/s (5 s mean)"),
               Line2D([], [], color="#adb5bd", linewidth=0.6, label="recorded/s"),
               Line2D([], [], color="#495057", linewidth=1, linestyle=(0, (4, 4)),
                      label="offered/s"),
               Line2D([], [], color="#000000", linewidth=1.5, linestyle=(0, (6, 3)),
                      label="monkey stops")]
    if resubmits:
        handles.append(Line2D([], [], color="#e03131", linewidth=1.2, linestyle=(0, (1, 1)),
                              label="topology resubmitted by the bench"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles),
               frameon=False, fontsize=8)
    fig.savefig(path)
