"""The memory platform: Summingbird's ``Memory``, the oracle every other platform matches.

Single-threaded and deterministic: nodes are evaluated in the graph's topological order
(each once, however many consumers it has, as Memory memoises by node identity), a
merge is its left stream then its right one, and a summer merges one element at a time
in input order, emitting ``(key, (value before, delta))`` for every element. No
batching, no caching, no time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..functions import compile_step, require_pair, require_summable
from ..planning import ValidatedJob, validate
from ..producer import EXPANDING_KINDS, NodeKind, Producer
from .base import Platform, RunResult


@dataclass(frozen=True)
class MemoryPlan:
    """A validated job for the memory platform."""

    job: ValidatedJob

    @property
    def graph(self) -> Any:
        return self.job.graph


class MemoryPlatform(Platform[MemoryPlan]):
    """Runs a job in this process, one element at a time."""

    def plan(self, tail: Producer) -> MemoryPlan:
        return MemoryPlan(validate(tail, self.options))

    def run(self, plan: MemoryPlan) -> RunResult:
        graph = plan.job.graph
        remaining = {n.id: graph.fan_out(n) for n in graph}
        streams: dict[int, list[Any]] = {}
        try:
            for node in graph:
                streams[node.id] = self._evaluate(node, [streams[p.id] for p in node.data_parents])
                # Free a stream once every consumer has read it (the tail is kept).
                for parent in node.parents:
                    remaining[parent.id] -= 1
                    if remaining[parent.id] == 0 and parent is not graph.tail:
                        del streams[parent.id]
            return RunResult(list(streams[graph.tail.id]))
        finally:
            for node in graph.of_kind(NodeKind.WRITE):
                flush = getattr(node.sink, "flush", None)
                if callable(flush):
                    flush()

    @staticmethod
    def _evaluate(node: Producer, inputs: list[list[Any]]) -> list[Any]:
        kind = node.kind
        if kind is NodeKind.SOURCE:
            # a SOURCE node has its source
            return list(node.source.read())  # type: ignore[union-attr]
        if kind in EXPANDING_KINDS:
            step = compile_step(node)
            return [y for x in inputs[0] for y in step(x)]
        if kind is NodeKind.MERGE:
            return inputs[0] + inputs[1]
        if kind in (NodeKind.NAMED, NodeKind.ALSO):
            return inputs[0]
        if kind is NodeKind.WRITE:
            sink = node.sink
            for x in inputs[0]:
                sink(x)
            return inputs[0]
        if kind is NodeKind.LEFT_JOIN:
            label, get = node.describe(), node.service.get
            out = []
            for x in inputs[0]:
                key, value = require_pair(x, label)
                out.append((key, (value, get(key))))
            return out
        if kind is NodeKind.SUMMER:
            label, merge = node.describe(), node.store.merge
            out = []
            for x in inputs[0]:
                key, delta = require_summable(x, label)
                out.append((key, (merge(key, delta), delta)))
            return out
        raise AssertionError(f"unknown node kind {kind!r}")  # pragma: no cover
