"""The Kafka benchmark's report (bench/kafka.py): the summary table, the goal line, the
CPU table and the lag chart."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from rich.console import Console
from rich.table import Table

from bench.kafka_runs import RunFigures

#: the issue's goal: each topology mode at least this share of the ceiling's records/s
GOAL = 0.5
#: one colour per run, in the order run (ceiling first)
COLOURS = ["#6b7280", "#1f4e79", "#d9480f", "#1f6f43", "#b42318"]


def goals(ceiling: RunFigures | None, runs: Sequence[RunFigures]) -> list[dict]:
    """Each topology run's ratio to the ceiling against the goal (None: not measured)."""
    out = []
    for run in runs:
        ratio = run.records_per_s / ceiling.records_per_s if ceiling else None
        out.append({"goal": f"{run.mode}: records/s >= {GOAL:g}x the confluent-kafka loop",
                    "value": ratio, "target": GOAL,
                    "met": None if ratio is None else ratio >= GOAL})
    return out


def print_summary(console: Console, ceiling: RunFigures | None, runs: Sequence[RunFigures],
                  goal_lines: Sequence[dict], errors: Sequence[str]) -> None:
    t = Table(title="Kafka -> split -> count -> Kafka: records/s from the first record read "
                    "to the output holding every count")
    for col in ("mode", "records/s", "x ceiling", "words/s", "window s", "to run end s",
                "peak lag", "lag 0 at s", "output check", "load avg"):
        t.add_column(col, justify="left" if col in ("mode", "output check") else "right",
                     no_wrap=True)
    for run in ([ceiling] if ceiling else []) + list(runs):
        ratio = f"{run.records_per_s / ceiling.records_per_s:.2f}x" if ceiling else "-"
        check = ("[green]ok[/] " if run.check.ok else "[red]FAILED[/] ") + \
            run.check.describe().removeprefix("ok ")
        t.add_row(run.mode, f"{run.records_per_s:,.0f}", ratio, f"{run.words_per_s:,.0f}",
                  f"{run.window_s:.1f}", f"{run.to_end_s:.1f}", f"{run.peak_lag():,}",
                  "-" if run.drained_s() is None else f"{run.drained_s():.1f}", check,
                  f"{run.load_avg[0]:.1f}")
    console.print(t)
    for run in ([ceiling] if ceiling else []) + list(runs):
        if run.note:
            console.print(f"  note ({run.mode}): {run.note}")
    print_cpu(console, ceiling, runs)
    for g in goal_lines:
        verdict = {True: "[green]met[/]", False: "[red]not met[/]",
                   None: "[yellow]not measured[/]"}[g["met"]]
        value = "-" if g["value"] is None else f"{g['value']:.2f}x"
        console.print(f"goal: {g['goal']}: {value}  {verdict}")
    for error in errors:
        console.print(f"[bold red]error:[/] {error}")


def print_cpu(console: Console, ceiling: RunFigures | None, runs: Sequence[RunFigures]) -> None:
    """CPU per process kind within each run's window, as cores busy (CPU s / window s):
    where the time goes, on a machine of 2 cores."""
    every = ([ceiling] if ceiling else []) + list(runs)
    kinds: list[str] = []
    for run in every:
        for kind in sorted(run.cpu_s, key=lambda k: -run.cpu_s[k]):
            if kind not in kinds:
                kinds.append(kind)
    if not kinds:
        return
    t = Table(title="CPU within the window, cores busy (CPU s / window s; 2 cores here); "
                    "µs of CPU per input record in brackets")
    t.add_column("process kind", no_wrap=True)
    for run in every:
        t.add_column(run.mode, justify="right", no_wrap=True)
    for kind in kinds + ["all"]:
        cells = []
        for run in every:
            secs = sum(run.cpu_s.values()) if kind == "all" else run.cpu_s.get(kind)
            cells.append("-" if secs is None else
                         f"{secs / run.window_s:.2f} ({secs / run.records * 1e6:,.0f})")
        t.add_row(f"[bold]{kind}[/]" if kind == "all" else kind, *cells)
    console.print(t)


def draw_lag(ceiling: RunFigures | None, runs: Sequence[RunFigures], path: Path,
             records: int, size: tuple[int, int] = (900, 420)) -> None:
    """Consumer lag against seconds from each run's first record read: a solid line per
    topology mode for the spouts' own ``kafkaOffset/totalSpoutLag`` (Storm's metric, as the
    Topology Master had it), a dotted one of the same colour for input records not yet
    emitted, and the ceiling's records not yet consumed in grey."""
    fig = Figure(figsize=(size[0] / 100, size[1] / 100), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    xmax = 1.0
    if ceiling and ceiling.lag:
        ax.plot([s.t for s in ceiling.lag], [s.unread for s in ceiling.lag], color=COLOURS[0],
                linewidth=2, label=f"{ceiling.mode}: not yet consumed")
        xmax = max(xmax, ceiling.lag[-1].t)
    for n, run in enumerate(runs, 1):
        colour = COLOURS[n % len(COLOURS)]
        reported = [s for s in run.lag if s.reported is not None]
        if reported:
            ax.plot([s.t for s in reported], [s.reported for s in reported], color=colour,
                    linewidth=2, label=f"{run.mode}: spout lag (totalSpoutLag)")
        ax.plot([s.t for s in run.lag], [s.unread for s in run.lag], color=colour,
                linewidth=1.2, linestyle=(0, (2, 2)), label=f"{run.mode}: not yet emitted")
        if run.lag:
            xmax = max(xmax, run.lag[-1].t)
    ax.set_xlim(0, xmax)
    ax.set_ylim(0, records * 1.05)
    ax.grid(axis="y", color="#e1e5ea")
    ax.set_title(f"Kafka consumer lag, {records:,} records (3 partitions), sampled every 0.5 s",
                 loc="left", fontsize=11)
    ax.set_xlabel("seconds from the first record read")
    ax.set_ylabel("records")
    ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:,.0f}")
    fig.legend(loc="outside lower center", ncols=2, frameon=False, fontsize=8)
    fig.savefig(path)
