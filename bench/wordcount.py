"""Word-count benchmark: the heron engine, the storm engine and a single-process ceiling.

    python bench/wordcount.py [--words N] [--workers N] [--engines heron,storm]
                              [--quick] [--json] [--rate N] [--seed N]
                              [--work-dir DIR] [--keep] [--time-limit SECS]

One seeded, finite word-count topology (bench/projects/wordcount_bench: a spout picking
words from a 175,000-word vocabulary, fields grouping on the word, two counting tasks,
acking off) is run three ways, in this order:

1. **single process** (the ceiling): the same spout and bolt classes, hosted exactly as
   the engines host them, driven in a tight loop in this process with a minimal
   collector: ``next_tuple`` -> bolt ``process``, no serialization, no queues, no engine.
   Python pays per tuple, so this is what the engines are judged against (the design
   goal is heron >= 0.5x of it);
2. **heron**: the real processes (Topology Master, per container a Stream Manager, a
   Metrics Manager and one process per task, under executors), through
   ``engine.local_run.HeronLocalRun``, while a sampler reads every process's peak RSS
   (``VmHWM``) and CPU time from the pid files the run writes;
3. **storm**: Storm's model in this process (``compat.storm_api.local.LocalCluster``).

Before them, a **bare Python loop** picks the same words with the spout's own picker and
counts them in a dict, with no component API at all: the yardstick of the design's
performance budget ("pick a random word and count it"), shown for context, and an oracle
for the counts.

Throughput is measured where the words are counted: the counting bolt records the wall
clock of its first and (to within one sample interval) last stamped tuple, and tuples/s
is words counted over that window, so process start-up and shutdown are left out. The
spout stamps one tuple in ``sample_every`` with ``time.time_ns()``; the bolt emits the
emit-to-count delay of each stamped tuple on a ``latency`` leaf stream, which the engines
capture. The final counts of every run are compared: a benchmark that counts wrong is
worthless, so a mismatch makes the exit status 1.

Timings depend on what else the machine is doing; the load average is printed beside
the figures for that reason.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__" and str(ROOT) not in sys.path:
    # ``python bench/wordcount.py`` from a checkout that is not pip-installed
    sys.path.insert(0, str(ROOT))

import psutil
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

PROJECT = Path(__file__).resolve().parent / "projects" / "wordcount_bench"
TOPOLOGY = "wordcount_bench"
SPOUT = "word_spout"
BOLT = "count_bolt"
ENGINES = ("heron", "storm")
DEFAULT_WORDS = 2_000_000
QUICK_WORDS = 100_000
DEFAULT_SEED = 7
DEFAULT_WORKERS = 2
#: distinct words (``bench.vocabulary``): about a large English dictionary
VOCABULARY = 175_000
#: stamp one tuple in this many (raised for huge runs, see :func:`sample_every_for`)
SAMPLE_EVERY = 100
#: at most about this many latency samples per run: the heron engine's per-task capture
#: keeps up to 100,000 keys per stream, and percentiles need no more
MAX_SAMPLES = 50_000
#: the design goal: heron at half the single-process ceiling or better
GOAL_RATIO = 0.5
#: a heron per-task capture keeps at most this many distinct keys (OutputCapture default)
HERON_CAPTURE_MAX_KEYS = 100_000

log = logging.getLogger("bench.wordcount")


# -- figures ---------------------------------------------------------------------------

@dataclass
class RunFigures:
    """What one run (an engine, or the single-process ceiling) measured."""

    run: str
    reason: str
    words: int
    #: words the counting bolt counted (its default-stream emits)
    counted: int
    #: the whole run, process start-up included (heron, storm) or the loop (ceiling)
    wall_seconds: float
    #: from the first to the last word counted (see the module docstring)
    window_seconds: float
    tuples_per_second: float
    latency_ms: dict[str, float] = field(default_factory=dict)
    latency_samples: int = 0
    error: str | None = None
    log_dir: str | None = None
    #: final count per word; not part of the JSON
    counts: dict[str, int] = field(default_factory=dict, repr=False)
    #: keys a capture could not keep (then the counts cannot be compared)
    keys_dropped: int = 0

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("counts")
        out["distinct_words"] = len(self.counts)
        return out


@dataclass
class KindFigures:
    """Peak resident memory and CPU time of one kind of heron process."""

    kind: str
    processes: int
    #: the largest peak RSS of one process of this kind
    peak_rss_mb: float
    #: the peaks of every process of this kind added up
    total_peak_rss_mb: float
    cpu_seconds: float


@dataclass
class CountCheck:
    ok: bool
    detail: str


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..1) of already sorted values."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(q * len(sorted_values)))
    return float(sorted_values[min(rank, len(sorted_values)) - 1])


def latency_figures(nanos: Sequence[int]) -> dict[str, float]:
    """p50/p95/p99/max of emit-to-count delays, in milliseconds."""
    values = sorted(nanos)
    if not values:
        return {}
    return {name: percentile(values, q) / 1e6
            for name, q in (("p50", 0.50), ("p95", 0.95), ("p99", 0.99), ("max", 1.0))}


def sample_every_for(words: int) -> int:
    """One stamped tuple in 100, fewer for very large runs (bounded sample count)."""
    return max(SAMPLE_EVERY, math.ceil(words / MAX_SAMPLES))


def bench_options(words: int, seed: int, rate: float = 0.0) -> dict[str, Any]:
    """The ``-o`` options every run of one benchmark shares (the heron instances rebuild
    the topology from them, so the driver and the processes must be given the same)."""
    return {"bench.words": words, "bench.seed": seed, "bench.vocabulary": VOCABULARY,
            "bench.sample_every": sample_every_for(words), "bench.rate": rate}


def figures_from_leaves(run: str, reason: str, words: int, wall: float,
                        default: Mapping[tuple, Any], default_count: int,
                        latency: Mapping[tuple, Any], clock: Mapping[tuple, Any],
                        keys_dropped: int = 0, error: str | None = None,
                        log_dir: str | None = None) -> RunFigures:
    """Turn the counting bolt's three leaf streams (latest value per key) into figures.

    ``default`` maps ``(word,)`` to its final count, ``latency`` one key per sample to
    nanoseconds, ``clock`` ``("first:<task>",)``/``("last:<task>",)`` to wall-clock ns.
    """
    firsts = [ns for (mark,), ns in clock.items() if str(mark).startswith("first:")]
    lasts = [ns for (mark,), ns in clock.items() if str(mark).startswith("last:")]
    window = (max(lasts) - min(firsts)) / 1e9 if firsts and lasts else 0.0
    rate = default_count / window if window > 0 else 0.0
    samples = list(latency.values())
    return RunFigures(run=run, reason=reason, words=words, counted=default_count,
                      wall_seconds=wall, window_seconds=window, tuples_per_second=rate,
                      latency_ms=latency_figures(samples), latency_samples=len(samples),
                      error=error, log_dir=log_dir,
                      counts={key[0]: value for key, value in default.items()},
                      keys_dropped=keys_dropped)


def figures_from_capture(run: str, reason: str, words: int, wall: float, capture: Any,
                         error: str | None = None, log_dir: str | None = None) -> RunFigures:
    """Figures from an engine's OutputCapture (both engines capture leaf streams alike)."""
    streams = capture.streams

    def stream(name: str) -> Any:
        return streams.get((BOLT, name))

    default, latency, clock = stream("default"), stream("latency"), stream("clock")
    dropped = sum(s.keys_dropped for s in (default, latency, clock) if s is not None)
    return figures_from_leaves(
        run, reason, words, wall,
        default.latest if default else {}, default.count if default else 0,
        latency.latest if latency else {}, clock.latest if clock else {},
        keys_dropped=dropped, error=error, log_dir=log_dir)


def check_counts(runs: Sequence[RunFigures], words: int) -> CountCheck:
    """Every run counted every word, and all runs agree word by word."""
    if not runs:
        return CountCheck(False, "nothing ran")
    for run in runs:
        if run.reason != "finished":
            return CountCheck(False, f"{run.run} did not finish ({run.reason}"
                                     f"{': ' + run.error if run.error else ''})")
        if run.keys_dropped:
            return CountCheck(False, f"{run.run}: the output capture dropped {run.keys_dropped:,} "
                                     "keys, so its counts cannot be compared (a heron task keeps "
                                     f"at most {HERON_CAPTURE_MAX_KEYS:,} distinct words)")
        total = sum(run.counts.values())
        if total != words or run.counted != words:
            return CountCheck(False, f"{run.run} counted {run.counted:,} words (final counts add "
                                     f"up to {total:,}), expected {words:,}")
    reference = runs[0]
    for run in runs[1:]:
        if run.counts != reference.counts:
            differing = sorted(w for w in set(run.counts) | set(reference.counts)
                               if run.counts.get(w) != reference.counts.get(w))
            examples = ", ".join(f"{w!r}: {reference.run} {reference.counts.get(w)} vs "
                                 f"{run.run} {run.counts.get(w)}" for w in differing[:3])
            return CountCheck(False, f"{run.run} and {reference.run} differ on "
                                     f"{len(differing):,} words, e.g. {examples}")
    names = " = ".join(r.run for r in runs)
    return CountCheck(True, f"{names}: the same count for each of {len(reference.counts):,} "
                            f"distinct words, {words:,} words in all")


# -- heron process sampling --------------------------------------------------------------

def process_kind(stem: str) -> str:
    """The kind of heron process a pid file's stem names (engine.launch naming)."""
    if stem == "heron-tmanager" or "tmanager" in stem:
        return "Topology Master"
    if stem.startswith("stmgr-"):
        return "Stream Manager"
    if stem.startswith("metricsmgr-"):
        return "Metrics Manager"
    if stem.startswith("executor-"):
        return "executor"
    if stem.startswith("scheduler"):
        return "scheduler"
    match = re.fullmatch(r"container_\d+_(.+)_\d+", stem)
    if match:
        return f"instance: {match.group(1)}"
    return stem


def _peak_rss(proc: psutil.Process) -> int:
    """The kernel's high-water mark of resident memory (exact, whatever the sampling
    interval); the current RSS where /proc has no VmHWM."""
    try:
        with open(f"/proc/{proc.pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return proc.memory_info().rss


class ProcessSampler:
    """Samples, on its own thread, every process a heron run's pid files name.

    Pid files exist while their process lives (the supervisors remove them), so the
    directory is listed at each sweep; a restarted process gets a new pid and is kept
    apart. Peak RSS comes from ``VmHWM``, so a short spike between sweeps is not missed;
    CPU time is the last one seen, so it is short by at most one interval per process.
    """

    def __init__(self, pid_dir: Path, interval: float = 0.2) -> None:
        from engine.process.spawn import read_pid_file

        self._read_pid_file = read_pid_file
        self.pid_dir = Path(pid_dir)
        self.interval = interval
        #: (stem, pid) -> [peak rss bytes, cpu seconds]
        self.seen: dict[tuple[str, int], list[float]] = {}
        self._procs: dict[str, psutil.Process] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="bench-process-sampler",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.sample()
            except Exception:  # the figures are best effort; the run must not suffer
                log.debug("process sampling failed", exc_info=True)
            self._stop.wait(self.interval)

    def sample(self) -> None:
        for path in self.pid_dir.glob("*.pid"):
            stem = path.stem
            proc = self._procs.get(stem)
            if proc is None or not proc.is_running():
                proc = self._read_pid_file(path)
                if proc is None:
                    continue
                self._procs[stem] = proc
            try:
                with proc.oneshot():
                    rss = _peak_rss(proc)
                    times = proc.cpu_times()
            except psutil.Error:
                continue
            entry = self.seen.setdefault((stem, proc.pid), [0, 0.0])
            entry[0] = max(entry[0], rss)
            entry[1] = times.user + times.system

    def figures(self) -> list[KindFigures]:
        kinds: dict[str, list[list[float]]] = {}
        for (stem, _pid), entry in self.seen.items():
            kinds.setdefault(process_kind(stem), []).append(entry)
        order = ["Topology Master", "Stream Manager", "Metrics Manager", "executor", "scheduler"]

        def rank(kind: str) -> tuple[int, str]:
            return (order.index(kind) if kind in order else len(order), kind)

        mb = 1024 * 1024
        return [KindFigures(kind=kind, processes=len(entries),
                            peak_rss_mb=max(e[0] for e in entries) / mb,
                            total_peak_rss_mb=sum(e[0] for e in entries) / mb,
                            cpu_seconds=sum(e[1] for e in entries))
                for kind, entries in sorted(kinds.items(), key=lambda kv: rank(kv[0]))]


# -- the runs ------------------------------------------------------------------------------

ProgressFn = Callable[[str, Mapping[str, Any], float], None]


def load(options: Mapping[str, Any], workers: int) -> Any:
    """Load and compile the bench topology with this benchmark's options."""
    from engine.submission import load_topology

    return load_topology(PROJECT, name=TOPOLOGY, cli_options=dict(options), workers=workers)


class _BoltSink:
    """The ceiling's collector for the counting bolt: keeps what the engines' captures
    keep (latest value per key of each leaf stream), nothing more."""

    def __init__(self) -> None:
        self.latest: dict[str, dict[tuple, Any]] = {"default": {}, "latency": {}, "clock": {}}
        self.default = self.latest["default"]
        self.count = 0

    def emit(self, values: Any, stream: str | None, anchors: Any, direct_task: Any,
             need_task_ids: bool, tup_id: Any) -> None:
        if stream is None:
            self.count += 1
            self.default[(values[0],)] = values[1]
        else:
            self.latest[stream][(values[0],)] = values[1]

    def ack(self, tup_id: Any) -> None:
        pass

    def fail(self, tup_id: Any) -> None:
        pass

    def log(self, msg: str, level: int) -> None:
        log.info("%s", msg)

    def error(self, msg: str) -> None:
        raise RuntimeError(f"the counting bolt reported an error: {msg}")

    def metric(self, name: str, value: Any) -> None:
        pass

    def sync(self) -> None:
        pass


class _SpoutToBolt(_BoltSink):
    """The ceiling's collector for one spout task: every emit is handed straight to the
    bolt as the Tuple the engines would build (same ``make_tuple``, same ``execute``)."""

    def __init__(self, bolt: Any, source: str, task: int) -> None:
        super().__init__()
        self._make = bolt.make_tuple
        self._execute = bolt.execute
        self._source = source
        self._task = task
        self.emitted = 0

    def emit(self, values: Any, stream: str | None, anchors: Any, direct_task: Any,
             need_task_ids: bool, tup_id: Any) -> None:
        self.emitted += 1
        self._execute(self._make(None, self._source, stream or "default", self._task, values))


def run_ceiling(loaded: Any, words: int) -> RunFigures:
    """The spout and bolt classes of the topology, hosted as the engines host them, in
    one tight loop: every spout task in turn (so the words are the engines' words) into
    one counting bolt."""
    from compat.storm_api.config import with_defaults
    from compat.storm_api.hosting import host_component
    from compat.storm_api.local.layout import assign_tasks, build_context

    plan = loaded.plan
    classes = loaded.compiled.component_classes
    base = with_defaults(plan.config)
    base["topology.name"] = plan.name
    layout = assign_tasks(plan, {c.name: c.parallelism for c in plan.components.values()}, 0)
    logger = logging.getLogger("bench.ceiling")

    def conf(name: str) -> dict[str, Any]:
        return {**base, **plan.components[name].config}

    sink = _BoltSink()
    bolt_task = layout.tasks_by_component[BOLT][0]
    bolt = host_component(classes[BOLT], conf(BOLT), build_context(plan, layout, BOLT, bolt_task),
                          sink, logger)
    spouts = []
    for task in layout.tasks_by_component[SPOUT]:
        feeder = _SpoutToBolt(bolt, SPOUT, task)
        spouts.append((host_component(classes[SPOUT], conf(SPOUT),
                                      build_context(plan, layout, SPOUT, task), feeder, logger),
                       feeder))
    began = time.perf_counter()
    try:
        for spout, feeder in spouts:
            next_tuple = spout.next_tuple
            while True:
                before = feeder.emitted
                next_tuple()
                if feeder.emitted == before and spout.is_exhausted():
                    break
        wall = time.perf_counter() - began
    finally:
        bolt.close()
        for spout, _ in spouts:
            spout.close()
    return figures_from_leaves("single process", "finished", words, wall, sink.default,
                               sink.count, sink.latest["latency"], sink.latest["clock"])


def run_bare_loop(loaded: Any, words: int, seed: int) -> RunFigures:
    """The design's yardstick for word count ("one process: pick a random word and count
    it"): the spout's own word picker and a dict, no Storm API at all. It shows what the
    component API costs per tuple before any engine is involved, and its counts are an
    oracle the runs are checked against."""
    spout_module = sys.modules[loaded.compiled.component_classes[SPOUT].__module__]
    tasks = loaded.plan.components[SPOUT].parallelism
    words_list = spout_module.vocabulary(int(loaded.plan.config["bench.vocabulary"]))
    counts: dict[str, int] = {}
    get = counts.get
    began = time.perf_counter()
    for index in range(tasks):
        choice = spout_module.task_rng(seed, index).choice
        for _ in range(spout_module.task_share(words, tasks, index)):
            word = choice(words_list)
            counts[word] = get(word, 0) + 1
    wall = time.perf_counter() - began
    return RunFigures(run="bare Python loop", reason="finished", words=words, counted=words,
                      wall_seconds=wall, window_seconds=wall,
                      tuples_per_second=words / wall if wall > 0 else 0.0, counts=counts)


def run_heron(loaded: Any, options: Mapping[str, Any], workers: int, work_dir: Path,
              time_limit: float, progress: ProgressFn) -> tuple[RunFigures, list[KindFigures]]:
    """The real heron processes, with every process's peak RSS and CPU time sampled."""
    from engine.launch import Submission
    from engine.local_run import HeronLocalRun

    words = int(options["bench.words"])
    submission = Submission(project=str(PROJECT), name=TOPOLOGY, options=dict(options),
                            workers=workers)
    runner = HeronLocalRun(loaded, submission, working_dir=work_dir)
    sampler = ProcessSampler(work_dir / "pids")
    began = time.monotonic()
    sampler.start()
    try:
        result = runner.run(time_limit=time_limit,
                            on_progress=lambda stats, elapsed: progress("heron", stats, elapsed))
    finally:
        runner.stop()  # idempotent; run() already stopped unless start-up raised
        sampler.stop()
    wall = time.monotonic() - began
    figures = figures_from_capture("heron", result.reason, words, wall, result.capture,
                                   error=result.error, log_dir=str(result.log_dir))
    executed = result.components[BOLT].executed
    if result.reason == "finished" and executed != figures.counted:
        figures.error = (f"the Topology Master's metrics say count_bolt executed {executed:,} "
                         f"tuples, its outputs say {figures.counted:,}")
    return figures, sampler.figures()


def run_storm(loaded: Any, words: int, log_dir: Path, time_limit: float,
              progress: ProgressFn) -> RunFigures:
    """Storm's model in this process, the reference engine."""
    from compat.storm_api.local import LocalCluster, OutputCapture

    # Every word's final count is needed: no cap on the keys kept per stream.
    capture = OutputCapture(max_keys=sys.maxsize)
    cluster = LocalCluster(loaded.compiled, log_dir=log_dir, capture=capture)
    began = time.monotonic()
    result = cluster.run(time_limit=time_limit,
                         on_progress=lambda stats, elapsed: progress("storm", stats, elapsed))
    wall = time.monotonic() - began
    return figures_from_capture("storm", result.reason, words, wall, result.capture,
                                error=result.error, log_dir=str(result.log_dir))


# -- presentation -----------------------------------------------------------------------

class Status:
    """The live status line: which run is going and how far its counting bolt got."""

    def __init__(self, words: int) -> None:
        self.words = words
        self.text = Text("starting")

    def phase(self, label: str) -> None:
        self.text = Text(f"{label} ...", style="bold")

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


def results_renderable(report: dict[str, Any], runs: Sequence[RunFigures],
                       kinds: Sequence[KindFigures], check: CountCheck) -> Group:
    """The figures table, heron's per-process-kind table and the summary lines."""
    parts: list[Any] = []
    ceiling = next((r for r in runs if r.run == "single process"), None)
    table = Table(title=f"word count: {report['words']:,} words, vocabulary "
                        f"{report['vocabulary']:,}, seed {report['seed']}, "
                        f"{report['workers']} containers, acking off"
                        + (f", offered {report['rate']:,.0f} words/s" if report["rate"] else ""))
    for name, justify in (("run", "left"), ("tuples/s", "right"), ("x ceiling", "right"),
                          ("window s", "right"), ("wall s", "right"),
                          ("latency p50 ms", "right"), ("p95 ms", "right"),
                          ("p99 ms", "right"), ("samples", "right"), ("result", "left")):
        table.add_column(name, justify=justify, no_wrap=True)
    for run in runs:
        ratio = (run.tuples_per_second / ceiling.tuples_per_second
                 if ceiling and ceiling.tuples_per_second else math.nan)
        table.add_row(run.run, f"{run.tuples_per_second:,.0f}",
                      "-" if math.isnan(ratio) else f"{ratio:.2f}",
                      f"{run.window_seconds:.2f}", f"{run.wall_seconds:.2f}",
                      _fmt_ms(run.latency_ms.get("p50")), _fmt_ms(run.latency_ms.get("p95")),
                      _fmt_ms(run.latency_ms.get("p99")), f"{run.latency_samples:,}",
                      run.reason if not run.error else f"{run.reason}: {run.error}")
    parts.append(table)
    if kinds:
        procs = Table(title="heron: peak RSS (VmHWM) and CPU time per process kind")
        for name, justify in (("process kind", "left"), ("processes", "right"),
                              ("peak RSS MB (largest)", "right"),
                              ("peak RSS MB (all)", "right"), ("CPU s", "right")):
            procs.add_column(name, justify=justify, no_wrap=True)
        for k in kinds:
            procs.add_row(k.kind, str(k.processes), f"{k.peak_rss_mb:,.1f}",
                          f"{k.total_peak_rss_mb:,.1f}", f"{k.cpu_seconds:,.1f}")
        procs.add_row("all", str(sum(k.processes for k in kinds)), "",
                      f"{sum(k.total_peak_rss_mb for k in kinds):,.1f}",
                      f"{sum(k.cpu_seconds for k in kinds):,.1f}", style="bold")
        parts.append(procs)
    parts.extend(summary_lines(report, runs, check))
    return Group(*parts)


def summary_lines(report: dict[str, Any], runs: Sequence[RunFigures],
                  check: CountCheck) -> list[Text]:
    """A few sentences a person can act on."""
    by_name = {r.run: r for r in runs}
    ceiling, heron, storm = (by_name.get("single process"), by_name.get("heron"),
                             by_name.get("storm"))
    lines = []
    paced = bool(report.get("rate"))
    if paced:
        lines.append(Text(
            f"every run was offered {report['rate']:,.0f} words/s: tuples/s only says whether "
            "it kept up; run without --rate to compare throughput", style="yellow"))
    if heron and ceiling and ceiling.tuples_per_second and not paced:
        ratio = heron.tuples_per_second / ceiling.tuples_per_second
        met = ratio >= GOAL_RATIO
        lines.append(Text.assemble(
            "heron counts ", (f"{heron.tuples_per_second:,.0f} words/s", "bold"),
            f", {ratio:.2f}x the single-process ceiling "
            f"({ceiling.tuples_per_second:,.0f}/s); design goal >= {GOAL_RATIO}x: ",
            ("met", "green") if met else ("not met", "red")))
    if heron and heron.latency_ms:
        lines.append(Text(
            f"heron emit-to-count latency: p50 {_fmt_ms(heron.latency_ms['p50'])} ms, "
            f"p95 {_fmt_ms(heron.latency_ms['p95'])} ms, "
            f"p99 {_fmt_ms(heron.latency_ms['p99'])} ms over {heron.latency_samples:,} "
            "samples" + ("" if paced else
                         " (the spout floods the topology, so this is mostly time spent "
                         "queued behind earlier words; --rate N measures it at a load "
                         "the engine sustains)")))
    bare = by_name.get("bare Python loop")
    if bare and ceiling and ceiling.tuples_per_second and bare.tuples_per_second and not paced:
        lines.append(Text(
            f"the ceiling runs the topology's spout and bolt through the Storm component API "
            f"({1e6 / ceiling.tuples_per_second:.2f} µs a word); picking and counting the same "
            f"words in a bare loop takes {1e6 / bare.tuples_per_second:.2f} µs "
            f"({bare.tuples_per_second:,.0f}/s)", style="dim"))
    if storm and storm.tuples_per_second and not paced:
        line = f"storm (one process, threads) counts {storm.tuples_per_second:,.0f} words/s"
        if heron and heron.tuples_per_second:
            line += f"; heron is {heron.tuples_per_second / storm.tuples_per_second:.1f}x that"
        lines.append(Text(line))
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


def build_report(args: argparse.Namespace, runs: Sequence[RunFigures],
                 kinds: Sequence[KindFigures], check: CountCheck,
                 load_before: Sequence[float], load_after: Sequence[float],
                 work_dir: str | None) -> dict[str, Any]:
    """The machine-readable figures (``--json``)."""
    by_name = {r.run: r for r in runs}
    ceiling, heron = by_name.get("single process"), by_name.get("heron")
    ratio = (heron.tuples_per_second / ceiling.tuples_per_second
             if heron and ceiling and ceiling.tuples_per_second else None)
    return {
        "words": args.words, "seed": args.seed, "workers": args.workers, "rate": args.rate,
        "vocabulary": VOCABULARY, "sample_every": sample_every_for(args.words),
        "engines": list(args.engines), "cpus": os.cpu_count(),
        "load_average_before": list(load_before), "load_average_after": list(load_after),
        "runs": {r.run: r.as_json() for r in runs},
        "heron_over_ceiling": ratio, "goal_ratio": GOAL_RATIO,
        "heron_processes": [asdict(k) for k in kinds],
        "counts_match": check.ok, "counts_detail": check.detail, "work_dir": work_dir,
    }


# -- command line --------------------------------------------------------------------------

def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python bench/wordcount.py",
        description="Word-count throughput, latency and memory on the heron and storm "
                    "engines, against a single-process ceiling.")
    parser.add_argument("--words", type=int, default=None,
                        help=f"words the spout emits (default {DEFAULT_WORDS:,}; "
                             f"--quick: {QUICK_WORDS:,})")
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS,
                        help="heron containers (default %(default)s)")
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help="comma-separated engines to run: heron, storm (default "
                             "%(default)s); the single-process ceiling always runs")
    parser.add_argument("--quick", action="store_true",
                        help=f"a small run ({QUICK_WORDS:,} words) that shows every figure")
    parser.add_argument("--json", action="store_true",
                        help="print the figures as JSON on stdout (status goes to stderr)")
    parser.add_argument("--rate", type=float, default=0.0,
                        help="offer this many words/s (default: as fast as each run takes "
                             "them); for latency at a load the engine sustains")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help="the word sequence's seed (default %(default)s)")
    parser.add_argument("--work-dir", type=Path, default=None,
                        help="where the runs' logs go (default: a temporary directory, "
                             "removed after a clean run)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the work directory even after a clean run")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="give up on an engine run after this many seconds "
                             "(default: 60 + words/10,000)")
    args = parser.parse_args(argv)
    if args.words is None:
        args.words = QUICK_WORDS if args.quick else DEFAULT_WORDS
    if args.words < 1:
        parser.error(f"--words must be at least 1, got {args.words}")
    if args.rate < 0:
        parser.error(f"--rate must be positive (or 0: unlimited), got {args.rate}")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        parser.error(f"unknown engine(s) {', '.join(unknown)}; choose from {', '.join(ENGINES)}")
    args.engines = [e for e in ENGINES if e in engines]  # always heron before storm
    if args.time_limit is None:
        args.time_limit = 60.0 + args.words / 10_000
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; 0 when every run finished and the counts agree, else 1."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    out = Console(highlight=False, width=None if sys.stdout.isatty() else 140)
    status_console = Console(stderr=True) if args.json else out
    own_dir = args.work_dir is None
    work_dir = Path(tempfile.mkdtemp(prefix="wordcount-bench-")) if own_dir else args.work_dir
    work_dir.mkdir(parents=True, exist_ok=True)

    options = bench_options(args.words, args.seed, args.rate)
    loaded = load(options, args.workers)
    status = Status(args.words)
    runs: list[RunFigures] = []
    kinds: list[KindFigures] = []
    load_before = os.getloadavg()
    with Live(status, console=status_console, refresh_per_second=4, transient=True):
        status.phase(f"bare loop: picking and counting {args.words:,} words")
        runs.append(run_bare_loop(loaded, args.words, args.seed))
        status.phase(f"single process: {args.words:,} words through the spout and bolt "
                     "code with no engine")
        runs.append(run_ceiling(loaded, args.words))
        if "heron" in args.engines:
            status.phase(f"heron: starting {args.workers} containers")
            figures, kinds = run_heron(loaded, options, args.workers, work_dir / "heron",
                                       args.time_limit, status.progress)
            runs.append(figures)
        if "storm" in args.engines and not any(r.reason == "interrupted" for r in runs):
            status.phase("storm: starting")
            runs.append(run_storm(loaded, args.words, work_dir / "storm", args.time_limit,
                                  status.progress))
    load_after = os.getloadavg()
    check = check_counts(runs, args.words)
    clean = check.ok and all(r.reason == "finished" and not r.error for r in runs)
    keep = args.keep or not own_dir or not clean
    report = build_report(args, runs, kinds, check, load_before, load_after,
                          str(work_dir) if keep else None)
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        out.print(results_renderable(report, runs, kinds, check))
    if not keep:
        shutil.rmtree(work_dir, ignore_errors=True)
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
