"""The Summingbird job catalogue in the conformance suite: one job, four platforms, one verdict.

Every job of ``compat.summingbird.testing.CATALOGUE`` runs on the memory platform (the
oracle), the PySpark batch platform and the streaming platform on the ``storm`` and
``heron`` engines, on the same seeded input. What a run leaves behind becomes capture
records, diffed on PySpark by ``conformance.diff.diff_outputs`` like any engine's capture
(reference section 4.5):

* **final store contents**, one row per key (``store:<name>``/``final``), zero values
  dropped (zero and absent are the same in a store): exact;
* **sink outputs** (``sink:<name>``/``written``): multisets, as concurrent platforms
  order them differently;
* **``sum_by_key`` output streams per key, not row by row** (``sum_by_key``/``per_key``):
  the granularity of ``(key, (previous, delta))`` is the platform's (per input on memory
  and streaming, per key on batch), so each side is first reduced to one row per key
  holding the semigroup sum of its deltas, which every platform must agree on.

Every platform is judged (one ``EngineRun`` each) against one reference: the job's
plain-Python oracle for stores and sinks, and the memory platform's per-key outputs (the
oracle knows only final state). All platforms share one reference, so pairs between
them would add nothing. A non-commutative job is refused by the streaming planner by
design: its streaming runs are SKIPPED when refused with that error, and FAIL if they run.
"""

from __future__ import annotations

import dataclasses
import random
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from compat.summingbird import (
    CacheSize,
    FlatMapParallelism,
    FlushFrequency,
    MemoryPlatform,
    Options,
    PlanningError,
    SourceParallelism,
    SummerParallelism,
)
from compat.summingbird.monoids import Semigroup
from compat.summingbird.platforms.base import Platform
from compat.summingbird.platforms.streaming import StreamingPlatform
from compat.summingbird.producer import NodeKind, Producer
from compat.summingbird.testing import CATALOGUE, CatalogueJob, Outcome, without_zeros
from conformance.canonical import canonical_json, canonical_value
from conformance.diff import diff_outputs
from conformance.model import (
    CaseResult,
    Comparison,
    DiffResult,
    EngineRun,
    SemanticClass,
    Verdict,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["PLATFORMS", "STREAMING_OPTIONS", "PlatformRun", "job_records", "judge", "plain",
           "run_platform", "run_summingbird_case", "run_summingbird_catalogue"]

#: The memory platform first: it is the reference of every pair.
PLATFORMS = ("memory", "batch", "storm", "heron")
STREAMING = ("storm", "heron")

#: Every record takes part; each view is already one row per key or per element.
ROWS = Comparison(kind="rows")


def _streaming_options() -> dict[str, Any]:
    return {"DEFAULT": Options(SourceParallelism(2), SummerParallelism(2),
                               FlatMapParallelism(2), CacheSize(4), FlushFrequency(0.2))}


#: Options the streaming runs use: two tasks per component and summer caches, so split
#: sources, fields grouping, cache flushes by size and by time all take part.
STREAMING_OPTIONS = _streaming_options()


def _spelling(value: Any) -> str:
    return canonical_json(canonical_value(value))


def plain(value: Any) -> Any:
    """``value`` as data the canonical form spells faithfully (objects by their state).

    ``conformance.canonical`` falls back to ``repr`` for objects it does not know, and a
    sketch's repr summarises it: two different sketches could look equal.
    """
    if value is None or isinstance(value, (str, bool, int, float, bytes)):
        return value
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return {"$set": sorted((plain(v) for v in value), key=_spelling)}
    if isinstance(value, Mapping):
        return {"$map": sorted(([plain(k), plain(v)] for k, v in value.items()), key=_spelling)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        state = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    elif hasattr(value, "__dict__"):
        state = dict(vars(value))
    else:
        slots = [s for cls in type(value).__mro__ for s in getattr(cls, "__slots__", ())]
        state = {s: getattr(value, s) for s in slots if hasattr(value, s)}
    return {"$type": type(value).__qualname__,
            "state": {k: plain(v) for k, v in sorted(state.items())}}


def _record(component: str, stream: str, values: list[Any]) -> dict[str, Any]:
    return {"component": component, "stream": stream, "task": None, "values": values}


def tail_summer(tail: Producer) -> Producer | None:
    """The ``sum_by_key`` whose outputs are the job's tail outputs, if there is one."""
    node = tail
    while node.kind in (NodeKind.NAMED, NodeKind.ALSO):
        node = node.data_parents[0]
    return node if node.kind is NodeKind.SUMMER else None


def per_key(outputs: Iterable[Any], semigroup: Semigroup[Any]) -> dict[Any, Any]:
    """A summer's output stream reduced to the sum of its deltas per key."""
    deltas: dict[Any, list[Any]] = {}
    for key, (_, delta) in outputs:
        deltas.setdefault(key, []).append(delta)
    return {key: semigroup.sum_option(values) for key, values in deltas.items()}


def job_records(job: CatalogueJob, outcome: Outcome, outputs: Sequence[Any] | None = None,
                semigroup: Semigroup[Any] | None = None) -> list[dict[str, Any]]:
    """Capture records of a run: final stores and sinks, and (given the tail summer's
    outputs and semigroup) its output stream per key."""
    records = []
    for name, store_semigroup in job.semigroups.items():
        contents = without_zeros(outcome.stores.get(name, {}), store_semigroup)
        records += [_record(f"store:{name}", "final", [plain(k), plain(v)])
                    for k, v in contents.items()]
    for name in job.sink_names:
        records += [_record(f"sink:{name}", "written", [plain(x)])
                    for x in outcome.sinks.get(name, [])]
    if outputs is not None and semigroup is not None:
        records += [_record("sum_by_key", "per_key", [plain(k), plain(v)])
                    for k, v in per_key(outputs, semigroup).items()]
    return records


@dataclasses.dataclass
class PlatformRun:
    """What one platform did with one job."""

    platform: str
    elapsed: float
    #: stores and sinks (compared with the oracle)
    state: list[dict[str, Any]] | None = None
    #: the tail summer's outputs per key (compared between platforms)
    streams: list[dict[str, Any]] | None = None
    error: str = ""
    refused: str = ""


def _platform(name: str, spark: SparkSession | None, options: Mapping[str, Any] | None,
              time_limit: float) -> Platform[Any]:
    if name == "memory":
        return MemoryPlatform()
    if name == "batch":
        # deferred: optional dependency (the batch platform needs PySpark)
        from compat.summingbird.platforms.batch import BatchPlatform

        return BatchPlatform(session=spark)
    return StreamingPlatform(STREAMING_OPTIONS if options is None else options, engine=name,
                             time_limit=time_limit)


def run_platform(name: str, job: CatalogueJob, inputs: dict[str, Any], *,
                 spark: SparkSession | None = None, options: Mapping[str, Any] | None = None,
                 time_limit: float = 120.0) -> PlatformRun:
    """Run ``job`` on platform ``name`` with fresh stores and sinks; never raises."""
    began = time.monotonic()
    io = job.make_io(inputs)
    tail = job.build(io, inputs)
    try:
        result = _platform(name, spark, options, time_limit).execute(tail)
    except PlanningError as exc:
        return PlatformRun(name, time.monotonic() - began, refused=f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001 - any failure is this run's error verdict
        return PlatformRun(name, time.monotonic() - began, error=f"{type(exc).__name__}: {exc}")
    outcome = Outcome({n: s.contents() for n, s in io.stores.items()},
                      {n: list(s.items) for n, s in io.sinks.items()})
    summer = tail_summer(tail)
    streams = job_records(job, Outcome({}, {}), result.outputs, summer.semigroup) \
        if summer is not None else []
    return PlatformRun(name, time.monotonic() - began, state=job_records(job, outcome),
                       streams=streams)


def _non_commutative(job: CatalogueJob) -> bool:
    return any(not getattr(s, "commutative", False) for s in job.semigroups.values())


def _verdict(diff: DiffResult, allowed: SemanticClass) -> Verdict:
    return Verdict.PASS if diff.observed.within(allowed) else Verdict.FAIL


def _tagged(platform: str, records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [dict(r, component=f"{platform}|{r['component']}") for r in records]


def _no_output(run: PlatformRun, job: CatalogueJob, run_id: str) -> EngineRun | None:
    """The verdict of a run that has nothing to compare (refused, failed), else None."""
    metadata = {"platform": run.platform}
    if run.refused:
        if run.platform in STREAMING and _non_commutative(job) and "not commutative" in run.refused:
            return EngineRun(run.platform, run_id, Verdict.SKIPPED, run.elapsed,
                             reason=f"non-commutative semigroup, refused online by design: "
                                    f"{run.refused}", metadata=metadata)
        return EngineRun(run.platform, run_id, Verdict.ERROR, run.elapsed, reason=run.refused,
                         metadata=metadata)
    if run.error or run.state is None:
        return EngineRun(run.platform, run_id, Verdict.ERROR, run.elapsed,
                         reason=run.error or "no output", metadata=metadata)
    if run.platform in STREAMING and _non_commutative(job):
        return EngineRun(run.platform, run_id, Verdict.FAIL, run.elapsed,
                         reason="a non-commutative job ran online; the planner must refuse it",
                         metadata=metadata)
    return None


def judge(spark: SparkSession, job: CatalogueJob, runs: Sequence[PlatformRun],
          expected: list[dict[str, Any]]) -> list[EngineRun]:
    """Each run against the reference: the oracle's stores and sinks, and the per-key
    outputs of the first platform that produced them (the memory platform).

    One Spark diff covers every platform (rows tagged with the platform, so nothing
    cancels across platforms); only when it is not exact is each platform diffed on its
    own, to say which differs and how.
    """
    verdicts: dict[str, EngineRun] = {}
    compared: list[PlatformRun] = []
    for run in runs:
        early = _no_output(run, job, uuid.uuid4().hex[:12])
        if early is not None:
            verdicts[run.platform] = early
        else:
            compared.append(run)
    streams = next((r.streams for r in compared if r.streams is not None), [])
    reference = expected + list(streams or [])
    if compared:
        combined = diff_outputs(
            spark, [r for run in compared for r in _tagged(run.platform, reference)],
            # (a compared run has its state: _no_output took those without)
            [r for run in compared
             for r in _tagged(run.platform, (run.state or []) + (run.streams or []))],
            ROWS, left="expected", right="+".join(r.platform for r in compared))
        exact = combined.observed is SemanticClass.EXACT
        for run in compared:
            diff = combined if exact else diff_outputs(
                spark, reference, (run.state or []) + (run.streams or []), ROWS, left="expected",
                right=run.platform)
            verdicts[run.platform] = EngineRun(
                run.platform, uuid.uuid4().hex[:12], _verdict(diff, SemanticClass.EXACT),
                run.elapsed, diff=diff, metadata={"platform": run.platform})
    return [verdicts[run.platform] for run in runs]


def run_summingbird_case(spark: SparkSession, job: CatalogueJob,
                         platforms: Sequence[str] = PLATFORMS,
                         *, seed: int = 0, size: int = 40,
                         options: Mapping[str, Any] | None = None,
                         time_limit: float = 120.0,
                         on_run: Callable[[PlatformRun], None] | None = None) -> CaseResult:
    """``job`` on every platform in ``platforms``, judged by ``judge``."""
    inputs = job.sample(random.Random(seed), size)
    runs: list[PlatformRun] = []
    for name in platforms:
        run = run_platform(name, job, inputs, spark=spark, options=options,
                           time_limit=time_limit)
        runs.append(run)
        if on_run is not None:
            on_run(run)
    engine_runs = judge(spark, job, runs, job_records(job, job.expected(inputs)))
    return CaseResult(case=f"summingbird_{job.name}",
                      description=f"Summingbird job {job.name!r} (seed {seed}, {size} inputs): "
                                  "final stores exact, sinks as multisets, sum_by_key outputs "
                                  "per key, across " + ", ".join(platforms),
                      allowed=SemanticClass.EXACT, tags=["summingbird", job.name],
                      runs=engine_runs, pairs=[])


def run_summingbird_catalogue(spark: SparkSession, jobs: Iterable[CatalogueJob] = CATALOGUE,
                              platforms: Sequence[str] = PLATFORMS, **kwargs: Any
                              ) -> list[CaseResult]:
    """Every job of the catalogue on every platform: one ``CaseResult`` per job."""
    return [run_summingbird_case(spark, job, platforms, **kwargs) for job in jobs]
