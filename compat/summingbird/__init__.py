"""Summingbird's API in Python: write a job once, run it on several platforms.

    from compat.summingbird import source, InMemoryStore, MemoryPlatform
    from compat.summingbird.monoids import Sum

    counts = InMemoryStore()
    job = (source(["a b", "b"])
           .flat_map(lambda line: ((w, 1) for w in line.split()))
           .sum_by_key(counts, Sum()))
    MemoryPlatform().execute(job)          # counts.contents() == {"a": 1, "b": 2}

``BatchPlatform`` runs the same job on PySpark. See ``docs/decisions.md`` ("Summingbird").
"""

from .either import Left, Right
from .errors import (
    JobDefinitionError,
    JobRuntimeError,
    PlanningError,
    SummingbirdError,
    UnpicklableFunctionError,
)
from .graph import JobGraph
from .options import (
    CacheSize,
    FlatMapParallelism,
    FlushFrequency,
    Options,
    SourceParallelism,
    SummerParallelism,
)
from .planning import ValidatedJob, validate
from .platforms import MemoryPlatform, Platform, RunResult
from .producer import DEFAULT_NAME, NodeKind, Producer, source
from .services import FunctionService, InMemoryService, Service, SQLiteService
from .sinks import CollectorSink, JsonLinesSink
from .sources import IterableSource, JsonLinesSource, Source
from .stores import InMemoryStore, SQLiteStore, Store

__all__ = [
    "DEFAULT_NAME",
    "BatchPlatform",
    "CacheSize",
    "CollectorSink",
    "FlatMapParallelism",
    "FlushFrequency",
    "FunctionService",
    "InMemoryService",
    "InMemoryStore",
    "IterableSource",
    "JobDefinitionError",
    "JobGraph",
    "JobRuntimeError",
    "JsonLinesSink",
    "JsonLinesSource",
    "Left",
    "MemoryPlatform",
    "NodeKind",
    "Options",
    "PlanningError",
    "Platform",
    "Producer",
    "Right",
    "RunResult",
    "SQLiteService",
    "SQLiteStore",
    "Service",
    "Source",
    "SourceParallelism",
    "Store",
    "SummerParallelism",
    "SummingbirdError",
    "UnpicklableFunctionError",
    "ValidatedJob",
    "source",
    "validate",
]


def __getattr__(name: str) -> object:
    if name == "BatchPlatform":
        # deferred: optional dependency (the batch platform needs PySpark)
        from .platforms.batch import BatchPlatform

        return BatchPlatform
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
