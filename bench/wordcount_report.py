"""The word-count benchmark's report: the live status line, the tables and summary lines
printed after the runs, the issue's goals judged on the figures, and the JSON report
(``--json``). ``bench/wordcount.py`` describes the benchmark and runs it."""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from bench.wordcount_figures import (
    BOLT,
    GOAL_ALO_RATIO,
    GOAL_COMPLETE_P99_MS,
    GOAL_FLOOD_P99_MS,
    GOAL_RATIO,
    GOAL_STREAMPARSE_RATIO,
    PATH_LABELS,
    SPOUT,
    VARIANTS,
    VOCABULARY,
    BackpressureFigures,
    BareLoopTimings,
    CountCheck,
    KindFigures,
    RunFigures,
    sample_every_for,
)

# -- presentation -----------------------------------------------------------------------

class Status:
    """The live status line: which run is going and how far its counting bolt got."""

    def __init__(self, words: int) -> None:
        #: the words of the run going now (the at-least-once storm run has fewer)
        self.words = words
        self.text = Text("starting")

    def phase(self, label: str) -> None:
        self.text = Text(f"{label} ...", style="bold")

    def line(self, text: str) -> None:
        self.text = Text(text)

    def progress(self, engine: str, stats: Mapping[str, Any], elapsed: float) -> None:
        bolt = stats.get(BOLT)
        done = bolt.executed if bolt is not None else 0
        pct = 100.0 * done / self.words if self.words else 100.0
        rate = done / elapsed if elapsed > 0 else 0.0
        self.text = Text.assemble(
            (f"{engine:<6}", "bold"), f" {elapsed:6.1f}s  {BOLT} counted ",
            (f"{done:>12,}", "cyan"), f" / {self.words:,} words ({pct:5.1f}%)  ",
            f"~{rate:,.0f} words/s incl. start-up")

    def __rich__(self) -> Text:
        return self.text


def _fmt_ms(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:,.1f}" if value >= 10 else f"{value:,.3f}"


def _fmt_mb(nbytes: float) -> str:
    return f"{nbytes / 2**20:,.2f}"


def _table(title: str, columns: Sequence[tuple[str, str]]) -> Table:
    """A table whose first column (the run's or kind's name) and a ``result`` column may
    wrap: the figures never do."""
    table = Table(title=title)
    for i, (name, justify) in enumerate(columns):
        table.add_column(name, justify=justify, no_wrap=not (i == 0 or name == "result"))
    return table


def _result(run: RunFigures) -> str:
    return run.reason if not run.error else f"{run.reason}: {run.error}"


def find_run(runs: Sequence[RunFigures], engine: str, variant: str | None,
             path: str | None = None, reliability: str = "at-most-once") -> RunFigures | None:
    """The run of this engine, word count variant, tuple path (any when None) and
    reliability, or None."""
    return next((r for r in runs if r.engine == engine and r.variant == variant
                 and (path is None or r.path == path) and r.reliability == reliability), None)


def _over(run: RunFigures | None, base: RunFigures | None) -> float | None:
    """``run``'s throughput over ``base``'s; None when either is missing or empty."""
    if run is None or base is None or not base.tuples_per_second:
        return None
    return run.tuples_per_second / base.tuples_per_second


def amo_base(runs: Sequence[RunFigures], run: RunFigures) -> RunFigures | None:
    """The at-most-once run an at-least-once one is compared with: same engine, Heron's
    or streamparse-style word count as it, same tuple path."""
    return find_run(runs, run.engine, run.variant, run.path)


def evaluate_goals(runs: Sequence[RunFigures], alo_runs: Sequence[RunFigures], path: str,
                   paced: bool, max_pending: int) -> list[dict[str, Any]]:
    """Issue 20's goals, each judged on the runs of tuple path ``path`` (ratios in the
    same run): Heron's word count at-most-once >= 0.5x the bare loop, streamparse-style
    >= 0.35x, at-least-once >= 0.5x at-most-once with p99 complete latency < 50 ms, and
    flooded at-most-once p99 emit-to-count latency < 100 ms. ``met`` is None when not
    judged (a run missing or failed, or ``--rate``: nothing was flooded)."""
    bare = next((r for r in runs if r.engine == "bare loop"), None)
    head = find_run(runs, "heron", "heron", path)
    goals: list[dict[str, Any]] = []

    def judged(run: RunFigures | None, *values: float | None) -> bool:
        return (not paced and run is not None and run.reason == "finished" and not run.error
                and all(v is not None and not math.isnan(v) for v in values))

    for variant, target in (("heron", GOAL_RATIO), ("streamparse", GOAL_STREAMPARSE_RATIO)):
        run = find_run(runs, "heron", variant, path)
        if run is None:
            continue
        value = _over(run, bare)
        goals.append({"goal": f"{VARIANTS[variant][0]} at-most-once", "run": run.run,
                      "measure": "x bare loop", "value": value, "target": target,
                      "met": value >= target if judged(run, value) else None})
    alo = find_run(alo_runs, "heron", "heron", path, "at-least-once")
    if alo is not None:
        value = _over(alo, head)
        p99 = alo.complete_latency_ms.get("p99")
        goals.append({"goal": "at-least-once", "run": alo.run, "measure": "x at-most-once",
                      "value": value, "target": GOAL_ALO_RATIO, "max_pending": max_pending,
                      "p99_complete_ms": p99, "target_p99_complete_ms": GOAL_COMPLETE_P99_MS,
                      "met": (value >= GOAL_ALO_RATIO and p99 < GOAL_COMPLETE_P99_MS)
                      if judged(alo, value, p99) and judged(head) else None})
    if head is not None:
        p99 = head.latency_ms.get("p99")
        goals.append({"goal": "flooded at-most-once latency", "run": head.run,
                      "measure": "p99 emit-to-count ms", "value": p99,
                      "target": GOAL_FLOOD_P99_MS,
                      "met": p99 < GOAL_FLOOD_P99_MS if judged(head, p99) else None})
    return goals


def goal_text(goal: Mapping[str, Any]) -> str:
    """One goal as a sentence: the figure, then the goal."""
    value = goal["value"]
    shown = "-" if value is None else (f"{value:.2f}x" if goal["measure"].startswith("x ")
                                       else f"{_fmt_ms(value)} ms")
    if goal["goal"] == "at-least-once":
        return (f"at-least-once [{goal['run']}]: {shown} at-most-once at max spout pending "
                f"{goal['max_pending']:,}, p99 complete latency "
                f"{_fmt_ms(goal['p99_complete_ms'])} ms; goal >= {goal['target']:g}x with "
                f"p99 < {goal['target_p99_complete_ms']:g} ms")
    if goal["measure"] == "x bare loop":
        swing = goal.get("range")
        against = (f" (median of its timings; {swing[0]:.2f}-{swing[1]:.2f}x against the "
                   "fastest and the slowest)" if swing and None not in swing else "")
        return (f"{goal['goal']} [{goal['run']}]: {shown} the bare loop{against}; "
                f"goal >= {goal['target']:g}x")
    return (f"{goal['goal']} [{goal['run']}, the spout floods]: p99 emit-to-count "
            f"{shown}; goal < {goal['target']:g} ms")


def _verdict(met: bool | None, paced: bool) -> tuple[str, str]:
    if met is None:
        if paced:
            return ("not judged: --rate paces the spout", "yellow")
        return ("not judged", "yellow")
    return ("met", "green") if met else ("not met", "red")


def results_renderable(report: dict[str, Any], runs: Sequence[RunFigures],
                       kinds: Mapping[str, Sequence[KindFigures]], check: CountCheck,
                       alo_runs: Sequence[RunFigures] = (),
                       bp: BackpressureFigures | None = None) -> Group:
    """The figures tables (at-most-once, heron's processes, at-least-once, CPU per word,
    backpressure) and the summary lines. ``kinds`` maps a heron run's name to its
    process figures."""
    parts: list[Any] = []
    bare_loop = next((r for r in runs if r.engine == "bare loop"), None)
    timings = (report.get("bare_loop") or {}).get("timings") or []
    if len(runs) > 1 or not alo_runs:
        table = _table(
            f"word count: {report['words']:,} words, vocabulary {report['vocabulary']:,}, "
            f"seed {report['seed']}, {report['workers']} containers, at-most-once (acking off)"
            + (f", offered {report['rate']:,.0f} words/s" if report["rate"] else ""),
            (("run", "left"), ("tuples/s", "right"), ("x bare loop", "right"),
             ("x API loop", "right"),
             ("window s", "right"), ("wall s", "right"), ("latency p50 ms", "right"),
             ("p95 ms", "right"), ("p99 ms", "right"), ("samples", "right"),
             ("result", "left")))
        for run in runs:
            ceiling = find_run(runs, "single process", run.variant)
            ratio, bare_ratio = _over(run, ceiling), _over(run, bare_loop)
            table.add_row(run.run, f"{run.tuples_per_second:,.0f}",
                          "-" if bare_ratio is None else f"{bare_ratio:.2f}",
                          "-" if ratio is None else f"{ratio:.2f}",
                          f"{run.window_seconds:.2f}", f"{run.wall_seconds:.2f}",
                          _fmt_ms(run.latency_ms.get("p50")), _fmt_ms(run.latency_ms.get("p95")),
                          _fmt_ms(run.latency_ms.get("p99")), f"{run.latency_samples:,}",
                          _result(run) + (f" (the median of {len(timings)} timings)"
                                          if run is bare_loop and len(timings) > 1 else ""),
                          style="bold" if run.run == "heron" else None)
        parts.append(table)
    headline = kinds.get("heron")
    if headline:
        parts.append(kinds_table("heron (Heron's word count, at-most-once): peak RSS (VmHWM) "
                                 "and CPU time per process kind", headline, report["words"]))
    if alo_runs:
        alo = report["at_least_once"]
        table = _table(
            f"word count, at-least-once: Heron's word count, message ids, acks, 1 acker, "
            f"topology.max.spout.pending {alo['max_pending']:,}"
            + (f", offered {report['rate']:,.0f} words/s" if report["rate"] else ""),
            (("run", "left"), ("words", "right"), ("tuples/s", "right"),
             ("x at-most-once", "right"), ("window s", "right"),
             ("complete p50 ms", "right"), ("p95 ms", "right"), ("p99 ms", "right"),
             ("samples", "right"), ("failed", "right"), ("result", "left")))
        for run in alo_runs:
            ratio = _over(run, amo_base(runs, run))
            table.add_row(run.run, f"{run.words:,}", f"{run.tuples_per_second:,.0f}",
                          "-" if ratio is None else f"{ratio:.2f}",
                          f"{run.window_seconds:.2f}",
                          _fmt_ms(run.complete_latency_ms.get("p50")),
                          _fmt_ms(run.complete_latency_ms.get("p95")),
                          _fmt_ms(run.complete_latency_ms.get("p99")),
                          f"{run.complete_samples:,}",
                          "-" if run.failed is None else f"{run.failed:,}", _result(run))
        parts.append(table)
    columns = [(label, kinds[name]) for name, label in (
        ("heron", "at-most-once"), ("heron, pure Python", "at-most-once, pure Python"),
        ("heron (at-least-once)", "at-least-once"),
        ("heron (at-least-once), pure Python", "at-least-once, pure Python"))
        if kinds.get(name)]
    if len(columns) > 1:
        parts.append(cpu_table(columns, report["words"]))
    if bp is not None:
        parts.extend(backpressure_renderables(bp))
    parts.extend(summary_lines(report, runs, check, alo_runs, bp))
    return Group(*parts)

def kinds_table(title: str, kinds: Sequence[KindFigures], words: int) -> Table:
    procs = _table(title, (("process kind", "left"), ("processes", "right"),
                           ("peak RSS MB (largest)", "right"), ("peak RSS MB (all)", "right"),
                           ("CPU s", "right"), ("CPU µs/word", "right"),
                           ("in full flow", "right")))
    for k in kinds:
        procs.add_row(k.kind, str(k.processes), f"{k.peak_rss_mb:,.1f}",
                      f"{k.total_peak_rss_mb:,.1f}", f"{k.cpu_seconds:,.1f}",
                      f"{k.cpu_seconds * 1e6 / words:,.2f}", _steady(k.steady_us_per_word))
    cpu = sum(k.cpu_seconds for k in kinds)
    steady = [k.steady_us_per_word for k in kinds]
    procs.add_row("all", str(sum(k.processes for k in kinds)), "",
                  f"{sum(k.total_peak_rss_mb for k in kinds):,.1f}", f"{cpu:,.1f}",
                  f"{cpu * 1e6 / words:,.2f}",
                  _steady(sum(steady) if steady and None not in steady else None), style="bold")
    return procs


def _steady(us: float | None) -> str:
    """CPU µs per word in full flow (from a fifth to four fifths of the words counted:
    start-up and drain left out), or "-" when the run gave no such window."""
    return "-" if us is None else f"{us:,.2f}"


def cpu_table(columns: Sequence[tuple[str, Sequence[KindFigures]]], words: int) -> Table:
    """CPU time per word of each heron process kind, one column per run of Heron's word
    count (at-most-once and at-least-once, compiled and pure Python): what acking costs
    and what the compiled tuple path saves, less dependent on other work on the machine
    than words/s."""
    table = _table("heron, Heron's word count: CPU µs per word per process kind (start-up "
                   "included)",
                   (("process kind", "left"), *((label, "right") for label, _ in columns)))
    by_label = [{k.kind: k for k in kinds} for _, kinds in columns]
    for kind in dict.fromkeys(k.kind for _, kinds in columns for k in kinds):
        table.add_row(kind, *(f"{by[kind].cpu_seconds * 1e6 / words:,.2f}" if kind in by
                              else "-" for by in by_label))
    table.add_row("all", *(f"{sum(k.cpu_seconds for k in kinds) * 1e6 / words:,.2f}"
                           for _, kinds in columns), style="bold")
    return table

def backpressure_renderables(bp: BackpressureFigures) -> list[Any]:
    """The backpressure scenario's three tables: rates, Stream Managers, memory."""
    title = (f"backpressure (heron, at-most-once): {bp.bolt_tasks} counting tasks at "
             f"{bp.bolt_cost_us:g} µs a word (at most {bp.bolt_capacity:,.0f} words/s), "
             f"{bp.seconds:.1f} s from the first word"
             + ("" if bp.reason == "finished" else f" [{bp.reason}]"))
    rates = _table(title, (("window", "left"), ("s", "right"),
                           (f"{SPOUT} emitted/s", "right"), (f"{BOLT} executed/s", "right"),
                           ("spout / bolt", "right"), ("words in flight at the end", "right")))
    for r in bp.rates:
        ratio = (f"{r['spout_per_second'] / r['bolt_per_second']:.2f}"
                 if r["bolt_per_second"] else "-")
        rates.add_row(r["window"] if r["window"] != "steady" else "last two thirds",
                      f"{r['start']:.1f}–{r['end']:.1f}", f"{r['spout_per_second']:,.0f}",
                      f"{r['bolt_per_second']:,.0f}", ratio, f"{r['in_flight']:,}",
                      style="bold" if r["window"] == "steady" else None)
    out: list[Any] = [rates]
    if bp.stmgrs:
        managers = _table(
            f"backpressure: Stream Managers (high watermark {bp.high_watermark_mb:g} MB, "
            f"low {bp.low_watermark_mb:g} MB)",
            (("stream manager", "left"), ("initiated s", "right"), ("spouts paused s", "right"),
             ("paused % of run", "right"), ("largest queue max MB", "right"),
             ("x high watermark", "right")))
        for m in bp.stmgrs:
            paused = m["paused_in_run_ms"] / 1000
            managers.add_row(m["stmgr"], f"{m['initiated_in_run_ms'] / 1000:,.1f}",
                             f"{paused:,.1f}",
                             f"{min(100.0, 100 * paused / bp.seconds):.0f}" if bp.seconds else "-",
                             _fmt_mb(m["largest_queue_bytes_max"]),
                             f"{m['largest_queue_bytes_max'] / (bp.high_watermark_mb * 2**20):.2f}")
        out.append(managers)
    if bp.rss_windows:
        labels = [w["window"] for w in bp.rss_windows]
        memory = _table("backpressure: peak RSS MB of the largest process of each kind, per "
                        "third of the run (sampled every 0.2 s)",
                        (("process kind", "left"), ("processes", "right"),
                         *((label, "right") for label in labels),
                         ("last - first", "right")))
        kinds = list(dict.fromkeys(k for w in bp.rss_windows for k in w["kinds"]))
        for kind in kinds:
            peaks = [w["kinds"].get(kind, {}).get("peak_rss_mb") for w in bp.rss_windows]
            processes = max(w["kinds"].get(kind, {}).get("processes", 0)
                            for w in bp.rss_windows)
            change = (f"{peaks[-1] - peaks[0]:+,.1f}"
                      if peaks[0] is not None and peaks[-1] is not None else "-")
            memory.add_row(kind, str(processes),
                           *("-" if p is None else f"{p:,.1f}" for p in peaks), change)
        totals = [sum(k["total_peak_rss_mb"] for k in w["kinds"].values())
                  for w in bp.rss_windows]
        memory.add_row("all (each process's peak, added up)", "",
                       *(f"{t:,.1f}" for t in totals), f"{totals[-1] - totals[0]:+,.1f}",
                       style="bold")
        out.append(memory)
    return out


def summary_lines(report: dict[str, Any], runs: Sequence[RunFigures],
                  check: CountCheck, alo_runs: Sequence[RunFigures] = (),
                  bp: BackpressureFigures | None = None) -> list[Text]:
    """A few sentences a person can act on: the goals first."""
    lines: list[Text] = []
    paced = bool(report.get("rate"))
    path = report.get("goal_path", "compiled")
    bare = next((r for r in runs if r.engine == "bare loop"), None)
    #: the bare loop's timings (bench/wordcount.py --bare-runs): its run carries the median
    timings = (report.get("bare_loop") or {}).get("timings") or []
    heron = find_run(runs, "heron", "heron", path)
    ceiling = find_run(runs, "single process", "heron")
    storm = find_run(runs, "storm", "heron")
    if paced:
        lines.append(Text(
            f"every run was offered {report['rate']:,.0f} words/s: tuples/s only says whether "
            "it kept up; run without --rate to compare throughput", style="yellow"))
    if report.get("goals"):
        lines.append(Text(f"goals (issue 20), on the {PATH_LABELS[path]} tuple path, each a "
                          "ratio within this run:", style="bold"))
        for goal in report["goals"]:
            lines.append(Text.assemble("  ", goal_text(goal), ": ",
                                       _verdict(goal["met"], paced)))
    gains = report.get("compiled_over_pure") or {}
    if gains and not paced:
        lines.append(Text(
            "compiled tuple path against pure Python (HERON_PURE_PYTHON=1 in every heron "
            "process), words/s: "
            + "; ".join(f"{label} {g['ratio']:.2f}x ({g['compiled']:,.0f} against "
                        f"{g['pure']:,.0f})" for label, g in gains.items() if g["ratio"])))
    tuple_paths = [(r.run, r.tuple_path) for r in (*runs, *alo_runs) if r.engine == "heron"]
    if tuple_paths:
        lines.append(Text("tuple path, from the first log line of each heron process: "
                          + "; ".join(f"{name}: {found or 'not logged'}"
                                      for name, found in tuple_paths), style="dim"))
    if heron and bare and bare.tuples_per_second and not paced:
        lines.append(Text.assemble(
            "heron counts ", (f"{heron.tuples_per_second:,.0f} words/s", "bold"),
            f" (Heron's word count), {heron.tuples_per_second / bare.tuples_per_second:.2f}x "
            f"the single-process limit (a bare loop picking and counting words: "
            f"{bare.tuples_per_second:,.0f}/s"
            + (f", the median of {len(timings)} timings" if len(timings) > 1 else "") + ")"))
    if len(timings) > 1:
        shown = "; ".join(f"{t['words_per_second']:,.0f} {t['when']}" for t in timings)
        spread = report["bare_loop"]["spread"]
        lines.append(Text(
            f"the bare loop, timed {len(timings)} times (words/s): {shown}; median "
            f"{report['bare_loop']['median_words_per_second']:,.0f}"
            + (f", fastest {spread:.2f}x the slowest" if spread else "")
            + ": every ratio to the bare loop is against the median", style="dim"))
    if heron and ceiling and ceiling.tuples_per_second and not paced:
        lines.append(Text(
            f"heron is {heron.tuples_per_second / ceiling.tuples_per_second:.2f}x the same "
            f"spout and bolt code run in one process through the Storm component API "
            f"({ceiling.tuples_per_second:,.0f}/s)"))
    if heron and heron.latency_ms:
        lines.append(Text(
            f"heron emit-to-count latency: p50 {_fmt_ms(heron.latency_ms['p50'])} ms, "
            f"p95 {_fmt_ms(heron.latency_ms['p95'])} ms, "
            f"p99 {_fmt_ms(heron.latency_ms['p99'])} ms over {heron.latency_samples:,} "
            "samples" + ("" if paced else
                         " (the spout floods the topology, so this is mostly time spent "
                         "queued behind earlier words; --rate N measures it at a load "
                         "the engine sustains)")))
    if bare and ceiling and ceiling.tuples_per_second and bare.tuples_per_second and not paced:
        lines.append(Text(
            f"per word: {1e6 / bare.tuples_per_second:.2f} µs in the bare loop, "
            f"{1e6 / ceiling.tuples_per_second:.2f} µs through the component API in one "
            "process (Heron's word count); that API cost per tuple, paid in the spout's "
            "process, bounds heron's throughput", style="dim"))
    if storm and storm.tuples_per_second and not paced:
        line = f"storm (one process, threads) counts {storm.tuples_per_second:,.0f} words/s"
        if heron and heron.tuples_per_second:
            line += f"; heron is {heron.tuples_per_second / storm.tuples_per_second:.1f}x that"
        lines.append(Text(line))
    alo_heron = find_run(alo_runs, "heron", "heron", path, "at-least-once")
    if alo_heron and alo_heron.tuples_per_second:
        lines.append(Text.assemble(
            "heron at-least-once counts ",
            (f"{alo_heron.tuples_per_second:,.0f} words/s", "bold"),
            f" (max spout pending {report['at_least_once']['max_pending']:,}), p99 complete "
            f"latency {_fmt_ms(alo_heron.complete_latency_ms.get('p99'))} ms"))
        if alo_heron.engine_complete_ms:
            e = alo_heron.engine_complete_ms
            lines.append(Text(
                f"heron's spout instance reports complete latency per second: median p50 "
                f"{_fmt_ms(e['p50_median'])} ms, median p99 {_fmt_ms(e['p99_median'])} ms, "
                f"worst second's p99 {_fmt_ms(e['p99_max'])} ms", style="dim"))
    for run in alo_runs:
        if run.failed:
            lines.append(Text(f"{run.run}: {run.failed:,} trees failed or timed out and were "
                              "replayed (at-least-once may then count a word twice)",
                              style="yellow"))
    if bp is not None:
        lines.extend(backpressure_lines(bp))
    lines.append(Text.assemble(("✓ " if check.ok else "✗ ", "green" if check.ok else "bold red"),
                               "counts: ", check.detail))
    load = report.get("load_average_before")
    if load:
        lines.append(Text(f"machine: {report['cpus']} CPUs, load average {load[0]:.2f} before "
                          f"and {report['load_average_after'][0]:.2f} after the runs (other "
                          "work on the machine slows every figure)", style="dim"))
    if report.get("work_dir"):
        lines.append(Text(f"logs: {report['work_dir']}", style="dim"))
    return lines

def backpressure_lines(bp: BackpressureFigures) -> list[Text]:
    lines: list[Text] = []
    if bp.error:
        lines.append(Text(f"backpressure scenario: {bp.reason}: {bp.error}", style="bold red"))
    steady = bp.steady()
    if steady and steady["bolt_per_second"]:
        ratio = steady["spout_per_second"] / steady["bolt_per_second"]
        short = (f"too short a window against the queues' fill-and-drain cycle "
                 f"({steady['in_flight']:,} words in flight): run longer")
        verdict = (("throughput follows the bolt", "green") if 0.5 <= ratio <= 2
                   else (short, "yellow"))
        lines.append(Text.assemble(
            "backpressure: over the last two thirds the spout emitted ",
            (f"{steady['spout_per_second']:,.0f} words/s", "bold"), " and the bolts counted ",
            (f"{steady['bolt_per_second']:,.0f}/s", "bold"),
            f" (ratio {ratio:.2f}; the bolts can do at most {bp.bolt_capacity:,.0f}/s): ",
            verdict))
    if bp.stmgrs and bp.seconds:
        # both counters are read from metrics up to a publish interval old, so the
        # pauses can come out a little longer than the run: no more than all of it
        paused = min(bp.seconds, max(m["paused_in_run_ms"] for m in bp.stmgrs) / 1000)
        queue = max(m["largest_queue_bytes_max"] for m in bp.stmgrs)
        first = ("" if bp.first_pause is None
                 else f" (first seen {bp.first_pause:,.1f} s after the first word)")
        lines.append(Text(
            f"backpressure: spouts paused {paused:,.1f} s of {bp.seconds:,.1f} s{first}; the "
            f"largest queue a Stream Manager held was {_fmt_mb(queue)} MB against a high "
            f"watermark of "
            f"{bp.high_watermark_mb:g} MB"))
    thirds = [r["in_flight"] for r in bp.rates if r["window"] != "steady"]
    if thirds:
        lines.append(Text(
            "backpressure: words emitted but not yet counted at the end of each third: "
            + ", ".join(f"{n:,}" for n in thirds)
            + " (bounded by the watermarks and the zmq buffers: the spout is held back, "
              "nothing piles up)"))
    if len(bp.rss_windows) >= 2:
        first, last = bp.rss_windows[0]["kinds"], bp.rss_windows[-1]["kinds"]
        changes = {k: last[k]["peak_rss_mb"] - first[k]["peak_rss_mb"]
                   for k in first if k in last}
        if changes:
            kind = max(changes, key=lambda k: abs(changes[k]))
            lines.append(Text(
                f"backpressure: peak RSS per process kind, last third against first: largest "
                f"change {changes[kind]:+,.1f} MB ({kind})", style="dim"))
    return lines


def goal_path(paths: Sequence[str]) -> str:
    """The tuple path the goals are judged on: compiled when it ran."""
    return "compiled" if "compiled" in paths or not paths else paths[0]


def build_report(args: argparse.Namespace, runs: Sequence[RunFigures],
                 kinds: Mapping[str, Sequence[KindFigures]], check: CountCheck | None,
                 load_before: Sequence[float], load_after: Sequence[float],
                 work_dir: str | None, alo_runs: Sequence[RunFigures] = (),
                 alo_check: CountCheck | None = None,
                 bp: BackpressureFigures | None = None,
                 bare_timings: BareLoopTimings | None = None) -> dict[str, Any]:
    """The machine-readable figures (``--json``). ``kinds`` maps a heron run's name to
    its process figures; ``bare_timings``, the bare loop's several timings (the "bare
    Python loop" run carries their median, which every ratio to it is against)."""
    path = goal_path(args.paths)
    bare = next((r for r in runs if r.engine == "bare loop"), None)
    heron = find_run(runs, "heron", "heron", path)
    streamparse = find_run(runs, "heron", "streamparse", path)
    checks = [c for c in (check, alo_check) if c is not None]

    def run_json(run: RunFigures) -> dict[str, Any]:
        out = run.as_json()
        out["over_bare_loop"] = _over(run, bare)
        if bare_timings is not None and run is not bare and bare_timings.timings:
            swing = bare_timings.over(run.tuples_per_second)
            # against the fastest and the slowest timing: the swing one timing would give
            out["over_bare_loop_range"] = [swing["fastest"], swing["slowest"]]
        out["over_api_loop"] = _over(run, find_run(runs, "single process", run.variant))
        if run.reliability == "at-least-once":
            out["over_at_most_once"] = _over(run, amo_base(runs, run))
        return out

    bare_ratio = _over(heron, bare)
    gains = {}
    for label, compiled, pure in (
            *((VARIANTS[v][0], find_run(runs, "heron", v, "compiled"),
               find_run(runs, "heron", v, "pure")) for v in VARIANTS),
            ("at-least-once", find_run(alo_runs, "heron", "heron", "compiled", "at-least-once"),
             find_run(alo_runs, "heron", "heron", "pure", "at-least-once"))):
        if compiled is not None and pure is not None:
            gains[label] = {"compiled": compiled.tuples_per_second,
                            "pure": pure.tuples_per_second, "ratio": _over(compiled, pure)}
    goals = evaluate_goals(runs, alo_runs, path, bool(args.rate), args.max_pending)
    if bare_timings is not None and len(bare_timings.timings) > 1:
        for goal in goals:
            if goal["measure"] == "x bare loop" and goal["value"] is not None:
                run = next(r for r in runs if r.run == goal["run"])
                swing = bare_timings.over(run.tuples_per_second)
                # what the ratio would have been against a single timing of the bare loop
                goal["range"] = [swing["fastest"], swing["slowest"]]
    report: dict[str, Any] = {
        "words": args.words, "seed": args.seed, "workers": args.workers, "rate": args.rate,
        "vocabulary": VOCABULARY, "sample_every": sample_every_for(args.words),
        "engines": list(args.engines), "reliability": list(args.reliability),
        "variants": list(args.variants), "paths": list(args.paths), "goal_path": path,
        "cpus": os.cpu_count(),
        "load_average_before": list(load_before), "load_average_after": list(load_after),
        "runs": {r.run: run_json(r) for r in runs},
        "heron_over_bare_loop": bare_ratio,
        "heron_over_api_loop": _over(heron, find_run(runs, "single process", "heron")),
        "streamparse_over_bare_loop": _over(streamparse, bare),
        "goal_ratio": GOAL_RATIO, "goal_met": bare_ratio is not None and bare_ratio >= GOAL_RATIO,
        "goals": goals, "compiled_over_pure": gains,
        "heron_processes": [asdict(k) for k in kinds.get("heron", ())],
        "heron_processes_by_run": {name: [asdict(k) for k in figures]
                                   for name, figures in kinds.items()},
        "bare_loop": bare_timings.as_json() if bare_timings is not None else None,
        "at_least_once": None, "backpressure": bp.as_json() if bp else None,
        "counts_match": all(c.ok for c in checks),
        "counts_detail": "; ".join(c.detail for c in checks), "work_dir": work_dir,
    }
    if alo_runs:
        alo_heron = find_run(alo_runs, "heron", "heron", path, "at-least-once")
        alo_goal = next((g for g in goals if g["goal"] == "at-least-once"), None)
        report["at_least_once"] = {
            "max_pending": args.max_pending, "storm_words": args.alo_storm_words,
            "runs": {r.run: run_json(r) for r in alo_runs},
            "heron_processes": [asdict(k) for k in kinds.get(alo_heron.run, ())]
            if alo_heron else [],
            "heron_over_at_most_once": _over(alo_heron, heron),
            "goal_ratio": GOAL_ALO_RATIO, "goal_complete_p99_ms": GOAL_COMPLETE_P99_MS,
            "goal_met": alo_goal["met"] if alo_goal else None,
            "counts_match": alo_check.ok if alo_check else None,
            "counts_detail": alo_check.detail if alo_check else None}
    return report
