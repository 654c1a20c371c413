"""Word-count benchmark: the heron engine, the storm engine and single-process baselines,
at-most-once and at-least-once, and a backpressure scenario.

    python bench/wordcount.py [--words N] [--workers N] [--engines heron,storm]
                              [--reliability at-most-once|at-least-once|both]
                              [--max-pending N] [--alo-storm-words N]
                              [--backpressure SECS] [--bolt-cost-us US]
                              [--variants heron,streamparse] [--paths compiled,pure]
                              [--plaintext-too] [--quick] [--json] [--json-file PATH]
                              [--rate N] [--seed N]
                              [--work-dir DIR] [--keep] [--time-limit SECS]

**Two word counts** (``--variants``), on one seeded, finite stream of words
(bench/projects/wordcount_bench: a spout picking words from a 175,000-word vocabulary,
fields grouping on the word, two counting tasks):

* **Heron's word count** (``wordcount_bench_heron``), the headline, as in Heron's own
  benchmark: the counting bolt keeps a map and emits nothing per word. To keep every run
  checked, the spout ends its stream with a marker on an ``eos`` stream that the bolt
  subscribes to with all grouping; when every spout task's marker has arrived the bolt
  emits each word's final count. This is plain Storm API, so it runs unchanged on both
  engines and in the single-process loop. The alternatives were weaker: Storm gives a
  bolt no end-of-stream or drain callback (``deactivate`` is a spout's, ``cleanup`` may
  not run and cannot emit reliably), tick tuples are periodic, and the heron engine's
  own ``TaskDone`` reaches no user code (it would need an engine hook). The marker is
  sent after its task's last word on the same route to each bolt task (Storm delivers
  one task's tuples in order; so does the heron engine, which sends a task's open batch
  when a row on another stream follows it, as Heron's instance does); a word arriving after it anyway
  would be emitted with its new count at once, so the captured counts stay right. At-least-once, the
  spout sends the marker only once every word's tree is acked.
* **streamparse-style** (``wordcount_bench``): the bolt emits ``[word, running count]``
  for every word, as a streamparse word count does.

**At-most-once** (acking off), each variant is run, in this order:

1. **single process** (the component-API loop): the same spout and bolt classes, hosted
   exactly as the engines host them, driven in a tight loop in this process with a
   minimal collector: ``next_tuple`` -> bolt ``process``, no serialization, no queues, no
   engine. It shows what the Storm component API costs per word before any engine;
2. **heron**: the real processes (Topology Master, per container a Stream Manager, a
   Metrics Manager and one process per task, under executors), through
   ``engine.local_run.HeronLocalRun``, while a sampler reads every process's peak RSS
   (``VmHWM``) and CPU time from the pid files the run writes. Once per tuple path
   (``--paths``): **compiled** (the default where a build loads) and **pure Python**
   (``HERON_PURE_PYTHON=1`` in every heron process), so the compiled path's gain shows
   in one run; the path each run's processes name in their first log line is checked;
3. **storm**: Storm's model in this process (``compat.storm_api.local.LocalCluster``).

Before them, a **bare Python loop** picks the same words with the spout's own picker and
counts them in a dict, with no component API at all: the single-process limit of the
design's performance budget ("one process: pick a random word and count it"), which the
goals are stated against, and an oracle for the counts.

**Goals** (issue 20), each a ratio within one run, judged on the compiled runs: Heron's
word count at-most-once >= 0.5x the bare loop; streamparse-style >= 0.35x; at-least-once
>= 0.5x at-most-once at ``topology.max.spout.pending`` 1,024 with p99 complete latency
< 50 ms; flooded at-most-once (the spout floods: no ``--rate``) p99 emit-to-count
latency < 100 ms. The report shows each as a line (met / not met) and in ``goals`` of
the JSON.

**At-least-once** (``wordcount_bench_reliable``, Heron's word count; heron on each
tuple path): the same words, but the spout emits each with a message id and keeps it
for replay until it is acked, the bolt acks each word (auto-ack), one acker, and
``topology.max.spout.pending``
(``--max-pending``) bounds the trees in flight, as a Storm user of a reliable spout sets
it. Heron runs the full word count; storm's acking path is slower, so it gets
``--alo-storm-words``. Besides throughput, the spout measures **complete latency** from
its own view (emit to ``ack()``, for the stamped words) and emits it on a leaf stream.
Without failures at-least-once counts exactly, so the counts are checked as before.

**Backpressure** (``wordcount_bench_backpressure``, heron only, ``--backpressure SECS``):
the at-most-once spout into counting bolts that take ``--bolt-cost-us`` per word (about
ten times slower than the spout), for a fixed time. It reports the spout's emit rate
against the bolts' execute rate (throughput must follow the bolt), how long the Stream
Managers kept the spouts paused, the largest queue each Stream Manager held against the
high watermark, and the peak RSS of each process kind in the first, middle and last
third of the run (it must stay flat: nothing buffers without bound).

Throughput is measured where the words are counted: the counting bolt records the wall
clock of its first and (to within one sample interval) last stamped tuple, and tuples/s
is words counted over that window, so process start-up and shutdown are left out. The
spout stamps one tuple in ``sample_every`` with ``time.time_ns()``; the bolt emits the
emit-to-count delay of each stamped tuple on a ``latency`` leaf stream, which the engines
capture. The final counts of every run are compared: a benchmark that counts wrong is
worthless, so a mismatch makes the exit status 1 (as does a heron run whose processes
ran another tuple path than the one asked for).

Timings depend on what else the machine is doing; the load average is printed beside
the figures for that reason.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
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

    With ``series`` it also keeps every sweep's *current* RSS per process (with the
    ``time.monotonic()`` of the sweep), so the peak of any window of the run can be had
    (:meth:`window_figures`): ``VmHWM`` only ever grows, so it cannot show whether the
    memory of a long run is flat.
    """

    def __init__(self, pid_dir: Path, interval: float = 0.2, series: bool = False) -> None:
        from engine.process.spawn import read_pid_file

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


# -- the runs ------------------------------------------------------------------------------

ProgressFn = Callable[[str, Mapping[str, Any], float], None]


def load(options: Mapping[str, Any], workers: int, topology: str = TOPOLOGY) -> Any:
    """Load and compile one of the bench project's topologies with these options."""
    from engine.submission import load_topology

    return load_topology(PROJECT, name=topology, cli_options=dict(options), workers=workers)


def end_markers(loaded: Any) -> int:
    """End-of-stream markers the counting bolt's tasks receive in all: one per spout task
    and bolt task when the bolt subscribes to the spout's ``eos`` stream (all grouping),
    as Heron's word count does to emit its final counts; else none."""
    plan = loaded.plan
    if not any(i.source == SPOUT and i.stream == END_STREAM
               for i in plan.components[BOLT].inputs):
        return 0
    return plan.components[SPOUT].parallelism * plan.components[BOLT].parallelism


def variant_of(loaded: Any) -> str:
    """"heron" (Heron's word count: final counts at the end of the stream) or
    "streamparse" (a count emitted per word), from the topology's wiring."""
    return "heron" if end_markers(loaded) else "streamparse"


def run_name(engine: str, variant: str, path: str = "compiled", alo: bool = False) -> str:
    """A run's name: the engine, "(at-least-once)", the variant unless it is the
    headline, and the tuple path unless compiled: "heron", "heron, streamparse-style",
    "heron (at-least-once), pure Python", "single process, streamparse-style"."""
    name = engine + (" (at-least-once)" if alo else "")
    if variant != "heron":
        name += f", {VARIANTS[variant][0]}"
    if path != "compiled":
        name += f", {PATH_LABELS[path]}"
    return name


@contextlib.contextmanager
def tuple_path_env(path: str) -> Any:
    """The environment the heron processes of a run inherit (engine.process.spawn passes
    it on), for the tuple path ``path``: ``HERON_PURE_PYTHON=1`` for "pure", without it
    for "compiled"; ``HERON_PURE_PYTHON_KINDS`` is cleared either way. Restored after."""
    names = ("HERON_PURE_PYTHON", "HERON_PURE_PYTHON_KINDS")
    saved = {name: os.environ.get(name) for name in names}
    for name in names:
        os.environ.pop(name, None)
    if path == "pure":
        os.environ["HERON_PURE_PYTHON"] = "1"
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def logged_tuple_path(log_dir: Path | str | None) -> str | None:
    """The tuple path a heron run's processes say they ran, from the first line of each
    process log (engine.fastpath.log_tuple_path): "compiled", "pure Python", or "mixed:
    ..." naming the processes of each; None without logs."""
    found: dict[str, list[str]] = {}
    for log_file in sorted(Path(log_dir).glob("*.log")) if log_dir else ():
        try:
            with open(log_file, encoding="utf-8", errors="replace") as fh:
                first = fh.readline()
        except OSError:
            continue
        match = re.search(r"tuple path: (compiled|pure Python)", first)
        found.setdefault(match.group(1) if match else "not logged", []).append(log_file.stem)
    if not found:
        return None
    if len(found) == 1:
        return next(iter(found))
    return "mixed: " + "; ".join(f"{path} ({', '.join(names)})"
                                 for path, names in sorted(found.items()))


def compiled_available() -> bool:
    """Whether a process started without ``HERON_PURE_PYTHON`` would run the compiled
    tuple path (built and fresh)."""
    from engine.fastpath.selection import PURE_ENV, TuplePathError, select

    try:
        return select({k: v for k, v in os.environ.items() if k != PURE_ENV}).compiled
    except TuplePathError:
        return False


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
    """The ceiling's collector for one spout task: every emit on a stream the bolt
    subscribes to is handed straight to the bolt as the Tuple the engines would build
    (same ``make_tuple``, same ``execute``)."""

    def __init__(self, bolt: Any, source: str, task: int, subscribed: set[str]) -> None:
        super().__init__()
        self._make = bolt.make_tuple
        self._execute = bolt.execute
        self._source = source
        self._task = task
        self._subscribed = subscribed
        self.emitted = 0

    def emit(self, values: Any, stream: str | None, anchors: Any, direct_task: Any,
             need_task_ids: bool, tup_id: Any) -> None:
        self.emitted += 1
        stream = stream or "default"
        if stream in self._subscribed:
            self._execute(self._make(None, self._source, stream, self._task, values))


def local_hosting(loaded: Any) -> tuple[Any, Callable[[str], dict[str, Any]]]:
    """(task layout, component name -> its conf) for hosting the topology's components
    in this process as the engines host them (task ids numbered as Storm does)."""
    from compat.storm_api.config import with_defaults
    from compat.storm_api.local.layout import assign_tasks

    plan = loaded.plan
    base = with_defaults(plan.config)
    base["topology.name"] = plan.name
    layout = assign_tasks(plan, {c.name: c.parallelism for c in plan.components.values()}, 0)

    def conf(name: str) -> dict[str, Any]:
        return {**base, **plan.components[name].config}
    return layout, conf


def run_ceiling(loaded: Any, words: int, name: str = "single process") -> RunFigures:
    """The spout and bolt classes of the topology, hosted as the engines host them, in
    one tight loop: every spout task in turn (so the words are the engines' words) into
    one counting bolt."""
    from compat.storm_api.hosting import host_component
    from compat.storm_api.local.layout import build_context

    plan = loaded.plan
    classes = loaded.compiled.component_classes
    layout, conf = local_hosting(loaded)
    logger = logging.getLogger("bench.ceiling")

    sink = _BoltSink()
    bolt_task = layout.tasks_by_component[BOLT][0]
    bolt = host_component(classes[BOLT], conf(BOLT), build_context(plan, layout, BOLT, bolt_task),
                          sink, logger)
    spouts = []
    subscribed = {i.stream for i in plan.components[BOLT].inputs if i.source == SPOUT}
    for task in layout.tasks_by_component[SPOUT]:
        feeder = _SpoutToBolt(bolt, SPOUT, task, subscribed)
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
    variant = variant_of(loaded)
    figures = figures_from_leaves(name, "finished", words, wall, sink.default, sink.count,
                                  sink.latest["latency"], sink.latest["clock"],
                                  final_counts=variant == "heron")
    figures.engine, figures.variant = "single process", variant
    return figures


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
                      tuples_per_second=words / wall if wall > 0 else 0.0, counts=counts,
                      engine="bare loop")


def reliability_of(loaded: Any) -> str:
    """"at-least-once" when the loaded topology tracks tuple trees (ackers), else
    "at-most-once"."""
    ackers = loaded.plan.config.get("topology.acker.executors")
    return "at-least-once" if ackers else "at-most-once"


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return percentile(ordered, 0.5) if ordered else math.nan


def run_heron(loaded: Any, options: Mapping[str, Any], workers: int, work_dir: Path,
              time_limit: float, progress: ProgressFn, name: str = "heron",
              path: str = "compiled") -> tuple[RunFigures, list[KindFigures]]:
    """The real heron processes, with every process's peak RSS and CPU time sampled, on
    the tuple path ``path`` ("compiled" or "pure": :func:`tuple_path_env`); the path
    the processes' first log lines name is checked against it.

    At-least-once, the spout instance's own per-second complete-latency metrics
    (``__complete-latency-p50``/``-p99``) are collected too, as a cross-check of the
    spout's view (``engine_complete_ms``: the median of the per-second values and the
    largest per-second p99)."""
    from engine.launch import Submission
    from engine.local_run import HeronLocalRun

    words = int(options["bench.words"])
    submission = Submission(project=str(PROJECT), name=loaded.compiled.plan.name,
                            options=dict(options), workers=workers)
    runner = HeronLocalRun(loaded, submission, working_dir=work_dir)
    sampler = ProcessSampler(work_dir / "pids")
    reported: dict[str, list[float]] = {"p50": [], "p99": []}
    seen_marks: set[tuple[str, str]] = set()

    def on_progress(stats: Mapping[str, Any], elapsed: float) -> None:
        for instance, values in runner.instances.items():
            if values.get("component") != SPOUT or "__complete-latency-p99" not in values:
                continue
            # one value per published second: skip a poll that saw the same publication
            mark = (instance, values.get("__ack-count", ""))
            if mark in seen_marks:
                continue
            seen_marks.add(mark)
            for q in ("p50", "p99"):
                try:
                    reported[q].append(float(values[f"__complete-latency-{q}"]))
                except (KeyError, ValueError):
                    pass
        progress(name, stats, elapsed)

    began = time.monotonic()
    with tuple_path_env(path):
        sampler.start()
        try:
            result = runner.run(time_limit=time_limit, on_progress=on_progress)
        finally:
            runner.stop()  # idempotent; run() already stopped unless start-up raised
            sampler.stop()
    wall = time.monotonic() - began
    variant = variant_of(loaded)
    figures = figures_from_capture(name, result.reason, words, wall, result.capture,
                                   error=result.error, log_dir=str(result.log_dir),
                                   final_counts=variant == "heron")
    figures.reliability = reliability_of(loaded)
    figures.engine, figures.variant, figures.path = "heron", variant, path
    figures.tuple_path = logged_tuple_path(result.log_dir)
    # the bolt also executed the spout tasks' end-of-stream markers
    executed = result.components[BOLT].executed - end_markers(loaded)
    if result.reason == "finished" and executed != figures.counted:
        figures.error = (f"the Topology Master's metrics say count_bolt executed {executed:,} "
                         f"words, its outputs say {figures.counted:,}")
    if figures.tuple_path != PATH_LABELS[path] and not figures.error:
        figures.error = (f"asked for the {PATH_LABELS[path]} tuple path, the processes' "
                         f"logs say {figures.tuple_path or 'nothing'}")
    if figures.reliability == "at-least-once":
        spout = result.components[SPOUT]
        figures.acked, figures.failed = spout.acked, spout.failed
        if reported["p99"]:
            figures.engine_complete_ms = {
                "p50_median": _median(reported["p50"]), "p99_median": _median(reported["p99"]),
                "p99_max": max(reported["p99"]), "seconds": len(reported["p99"])}
    return figures, sampler.figures()


def run_storm(loaded: Any, words: int, log_dir: Path, time_limit: float,
              progress: ProgressFn, name: str = "storm") -> RunFigures:
    """Storm's model in this process, the reference engine."""
    from compat.storm_api.local import LocalCluster, OutputCapture

    # Every word's final count is needed: no cap on the keys kept per stream.
    capture = OutputCapture(max_keys=sys.maxsize)
    cluster = LocalCluster(loaded.compiled, log_dir=log_dir, capture=capture)
    began = time.monotonic()
    result = cluster.run(time_limit=time_limit,
                         on_progress=lambda stats, elapsed: progress(name, stats, elapsed))
    wall = time.monotonic() - began
    variant = variant_of(loaded)
    figures = figures_from_capture(name, result.reason, words, wall, result.capture,
                                   error=result.error, log_dir=str(result.log_dir),
                                   final_counts=variant == "heron")
    figures.reliability = reliability_of(loaded)
    figures.engine, figures.variant = "storm", variant
    if figures.reliability == "at-least-once":
        spout = result.components[SPOUT]
        figures.acked, figures.failed = spout.acked, spout.failed
    return figures


# -- the backpressure scenario -------------------------------------------------------------

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


def run_backpressure(loaded: Any, options: Mapping[str, Any], workers: int, seconds: float,
                     work_dir: Path, time_limit: float,
                     status: Callable[[str], None]) -> BackpressureFigures:
    """The spout floods bolts that take ``bench.bolt_cost_us`` per word, for ``seconds``
    from its first word; then the topology is stopped (not drained: the point is what
    the run held while it ran, and the queues would take long to empty at the bolt's
    pace). The Topology Master's metrics are polled every half second."""
    from engine.launch import Submission
    from engine.local_run import HeronLocalRun
    from engine.stmgr.backpressure import watermarks

    high, low = watermarks(loaded.plan.config)
    cost = float(options["bench.bolt_cost_us"])
    tasks = loaded.plan.components[BOLT].parallelism
    submission = Submission(project=str(PROJECT), name=loaded.compiled.plan.name,
                            options=dict(options), workers=workers)
    runner = HeronLocalRun(loaded, submission, working_dir=work_dir)
    sampler = ProcessSampler(work_dir / "pids", series=True)
    samples: list[tuple[float, int, int]] = []
    reason, error = "finished", None
    first_word: float | None = None
    first_pause: float | None = None
    at_first_word: dict[str, tuple[int, int]] = {}
    began = time.monotonic()
    sampler.start()
    try:
        runner.start()
        while True:
            time.sleep(0.5)
            runner.poll_metrics()
            now = time.monotonic()
            error = runner.failure()
            if error:
                reason = "error"
                break
            stats = runner.snapshot()
            emitted, executed = stats[SPOUT].emitted, stats[BOLT].executed
            if first_word is None and emitted > 0:
                first_word = now  # to within a metrics interval (1 s)
                at_first_word = {
                    i: (_int_metric(v, "__time-spouts-paused-ms"),
                        _int_metric(v, "__time-spent-back-pressure-initiated-ms"))
                    for i, v in runner.instances.items() if v.get("component") == "__stmgr__"}
            if first_pause is None and any(
                    v.get("component") == "__stmgr__"
                    and (_int_metric(v, "__backpressure")
                         or _int_metric(v, "__time-spouts-paused-ms"))
                    for v in runner.instances.values()):
                first_pause = now
            if first_word is not None:
                samples.append((now, emitted, executed))
                elapsed = now - first_word
                status(f"backpressure {elapsed:5.1f}/{seconds:.0f}s  {SPOUT} emitted "
                       f"{emitted:,}, {BOLT} executed {executed:,}")
                if elapsed >= seconds:
                    break
            else:
                status(f"backpressure: starting {workers} containers "
                       f"({now - began:.1f}s)")
            if now - began >= time_limit:
                reason = "time limit"
                break
    except KeyboardInterrupt:
        reason = "interrupted"
    finally:
        try:
            runner.poll_metrics()
        except Exception:  # the figures so far are still worth showing
            log.debug("the last metrics poll failed", exc_info=True)
        end = time.monotonic()
        runner.stop(drain=0.0)
        sampler.stop()
    stmgrs = []
    for instance, values in sorted(runner.instances.items()):
        if values.get("component") != "__stmgr__":
            continue
        paused = _int_metric(values, "__time-spouts-paused-ms")
        initiated = _int_metric(values, "__time-spent-back-pressure-initiated-ms")
        paused_before, initiated_before = at_first_word.get(instance, (0, 0))
        stmgrs.append({
            "stmgr": instance, "spouts_paused_ms": paused, "initiated_ms": initiated,
            "paused_in_run_ms": paused - paused_before,
            "initiated_in_run_ms": initiated - initiated_before,
            "largest_queue_bytes_max": _int_metric(values, "__largest-queue-bytes-max"),
            "backpressure_now": _int_metric(values, "__backpressure")})
    figures = BackpressureFigures(
        reason=reason, seconds=(end - first_word) if first_word is not None else 0.0,
        bolt_cost_us=cost, bolt_tasks=tasks, bolt_capacity=tasks * 1e6 / cost,
        high_watermark_mb=high / 2**20, low_watermark_mb=low / 2**20,
        emitted=samples[-1][1] if samples else 0, executed=samples[-1][2] if samples else 0,
        stmgrs=stmgrs, processes=sampler.figures(), error=error,
        log_dir=str(runner.spec.log_dir) if runner.spec else None)
    if first_word is not None and end > first_word:
        third = (end - first_word) / 3
        bounds = [first_word + i * third for i in range(4)]
        for i, label in enumerate(("first third", "middle third", "last third")):
            start, stop = bounds[i], bounds[i + 1]
            figures.rates.append({"window": label, "start": start - first_word,
                                  "end": stop - first_word,
                                  **window_rates(samples, start, stop)})
            figures.rss_windows.append({"window": label, "start": start - first_word,
                                        "end": stop - first_word,
                                        "kinds": sampler.window_figures(start, stop)})
        # the queues fill within the first second or two (the spout emits several
        # hundred thousand words a second until the first pause): after that, what the
        # spout emits is what the bolts take, give or take the words in flight
        figures.rates.append({"window": "steady", "start": bounds[1] - first_word,
                              "end": bounds[3] - first_word,
                              **window_rates(samples, bounds[1], bounds[3])})
        # both are read from metrics published once a second, and a Stream Manager's
        # can arrive before the spout's first count: a pause seen first is at 0 s
        figures.first_pause = (max(0.0, first_pause - first_word)
                               if first_pause is not None else None)
    return figures


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
        return f"{goal['goal']} [{goal['run']}]: {shown} the bare loop; goal >= {goal['target']:g}x"
    return (f"{goal['goal']} [{goal['run']}, the spout floods]: p99 emit-to-count "
            f"{shown}; goal < {goal['target']:g} ms")


def _verdict(met: bool | None, paced: bool) -> tuple[str, str]:
    if met is None:
        return ("not judged: --rate paces the spout", "yellow") if paced else ("not judged", "yellow")
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
                          _result(run), style="bold" if run.run == "heron" else None)
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
                           ("CPU s", "right"), ("CPU µs/word", "right")))
    for k in kinds:
        procs.add_row(k.kind, str(k.processes), f"{k.peak_rss_mb:,.1f}",
                      f"{k.total_peak_rss_mb:,.1f}", f"{k.cpu_seconds:,.1f}",
                      f"{k.cpu_seconds * 1e6 / words:,.2f}")
    cpu = sum(k.cpu_seconds for k in kinds)
    procs.add_row("all", str(sum(k.processes for k in kinds)), "",
                  f"{sum(k.total_peak_rss_mb for k in kinds):,.1f}", f"{cpu:,.1f}",
                  f"{cpu * 1e6 / words:,.2f}", style="bold")
    return procs


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
            f"{bare.tuples_per_second:,.0f}/s)"))
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
                 bp: BackpressureFigures | None = None) -> dict[str, Any]:
    """The machine-readable figures (``--json``). ``kinds`` maps a heron run's name to
    its process figures."""
    path = goal_path(args.paths)
    bare = next((r for r in runs if r.engine == "bare loop"), None)
    heron = find_run(runs, "heron", "heron", path)
    streamparse = find_run(runs, "heron", "streamparse", path)
    checks = [c for c in (check, alo_check) if c is not None]

    def run_json(run: RunFigures) -> dict[str, Any]:
        out = run.as_json()
        out["over_bare_loop"] = _over(run, bare)
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

# -- command line --------------------------------------------------------------------------

def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python bench/wordcount.py",
        description="Word-count throughput, latency and memory on the heron and storm "
                    "engines, against a bare single-process loop and the same code through "
                    "the component API in one process; at-most-once, at-least-once "
                    "and under backpressure.")
    parser.add_argument("--words", type=int, default=None,
                        help=f"words the spout emits (default {DEFAULT_WORDS:,}; "
                             f"--quick: {QUICK_WORDS:,})")
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS,
                        help="heron containers (default %(default)s)")
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help="comma-separated engines to run: heron, storm (default "
                             "%(default)s); the bare loop and the component-API loop always run")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="comma-separated word counts to run at-most-once: heron "
                             "(Heron's own word count: the bolt keeps a map, emits nothing per "
                             "word, and its final counts at the end; the headline) and "
                             "streamparse (the bolt emits [word, count] per word) (default "
                             "%(default)s); at-least-once always runs Heron's")
    parser.add_argument("--paths", default=None,
                        help="comma-separated tuple paths for the heron engine's runs: "
                             "compiled, pure (HERON_PURE_PYTHON=1 in every heron process) "
                             "(default: both, or pure alone where no compiled build loads)")
    parser.add_argument("--reliability", default="both",
                        choices=[*RELIABILITIES, "both"],
                        help="at-most-once (acking off), at-least-once (message ids, acks, "
                             "max spout pending) or both (default)")
    parser.add_argument("--max-pending", type=int, default=DEFAULT_MAX_PENDING,
                        help="topology.max.spout.pending of the at-least-once runs "
                             "(default %(default)s)")
    parser.add_argument("--alo-storm-words", type=int, default=None,
                        help="words for storm's at-least-once run (default: a fifth of "
                             "--words; storm's acking path is slow)")
    parser.add_argument("--backpressure", type=float, default=None, metavar="SECS",
                        help=f"run the backpressure scenario on heron for SECS seconds "
                             f"(default {DEFAULT_BP_SECONDS:g}; --quick: {QUICK_BP_SECONDS:g}; "
                             "0: skip it)")
    parser.add_argument("--bolt-cost-us", type=float, default=DEFAULT_BOLT_COST_US,
                        help="the backpressure scenario's counting cost per word and task, "
                             "in microseconds (default %(default)s)")
    parser.add_argument("--watermark-mb", type=float, default=DEFAULT_BP_HIGH_MB,
                        help="the backpressure scenario's high watermark in MB; the low one "
                             "is half (default %(default)s; the engine's default is 8)")
    parser.add_argument("--plaintext-too", action="store_true",
                        help="Also run heron at-most-once with heron.network.plaintext "
                             "(peers authenticated, traffic not encrypted), to show what "
                             "CurveZMQ encryption costs.")
    parser.add_argument("--quick", action="store_true",
                        help=f"a small run ({QUICK_WORDS:,} words, a {QUICK_BP_SECONDS:g} s "
                             "backpressure scenario) that shows every figure")
    parser.add_argument("--json", action="store_true",
                        help="print the figures as JSON on stdout (status goes to stderr)")
    parser.add_argument("--json-file", type=Path, default=None, metavar="PATH",
                        help="also write the figures as JSON to PATH (the tables still print)")
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
    if args.max_pending < 1:
        parser.error(f"--max-pending must be at least 1, got {args.max_pending}")
    if args.alo_storm_words is None:
        args.alo_storm_words = max(1, args.words // 5)
    if args.alo_storm_words < 1:
        parser.error(f"--alo-storm-words must be at least 1, got {args.alo_storm_words}")
    if args.backpressure is None:
        args.backpressure = QUICK_BP_SECONDS if args.quick else DEFAULT_BP_SECONDS
    if args.backpressure < 0:
        parser.error(f"--backpressure must be positive (or 0: skip), got {args.backpressure}")
    if args.bolt_cost_us <= 0:
        parser.error(f"--bolt-cost-us must be positive, got {args.bolt_cost_us}")
    if args.watermark_mb <= 0:
        parser.error(f"--watermark-mb must be positive, got {args.watermark_mb}")
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        parser.error(f"unknown engine(s) {', '.join(unknown)}; choose from {', '.join(ENGINES)}")
    args.engines = [e for e in ENGINES if e in engines]  # always heron before storm
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown or not variants:
        parser.error(f"unknown variant(s) {', '.join(unknown) or '(none given)'}; choose from "
                     f"{', '.join(VARIANTS)}")
    args.variants = [v for v in VARIANTS if v in variants]  # the headline first
    args.paths_given = args.paths is not None
    paths = [p.strip() for p in (args.paths or ",".join(PATHS)).split(",") if p.strip()]
    unknown = [p for p in paths if p not in PATHS]
    if unknown or not paths:
        parser.error(f"unknown tuple path(s) {', '.join(unknown) or '(none given)'}; choose "
                     f"from {', '.join(PATHS)}")
    args.paths = [p for p in PATHS if p in paths]  # compiled before pure
    args.reliability = (list(RELIABILITIES) if args.reliability == "both"
                        else [args.reliability])
    if "heron" not in args.engines:
        args.backpressure = 0.0  # a heron scenario
    if args.time_limit is None:
        args.time_limit = 60.0 + args.words / 10_000
    return args


def check_groups(groups: Sequence[tuple[Sequence[RunFigures], int]]) -> CountCheck:
    """:func:`check_counts` for several sets of runs (each with its word count): ok when
    every set agrees within itself."""
    checks = [check_counts(group, words) for group, words in groups if len(group) > 1]
    if not checks:
        return CountCheck(False, "nothing to compare")
    failed = [c for c in checks if not c.ok]
    return CountCheck(not failed, "; ".join(c.detail for c in (failed or checks)))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; 0 when every run finished and the counts agree, else 1."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    out = Console(highlight=False, width=None if sys.stdout.isatty() else 140)
    status_console = Console(stderr=True) if args.json else out
    from engine.fastpath import selected

    status_console.print(selected().describe())
    if "heron" in args.engines:
        if "compiled" in args.paths and not args.paths_given and not compiled_available():
            args.paths = ["pure"]
            status_console.print("no usable compiled tuple path here: the heron runs use the "
                                 "pure-Python one alone (see docs/compiled-path.md)")
        status_console.print("heron runs on the tuple path(s): " + ", ".join(
            PATH_LABELS[p] + (" (HERON_PURE_PYTHON=1 in every heron process)" if p == "pure"
                              else "") for p in args.paths))
    own_dir = args.work_dir is None
    work_dir = Path(tempfile.mkdtemp(prefix="wordcount-bench-")) if own_dir else args.work_dir
    work_dir.mkdir(parents=True, exist_ok=True)

    options = bench_options(args.words, args.seed, args.rate)
    loaded = {variant: load(options, args.workers, VARIANTS[variant][1])
              for variant in args.variants}
    oracle_loaded = next(iter(loaded.values()))
    status = Status(args.words)
    runs: list[RunFigures] = []
    alo_runs: list[RunFigures] = []
    #: heron run name -> its processes' peak RSS and CPU time
    kinds: dict[str, list[KindFigures]] = {}
    groups: list[tuple[list[RunFigures], int]] = []
    alo_groups: list[tuple[list[RunFigures], int]] = []
    bp: BackpressureFigures | None = None
    amo = "at-most-once" in args.reliability
    alo = "at-least-once" in args.reliability

    def interrupted() -> bool:
        return any(r.reason == "interrupted" for r in (*runs, *alo_runs))

    def work(name: str) -> Path:
        """A run's directory: heron, heron-streamparse, heron-pure, heron-alo-pure..."""
        slug = name.replace(" (at-least-once)", "-alo").replace(", streamparse-style",
                                                                "-streamparse")
        return work_dir / slug.replace(", pure Python", "-pure").replace(" (plaintext)",
                                                                        "-plaintext")

    load_before = os.getloadavg()
    with Live(status, console=status_console, refresh_per_second=4, transient=True):
        status.phase(f"bare loop: picking and counting {args.words:,} words")
        bare = run_bare_loop(oracle_loaded, args.words, args.seed)
        runs.append(bare)
        if amo:
            for variant in args.variants:
                name = run_name("single process", variant)
                status.phase(f"{name}: {args.words:,} words through the spout and bolt code "
                             "with no engine")
                runs.append(run_ceiling(loaded[variant], args.words, name=name))
            if "heron" in args.engines:
                for path in args.paths:
                    for variant in args.variants:
                        if interrupted():
                            break
                        name = run_name("heron", variant, path)
                        status.phase(f"{name}: starting {args.workers} containers")
                        figures, kinds[name] = run_heron(
                            loaded[variant], options, args.workers, work(name),
                            args.time_limit, status.progress, name=name, path=path)
                        runs.append(figures)
                if args.plaintext_too and not interrupted():
                    # the same run with the Stream Managers' TCP traffic authenticated
                    # but not encrypted (heron.network.plaintext): the cost of CurveZMQ
                    plain_options = {**options, "heron.network.plaintext": True}
                    path, variant = goal_path(args.paths), args.variants[0]
                    name = run_name("heron (plaintext)", variant, path)
                    status.phase(f"{name}: starting {args.workers} containers")
                    plain, _ = run_heron(
                        load(plain_options, args.workers, VARIANTS[variant][1]), plain_options,
                        args.workers, work(name), args.time_limit, status.progress,
                        name=name, path=path)
                    plain.engine = name  # not the run the goals are judged on
                    runs.append(plain)
            if "storm" in args.engines:
                for variant in args.variants:
                    if interrupted():
                        break
                    name = run_name("storm", variant)
                    status.phase(f"{name}: starting")
                    runs.append(run_storm(loaded[variant], args.words, work(name),
                                          args.time_limit, status.progress, name=name))
            groups.append((runs, args.words))
        if alo and "heron" in args.engines:
            alo_options = {**options, "topology.max.spout.pending": args.max_pending}
            alo_loaded = load(alo_options, args.workers, TOPOLOGY_ALO)
            for path in args.paths:
                if interrupted():
                    break
                name = run_name("heron", "heron", path, alo=True)
                status.phase(f"{name}: starting {args.workers} containers")
                figures, kinds[name] = run_heron(alo_loaded, alo_options, args.workers,
                                                 work(name), args.time_limit, status.progress,
                                                 name=name, path=path)
                alo_runs.append(figures)
            alo_groups.append(([bare, *alo_runs], args.words))
        if alo and "storm" in args.engines and not interrupted():
            words = args.alo_storm_words
            storm_options = {**bench_options(words, args.seed, args.rate),
                             "topology.max.spout.pending": args.max_pending}
            storm_loaded = load(storm_options, args.workers, TOPOLOGY_ALO)
            # the same spout tasks and words as the at-most-once topology's
            oracle = (bare if words == args.words
                      else run_bare_loop(oracle_loaded, words, args.seed))
            status.words = words
            status.phase("storm at-least-once: starting")
            figures = run_storm(storm_loaded, words, work_dir / "storm-alo",
                                60.0 + words / 2_000, status.progress,
                                name="storm (at-least-once)")
            alo_runs.append(figures)
            alo_groups.append(([oracle, figures], words))
            status.words = args.words
        if args.backpressure > 0 and not interrupted():
            # a small vocabulary: the counting tasks' dicts are full at once, so what
            # their memory does over the run is what the engine buffers
            bp_options = {**bench_options(10**12, args.seed),
                          "bench.vocabulary": BP_VOCABULARY,
                          "bench.bolt_cost_us": args.bolt_cost_us,
                          "heron.streammgr.network.backpressure.highwatermark.mb":
                              args.watermark_mb,
                          "heron.streammgr.network.backpressure.lowwatermark.mb":
                              args.watermark_mb / 2}
            bp_loaded = load(bp_options, args.workers, TOPOLOGY_BP)
            with tuple_path_env(goal_path(args.paths)):
                bp = run_backpressure(bp_loaded, bp_options, args.workers, args.backpressure,
                                      work_dir / "heron-backpressure", 60.0 + args.backpressure,
                                      status.line)
    load_after = os.getloadavg()
    check = check_groups(groups) if groups else None
    alo_check = check_groups(alo_groups) if alo_groups else None
    all_runs = [*runs, *alo_runs] if (groups or alo_groups) else runs
    clean = (all(c is None or c.ok for c in (check, alo_check))
             and (check is not None or alo_check is not None)
             and all(r.reason == "finished" and not r.error for r in all_runs)
             and (bp is None or (bp.reason == "finished" and not bp.error)))
    keep = args.keep or not own_dir or not clean
    report = build_report(args, runs, kinds, check, load_before, load_after,
                          str(work_dir) if keep else None, alo_runs, alo_check, bp)
    if args.json_file is not None:
        args.json_file.write_text(json.dumps(report, indent=2, default=str) + "\n")
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        shown = CountCheck(report["counts_match"], report["counts_detail"])
        out.print(results_renderable(report, runs, kinds, shown, alo_runs, bp))
    if not keep:
        shutil.rmtree(work_dir, ignore_errors=True)
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
