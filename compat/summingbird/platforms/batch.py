"""The batch platform: the same job on PySpark (the removed ``summingbird-spark``, revived).

Each node becomes an RDD of ``(order, element)``. ``order`` is a tuple that sorts
elements exactly as the memory platform would produce them: the source position, then
the position inside a ``flat_map``'s output, with ``(0,)``/``(1,)`` prefixed on the two
sides of a merge. It costs a few bytes per element and buys two things:

* a non-commutative semigroup (``First``, ``Last``, string concatenation) gives the
  memory platform's result: values are grouped per key and summed in order, as
  Scalding's ``NonCommutative`` path sorts by time. A commutative one is summed with
  ``reduceByKey`` and its semigroup, combining map-side;
* sinks receive elements in the memory platform's order.

Summers and sinks run on the driver: the reduced deltas (one per key) are collected and
merged into the store with one ``multi_merge``, which returns the values just before the
merge, so downstream nodes see ``(key, (previous, batch delta))`` once per key (the
batch granularity of Summingbird's contract). Sinks are called on the driver with the
written elements. Services travel to the executors and are asked a chunk of keys at a
time. Functions travel with cloudpickle; job code that workers cannot import is shipped
by value for the duration of the run (see ``planning.py``).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from compat.spark_session import DEFAULT_MASTER, spark_session

from ..errors import JobRuntimeError
from ..functions import Step, compile_step, join_partition, require_summable
from ..options import OptionsLike, SourceParallelism, SummerParallelism, resolve
from ..planning import ValidatedJob, validate
from ..producer import EXPANDING_KINDS, NodeKind, Producer
from ..sources import IterableSource, JsonLinesSource, Source
from .base import Platform, RunResult

if TYPE_CHECKING:  # pragma: no cover
    from pyspark import RDD
    from pyspark.sql import SparkSession

Order = tuple[int, ...]


@dataclass(frozen=True)
class BatchPlan:
    """A validated job and the partition count chosen for each source and summer."""

    job: ValidatedJob
    #: node id -> partitions from the options (``None``: Spark's default parallelism).
    partitions: Mapping[int, int | None] = field(default_factory=dict)

    @property
    def graph(self) -> Any:
        return self.job.graph


# -- functions sent to executors (module-level classes: they pickle by reference) -------

class _Ordered:
    """Apply a step to ``(order, x)``; several outputs get sub-positions."""

    def __init__(self, step: Step) -> None:
        self.step = step

    def __call__(self, item: tuple[Order, Any]) -> list[tuple[Order, Any]]:
        order, x = item
        outputs = self.step(x)
        if len(outputs) == 1:
            return [(order, outputs[0])]
        return [(order + (j,), y) for j, y in enumerate(outputs)]


class _Side:
    """Prefix the order of one side of a merge (left before right, as in memory)."""

    def __init__(self, side: int) -> None:
        self.side = side

    def __call__(self, item: tuple[Order, Any]) -> tuple[Order, Any]:
        return ((self.side,) + item[0], item[1])


class _ParseLine:
    def __init__(self, source: JsonLinesSource) -> None:
        self.source = source

    def __call__(self, item: tuple[str, int]) -> tuple[Order, Any]:
        line, index = item
        return ((index,), self.source.parse(line, index + 1))


def _non_blank(item: tuple[str, int]) -> bool:
    return bool(item[0].strip())


class _Join:
    def __init__(self, service: Any, label: str) -> None:
        self.service = service
        self.label = label

    def __call__(self, items: Iterable[tuple[Order, Any]]) -> Iterator[tuple[Order, Any]]:
        return join_partition(self.service, self.label, items)


class _SummerInput:
    def __init__(self, label: str) -> None:
        self.label = label

    def __call__(self, item: tuple[Order, Any]) -> tuple[Any, tuple[Order, Any]]:
        order, x = item
        key, delta = require_summable(x, self.label)
        return (key, (order, delta))


class _CombineCommutative:
    """``reduceByKey`` function: any grouping is fine, keep the latest order."""

    def __init__(self, semigroup: Any) -> None:
        self.semigroup = semigroup

    def __call__(self, a: tuple[Order, Any], b: tuple[Order, Any]) -> tuple[Order, Any]:
        return (max(a[0], b[0]), self.semigroup.plus(a[1], b[1]))


class _SumInOrder:
    """Non-commutative semigroups: sum one key's deltas in the memory platform's order."""

    def __init__(self, semigroup: Any) -> None:
        self.semigroup = semigroup

    def __call__(self, values: Iterable[tuple[Order, Any]]) -> tuple[Order, Any]:
        ordered = sorted(values, key=lambda v: v[0])
        return (ordered[-1][0], self.semigroup.sum_option(d for _, d in ordered))


def _first(item: tuple[Order, Any]) -> Order:
    return item[0]


# -- errors from executors ----------------------------------------------------------------

_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception)): (.*)$")


def _python_error(exc: BaseException) -> str | None:
    """The last Python exception line (and its notes) of a worker traceback in ``exc``."""
    text = str(exc)
    lines = text.splitlines()
    for i in range(len(lines) - 1, -1, -1):
        match = _EXCEPTION_LINE.match(lines[i].strip())
        if match and "py4j" not in match.group(1) and "org.apache" not in match.group(1):
            notes = [ln.strip() for ln in lines[i + 1:i + 4]
                     if ln.strip().startswith("in Summingbird node")]
            name = match.group(1).rsplit(".", 1)[-1]
            where = f" ({notes[0]})" if notes else ""
            return f"{name}: {match.group(2)}{where}"
    return None


class BatchPlatform(Platform[BatchPlan]):
    """Runs a job on Spark; ``spark_master`` is used when this platform starts the session.

    Pass ``session`` to use one that already runs (tests share one per run).
    """

    def __init__(self, options: Mapping[str, OptionsLike] | None = None,
                 spark_master: str = DEFAULT_MASTER, session: SparkSession | None = None) -> None:
        super().__init__(options)
        self.spark_master = spark_master
        self._session = session

    @property
    def session(self) -> SparkSession:
        if self._session is None:
            self._session = spark_session(self.spark_master, app_name="summingbird-batch")
        return self._session

    def plan(self, tail: Producer) -> BatchPlan:
        job = validate(tail, self.options)
        partitions: dict[int, int | None] = {}
        for node in job.graph:
            option: Any = None
            if node.kind is NodeKind.SOURCE:
                option = resolve(job.graph, node, SourceParallelism, job.options)
            elif node.kind is NodeKind.SUMMER:
                option = resolve(job.graph, node, SummerParallelism, job.options)
            else:
                continue
            partitions[node.id] = option.count if option is not None else None
        return BatchPlan(job, partitions)

    def run(self, plan: BatchPlan) -> RunResult:
        from pyspark import cloudpickle as typed_cloudpickle

        # pyspark's copy of cloudpickle has no annotations: its calls return Any anyway
        spark_cloudpickle: Any = typed_cloudpickle

        graph = plan.job.graph
        already = set(spark_cloudpickle.list_registry_pickle_by_value())
        registered = []
        for name in sorted(plan.job.modules_by_value - already):
            module = sys.modules.get(name)
            if module is not None:
                spark_cloudpickle.register_pickle_by_value(module)
                registered.append(module)
        run = _BatchRun(self.session, plan)
        try:
            return run.execute()
        finally:
            run.release()
            for module in registered:
                spark_cloudpickle.unregister_pickle_by_value(module)
            for node in graph.of_kind(NodeKind.WRITE):
                flush = getattr(node.sink, "flush", None)
                if callable(flush):
                    flush()


class _BatchRun:
    """One execution of a plan: the RDD of every node, the lists collected on the driver."""

    def __init__(self, session: SparkSession, plan: BatchPlan) -> None:
        self.sc = session.sparkContext
        self.plan = plan
        self.graph = plan.job.graph
        self.rdds: dict[int, RDD[Any]] = {}
        self.collected: dict[int, list[tuple[Order, Any]]] = {}
        self.partitions: dict[int, int] = {}
        self.persisted: list[RDD[Any]] = []

    def execute(self) -> RunResult:
        for node in self.graph:
            try:
                self.rdds[node.id] = self._evaluate(node)
            except Exception as exc:
                if not type(exc).__module__.startswith(("py4j", "pyspark")):
                    raise  # our own errors and the driver-side ones (stores, sinks) as they are
                reason = _python_error(exc) or f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
                raise JobRuntimeError(f"the batch job failed on Spark while computing "
                                      f"{node.describe()}: {reason}") from exc
        tail = self.graph.tail
        while tail.kind in (NodeKind.NAMED, NodeKind.ALSO):
            tail = tail.data_parents[0]
        return RunResult([x for _, x in self.collected[tail.id]], dict(self.partitions))

    def release(self) -> None:
        for rdd in self.persisted:
            rdd.unpersist()

    def _source(self, node: Producer) -> RDD[Any]:
        # called for SOURCE nodes only, which have their source
        source: Source = node.source  # type: ignore[assignment]
        slices = self.plan.partitions.get(node.id)
        if isinstance(source, JsonLinesSource):
            if not os.path.isfile(source.path):
                raise JobRuntimeError(f"{node.describe()}: JSON-lines source {source.path} "
                                      "does not exist")
            lines = self.sc.textFile(source.path, minPartitions=slices)
            return lines.zipWithIndex().filter(_non_blank).map(_ParseLine(source))
        items = source.items if isinstance(source, IterableSource) else tuple(source.read())
        data = [((i,), x) for i, x in enumerate(items)]
        return self.sc.parallelize(
            data, slices or max(1, min(len(data), self.sc.defaultParallelism))
        )

    def _evaluate(self, node: Producer) -> RDD[Any]:
        kind = node.kind
        inputs = [self.rdds[p.id] for p in node.data_parents]
        if kind is NodeKind.SOURCE:
            rdd = self._source(node)
        elif kind in EXPANDING_KINDS:
            rdd = inputs[0].flatMap(_Ordered(compile_step(node)))
        elif kind is NodeKind.MERGE:
            rdd = inputs[0].map(_Side(0)).union(inputs[1].map(_Side(1)))
        elif kind in (NodeKind.NAMED, NodeKind.ALSO):
            rdd = inputs[0]
        elif kind is NodeKind.LEFT_JOIN:
            rdd = inputs[0].mapPartitions(_Join(node.service, node.describe()))
        elif kind is NodeKind.WRITE:
            rdd = self._persist(inputs[0]) if self.graph.fan_out(node) else inputs[0]
            items = sorted(rdd.collect(), key=_first)
            sink = node.sink
            for _, x in items:
                sink(x)
            self.collected[node.id] = items
        elif kind is NodeKind.SUMMER:
            rdd = self._sum(node, inputs[0])
        else:  # pragma: no cover
            raise AssertionError(f"unknown node kind {kind!r}")
        if self.graph.fan_out(node) > 1 and kind not in (NodeKind.WRITE, NodeKind.SUMMER):
            rdd = self._persist(rdd)
        return rdd

    def _persist(self, rdd: RDD[Any]) -> RDD[Any]:
        if rdd not in self.persisted:
            rdd = rdd.persist()
            self.persisted.append(rdd)
        return rdd

    def _sum(self, node: Producer, rdd: RDD[Any]) -> RDD[Any]:
        semigroup = node.semigroup
        slices = self.plan.partitions.get(node.id)
        pairs = rdd.map(_SummerInput(node.describe()))
        if getattr(semigroup, "commutative", False):
            reduced = pairs.reduceByKey(_CombineCommutative(semigroup), slices)
        else:
            reduced = pairs.groupByKey(slices).mapValues(_SumInOrder(semigroup))
        self.partitions[node.id] = reduced.getNumPartitions()
        deltas = sorted(reduced.collect(), key=lambda kv: kv[1][0])
        previous = node.store.multi_merge({key: delta for key, (_, delta) in deltas})
        outputs = [(order, (key, (previous[key], delta))) for key, (order, delta) in deltas]
        self.collected[node.id] = outputs
        return self.sc.parallelize(outputs, max(1, min(len(outputs), self.sc.defaultParallelism)))
