"""The REST API, shaped after Heron's tracker: ``/clusters`` and ``/topologies/...``,
each topology endpoint taking ``topology`` (and optionally ``cluster``, ``environ``;
``role`` is accepted and ignored, as Heron deprecated it).

Handlers are plain functions: FastAPI runs them in its thread pool, so a slow
Topology Master (bounded by the tracker's timeout) never stalls the event loop and the
server keeps answering other requests.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import PlainTextResponse

from engine.tools.tracker import answers, checkpoint_models, lag_models, logs, models
from engine.tools.tracker.errors import BadParameter, NotFound
from engine.tools.tracker.service import TopologyRecord, Tracker

router = APIRouter()


def get_tracker(request: Request) -> Tracker:
    return request.app.state.tracker


TrackerDep = Annotated[Tracker, Depends(get_tracker)]


def get_record(tracker: TrackerDep,
               topology: Annotated[str, Query(description="topology name")],
               cluster: Annotated[str | None, Query(description="must match, when given")] = None,
               environ: Annotated[str | None, Query(description="must match, when given")] = None,
               role: Annotated[str | None, Query(description="ignored (deprecated, as in "
                                                             "Heron)")] = None) -> TopologyRecord:
    return tracker.record(topology, cluster, environ, lazy=True)


RecordDep = Annotated[TopologyRecord, Depends(get_record)]
ComponentQ = Annotated[str | None, Query(description="a component of the topology, or "
                                                     "__stmgr__ for Stream Managers")]
InstancesQ = Annotated[list[str], Query(description="instance ids (repeatable); none: all")]
MetricNamesQ = Annotated[list[str], Query(description="metric names, e.g. __emit-count "
                                                      "(repeatable); none: all")]
IntervalQ = Annotated[int, Query(ge=-1, le=366 * 86400,
                                 description="window in seconds ending now; -1 or 0: all time")]


@router.get("/clusters", response_model=list[str], tags=["clusters"])
def clusters(tracker: TrackerDep) -> list[str]:
    """Clusters of the topologies in the state manager (always includes "local")."""
    found = {r.cluster for r in tracker.records()}
    return sorted(found | {"local"})


@router.get("/topologies", tags=["topologies"],
            response_model=dict[str, dict[str, dict[str, list[str]]]])
def topologies(tracker: TrackerDep,
               cluster: Annotated[list[str], Query()] = [],  # noqa: B006 (FastAPI copies it)
               environ: Annotated[list[str], Query()] = [],  # noqa: B006
               role: str | None = None) -> dict:
    """``{cluster: {role: {environ: [topology names]}}}``, filtered by the given values."""
    out: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for record in tracker.records():
        if (cluster and record.cluster not in cluster) \
                or (environ and record.environ not in environ) \
                or (role and record.role != role):
            continue
        out[record.cluster][record.role][record.environ].append(record.name)
    return out


@router.get("/topologies/states", tags=["topologies"],
            response_model=dict[str, dict[str, dict[str, models.TopologyStatus]]])
def states(tracker: TrackerDep,
           cluster: Annotated[list[str], Query()] = [],  # noqa: B006
           environ: Annotated[list[str], Query()] = []) -> dict:  # noqa: B006
    """``{cluster: {environ: {name: status}}}``: every topology's execution state and
    whether its Topology Master, physical plan and scheduler are there."""
    out: dict = defaultdict(lambda: defaultdict(dict))
    for record in tracker.records():
        if (cluster and record.cluster not in cluster) \
                or (environ and record.environ not in environ):
            continue
        out[record.cluster][record.environ][record.name] = answers.status(record)
    return out


@router.get("/topologies/info", response_model=models.TopologyInfoModel, tags=["topology"])
def info(record: RecordDep) -> models.TopologyInfoModel:
    """Everything stored about a topology: plans, locations, execution state."""
    return answers.info(record)


@router.get("/topologies/logicalplan", response_model=models.LogicalPlanModel, tags=["topology"])
def logicalplan(record: RecordDep) -> models.LogicalPlanModel:
    return answers.logical_plan(record)


@router.get("/topologies/logicalplan/layout", response_model=models.DagLayoutModel,
            tags=["topology"])
def logicalplan_layout(record: RecordDep) -> models.DagLayoutModel:
    """The logical plan laid out as a left-to-right DAG: node boxes and SVG edge paths."""
    return answers.layout(record)


@router.get("/topologies/physicalplan", response_model=models.PhysicalPlanModel,
            tags=["topology"])
def physicalplan(record: RecordDep) -> models.PhysicalPlanModel:
    """Containers (Stream Managers) and their instances; 503 until it is built."""
    return answers.physical_plan(record)


@router.get("/topologies/packingplan", response_model=models.PackingPlanModel, tags=["topology"])
def packingplan(record: RecordDep) -> models.PackingPlanModel:
    packing = record.node("packingplans")
    if packing is None:
        raise NotFound(f"topology {record.name!r} has no packing plan")
    return models.packing_plan(packing)


@router.get("/topologies/executionstate", response_model=models.ExecutionStateModel,
            tags=["topology"])
def executionstate(record: RecordDep) -> models.ExecutionStateModel:
    if record.execution is None:
        raise NotFound(f"topology {record.name!r} has no execution state")
    return models.execution_state(record.execution)


@router.get("/topologies/health", response_model=models.HealthModel, tags=["topology"])
def health(record: RecordDep) -> models.HealthModel:
    """What the topology's Health Manager saw, concluded and did (empty when it has none)."""
    return answers.health(record)


@router.get("/topologies/schedulerlocation", response_model=models.SchedulerLocationModel,
            tags=["topology"])
def schedulerlocation(record: RecordDep) -> models.SchedulerLocationModel:
    location = record.node("schedulers")
    if location is None:
        raise NotFound(f"topology {record.name!r} has no scheduler location (it runs under "
                       "`heron run`'s in-process scheduler, or its scheduler has stopped)")
    return models.scheduler_location(location)


@router.get("/topologies/config", response_model=models.ConfigModel, tags=["topology"])
def config(record: RecordDep) -> models.ConfigModel:
    plan = record.plan
    return models.ConfigModel(topology=record.name, config=dict(plan.config),
                              components={n: dict(c.config) for n, c in plan.components.items()})


@router.get("/topologies/metrics", response_model=models.MetricsModel, tags=["metrics"])
def metrics(record: RecordDep, component: ComponentQ = None,
            metricname: MetricNamesQ = [],  # noqa: B006
            instance: InstancesQ = [],  # noqa: B006
            interval: IntervalQ = -1) -> models.MetricsModel:
    """Metrics per instance from the Topology Master (asked now, 503 when it does not
    answer in time), over the last ``interval`` seconds from the tracker's snapshots."""
    return answers.metrics(record, component, metricname, instance, interval)


@router.get("/topologies/metrics/timeline", response_model=models.TimelineModel,
            tags=["metrics"])
def metrics_timeline(record: RecordDep, component: ComponentQ = None,
                     metricname: MetricNamesQ = [],  # noqa: B006
                     instance: InstancesQ = [],  # noqa: B006
                     starttime: Annotated[float | None, Query(
                         description="unix seconds; default endtime - 600")] = None,
                     endtime: Annotated[float | None, Query(
                         description="unix seconds; default now")] = None) -> models.TimelineModel:
    """The tracker's recorded snapshots between two times (no Topology Master request).
    A ``metricname`` ending in ``*`` asks for every metric starting with what precedes it
    (``__time_spent_back_pressure_by_compid/*``)."""
    end = time.time() if endtime is None else endtime
    start = end - 600 if starttime is None else starttime
    if start > end:
        raise BadParameter("starttime", f"{start:g} is after endtime {end:g}")
    return answers.timeline(record, component, metricname, instance, start, end)


@router.get("/topologies/metrics/parallelism", response_model=models.ParallelismTimelineModel,
            tags=["metrics"])
def metrics_parallelism(record: RecordDep, component: ComponentQ = None,
                        starttime: Annotated[float | None, Query(
                            description="unix seconds; default endtime - 600")] = None,
                        endtime: Annotated[float | None, Query(
                            description="unix seconds; default now")] = None
                        ) -> models.ParallelismTimelineModel:
    """Instances per component over time, from the physical plan the tracker read with
    each of its snapshots (a scaled topology's parallelism as it changed)."""
    end = time.time() if endtime is None else endtime
    start = end - 600 if starttime is None else starttime
    if start > end:
        raise BadParameter("starttime", f"{start:g} is after endtime {end:g}")
    return answers.parallelism_timeline(record, component, start, end)


@router.get("/topologies/restarts", response_model=models.RestartsModel, tags=["metrics"])
def restarts(record: RecordDep, component: ComponentQ = None) -> models.RestartsModel:
    """Restarts per instance and the instances crash-looping now, each with its last
    error, from the Topology Master (asked now)."""
    return answers.restarts(record, component)


@router.get("/topologies/scheduler", response_model=models.SchedulerStatusModel,
            tags=["topologies"])
def scheduler_status(record: RecordDep) -> models.SchedulerStatusModel:
    """Where a cluster scheduler (Slurm) runs each container, which nodes it gave up on,
    and how long each recovery took, from the scheduler's status on this machine."""
    return answers.scheduler_status(record)


@router.get("/topologies/checkpoints", response_model=checkpoint_models.CheckpointsModel,
            tags=["metrics"])
def checkpoints(record: RecordDep) -> checkpoint_models.CheckpointsModel:
    """An EFFECTIVELY_ONCE topology's checkpoints: the globally consistent ones kept in
    the state manager (newest first), the Topology Master's figures (completed,
    abandoned, the last checkpoint's duration and size, restores with their reasons)
    and each task's state size, save time and restores. Another reliability mode is a
    200 saying it takes none; a Topology Master that does not answer leaves its figures
    null with a ``note``, the stored checkpoints still served."""
    return answers.checkpoints(record)


@router.get("/topologies/sourcelag", response_model=lag_models.SourceLagModel,
            tags=["metrics"])
def sourcelag(record: RecordDep, component: ComponentQ = None) -> lag_models.SourceLagModel:
    """Consumer lag of the topology's Kafka spouts: per partition the lag (log end offset
    minus the spout's position) with the emitted, committed and log end offsets the spout
    reports (Storm's ``kafkaOffset`` metrics), and per component the total, from the
    Topology Master (asked now). No Kafka spout: empty lists and a ``note``."""
    return answers.source_lag(record, component)


@router.get("/topologies/exceptions", response_model=list[models.ExceptionModel],
            tags=["metrics"])
def exceptions(record: RecordDep, component: ComponentQ = None,
               instance: InstancesQ = []) -> list[models.ExceptionModel]:  # noqa: B006
    """Exceptions the instances reported (deduplicated, with counts), from the Topology
    Master."""
    return answers.exceptions(record, component, instance)


@router.get("/topologies/exceptionsummary", response_model=list[models.ExceptionSummaryModel],
            tags=["metrics"])
def exceptionsummary(record: RecordDep, component: ComponentQ = None,
                     instance: InstancesQ = []) -> list[models.ExceptionSummaryModel]:  # noqa: B006
    return answers.exception_summary(record, component, instance)


@router.get("/topologies/backpressure", response_model=models.BackpressureModel,
            tags=["metrics"])
def backpressure(record: RecordDep, interval: IntervalQ = 60) -> models.BackpressureModel:
    """Backpressure per Stream Manager (paused, initiated, time paused in the window,
    buffered bytes) and per instance (a spout throttled by it)."""
    return answers.backpressure(record, interval)


@router.get("/topologies/logfiles", response_model=list[models.LogFileModel], tags=["logs"])
def logfiles(record: RecordDep) -> list[models.LogFileModel]:
    """The topology's log files (one per process), with the URL of each."""
    return answers.log_files(record)


@router.get("/topologies/logfile", response_class=PlainTextResponse, tags=["logs"],
            responses={200: {"content": {"text/plain": {}}}})
def logfile(record: RecordDep,
            name: Annotated[str, Query(description="a file name from /topologies/logfiles")],
            lines: Annotated[int, Query(ge=1, le=logs.MAX_LINES)] = 200) -> PlainTextResponse:
    """The last ``lines`` lines of one of the topology's log files (a cluster
    container's read through its shell)."""
    found = logs.find_served(record.name, record.working_dir, record.log_files(), name)
    try:
        text = logs.read_tail(found, lines)
    except OSError as exc:
        raise NotFound(f"log file {name!r} of {record.name!r} cannot be read: {exc}") from None
    return PlainTextResponse(text, headers={"X-Content-Type-Options": "nosniff"})
