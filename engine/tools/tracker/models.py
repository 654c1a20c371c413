"""The tracker's response shapes (pydantic models, so /openapi.json documents them),
and their construction from the stored protobuf messages.

Shapes follow Heron's tracker where it has one (``logicalplan``: spouts and bolts by
name with outputs, inputs and ``inputComponents``; ``physicalplan``: instances and
stmgrs by id, ``spouts``/``bolts`` to instance ids; ``packingplan``: container plans;
``metrics``: ``{metric: {instance: value}}`` with the window's interval and times).
Metric values are JSON numbers when they are numbers and text otherwise (the Topology
Master carries them as text).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from engine.common.plan.logical import ComponentDef, LogicalPlan
from engine.messages import (
    execution_state_pb2,
    packing_plan_pb2,
    scheduler_pb2,
    tmanager_pb2,
    topology_pb2,
)

MetricValue = int | float | str


# -- topologies ------------------------------------------------------------------------------
class TopologyStatus(BaseModel):
    """One topology as the state manager has it (Heron's execution state, plus liveness)."""

    name: str
    id: str
    cluster: str
    environ: str
    role: str
    state: str = Field(description="RUNNING, PAUSED or KILLED (the physical plan's live state "
                                   "when there is one)")
    submission_time: int | None = Field(default=None, description="unix seconds")
    submission_user: str = ""
    release_username: str = ""
    release_tag: str = ""
    release_version: str = ""
    has_physical_plan: bool
    has_packing_plan: bool
    has_tmanager_location: bool = Field(description="the Topology Master's ephemeral location "
                                                    "exists (it is running)")
    has_scheduler_location: bool


class ExecutionStateModel(BaseModel):
    topology_name: str
    topology_id: str
    cluster: str
    environ: str
    role: str
    submission_time: int | None
    submission_user: str
    release_username: str = ""
    release_tag: str = ""
    release_version: str = ""


class TManagerLocationModel(BaseModel):
    name: str
    id: str
    host: str
    controller_port: int | None
    server_port: int | None
    stats_port: int | None
    controller_endpoint: str
    server_endpoint: str


class SchedulerLocationModel(BaseModel):
    name: str
    http_endpoint: str
    job_page_link: list[str]


# -- logical plan ----------------------------------------------------------------------------
class OutputStreamModel(BaseModel):
    stream_name: str
    fields: list[str]
    direct: bool = False


class InputStreamModel(BaseModel):
    stream_name: str
    component_name: str
    grouping: str
    fields: list[str] = []
    custom_grouping: str | None = None


class SpoutModel(BaseModel):
    config: dict[str, Any]
    spout_type: str = Field(description='"python" (runs in the instance) or "shell" (multi-lang)')
    spout_source: str = Field(description="module:Class, or the shell command and script")
    parallelism: int
    outputs: list[OutputStreamModel]


class BoltModel(BaseModel):
    config: dict[str, Any]
    bolt_type: str
    bolt_source: str
    parallelism: int
    outputs: list[OutputStreamModel]
    inputs: list[InputStreamModel]
    inputComponents: list[str]


class LogicalPlanModel(BaseModel):
    topology: str
    id: str
    spouts: dict[str, SpoutModel]
    bolts: dict[str, BoltModel]
    component_order: list[str]
    stages: int = Field(description="components on the longest path from a spout")


class DagNodeModel(BaseModel):
    name: str
    kind: str
    parallelism: int
    layer: int
    x: float
    y: float
    width: float
    height: float


class DagEdgeModel(BaseModel):
    source: str
    target: str
    streams: list[dict[str, Any]]
    label: str
    back: bool = Field(description="closes a cycle (drawn as an arc under the graph)")
    path: str = Field(description="SVG path data")
    label_x: float
    label_y: float


class DagLayoutModel(BaseModel):
    topology: str
    width: float
    height: float
    nodes: list[DagNodeModel]
    edges: list[DagEdgeModel]


# -- physical and packing plans ----------------------------------------------------------------
class InstanceModel(BaseModel):
    id: str
    name: str = Field(description="the component")
    task_id: int
    component_index: int
    stmgr_id: str
    container: int | None
    logfile: str | None = Field(default=None,
                                description="URL of the instance's log on this tracker")


class StmgrModel(BaseModel):
    id: str
    container: int | None
    host: str
    cwd: str
    pid: int | None
    data_endpoint: str
    local_endpoint: str
    instance_ids: list[str]
    logfiles: dict[str, str] = Field(description="process -> URL of its log on this tracker")


class PhysicalPlanModel(BaseModel):
    topology: str
    id: str
    state: str
    instances: dict[str, InstanceModel]
    stmgrs: dict[str, StmgrModel]
    spouts: dict[str, list[str]]
    bolts: dict[str, list[str]]
    config: dict[str, Any]
    components: dict[str, dict[str, Any]]


class ResourceModel(BaseModel):
    cpu: float
    ram: int
    disk: int


class PackedInstanceModel(BaseModel):
    component_name: str
    task_id: int
    component_index: int
    instance_resources: ResourceModel


class ContainerPlanModel(BaseModel):
    id: int
    instances: list[PackedInstanceModel]
    required_resources: ResourceModel
    scheduled_resources: ResourceModel | None


class PackingPlanModel(BaseModel):
    id: str
    container_plans: list[ContainerPlanModel]


class ConfigModel(BaseModel):
    topology: str
    config: dict[str, Any]
    components: dict[str, dict[str, Any]]


class TopologyInfoModel(BaseModel):
    """Everything stored about one topology, in one answer (the UI's first request)."""

    name: str
    id: str
    cluster: str
    environ: str
    role: str
    state: str
    working_dir: str | None
    execution_state: ExecutionStateModel | None
    tmanager_location: TManagerLocationModel | None
    scheduler_location: SchedulerLocationModel | None
    logical_plan: LogicalPlanModel
    physical_plan: PhysicalPlanModel | None
    packing_plan: PackingPlanModel | None
    cluster_scheduler: SchedulerStatusModel | None = Field(
        default=None, description="a cluster scheduler's jobs and recoveries, as "
                          "/topologies/scheduler; null on the local scheduler")


# -- metrics, exceptions, backpressure, logs --------------------------------------------------
class MetricsModel(BaseModel):
    topology: str
    component: str | None
    interval: int = Field(description="the window asked for, seconds; -1: all time")
    starttime: float | None = Field(description="unix time the window really starts at (the "
                                                "tracker's oldest snapshot when it has not "
                                                "watched that long); null for all time")
    endtime: float = Field(description="unix time of the Topology Master's answer")
    metrics: dict[str, dict[str, MetricValue]] = Field(
        description="metric -> instance id -> value: counters as their increase over the "
                    "window (cumulative for all time), gauges as their latest value")
    components: dict[str, str] = Field(description="instance id -> component")
    stale: dict[str, float] = Field(
        default_factory=dict,
        description="instance id -> seconds since it last reported, for each instance whose "
                    "figures are older than 5 s (dead, stuck or unreachable: its values "
                    "here are its last ones, frozen)")


class InstanceRestartsModel(BaseModel):
    instance: str = Field(description="instance id (or process name: stmgr-1, ...)")
    component: str
    restarts: int = Field(description="restarts of its component in the process, and of the "
                                      "process by its executor")
    crash_looping: bool = Field(description="failing again and again with no progress (three "
                                            "failures in a row or more); still retried")
    last_error: str = ""


class RestartsModel(BaseModel):
    """Restarts per instance and what is crash-looping now (engine.common.process.restart_policy),
    from the Topology Master's latest metrics."""

    topology: str
    crash_looping: list[InstanceRestartsModel]
    instances: list[InstanceRestartsModel]


class ContainerJobModel(BaseModel):
    container: int
    job_id: str = Field(description="the cluster manager's job (Slurm job id)")
    node: str = Field(description="the node it runs on, when known")
    state: str = Field(description="the cluster manager's state of the job (RUNNING, ...)")
    incarnation: int = Field(description="which start of the container this is")


class RecoveryModel(BaseModel):
    container: int
    cause: str = Field(description="why it was replaced (a node lost, a job that ended)")
    seconds: float = Field(description="from the failure (the container's last report, "
                                       "else the loss being noticed) to its replacement "
                                       "reporting again")
    measured_from: str = Field(default="detection", description="'last report' or 'detection': "
                                                        "where `seconds` starts")
    detected_after: float | None = Field(default=None, description="seconds from the failure to "
                                                           "the scheduler noticing it")
    running_after: float | None = Field(default=None, description="seconds from the failure to "
                                                          "the new job running")


class SchedulerStatusModel(BaseModel):
    """Where a cluster scheduler runs the topology's containers, and how long each
    recovery took (engine/scheduler/slurm: its scheduler-status.json)."""

    topology: str
    scheduler: str
    jobs: list[ContainerJobModel]
    excluded_nodes: list[str] = Field(description="nodes given up on (down, not responding)")
    recoveries: list[RecoveryModel]


class TimelineModel(BaseModel):
    topology: str
    component: str | None
    starttime: float
    endtime: float
    timeline: dict[str, dict[str, dict[str, MetricValue]]] = Field(
        description="metric -> instance id -> {unix time: value} from the tracker's snapshots")
    components: dict[str, str] = Field(
        default_factory=dict,
        description="instance (or Stream Manager) id -> its component, for every id in "
                    "the timeline, including instances a scale-down removed since")


class ParallelismTimelineModel(BaseModel):
    topology: str
    component: str | None
    starttime: float
    endtime: float
    parallelism: dict[str, dict[str, int]] = Field(
        description="component -> {unix time: instances in the physical plan} at each of the "
                    "tracker's snapshots")


class ExceptionModel(BaseModel):
    component: str
    instance_id: str
    hostname: str
    stacktrace: str
    firsttime: str
    lasttime: str
    count: int
    logging: str
    logfile: str | None = None


class ExceptionSummaryModel(BaseModel):
    class_name: str
    component: str
    count: int
    firsttime: str
    lasttime: str
    instances: list[str]


class StmgrBackpressureModel(BaseModel):
    id: str
    container: int | None
    paused: bool = Field(description="its spouts are not being read (it or a peer is in "
                                     "backpressure)")
    initiated: bool = Field(description="one of its queues is over the high watermark")
    time_paused_ms: MetricValue | None = Field(description="spouts paused during the window")
    time_initiated_ms: MetricValue | None
    buffered_bytes: MetricValue | None
    largest_queue_bytes: MetricValue | None
    instance_ids: list[str]


class InstanceBackpressureModel(BaseModel):
    id: str
    component: str
    stmgr_id: str
    spout: bool
    throttled: bool = Field(description="a spout whose Stream Manager is not reading it")
    stmgr_initiated: bool = Field(description="its Stream Manager started the backpressure")
    by_stmgr: dict[str, MetricValue] = Field(
        description="Stream Manager metrics about this instance (named '<metric>/<instance id>')")


class BackpressureModel(BaseModel):
    topology: str
    interval: int
    starttime: float | None
    endtime: float
    stmgrs: dict[str, StmgrBackpressureModel]
    instances: dict[str, InstanceBackpressureModel]


class HealthModel(BaseModel):
    """The Health Manager's records (``heron health --json``), oldest first: each a
    symptom, diagnosis, action or note as ``HealthEvent.to_json()`` shapes it."""

    topology: str
    mode: str = Field(default="disabled",
                      description="the topology's heron.topology.healthmgr.mode as configured")
    enabled: bool = Field(default=False, description="whether that mode runs a Health Manager "
                                             "(cluster)")
    records: list[dict[str, Any]]


class LogFileModel(BaseModel):
    name: str
    owner: str = Field(description="the instance or process that writes it")
    container: int | None
    size: int
    mtime: float
    host: str | None = Field(default=None, description="the node a cluster container's file is on "
                                                "(read through its shell); null on this machine")
    url: str


# -- from protobuf ---------------------------------------------------------------------------
def state_name(state: int) -> str:
    try:
        return topology_pb2.TopologyState.Name(state)
    except ValueError:
        return str(state)


def execution_state(message: execution_state_pb2.ExecutionState) -> ExecutionStateModel:
    release = message.release_state
    return ExecutionStateModel(
        topology_name=message.topology_name, topology_id=message.topology_id,
        cluster=message.cluster or "local", environ=message.environ or "default",
        role=message.role or message.submission_user,
        submission_time=message.submission_time if message.HasField("submission_time") else None,
        submission_user=message.submission_user, release_username=release.release_username,
        release_tag=release.release_tag, release_version=release.release_version)


def tmanager_location(message: tmanager_pb2.TManagerLocation) -> TManagerLocationModel:
    def port(field: str) -> int | None:
        return getattr(message, field) if message.HasField(field) else None
    return TManagerLocationModel(
        name=message.topology_name, id=message.topology_id, host=message.host,
        controller_port=port("controller_port"), server_port=port("server_port"),
        stats_port=port("stats_port"), controller_endpoint=message.controller_endpoint,
        server_endpoint=message.server_endpoint)


def scheduler_location(message: scheduler_pb2.SchedulerLocation) -> SchedulerLocationModel:
    return SchedulerLocationModel(name=message.topology_name, http_endpoint=message.http_endpoint,
                                  job_page_link=list(message.job_page_link))


def _source(component: ComponentDef) -> tuple[str, str]:
    if component.python_class:
        return "python", component.python_class
    command, script = component.shell or ("", "")
    return "shell", f"{command} {script}".strip()


def _outputs(component: ComponentDef) -> list[OutputStreamModel]:
    return [OutputStreamModel(stream_name=s.name, fields=list(s.fields), direct=s.direct)
            for s in component.outputs.values()]


def logical_plan(plan: LogicalPlan, topology_id: str, stages: int) -> LogicalPlanModel:
    """From an ``engine.common.plan.logical.LogicalPlan``."""
    spouts: dict[str, SpoutModel] = {}
    bolts: dict[str, BoltModel] = {}
    for name, component in plan.components.items():
        kind, source = _source(component)
        if component.is_spout:
            spouts[name] = SpoutModel(config=dict(component.config), spout_type=kind,
                                      spout_source=source, parallelism=component.parallelism,
                                      outputs=_outputs(component))
        else:
            inputs = [InputStreamModel(stream_name=i.stream, component_name=i.source,
                                       grouping=i.grouping, fields=list(i.fields),
                                       custom_grouping=i.custom_grouping)
                      for i in component.inputs]
            bolts[name] = BoltModel(config=dict(component.config), bolt_type=kind,
                                    bolt_source=source, parallelism=component.parallelism,
                                    outputs=_outputs(component), inputs=inputs,
                                    inputComponents=list(dict.fromkeys(i.source
                                                                       for i in component.inputs)))
    return LogicalPlanModel(topology=plan.name, id=topology_id, spouts=spouts, bolts=bolts,
                            component_order=list(plan.components), stages=stages)


def packing_plan(message: packing_plan_pb2.PackingPlan) -> PackingPlanModel:
    def resource(r: packing_plan_pb2.Resource) -> ResourceModel:
        return ResourceModel(cpu=r.cpu, ram=r.ram, disk=r.disk)

    return PackingPlanModel(id=message.id, container_plans=[
        ContainerPlanModel(
            id=c.id,
            instances=[PackedInstanceModel(component_name=i.component_name, task_id=i.task_id,
                                           component_index=i.component_index,
                                           instance_resources=resource(i.resource))
                       for i in c.instance_plans],
            required_resources=resource(c.required_resource),
            scheduled_resources=resource(c.scheduled_resource)
            if c.HasField("scheduled_resource") else None)
        for c in message.container_plans])


#: TopologyInfoModel names SchedulerStatusModel before it is defined
TopologyInfoModel.model_rebuild()
