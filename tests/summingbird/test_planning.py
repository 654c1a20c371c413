"""Plan-time checks (nothing runs) and options by name."""

from __future__ import annotations

import sys
import threading
import types

import pytest

from compat.summingbird import (
    CacheSize,
    CollectorSink,
    FlushFrequency,
    InMemoryService,
    InMemoryStore,
    JobGraph,
    MemoryPlatform,
    Options,
    PlanningError,
    SourceParallelism,
    SummerParallelism,
    UnpicklableFunctionError,
    source,
    validate,
)
from compat.summingbird.monoids import Monoid, Sum
from compat.summingbird.options import resolve
from compat.summingbird.planning import importable_by_workers


def test_unpicklable_function_is_named_with_node_and_definition_before_anything_runs():
    lock = threading.Lock()
    calls = []

    def holds_lock(x):
        calls.append(x)
        with lock:
            return (x, 1)

    store = InMemoryStore()
    job = source([1, 2]).map(holds_lock).sum_by_key(store, Sum())
    with pytest.raises(UnpicklableFunctionError) as info:
        MemoryPlatform().plan(job)
    message = str(info.value)
    assert "function of node 'map'" in message
    assert "test_planning.py" in message  # where the node was written
    assert "holds_lock (" in message and "lock" in message
    assert calls == [] and store.contents() == {}


def test_unpicklable_monoid_and_service_are_named_too():
    lock = threading.Lock()
    greedy = Monoid.of(0, lambda a, b: a + b + (0 if lock else 1))
    with pytest.raises(UnpicklableFunctionError, match="semigroup of node 'sum_by_key'"):
        validate(source([("a", 1)]).sum_by_key(InMemoryStore(), greedy))

    class LockedService(InMemoryService):
        def __init__(self):
            super().__init__({})
            self.lock = threading.Lock()

    with pytest.raises(UnpicklableFunctionError, match="service of node 'left_join'"):
        validate(source([("a", 1)]).left_join(LockedService()).write(CollectorSink()))


def test_modules_workers_cannot_import_are_shipped_by_value():
    module = types.ModuleType("sb_job_not_installed")
    exec("def pair(x):\n    return (x, 1)\n", module.__dict__)  # noqa: S102 - a module with no file
    sys.modules[module.__name__] = module
    try:
        job = validate(source([1]).map(module.pair).sum_by_key(InMemoryStore(), Sum()))
        assert "sb_job_not_installed" in job.modules_by_value
        assert not importable_by_workers("sb_job_not_installed")
    finally:
        del sys.modules[module.__name__]
    assert importable_by_workers("json") and importable_by_workers("compat.summingbird.functions")
    assert importable_by_workers("__main__")


def test_option_names_must_exist():
    job = source([("a", 1)]).sum_by_key(InMemoryStore(), Sum()).name("counts")
    validate(job, {"counts": SummerParallelism(2), "DEFAULT": SourceParallelism(1)})
    with pytest.raises(PlanningError, match=r"'cuonts'.*names in the job: counts"):
        validate(job, {"cuonts": SummerParallelism(2)})


def test_option_values_are_checked():
    with pytest.raises(PlanningError, match="must be > 0"):
        SummerParallelism(0)
    with pytest.raises(PlanningError, match="must be an integer"):
        SourceParallelism(1.5)
    assert CacheSize(0).lower_bound == 0 and FlushFrequency(0.5).seconds == 0.5
    with pytest.raises(PlanningError, match="option values"):
        Options(3)


def test_options_resolve_nearest_downstream_name_then_default():
    src = source([("a", 1)])
    mapped = src.map_values(abs).name("near")
    tail = mapped.sum_by_key(InMemoryStore(), Sum()).name("far")
    graph = JobGraph.of(tail)
    options = {"near": Options(CacheSize(10)), "far": Options(CacheSize(99), SummerParallelism(3)),
               "DEFAULT": Options(SummerParallelism(1), FlushFrequency(2.0))}
    summer = tail.parents[0]
    assert resolve(graph, src, CacheSize, options) == CacheSize(10)  # nearest wins
    assert resolve(graph, summer, CacheSize, options) == CacheSize(99)  # not forwards
    assert resolve(graph, src, SummerParallelism, options) == SummerParallelism(3)
    assert resolve(graph, src, FlushFrequency, options) == FlushFrequency(2.0)  # DEFAULT
    assert resolve(graph, src, SourceParallelism, options) is None


def test_options_accept_single_values_and_lists():
    job = source([("a", 1)]).sum_by_key(InMemoryStore(), Sum()).name("counts")
    validated = validate(job, {"counts": [SummerParallelism(2), CacheSize(5)]})
    assert validated.options["counts"].get(CacheSize) == CacheSize(5)
    assert Options(CacheSize(1)).set(CacheSize(2)).get(CacheSize) == CacheSize(2)
