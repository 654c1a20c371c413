"""The word-count benchmark's settings and figures: what a run measured (``RunFigures``,
``KindFigures``, ``BackpressureFigures``), how counts are checked against each other,
latency percentiles, and the sampler that reads every heron process's peak RSS and CPU
time. ``bench/wordcount.py`` describes the benchmark and runs it."""

from __future__ import annotations

import itertools
import logging
import math
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

from engine.common.process.spawn import read_pid_file

PROJECT = Path(__file__).resolve().parent / "projects" / "wordcount_bench"
#: Heron's own word count, the headline: the counting bolt keeps a map, emits nothing
#: per word, and its final counts at the end of the stream
TOPOLOGY_HERON = "wordcount_bench_heron"
#: the streamparse-style word count: the counting bolt emits [word, count] per word
TOPOLOGY = "wordcount_bench"
#: the at-least-once variant (of Heron's word count): message ids, acks, one acker
TOPOLOGY_ALO = "wordcount_bench_reliable"
#: the backpressure scenario: the at-most-once spout into slow counting bolts
TOPOLOGY_BP = "wordcount_bench_backpressure"
RELIABILITIES = ("at-most-once", "at-least-once")
SPOUT = "word_spout"
BOLT = "count_bolt"
ENGINES = ("heron", "storm")
#: the two word counts, headline first: --variants name -> (label, topology)
VARIANTS = {"heron": ("Heron's word count", TOPOLOGY_HERON),
            "streamparse": ("streamparse-style", TOPOLOGY)}
#: the heron engine's tuple paths (docs/compiled-path.md): --paths names
PATHS = ("compiled", "pure")
PATH_LABELS = {"compiled": "compiled", "pure": "pure Python"}
#: the spout's end-of-stream marker stream (bench/projects/.../wordbench/spout.py)
END_STREAM = "eos"
DEFAULT_WORDS = 2_000_000
#: how many times the bare loop is timed: before, between and after the engine runs;
#: every "x bare loop" ratio is against the median of the timings
DEFAULT_BARE_RUNS = 3
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
#: the design goal: Heron's word count on heron at half the single-process limit (the
#: bare loop) or better (issue 20)
GOAL_RATIO = 0.5
#: ...and the streamparse-style word count at this share of the bare loop or better
GOAL_STREAMPARSE_RATIO = 0.35
#: flooded at-most-once (no --rate): p99 emit-to-count latency under this many ms
GOAL_FLOOD_P99_MS = 100.0
#: a heron per-task capture keeps at most this many distinct keys (OutputCapture default)
HERON_CAPTURE_MAX_KEYS = 100_000
#: topology.max.spout.pending for the at-least-once runs (per spout task)
DEFAULT_MAX_PENDING = 1024
#: the at-least-once goals: this share of heron's at-most-once throughput or better...
GOAL_ALO_RATIO = 0.5
#: ...with the p99 complete latency under this many milliseconds
GOAL_COMPLETE_P99_MS = 50.0
#: the backpressure scenario's length, counted from the spout's first word
DEFAULT_BP_SECONDS = 20.0
QUICK_BP_SECONDS = 6.0
#: the slow bolt's cost per word and task (2 tasks: at most 20,000 words/s in all)
DEFAULT_BOLT_COST_US = 100.0
#: the backpressure scenario's high watermark (the low one is half): a word is about 20
#: bytes queued, so at the bolts' 20,000 words/s the engine's default 8 MB / 4 MB would
#: release the spout about once every 14 s, more than the scenario lasts; 1 MB / 0.5 MB
#: cycles every 2 s or so and shows the same bound
DEFAULT_BP_HIGH_MB = 1.0
#: the backpressure scenario's vocabulary: small, so the counting state is complete within
#: a second and the memory figures show buffering, not a growing dict
BP_VOCABULARY = 1_000

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
    #: "at-most-once" or "at-least-once"
    reliability: str = "at-most-once"
    #: at-least-once: emit-to-ack delay of the stamped words, from the spout's own view
    complete_latency_ms: dict[str, float] = field(default_factory=dict)
    complete_samples: int = 0
    #: at-least-once: trees the spout saw acked and failed (timeouts included)
    acked: int | None = None
    failed: int | None = None
    #: at-least-once on heron: the spout instance's own complete-latency metrics
    engine_complete_ms: dict[str, float] = field(default_factory=dict)
    #: "bare loop", "single process", "heron" or "storm"
    engine: str = ""
    #: "heron" (Heron's word count) or "streamparse" (streamparse-style); None: bare loop
    variant: str | None = None
    #: heron: the tuple path asked for, "compiled" or "pure"
    path: str | None = None
    #: heron: the tuple path its processes' first log lines name ("compiled", "pure
    #: Python", or "mixed: ...")
    tuple_path: str | None = None

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
    #: CPU per word counted while the run was in full flow (between a fifth and four
    #: fifths of the words counted): start-up and the drain left out; None when the run
    #: gave no such window
    steady_us_per_word: float | None = None


@dataclass
class BareLoopTimings:
    """The bare loop, timed several times in one benchmark run (before, between and after
    the engine runs), so the ratios against it do not swing with one timing: each
    timing's rate and the median, which every "x bare loop" ratio is stated against."""

    words: int
    #: (when, words/s, wall seconds) of each timing, in the order they ran
    timings: list[tuple[str, float, float]] = field(default_factory=list)

    def add(self, when: str, run: RunFigures) -> None:
        self.timings.append((when, run.tuples_per_second, run.wall_seconds))

    @property
    def rates(self) -> list[float]:
        return [rate for _, rate, _ in self.timings]

    @property
    def median_rate(self) -> float:
        rates = sorted(self.rates)
        if not rates:
            return 0.0
        middle = len(rates) // 2
        return rates[middle] if len(rates) % 2 else (rates[middle - 1] + rates[middle]) / 2

    @property
    def spread(self) -> float | None:
        """The fastest timing over the slowest (1.0: no swing)."""
        rates = self.rates
        return max(rates) / min(rates) if rates and min(rates) > 0 else None

    def over(self, rate: float) -> dict[str, float | None]:
        """``rate`` against the median timing, and against the fastest and slowest: the
        range the ratio would have swung over had only one timing been taken."""
        rates = [r for r in self.rates if r > 0]
        median = self.median_rate
        return {"median": rate / median if median > 0 else None,
                "fastest": rate / max(rates) if rates else None,
                "slowest": rate / min(rates) if rates else None}

    def apply(self, run: RunFigures) -> RunFigures:
        """Make ``run`` (the first timing, kept in the runs as "bare Python loop" and as
        the counts' oracle) carry the median: its rate and the wall time at that rate."""
        median = self.median_rate
        if median > 0:
            run.tuples_per_second = median
            run.wall_seconds = run.window_seconds = self.words / median
        return run

    def as_json(self) -> dict[str, Any]:
        rates = self.rates
        return {"words": self.words, "timings": [
                    {"when": when, "words_per_second": rate, "wall_seconds": wall}
                    for when, rate, wall in self.timings],
                "median_words_per_second": self.median_rate,
                "fastest_words_per_second": max(rates) if rates else None,
                "slowest_words_per_second": min(rates) if rates else None,
                "spread": self.spread, "ratios_against": "median"}


def bare_loop_slots(timings: int, engine_runs: int) -> list[int]:
    """Where the bare loop's ``timings`` go among ``engine_runs`` runs, as slots: slot
    ``i`` is just before run ``i`` (0: before every run), slot ``engine_runs`` after the
    last. The first timing is before every run, the last (of two or more) after every
    run, the others spread evenly between; the same slot twice means two timings in a
    row there (more timings than gaps)."""
    if timings < 1:
        return []
    if timings == 1 or engine_runs < 1:
        return [0] * timings
    return [math.floor(k * engine_runs / (timings - 1) + 0.5) for k in range(timings)]


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


def steady_cpu(marks: Sequence[tuple[int, dict[str, float]]], words: int,
               low: float = 0.2, high: float = 0.8) -> dict[str, float]:
    """CPU µs per word of each process kind in full flow, from ``marks`` (words counted,
    CPU seconds by kind), taken as the run went: between the first mark at or past ``low``
    of ``words`` and the last at or before ``high``. Empty when no two marks fall there."""
    inside = [m for m in marks if low * words <= m[0] <= high * words]
    if len(inside) < 2 or inside[-1][0] <= inside[0][0]:
        return {}
    (first, before), (last, after) = inside[0], inside[-1]
    counted = last - first
    return {kind: (after[kind] - before.get(kind, 0.0)) * 1e6 / counted for kind in after}


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
                        log_dir: str | None = None,
                        final_counts: bool = False) -> RunFigures:
    """Turn the counting bolt's three leaf streams (latest value per key) into figures.

    ``default`` maps ``(word,)`` to its final count, ``latency`` one key per sample to
    nanoseconds, ``clock`` ``("first:<task>",)``/``("last:<task>",)`` to wall-clock ns.
    ``default_count`` is the bolt's default-stream emits: one per word counted for the
    streamparse-style bolt; with ``final_counts`` (Heron's word count, whose bolt emits
    each word's final count once at the end) the words counted are the counts added up.
    """
    if final_counts:
        default_count = sum(default.values())
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
                         error: str | None = None, log_dir: str | None = None,
                         final_counts: bool = False) -> RunFigures:
    """Figures from an engine's OutputCapture (both engines capture leaf streams alike)."""
    streams = capture.streams

    def stream(name: str) -> Any:
        return streams.get((BOLT, name))

    default, latency, clock = stream("default"), stream("latency"), stream("clock")
    complete = streams.get((SPOUT, "complete"))
    dropped = sum(s.keys_dropped for s in (default, latency, clock, complete) if s is not None)
    figures = figures_from_leaves(
        run, reason, words, wall,
        default.latest if default else {}, default.count if default else 0,
        latency.latest if latency else {}, clock.latest if clock else {},
        keys_dropped=dropped, error=error, log_dir=log_dir, final_counts=final_counts)
    if complete is not None:
        samples = list(complete.latest.values())
        figures.complete_latency_ms = latency_figures(samples)
        figures.complete_samples = len(samples)
    return figures


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


def check_groups(groups: Sequence[tuple[Sequence[RunFigures], int]]) -> CountCheck:
    """:func:`check_counts` for several sets of runs (each with its word count): ok when
    every set agrees within itself."""
    checks = [check_counts(group, words) for group, words in groups if len(group) > 1]
    if not checks:
        return CountCheck(False, "nothing to compare")
    failed = [c for c in checks if not c.ok]
    return CountCheck(not failed, "; ".join(c.detail for c in (failed or checks)))


# -- heron process sampling --------------------------------------------------------------

def process_kind(stem: str) -> str:
    """The kind of heron process a pid file's stem names (engine.common.launch naming)."""
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

    With ``series`` it also keeps every sweep's *current* RSS per process (with the
    ``time.monotonic()`` of the sweep), so the peak of any window of the run can be had
    (:meth:`window_figures`): ``VmHWM`` only ever grows, so it cannot show whether the
    memory of a long run is flat.
    """

    def __init__(self, pid_dir: Path, interval: float = 0.2, series: bool = False) -> None:
        self._read_pid_file = read_pid_file
        self.pid_dir = Path(pid_dir)
        self.interval = interval
        #: (stem, pid) -> [peak rss bytes, cpu seconds]
        self.seen: dict[tuple[str, int], list[float]] = {}
        self._procs: dict[str, psutil.Process] = {}
        #: (monotonic time, stem, pid, current rss bytes) per process and sweep
        self.series: list[tuple[float, str, int, int]] | None = [] if series else None
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
        now = time.monotonic()
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
                    current = proc.memory_info().rss if self.series is not None else 0
            except psutil.Error:
                continue
            entry = self.seen.setdefault((stem, proc.pid), [0, 0.0])
            entry[0] = max(entry[0], rss)
            entry[1] = times.user + times.system
            if self.series is not None:
                self.series.append((now, stem, proc.pid, current))

    def figures(self) -> list[KindFigures]:
        kinds: dict[str, list[list[float]]] = {}
        for (stem, _pid), entry in self.seen.items():
            kinds.setdefault(process_kind(stem), []).append(entry)
        mb = 1024 * 1024
        return [KindFigures(kind=kind, processes=len(entries),
                            peak_rss_mb=max(e[0] for e in entries) / mb,
                            total_peak_rss_mb=sum(e[0] for e in entries) / mb,
                            cpu_seconds=sum(e[1] for e in entries))
                for kind, entries in sorted(kinds.items(), key=lambda kv: _kind_rank(kv[0]))]

    def cpu_by_kind(self) -> dict[str, float]:
        """CPU seconds of each process kind so far (as last sampled)."""
        out: dict[str, float] = {}
        for (stem, _pid), entry in list(self.seen.items()):
            kind = process_kind(stem)
            out[kind] = out.get(kind, 0.0) + entry[1]
        return out

    def window_figures(self, start: float, end: float) -> dict[str, dict[str, float]]:
        """Per process kind, the peak *current* RSS seen in ``[start, end)`` (monotonic
        seconds): of the largest process (``peak_rss_mb``) and of each process added up
        (``total_peak_rss_mb``); needs ``series``."""
        peaks: dict[tuple[str, int], int] = {}
        for t, stem, pid, rss in self.series or ():
            if start <= t < end:
                peaks[(stem, pid)] = max(peaks.get((stem, pid), 0), rss)
        kinds: dict[str, list[int]] = {}
        for (stem, _pid), rss in peaks.items():
            kinds.setdefault(process_kind(stem), []).append(rss)
        mb = 1024 * 1024
        return {kind: {"processes": len(values), "peak_rss_mb": max(values) / mb,
                       "total_peak_rss_mb": sum(values) / mb}
                for kind, values in sorted(kinds.items(), key=lambda kv: _kind_rank(kv[0]))}


_KIND_ORDER = ["Topology Master", "Stream Manager", "Metrics Manager", "executor", "scheduler"]


def _kind_rank(kind: str) -> tuple[int, str]:
    return (_KIND_ORDER.index(kind) if kind in _KIND_ORDER else len(_KIND_ORDER), kind)


# -- the backpressure scenario's figures ---------------------------------------------------

@dataclass
class BackpressureFigures:
    """What the backpressure scenario measured (heron, at-most-once, fixed duration)."""

    reason: str
    #: from the spout's first word to the end of the scenario
    seconds: float
    bolt_cost_us: float
    bolt_tasks: int
    #: what the bolt tasks can count at most: tasks x 1e6 / cost
    bolt_capacity: float
    high_watermark_mb: float
    low_watermark_mb: float
    #: one per third of the run and one ("steady") for the last two thirds, after the
    #: queues filled: {"window", "start", "end", "spout_per_second", "bolt_per_second",
    #: "in_flight" (emitted, not yet executed, at the window's end)}
    rates: list[dict[str, Any]] = field(default_factory=list)
    #: seconds from the first word to the first poll that saw the spouts paused
    first_pause: float | None = None
    #: totals at the last metrics poll
    emitted: int = 0
    executed: int = 0
    #: per Stream Manager: {"stmgr", "spouts_paused_ms", "initiated_ms" (since it
    #: started), "paused_in_run_ms", "initiated_in_run_ms" (within ``seconds``: the
    #: counters' growth since the poll that saw the first word), "largest_queue_bytes_max",
    #: "backpressure_now"}
    stmgrs: list[dict[str, Any]] = field(default_factory=list)
    #: per third of the run, per process kind: peak current RSS (see ProcessSampler)
    rss_windows: list[dict[str, Any]] = field(default_factory=list)
    #: the whole run's VmHWM and CPU time per process kind
    processes: list[KindFigures] = field(default_factory=list)
    error: str | None = None
    log_dir: str | None = None

    def steady(self) -> dict[str, Any]:
        return next((r for r in self.rates if r["window"] == "steady"), {})

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _interpolate(samples: Sequence[tuple[float, int, int]], t: float, column: int) -> float:
    """A counter's value at time ``t``, linearly between the polls around it."""
    if not samples:
        return 0.0
    if t <= samples[0][0]:
        return float(samples[0][column])
    for before, after in itertools.pairwise(samples):
        if before[0] <= t <= after[0]:
            span = after[0] - before[0]
            share = (t - before[0]) / span if span > 0 else 1.0
            return before[column] + share * (after[column] - before[column])
    return float(samples[-1][column])


def window_rates(samples: Sequence[tuple[float, int, int]], start: float,
                 end: float) -> dict[str, Any]:
    """Words emitted by the spout and executed by the bolts per second over a window, and
    the words in flight (emitted, not yet executed) at its end, from (time, emitted,
    executed) polls of the metrics."""
    span = end - start
    emitted, executed = _interpolate(samples, end, 1), _interpolate(samples, end, 2)
    in_flight = round(emitted - executed)
    if span <= 0:
        return {"spout_per_second": 0.0, "bolt_per_second": 0.0, "in_flight": in_flight}
    return {"spout_per_second": (emitted - _interpolate(samples, start, 1)) / span,
            "bolt_per_second": (executed - _interpolate(samples, start, 2)) / span,
            "in_flight": in_flight}


def _int_metric(values: Mapping[str, Any], name: str) -> int:
    try:
        return int(float(values.get(name, 0) or 0))
    except ValueError:
        return 0
