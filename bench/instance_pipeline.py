"""The word count's hot paths wired through the heron engine's real classes in one
process, for ``bench/instance_paths.py``: a spout task's loop and collector, the Stream
Manager's routing (or acking), the counting tasks' batch execution and, at-least-once,
the acks back to the spout; ``measure`` times each path's CPU per word."""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bench.wordcount_figures import BOLT, SPOUT
from bench.wordcount_runs import local_hosting
from compat.storm_api.hosting import host_component
from engine.common.codec import selected_module
from engine.common.runtime.layout import build_context
from engine.common.runtime.stats import TaskStats
from engine.common.serialization import serializer_for_config
from engine.instance.bolt_loop import BoltLoop
from engine.instance.capture import InstanceCapture
from engine.instance.collector import InstanceCollector, StreamOut
from engine.instance.spout_loop import SpoutLoop
from engine.messages import tuple_pb2
from engine.stmgr.manager import CONTROL_BATCH
from engine.stmgr.routes import build_routes

RELIABILITIES = ("at-most-once", "at-least-once")

#: the Stream Manager's routing and acking this process runs (compiled where built)
AckTracker = selected_module("acking").AckTracker
rebatch, split_batch = (selected_module("routing").rebatch,
                        selected_module("routing").split_batch)


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
            TaskStats(SPOUT, spout_task), logger,
            lambda frames: self.spout_batches.append(frames[1]), 1024, None, acking=acking)
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
