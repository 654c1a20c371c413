"""The word-count benchmark's runs: the bare loop, the component-API loop in one process,
heron (real processes, on either tuple path), storm (in this process) and the
backpressure scenario, each returning its figures (``bench/wordcount_figures.py``).
``bench/wordcount.py`` describes the benchmark and runs it."""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.wordcount_figures import (
    BOLT,
    END_STREAM,
    PATH_LABELS,
    PROJECT,
    SPOUT,
    TOPOLOGY,
    VARIANTS,
    BackpressureFigures,
    KindFigures,
    ProcessSampler,
    RunFigures,
    _int_metric,
    figures_from_capture,
    figures_from_leaves,
    log,
    percentile,
    steady_cpu,
    window_rates,
)
from compat.storm_api.config import with_defaults
from compat.storm_api.hosting import host_component
from engine.common.codec.selection import PURE_ENV, TuplePathError, select
from engine.common.launch import Submission
from engine.common.local_run import HeronLocalRun
from engine.common.runtime.layout import assign_tasks, build_context
from engine.common.submission import load_topology
from engine.config.backpressure import watermarks
from engine.storm import LocalCluster, OutputCapture

# -- the runs ------------------------------------------------------------------------------

ProgressFn = Callable[[str, Mapping[str, Any], float], None]


def load(options: Mapping[str, Any], workers: int, topology: str = TOPOLOGY) -> Any:
    """Load and compile one of the bench project's topologies with these options."""
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
    """The environment the heron processes of a run inherit (engine.common.process.spawn passes
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
    process log (engine.common.codec.log_tuple_path): "compiled", "pure Python", or "mixed:
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
    words = int(options["bench.words"])
    submission = Submission(project=str(PROJECT), name=loaded.compiled.plan.name,
                            options=dict(options), workers=workers)
    runner = HeronLocalRun(loaded, submission, working_dir=work_dir)
    sampler = ProcessSampler(work_dir / "pids")
    reported: dict[str, list[float]] = {"p50": [], "p99": []}
    seen_marks: set[tuple[str, str]] = set()

    #: (words the counting bolt executed, CPU seconds by process kind) as the run went
    cpu_marks: list[tuple[int, dict[str, float]]] = []

    def on_progress(stats: Mapping[str, Any], elapsed: float) -> None:
        counting = stats.get(BOLT)
        if counting is not None:
            cpu_marks.append((counting.executed, sampler.cpu_by_kind()))
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
    kinds = sampler.figures()
    steady = steady_cpu(cpu_marks, words)
    for kind in kinds:
        kind.steady_us_per_word = steady.get(kind.kind)
    return figures, kinds


def run_storm(loaded: Any, words: int, log_dir: Path, time_limit: float,
              progress: ProgressFn, name: str = "storm") -> RunFigures:
    """Storm's model in this process, the reference engine."""
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

def run_backpressure(loaded: Any, options: Mapping[str, Any], workers: int, seconds: float,
                     work_dir: Path, time_limit: float,
                     status: Callable[[str], None]) -> BackpressureFigures:
    """The spout floods bolts that take ``bench.bolt_cost_us`` per word, for ``seconds``
    from its first word; then the topology is stopped (not drained: the point is what
    the run held while it ran, and the queues would take long to empty at the bolt's
    pace). The Topology Master's metrics are polled every half second."""
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
