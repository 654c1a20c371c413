"""Per-tuple CPU cost of the heron engine's hot paths, measured in one process.

``bench/wordcount.py`` says how fast the whole topology runs; this says where each
word's time goes, path by path, without processes, sockets or scheduling noise. It
drives the word-count benchmark's own spout and counting bolt through the engine's real
code: the spout instance's loop and collector (``SpoutLoop``, ``InstanceCollector``),
the Stream Manager's routing (``split_batch``/``rebatch``, or ``AckTracker`` under
acking), the bolt instance's batch execution (``BoltLoop``, with the leaf-stream capture)
and, at-least-once, the acks going back to the spout. Only the zmq hops between them
are left out.

    python bench/instance_paths.py                  # 300,000 words, both reliabilities
    python bench/instance_paths.py --tuples 1000000 --reliability at-least-once --json
    python bench/instance_paths.py --reliability at-most-once --floor
    python bench/instance_paths.py --reliability at-most-once --tuples 100000 --rounds 5

``--floor`` also times, one step at a time with no engine code around them, what every
word needs whatever the engine (pick the word, serialize the row, hash its key, decode
it, build the ``Tuple``, count, serialize and keep the result), against the CPU per word
heron may spend in all its processes to reach half the bare loop's rate on this
machine's cores: how much of the design goal's budget is left for engine code.

The **API overhead** section (on unless ``--no-api``) sets the component API's own
per-tuple cost beside the plain-Python reference loop's (``bench/reference_loop.py``),
in the same run, for the goal of issue 31 (ours, with Storm's record types, at most half
the reference loop's plain-object overhead). Ours is measured twice, on Heron's word
count (``WordSpout`` into ``HeronCountBolt``, at-most-once):

* **engine path**: the spout emit and bolt execute paths (as the first section times
  them), minus the floor's steps that are not the API: the user code's own work (pick
  the word, count it) and the engine's serialization and transport (serialize the row,
  hash its key, decode the rows). It is approximate both ways: what is left still holds
  engine work the floor does not list (the batch's protobuf encoding and parsing, the
  flushes), while the floor serializes the row and hashes its key apart where the
  engine does both in one pass;
* **no engine**: the same classes hosted through ``host_component`` in this process, the
  spout called through the spout loop's hook and each emit handed to the counting task
  its word's hash picks, through the bolt's ``tuple_runner`` (the ``Tuple`` the engines
  build, ``process``, auto-ack), minus the fused pick-and-count loop with the same
  picker: the API path and nothing else, as the reference loop measures its own. It
  also holds the benchmark spout's and bolt's own bookkeeping (the words left, the
  sampling countdown, the ``ts`` check), which the reference loop's classes do not have.

Each round times the reference loop's three modes, the no-engine path, the engine path
and the floor's steps, one after the other; each figure is its best round (``--rounds``,
3; ``--statistic median`` for the median). The verdict line says whether each of ours
is within the goal; it never changes the exit status, which only says whether every
word was counted.

Use it to see what a change to a hot path costs or saves; the figures are CPU
microseconds per word on this machine, and nothing here is a pass/fail threshold.

The tuple path (``engine.codec``) is the process's own choice, said in the first line:
the compiled one where it is built; run with ``HERON_PURE_PYTHON=1`` for the pure-Python
twin, to see the two side by side.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from collections import namedtuple
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Sequence

ROOT = Path(__file__).resolve().parents[1]
if __name__ == "__main__" and str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from bench.reference_loop import (STATISTICS, ReferenceFigures,  # noqa: E402
                                  picker_of, time_round)
from bench.wordcount_figures import (BOLT, SPOUT, TOPOLOGY, TOPOLOGY_ALO,  # noqa: E402
                                     TOPOLOGY_HERON, bench_options)
from bench.wordcount_runs import _BoltSink, load, local_hosting  # noqa: E402
from compat.storm_api.hosting import host_component  # noqa: E402
from compat.storm_api.tuple import Tuple  # noqa: E402
from engine.codec import selected, selected_module, tuple_codec  # noqa: E402
from engine.instance.bolt_loop import BoltLoop, tuple_runner  # noqa: E402
from engine.instance.capture import InstanceCapture  # noqa: E402
from engine.instance.collector import InstanceCollector, StreamOut  # noqa: E402
from engine.instance.spout_loop import SpoutLoop, spout_hooks  # noqa: E402
from engine.messages import tuple_pb2  # noqa: E402
from engine.runtime.layout import build_context  # noqa: E402
from engine.runtime.stats import TaskStats  # noqa: E402
from engine.serialization import MsgpackSerializer, serializer_for_config  # noqa: E402
from engine.stmgr.manager import CONTROL_BATCH  # noqa: E402
from engine.stmgr.routes import build_routes  # noqa: E402

RELIABILITIES = ("at-most-once", "at-least-once")

#: the Stream Manager's routing and acking this process runs (compiled where built)
AckTracker = selected_module("acking").AckTracker
rebatch, split_batch = selected_module("routing").rebatch, selected_module("routing").split_batch


@dataclass
class PathFigures:
    reliability: str
    words: int
    #: path name -> CPU seconds spent in it
    seconds: dict[str, float] = field(default_factory=dict)
    counted: int = 0

    def per_word_us(self) -> dict[str, float]:
        return {name: secs / self.words * 1e6 for name, secs in self.seconds.items()}

    def as_json(self) -> dict[str, Any]:
        per_word = self.per_word_us()
        return {"reliability": self.reliability, "words": self.words, "counted": self.counted,
                "us_per_word": {k: round(v, 3) for k, v in per_word.items()},
                "total_us_per_word": round(sum(per_word.values()), 3)}


class _Idle:
    """The executor pipe: nothing ever waits on it here."""

    def poll(self, *args: Any) -> int:
        return 0


class _Pipeline:
    """One spout task and the counting tasks, wired through the engine's classes."""

    def __init__(self, loaded: Any, capture_dir: Path, acking: bool, max_pending: int | None):
        plan = loaded.plan
        classes = loaded.compiled.component_classes
        layout, conf_of = local_hosting(loaded)
        logger = logging.getLogger("bench.paths")
        serializer = serializer_for_config(conf_of(SPOUT))

        def streams(component: Any) -> dict[str, Any]:
            return {stream.name: StreamOut.of(plan, component, stream, [])
                    for stream in component.outputs.values()}

        def hosted(name: str, task: int, collector: Any) -> Callable[[], Any]:
            conf = conf_of(name)
            context = build_context(plan, layout, name, task)
            return lambda: host_component(classes[name], dict(conf), context, collector, logger)

        spout_task = layout.tasks_by_component[SPOUT][0]
        self.spout_batches: list[bytes] = []
        self.spout_collector = InstanceCollector(
            SPOUT, spout_task, streams(plan.components[SPOUT]), serializer,
            TaskStats(SPOUT, spout_task), logger, lambda frames: self.spout_batches.append(frames[1]),
            1024, None, acking=acking)
        self.spout = SpoutLoop(_Idle(), SimpleNamespace(component=SPOUT, task_id=spout_task),
                               hosted(SPOUT, spout_task, self.spout_collector),
                               self.spout_collector, lambda: True, max_pending=max_pending,
                               timeout_secs=300.0)
        self.spout.hosted = self.spout.factory()
        self.spout.active = True
        self.bolts: dict[int, tuple[Any, Any, list]] = {}
        for task in layout.tasks_by_component[BOLT]:
            outs = streams(plan.components[BOLT])
            capture = InstanceCapture(capture_dir, BOLT, task,
                                      {n: s.fields for n, s in outs.items()}, serializer.loads,
                                      capture_all=False)
            sent: list = []
            collector = InstanceCollector(BOLT, task, outs, serializer, TaskStats(BOLT, task),
                                          logger, sent.append, 1024, capture, acking=acking)
            loop = BoltLoop(_Idle(), SimpleNamespace(component=BOLT, task_id=task),
                            hosted(BOLT, task, collector), collector, lambda: True,
                            loads=serializer.loads, loads_many=serializer.loads_many,
                            tick_secs=None, shell=False)
            loop.hosted = loop.factory()
            self.bolts[task] = (loop, collector, sent)
        tasks_by_component = {c: list(t) for c, t in layout.tasks_by_component.items()}
        #: the words' routes (the spout's default stream); other streams (the end-of-stream
        #: marker) are not words, and are not routed here
        self.routes = {(SPOUT, "default"):
                       build_routes(plan, tasks_by_component, set())[(SPOUT, "default")]}
        self.tracker = (AckTracker("stmgr-1", [spout_task], 300.0, lambda t: "stmgr-1")
                        if acking else None)

    def counted(self) -> int:
        return sum(loop.stats.executed for loop, _, _ in self.bolts.values())


def measure(loaded: Any, words: int, reliability: str, max_pending: int) -> PathFigures:
    """Run every word through the pipeline once, timing each path with the process's CPU
    clock."""
    acking = reliability == "at-least-once"
    figures = PathFigures(reliability, words)
    seconds = figures.seconds
    clock = time.process_time
    with tempfile.TemporaryDirectory(prefix="bench-paths-") as tmp:
        line = _Pipeline(loaded, Path(tmp), acking, max_pending if acking else None)
        spout, collector, tracker = line.spout, line.spout_collector, line.tracker
        names = ["spout emit", "Stream Manager routing", "bolt execute"]
        if acking:
            names = ["spout emit", "Stream Manager tracking", "bolt execute",
                     "Stream Manager acks", "spout acks"]
        for name in names:
            seconds[name] = 0.0
        hosted = spout.hosted
        while not (hosted.is_exhausted() and not collector.pending_roots):
            t0 = clock()
            spout._burst(hosted)
            collector.flush()
            t1 = clock()
            seconds["spout emit"] += t1 - t0
            parts: list[tuple[int, bytes]] = []
            for payload in line.spout_batches:
                batch = tuple_pb2.TupleBatch.FromString(payload)
                # as the Stream Manager routes (``_route_batch``): by the batch's own
                # stream, tracked only when it has tracked rows
                routes = line.routes.get((batch.stream.component_name, batch.stream.id))
                if routes is None:
                    continue
                if tracker is not None and len(batch.root_counts):
                    parts += [(t, p) for t, p, _ in tracker.route_tracked(batch, routes)]
                else:
                    parts += [(t, rebatch(batch, p) if isinstance(p, list) else p)
                              for t, p in split_batch(batch, payload, routes)]
            line.spout_batches.clear()
            t2 = clock()
            seconds[names[1]] += t2 - t1
            for task, payload in parts:
                loop, out, _ = line.bolts[task]
                loop._process_batch(payload)
                out.flush()
            t3 = clock()
            seconds["bolt execute"] += t3 - t2
            if tracker is None:
                continue
            for _, _, sent in line.bolts.values():
                for kind, payload in sent:
                    if kind == CONTROL_BATCH:
                        tracker.on_control(tuple_pb2.ControlBatch.FromString(payload))
                sent.clear()
            _, to_spouts = tracker.take_outgoing()
            encoded = [entries.encode(-1) for entries in to_spouts.values()]
            t4 = clock()
            seconds["Stream Manager acks"] += t4 - t3
            for payload in encoded:
                spout._settle(payload)
            seconds["spout acks"] += clock() - t4
        figures.counted = line.counted()
        for loop, _, _ in line.bolts.values():
            loop.hosted.close()
        hosted.close()
    return figures


@dataclass
class FloorFigures:
    """The per-word work word count needs in any engine built the way the design says
    (values serialized at the emitter, a key hash for fields grouping, decoded and made
    a ``Tuple`` at the bolt, the result row serialized and kept), each step timed alone
    in a tight loop with no engine code around it."""

    words: int
    #: the bare loop (pick a word, count it): words per second, the goal's yardstick
    bare_loop_rate: float
    cpus: int
    #: step -> CPU µs per word
    steps: dict[str, float] = field(default_factory=dict)

    @property
    def total_us(self) -> float:
        return sum(self.steps.values())

    @property
    def budget_us(self) -> float:
        """CPU µs per word, over every process, that heron at half the bare loop's rate
        may spend on this many cores."""
        return self.cpus / (0.5 * self.bare_loop_rate) * 1e6

    def as_json(self) -> dict[str, Any]:
        return {"words": self.words, "bare_loop_words_per_second": round(self.bare_loop_rate),
                "cpus": self.cpus, "us_per_word": {k: round(v, 3) for k, v in self.steps.items()},
                "total_us_per_word": round(self.total_us, 3),
                "budget_us_per_word_for_half_the_bare_loop": round(self.budget_us, 3)}


def measure_floor(loaded: Any, words: int, seed: int) -> FloorFigures:
    """Time each step word count cannot do without, with the engine's own libraries
    (its serializer, CRC-32 of the packed key, the ``Tuple`` type), on the benchmark's
    words: what is left of a word's cost if every line of engine code cost nothing."""
    spout_module = sys.modules[loaded.compiled.component_classes[SPOUT].__module__]
    vocabulary = spout_module.vocabulary(int(loaded.plan.config["bench.vocabulary"]))
    choice = spout_module.task_rng(seed, 0).choice
    clock = time.process_time
    get_bare: dict[str, int] = {}
    bare_get = get_bare.get
    began = clock()
    for _ in range(words):  # the bare loop, as bench/wordcount.py runs it (on the CPU
        word = choice(vocabulary)  # clock here, as the steps below are)
        get_bare[word] = bare_get(word, 0) + 1
    bare_rate = words / max(clock() - began, 1e-9)

    serializer = MsgpackSerializer()
    # the tuple path's own functions, as the engine calls them (compiled or pure)
    dumps, loads_many = serializer.dumps, serializer.loads_many
    key_hash, make_tuples = tuple_codec.key_hash, tuple_codec.make_tuples
    values_type = namedtuple("Word_SpoutDefaultTuple", ["word", "ts"])
    counts: dict[str, int] = {}
    get = counts.get
    latest: dict[str, int] = {}
    names = ["pick the word (the spout's own choice)", "serialize the row",
             "hash the grouping key (CRC-32 of the packed word)",
             "decode the rows (a batch at a time)",
             "build the Tuple (string id, namedtuple values)", "count the word",
             "serialize the (word, count) row", "keep the latest count (the leaf stream's result)"]
    seconds = dict.fromkeys(names, 0.0)
    done = 0
    # a batch at a time, as the engine moves words: nothing piles up for the garbage
    # collector to walk, which would charge the later steps for the earlier ones' objects
    while done < words:
        n = min(1024, words - done)
        t0 = clock()
        picked = [choice(vocabulary) for _ in range(n)]
        t1 = clock()
        rows = [dumps([word, 0]) for word in picked]
        t2 = clock()
        hashes = [key_hash(word) for word in picked]
        t3 = clock()
        decoded = loads_many(rows)
        t4 = clock()
        tuples = make_tuples(done, decoded, SPOUT, "default", 1, values_type, Tuple)[0]
        t5 = clock()
        counted = []
        for tup in tuples:
            word = tup.values.word
            c = get(word, 0) + 1
            counts[word] = c
            counted.append((word, c))
        t6 = clock()
        results = [dumps([word, c]) for word, c in counted]
        t7 = clock()
        for word, c in counted:
            latest[word] = c
        t8 = clock()
        for name, took in zip(names, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5,
                                      t7 - t6, t8 - t7)):
            seconds[name] += took
        done += n
        del hashes, results
    steps = {name: secs / words * 1e6 for name, secs in seconds.items()}
    return FloorFigures(words, bare_rate, os.cpu_count() or 1, steps)


def render_floor(console: Console, floor: FloorFigures) -> None:
    table = Table(title=f"the floor: work every word needs, no engine code ({floor.words:,} words)")
    table.add_column("step")
    table.add_column("CPU µs per word", justify="right")
    for name, us in floor.steps.items():
        table.add_row(name, f"{us:.2f}")
    table.add_row("all", f"{floor.total_us:.2f}", style="bold")
    console.print(table)
    console.print(f"heron at 0.5x the bare loop ({floor.bare_loop_rate:,.0f} words/s here) may "
                  f"spend {floor.budget_us:.2f} µs of CPU per word over all its processes on "
                  f"{floor.cpus} cores; these steps alone take {floor.total_us:.2f} µs "
                  f"({floor.total_us / floor.budget_us:.0%} of it), before any code of the "
                  "engine's or of the component API runs")


# -- the API overhead per tuple (issue 31) ------------------------------------------------

#: the goal: our API overhead per tuple (Storm's record types) at most this share of the
#: plain-Python reference loop's plain-object overhead, in the same run
API_GOAL_OVER_PLAIN = 0.5
#: the floor's steps that are not the component API, subtracted from the engine path's
#: spout emit + bolt execute: the user code's own work (the spout picks the word, the
#: bolt counts it) and the engine's serialization and transport (by the floor's names'
#: beginnings; "build the Tuple" is the API's, and Heron's word count emits no result row)
NON_API_STEPS = ("pick the word", "serialize the row", "hash the grouping key",
                 "decode the rows", "count the word")


class _Deliver(_BoltSink):
    """The no-engine figure's collector for the spout: each emit is handed straight to a
    counting task as the engines hand it over, through the bolt's per-tuple entry
    (``engine.instance.bolt_loop.tuple_runner``: build the ``Tuple``, ``process``,
    auto-ack): a word to the task the hash of the word picks (fields grouping, as the
    reference loop does it), any other subscribed stream (the end-of-stream marker) to
    every task (all grouping). The tuple id is None, as in the reference loop."""

    #: ``sync`` does nothing: the engine's spout loop calls the spout's own
    #: ``next_tuple`` with no wrapper (``HostedSpout.direct_hooks``)
    syncs_nothing = True

    def __init__(self, runs: dict[str, list[Callable[[Any, Any], None]]]) -> None:
        super().__init__()
        self._words = runs["default"]
        self._tasks = len(self._words)
        self._others = {stream: r for stream, r in runs.items() if stream != "default"}

    def emit(self, values: Any, stream: str | None, anchors: Any, direct_task: Any,
             need_task_ids: bool, tup_id: Any) -> None:
        if stream is None or stream == "default":
            self._words[hash(values[0]) % self._tasks](None, values)
            return
        for run in self._others.get(stream, ()):
            run(None, values)


def time_hosted(loaded: Any, words: int,
                clock: Callable[[], float] = time.process_time) -> tuple[float, dict[str, int]]:
    """The component API with no engine: the topology's spout and counting bolt classes
    hosted as the engines host them (``host_component``), the spout called through the
    engine's per-tuple hook (``spout_hooks``) and each emit handed to a counting task's
    ``tuple_runner`` (:class:`_Deliver`). Returns the CPU seconds of ``words`` calls of
    ``next_tuple`` (one word each) and the counting tasks' counts, merged."""
    plan = loaded.plan
    classes = loaded.compiled.component_classes
    layout, conf = local_hosting(loaded)
    logger = logging.getLogger("bench.paths.hosted")
    spout_task = layout.tasks_by_component[SPOUT][0]
    bolts = [host_component(classes[BOLT], conf(BOLT), build_context(plan, layout, BOLT, task),
                            _BoltSink(), logger)
             for task in layout.tasks_by_component[BOLT]]
    subscribed = [i.stream for i in plan.components[BOLT].inputs if i.source == SPOUT]
    feeder = _Deliver({stream: [tuple_runner(bolt, SPOUT, stream, spout_task) for bolt in bolts]
                       for stream in subscribed})
    spout = host_component(classes[SPOUT], conf(SPOUT),
                           build_context(plan, layout, SPOUT, spout_task), feeder, logger)
    try:
        next_tuple = spout_hooks(spout).next_tuple
        began = clock()
        for _ in range(words):
            next_tuple()
        took = clock() - began
        while not spout.is_exhausted():  # the end-of-stream marker, untimed
            next_tuple()
        counts: dict[str, int] = {}
        for bolt in bolts:
            counts.update(bolt.component.counts)
    finally:
        spout.close()
        for bolt in bolts:
            bolt.close()
    return took, counts


@dataclass
class ApiFigures:
    """The API overhead per tuple, ours and the reference loop's, from rounds run one
    after the other in one process: each round times the reference loop's three modes,
    our API path with no engine, the engine path (Heron's word count at-most-once) and
    the floor's steps. Each figure is its best round (or the median)."""

    words: int
    reference: ReferenceFigures
    #: "hosted", "spout emit", "bolt execute" -> CPU seconds of each round
    seconds: dict[str, list[float]] = field(default_factory=dict)
    #: the floor's steps -> CPU µs per word of each round
    steps: dict[str, list[float]] = field(default_factory=dict)
    #: what went wrong with the counts (empty: the hosted path counted what the fused
    #: loop counted, and the engine path executed every word, in every round)
    count_errors: list[str] = field(default_factory=list)

    @property
    def rounds(self) -> int:
        return self.reference.rounds

    @property
    def statistic(self) -> str:
        return self.reference.statistic

    def _pick(self, values: Sequence[float]) -> float:
        return min(values) if self.statistic == "best" else statistics.median(values)

    def us(self, name: str) -> float:
        """CPU µs per word of ``hosted``, ``spout emit`` or ``bolt execute``."""
        return self._pick(self.seconds[name]) / self.words * 1e6

    def step_us(self) -> dict[str, float]:
        return {name: self._pick(values) for name, values in self.steps.items()}

    def non_api_us(self) -> dict[str, float]:
        """The floor's steps subtracted from the engine path (:data:`NON_API_STEPS`)."""
        steps = self.step_us()
        return {name: us for name, us in steps.items() if name.startswith(NON_API_STEPS)}

    def engine_path_us(self) -> float:
        return self.us("spout emit") + self.us("bolt execute")

    def engine_overhead_us(self) -> float:
        return self.engine_path_us() - sum(self.non_api_us().values())

    def hosted_overhead_us(self) -> float:
        return self.us("hosted") - self.reference.us_per_word()["fused"]

    def ratios(self, overhead: float) -> dict[str, float | None]:
        ref = self.reference.overhead_us()
        return {"over_plain": overhead / ref["plain"] if ref["plain"] > 0 else None,
                "over_named": overhead / ref["named"] if ref["named"] > 0 else None}

    def goal_met(self, overhead: float) -> bool | None:
        over = self.ratios(overhead)["over_plain"]
        return None if over is None else over <= API_GOAL_OVER_PLAIN

    @property
    def counts_ok(self) -> bool:
        return self.reference.counts_match and not self.count_errors

    def as_json(self) -> dict[str, Any]:
        ref = self.reference
        engine, hosted = self.engine_overhead_us(), self.hosted_overhead_us()

        def r(value: float | None) -> float | None:
            return None if value is None else round(value, 4)
        return {
            "words": self.words, "rounds": self.rounds, "statistic": self.statistic,
            "clock": "CPU (time.process_time)",
            "goal": {"our_overhead_over_plain_at_most": API_GOAL_OVER_PLAIN,
                     "engine_path_met": self.goal_met(engine),
                     "no_engine_met": self.goal_met(hosted)},
            "reference": ref.as_json(),
            "no_engine": {"us_per_word": r(self.us("hosted")),
                          "fused_us_per_word": r(ref.us_per_word()["fused"]),
                          "overhead_us_per_word": r(hosted),
                          **{k: r(v) for k, v in self.ratios(hosted).items()}},
            "engine_path": {"us_per_word": {"spout emit": r(self.us("spout emit")),
                                            "bolt execute": r(self.us("bolt execute"))},
                            "non_api_us_per_word": {k: r(v) for k, v in self.non_api_us().items()},
                            "overhead_us_per_word": r(engine),
                            **{k: r(v) for k, v in self.ratios(engine).items()}},
            "seconds_per_round": {k: [round(x, 5) for x in v] for k, v in self.seconds.items()},
            "counts_match": self.counts_ok, "count_errors": list(self.count_errors)}


def measure_api(words: int, seed: int, rounds: int, statistic: str = "best",
                clock: Callable[[], float] = time.process_time) -> ApiFigures:
    """The API overhead per tuple of our path, twice, beside the reference loop's, in
    ``rounds`` rounds (see :class:`ApiFigures`), on Heron's word count (the spout
    ``WordSpout``, the counting bolt ``HeronCountBolt``, which emits nothing per word)."""
    loaded = load(bench_options(words, seed), 2, topology=TOPOLOGY_HERON)
    picker = picker_of(loaded, seed)
    figures = ApiFigures(words, ReferenceFigures(words, seed, statistic))
    for number in range(1, rounds + 1):
        fused = time_round(figures.reference, picker, clock)
        took, counts = time_hosted(loaded, words, clock)
        figures.seconds.setdefault("hosted", []).append(took)
        if counts != fused:
            figures.count_errors.append(f"round {number}: the no-engine API path counted "
                                        f"{sum(counts.values()):,} words, {len(counts):,} "
                                        "distinct, unlike the fused loop")
        del counts, fused
        path = measure(loaded, words, "at-most-once", 1)
        for name in ("spout emit", "bolt execute"):
            figures.seconds.setdefault(name, []).append(path.seconds[name])
        if path.counted != words:
            figures.count_errors.append(f"round {number}: the engine path executed "
                                        f"{path.counted:,} of {words:,} words")
        floor = measure_floor(loaded, words, seed)
        for name, us in floor.steps.items():
            figures.steps.setdefault(name, []).append(us)
    missing = [p for p in NON_API_STEPS if not any(n.startswith(p) for n in figures.steps)]
    if missing:  # the floor's steps were renamed: say so rather than subtract too little
        raise RuntimeError(f"the floor has no step named {', '.join(map(repr, missing))}")
    return figures


def api_lines(api: ApiFigures) -> list[str]:
    """The verdict: ours against the goal, figures only."""
    plain = api.reference.overhead_us()["plain"]
    parts = []
    for label, overhead in (("the engine path", api.engine_overhead_us()),
                            ("with no engine", api.hosted_overhead_us())):
        over = api.ratios(overhead)["over_plain"]
        parts.append(f"{label} {overhead:.2f} µs ("
                     + ("-" if over is None else f"{over:.2f}x") + ")")
    met = [api.goal_met(o) for o in (api.engine_overhead_us(), api.hosted_overhead_us())]
    verdict = ("not judged: the reference loop's overhead did not come out positive (too "
               "few words for the clock?)" if None in met
               else "met by both" if all(met) else "met by the no-engine path only" if met[1]
               else "met by the engine path only" if met[0] else "not met")
    lines = [f"goal (issue 31): our API overhead per tuple, with Storm's record types, at most "
             f"{API_GOAL_OVER_PLAIN:g}x the plain-object reference loop's ({plain:.2f} µs here, "
             f"so {API_GOAL_OVER_PLAIN * plain:.2f} µs): " + "; ".join(parts) + f": {verdict} "
             "(figures only: nothing here is pass/fail)"]
    if not api.counts_ok:
        lines.append("✗ counts: " + "; ".join(
            api.count_errors or ["a reference mode counted unlike the fused loop"]))
    else:
        lines.append(f"✓ counts: in every round the reference modes and the no-engine path "
                     f"counted what the fused loop counted, and the engine path executed all "
                     f"{api.words:,} words")
    return lines


def render_api(console: Console, api: ApiFigures) -> None:
    ref_us, ref_over = api.reference.us_per_word(), api.reference.overhead_us()
    label = f"best of {api.rounds}" if api.statistic == "best" else f"median of {api.rounds}"
    table = Table(title=f"API overhead per tuple, CPU µs per word ({api.words:,} words, "
                        f"{label} rounds in this run)")
    for name, justify in (("path", "left"), ("µs/word", "right"), ("minus", "right"),
                          ("API overhead", "right"), ("x plain", "right"),
                          ("x named", "right")):
        table.add_column(name, justify=justify, no_wrap=name != "path")

    def ratio(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"
    hosted, engine = api.hosted_overhead_us(), api.engine_overhead_us()
    rows = (("reference: plain objects", ref_us["plain"], ref_us["fused"], ref_over["plain"]),
            ("reference: Storm's records", ref_us["named"], ref_us["fused"], ref_over["named"]),
            ("ours, no engine", api.us("hosted"), ref_us["fused"], hosted),
            ("ours, engine path", api.engine_path_us(), sum(api.non_api_us().values()), engine))
    for name, us, minus, overhead in rows:
        r = api.ratios(overhead)
        table.add_row(name, f"{us:.2f}", f"{minus:.2f}", f"{overhead:.2f}",
                      ratio(r["over_plain"]), ratio(r["over_named"]),
                      style="bold" if name.startswith("ours") else None)
    console.print(table)
    for line in (
            "reference: the plain-Python loop (bench/reference_loop.py), spout.next_tuple -> "
            "collector.emit -> Tuple -> hash of the word -> bolt.execute -> count, with a "
            "slotted Tuple (plain) or a Tuple namedtuple of a values namedtuple (Storm's "
            "records); minus its fused pick-and-count loop",
            "ours, no engine: WordSpout and HeronCountBolt through host_component, the spout "
            "loop's hook and the bolt's tuple_runner, each word handed to the task its hash "
            "picks; minus the same fused loop",
            f"ours, engine path: the engine's spout emit {api.us('spout emit'):.2f} and bolt "
            f"execute {api.us('bolt execute'):.2f} paths (as timed above, here on Heron's word "
            "count, at-most-once); minus the floor's " + ", ".join(f"{name.split(' (')[0]} {us:.2f}"
                                  for name, us in api.non_api_us().items())):
        console.print(line, style="dim")
    for line in api_lines(api):
        console.print(line)


def render(console: Console, runs: Sequence[PathFigures]) -> None:
    table = Table(title=f"heron hot paths in one process: CPU µs per word "
                        f"({runs[0].words:,} words, the word-count benchmark's classes)")
    table.add_column("path")
    for run in runs:
        table.add_column(run.reliability, justify="right")
    names: list[str] = []
    for run in runs:
        names += [n for n in run.seconds if n not in names]
    for name in names:
        cells = [f"{run.per_word_us()[name]:.2f}" if name in run.seconds else "-" for run in runs]
        table.add_row(name, *cells)
    table.add_row("all", *[f"{sum(run.per_word_us().values()):.2f}" for run in runs],
                  style="bold")
    console.print(table)
    for run in runs:
        ok = "✓" if run.counted == run.words else "✗"
        console.print(f"{ok} {run.reliability}: the counting tasks executed {run.counted:,} "
                      f"of {run.words:,} words")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/instance_paths.py",
        description="CPU cost per word of the heron engine's spout, Stream Manager and bolt "
                    "paths, in one process")
    parser.add_argument("--tuples", type=int, default=300_000, help="words (default 300,000)")
    parser.add_argument("--reliability", choices=[*RELIABILITIES, "both"], default="both")
    parser.add_argument("--max-pending", type=int, default=1024,
                        help="topology.max.spout.pending at-least-once (default 1,024)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--floor", action="store_true",
                        help="also time the steps every word needs with no engine code "
                             "(the floor under any engine of this design)")
    parser.add_argument("--no-api", dest="api", action="store_false",
                        help="skip the API overhead section (our per-tuple API path, with and "
                             "without the engine, against the plain-Python reference loop)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of the API overhead section (default 3)")
    parser.add_argument("--statistic", choices=STATISTICS, default="best",
                        help="the API overhead section's figure of each path: its best round "
                             "(default) or the median")
    parser.add_argument("--json", action="store_true", help="figures as JSON on stdout")
    args = parser.parse_args(argv)
    if args.tuples < 1 or args.max_pending < 1 or args.rounds < 1:
        parser.error("--tuples, --max-pending and --rounds must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    reliabilities = RELIABILITIES if args.reliability == "both" else (args.reliability,)
    console = Console(stderr=args.json)
    path = selected()
    console.print(path.describe())
    runs = []
    for reliability in reliabilities:
        topology = TOPOLOGY_ALO if reliability == "at-least-once" else TOPOLOGY
        with console.status(f"{reliability}: {args.tuples:,} words through the hot paths"):
            loaded = load(bench_options(args.tuples, args.seed), 2, topology=topology)
            runs.append(measure(loaded, args.tuples, reliability, args.max_pending))
    floor = None
    if args.floor:
        with console.status(f"the floor: {args.tuples:,} words, one step at a time"):
            floor = measure_floor(load(bench_options(args.tuples, args.seed), 2), args.tuples,
                                  args.seed)
    api = None
    if args.api:
        with console.status(f"API overhead: {args.rounds} rounds of {args.tuples:,} words, "
                            "ours and the reference loop's"):
            api = measure_api(args.tuples, args.seed, args.rounds, args.statistic)
    if args.json:
        out: dict[str, Any] = {"tuple_path": "compiled" if path.compiled else "pure Python",
                               "runs": [run.as_json() for run in runs]}
        if floor is not None:
            out["floor"] = floor.as_json()
        if api is not None:
            out["api_overhead"] = api.as_json()
        print(json.dumps(out, indent=2))
    else:
        render(console, runs)
        if floor is not None:
            render_floor(console, floor)
        if api is not None:
            render_api(console, api)
        console.print(f"machine: {os.cpu_count()} CPUs, load average "
                      + ", ".join(f"{x:.2f}" for x in os.getloadavg()), style="dim")
    counted = all(run.counted == run.words for run in runs)
    return 0 if counted and (api is None or api.counts_ok) else 1


if __name__ == "__main__":
    sys.exit(main())
