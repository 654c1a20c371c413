"""The tracker's answers: what each endpoint returns, built from one topology's record.

``engine.tools.tracker.service`` reads (the state manager's nodes, the Topology Master's
metrics and exceptions, the kept history); each function here takes the
:class:`~engine.tools.tracker.service.TopologyRecord` of one request and shapes what it read
into the response models of ``engine.tools.tracker.models``, checking the request's component
and instance names on the way (422 naming the ones there are). ``routes.py`` maps each
URL to one of these functions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from engine.common.launch import instance_id
from engine.common.plan.topology_config import topology_config
from engine.common.process.restart_policy import LAST_ERROR_METRIC, crash_loop_error
from engine.common.runtime.checkpoint_stats import START_REASONS
from engine.common.runtime.source_lag import component_totals, lag_rows
from engine.config.errors import ConfigError
from engine.config.keys import RELIABILITY_MODE_KEY
from engine.config.reliability import reliability
from engine.healthmgr.errors import HealthConfigError
from engine.healthmgr.policies.config import HEALTHMGR_MODE, healthmgr_enabled
from engine.healthmgr.store import KIND, records_of
from engine.scheduler.slurm.scheduler import STATUS_FILE
from engine.submitter.stateful_guard import effectively_once, stateful_components
from engine.tmanager.client import TManagerUnavailable
from engine.tmanager.staleness import stale_age
from engine.tools.tracker import checkpoint_models, lag_models, models
from engine.tools.tracker.errors import NotFound, Unavailable
from engine.tools.tracker.history import Value, parse_value
from engine.tools.tracker.service import TopologyRecord

#: the component name the Stream Managers' own metrics are listed under
STMGR_COMPONENT = "__stmgr__"
#: the component the Topology Master's own metrics are listed under
#: (engine.tmanager.master.TMANAGER_COMPONENT)
TMANAGER_COMPONENT = "__tmanager__"
#: topology.stateful.checkpoint.interval.seconds (Heron's key)
CHECKPOINT_INTERVAL_KEY = "topology.stateful.checkpoint.interval.seconds"


def log_url(topology: str, name: str) -> str:
    return "/topologies/logfile?" + urlencode({"topology": topology, "name": name})


def status(record: TopologyRecord) -> models.TopologyStatus:
    e = record.execution
    release = e.release_state if e is not None else None
    return models.TopologyStatus(
        name=record.name, id=record.id, cluster=record.cluster, environ=record.environ,
        role=record.role, state=record.state,
        submission_time=(e.submission_time if e is not None and e.HasField("submission_time")
                         else None),
        submission_user=e.submission_user if e is not None else "",
        release_username=release.release_username if release is not None else "",
        release_tag=release.release_tag if release is not None else "",
        release_version=release.release_version if release is not None else "",
        has_physical_plan=record.node("pplans") is not None,
        has_packing_plan=record.node("packingplans") is not None,
        has_tmanager_location=record.node("tmanagers") is not None,
        has_scheduler_location=record.node("schedulers") is not None)


def physical_plan(record: TopologyRecord) -> models.PhysicalPlanModel:
    pplan = record.pplan()
    plan = record.plan
    present = {f.name for f in record.log_files()}

    def url(process: str) -> str | None:
        return log_url(record.name, f"{process}.log") if f"{process}.log" in present else None

    stmgrs: dict[str, models.StmgrModel] = {}
    for s in pplan.stmgrs:
        container = s.container_id if s.HasField("container_id") else None
        processes = [s.id] + ([f"metricsmgr-{container}", f"executor-{container}"]
                              if container is not None else [])
        stmgrs[s.id] = models.StmgrModel(
            id=s.id, container=container, host=s.host_name, cwd=s.cwd,
            pid=s.pid if s.HasField("pid") else None, data_endpoint=s.data_endpoint,
            local_endpoint=s.local_endpoint, instance_ids=[],
            logfiles={p: u for p in processes if (u := url(p)) is not None})
    instances: dict[str, models.InstanceModel] = {}
    spouts: dict[str, list[str]] = {n: [] for n in plan.spouts}
    bolts: dict[str, list[str]] = {n: [] for n in plan.bolts}
    for inst in pplan.instances:
        stmgr = stmgrs.get(inst.stmgr_id)
        instances[inst.instance_id] = models.InstanceModel(
            id=inst.instance_id, name=inst.info.component_name, task_id=inst.info.task_id,
            component_index=inst.info.component_index, stmgr_id=inst.stmgr_id,
            container=stmgr.container if stmgr is not None else None,
            logfile=url(inst.instance_id))
        if stmgr is not None:
            stmgr.instance_ids.append(inst.instance_id)
        group = spouts if inst.info.component_name in spouts else bolts
        group.setdefault(inst.info.component_name, []).append(inst.instance_id)
    return models.PhysicalPlanModel(
        topology=record.name, id=record.id, state=models.state_name(pplan.topology.state),
        instances=instances, stmgrs=stmgrs, spouts=spouts, bolts=bolts,
        config=dict(plan.config),
        components={n: dict(c.config) for n, c in plan.components.items()})


def logical_plan(record: TopologyRecord) -> models.LogicalPlanModel:
    layout = record.tracker.layout(record.topology)
    stages = 1 + max((n.layer for n in layout.nodes), default=0)
    return models.logical_plan(record.plan, record.id, stages)


def layout(record: TopologyRecord) -> models.DagLayoutModel:
    lay = record.tracker.layout(record.topology)
    return models.DagLayoutModel(
        topology=record.name, width=lay.width, height=lay.height,
        nodes=[models.DagNodeModel(**vars(n)) for n in lay.nodes],
        edges=[models.DagEdgeModel(**vars(e)) for e in lay.edges])


def info(record: TopologyRecord) -> models.TopologyInfoModel:
    e, tm, sched = record.execution, record.node("tmanagers"), record.node("schedulers")
    packing = record.node("packingplans")
    wd = record.working_dir
    return models.TopologyInfoModel(
        name=record.name, id=record.id, cluster=record.cluster, environ=record.environ,
        role=record.role, state=record.state, working_dir=str(wd) if wd is not None else None,
        execution_state=models.execution_state(e) if e is not None else None,
        tmanager_location=models.tmanager_location(tm) if tm is not None else None,
        scheduler_location=models.scheduler_location(sched) if sched is not None else None,
        logical_plan=logical_plan(record),
        physical_plan=physical_plan(record) if record.node("pplans") is not None else None,
        packing_plan=models.packing_plan(packing) if packing is not None else None,
        cluster_scheduler=_scheduler_status_or_none(record))


def _scheduler_status_or_none(record: TopologyRecord) -> models.SchedulerStatusModel | None:
    try:
        return scheduler_status(record)
    except NotFound:
        return None


def check_component(record: TopologyRecord, component: str | None) -> None:
    if component is None or component == STMGR_COMPONENT:
        return
    known = record.components()
    if component not in known:
        raise NotFound(f"topology {record.name!r} has no component {component!r} "
                       f"(components: {', '.join(known)}, {STMGR_COMPONENT})")


def check_instances(record: TopologyRecord, component: str | None, instances: list[str]) -> None:
    if not instances:
        return
    pplan = record.pplan()
    owners = {i.instance_id: i.info.component_name for i in pplan.instances}
    owners.update({s.id: STMGR_COMPONENT for s in pplan.stmgrs})
    for instance in instances:
        owner = owners.get(instance)
        if owner is None:
            raise NotFound(f"topology {record.name!r} has no instance {instance!r}")
        if component is not None and owner != component:
            raise NotFound(f"instance {instance!r} of {record.name!r} belongs to {owner!r}, "
                           f"not {component!r}")


def metrics(record: TopologyRecord, component: str | None, names: list[str],
            instances: list[str], interval: int) -> models.MetricsModel:
    check_component(record, component)
    check_instances(record, component, instances)
    win = record.tracker.window(record, interval)
    wanted_names, wanted_instances = set(names), set(instances)
    out: dict[str, dict[str, Any]] = {}
    components: dict[str, str] = {}
    stale: dict[str, float] = {}
    for instance, values in win.values.items():
        owner = win.components.get(instance, "")
        if component is not None and owner != component:
            continue
        if wanted_instances and instance not in wanted_instances:
            continue
        components[instance] = owner
        age = stale_age(values)
        if age is not None:
            stale[instance] = age
        for name, value in values.items():
            if not wanted_names or name in wanted_names:
                out.setdefault(name, {})[instance] = value
    return models.MetricsModel(topology=record.name, component=component, interval=interval,
                               starttime=win.start, endtime=win.end, metrics=out,
                               components=components, stale=stale)


def timeline(record: TopologyRecord, component: str | None, names: list[str],
             instances: list[str], start: float, end: float) -> models.TimelineModel:
    check_component(record, component)
    check_instances(record, component, instances)
    # "PREFIX*" asks for every metric named PREFIX... (per-instance metrics such as
    # __time_spent_back_pressure_by_compid/<instance>, whose instances come and go)
    prefixes = tuple(n[:-1] for n in names if n.endswith("*"))
    wanted_names, wanted_instances = {n for n in names if not n.endswith("*")}, set(instances)
    everything = not names
    out: dict[str, dict[str, dict[str, Any]]] = {}
    owners: dict[str, str] = {}
    for snap in record.tracker.history.timeline(record.name, record.id, start, end):
        stamp = f"{snap.time:.3f}"
        for instance, values in snap.values.items():
            if component is not None and snap.components.get(instance) != component:
                continue
            if wanted_instances and instance not in wanted_instances:
                continue
            for name, text in values.items():
                if everything or name in wanted_names or (prefixes and name.startswith(prefixes)):
                    out.setdefault(name, {}).setdefault(instance, {})[stamp] = parse_value(text)
                    owners.setdefault(instance, snap.components.get(instance, ""))
    return models.TimelineModel(topology=record.name, component=component, starttime=start,
                                endtime=end, timeline=out, components=owners)


def parallelism_timeline(record: TopologyRecord, component: str | None, start: float,
                         end: float) -> models.ParallelismTimelineModel:
    """Instances per component at each recorded snapshot between two times."""
    check_component(record, component)
    out: dict[str, dict[str, int]] = {}
    for snap in record.tracker.history.timeline(record.name, record.id, start, end):
        stamp = f"{snap.time:.3f}"
        for name, count in snap.parallelism.items():
            if component is None or name == component:
                out.setdefault(name, {})[stamp] = count
    return models.ParallelismTimelineModel(topology=record.name, component=component,
                                           starttime=start, endtime=end, parallelism=out)


def health(record: TopologyRecord) -> models.HealthModel:
    mode = topology_config(record.topology).get(HEALTHMGR_MODE, "disabled")
    try:
        enabled = healthmgr_enabled({HEALTHMGR_MODE: mode})
    except HealthConfigError:
        enabled = False
    return models.HealthModel(topology=record.name, mode=str(mode), enabled=enabled,
                              records=records_of(record.node(KIND)))


def restarts(record: TopologyRecord, component: str | None) -> models.RestartsModel:
    check_component(record, component)
    snap = record.tracker.snapshot(record)
    rows = []
    for instance, values in sorted(snap.values.items()):
        owner = snap.components.get(instance, "")
        if component is not None and owner != component:
            continue
        if "__restart-count" not in values and "__process-restarts" not in values:
            continue
        error = crash_loop_error(values)
        rows.append(models.InstanceRestartsModel(
            instance=instance, component=owner,
            restarts=(_restart_count(values, "__restart-count")
                      + _restart_count(values, "__process-restarts")),
            crash_looping=error is not None,
            last_error=error or values.get(LAST_ERROR_METRIC, "")))
    return models.RestartsModel(topology=record.name,
                                crash_looping=[r for r in rows if r.crash_looping],
                                instances=rows)


def _restart_count(values: Mapping[str, Value], name: str) -> int:
    """One restart figure of an instance's metrics, 0 when missing or not a number."""
    try:
        return int(float(values.get(name, 0)))
    except ValueError:
        return 0


def scheduler_status(record: TopologyRecord) -> models.SchedulerStatusModel:
    """The cluster scheduler's view: jobs, nodes, recoveries (NotFound for a topology
    whose scheduler keeps no such status, e.g. ``local``)."""
    wd = record.working_dir
    try:
        status = json.loads((wd / STATUS_FILE).read_text()) if wd is not None else None
    except (OSError, ValueError):
        status = None
    if not status:
        raise NotFound(f"topology {record.name!r} has no cluster scheduler status (it runs "
                       f"on the local scheduler, or on a cluster submitted from another "
                       f"machine)")
    return models.SchedulerStatusModel(
        topology=record.name, scheduler=status.get("scheduler", "?"),
        jobs=[models.ContainerJobModel(container=j["container"], job_id=str(j["job_id"]),
                                       node=j.get("node") or "", state=j.get("state", "?"),
                                       incarnation=int(j.get("incarnation", 0)))
              for j in status.get("jobs", [])],
        excluded_nodes=list(status.get("excluded", [])),
        recoveries=[models.RecoveryModel(**r) for r in status.get("recoveries", [])])


def exceptions(record: TopologyRecord, component: str | None,
               instances: list[str]) -> list[models.ExceptionModel]:
    check_component(record, component)
    check_instances(record, component, instances)
    present = {f.name for f in record.log_files()}
    out = []
    for e in record.tmanager().exceptions(component, instances):
        logfile = f"{e.instance_id}.log"
        out.append(models.ExceptionModel(
            component=e.component_name, instance_id=e.instance_id, hostname=e.hostname,
            stacktrace=e.stacktrace, firsttime=e.firsttime, lasttime=e.lasttime, count=e.count,
            logging=e.logging,
            logfile=log_url(record.name, logfile) if logfile in present else None))
    return out


def exception_summary(record: TopologyRecord, component: str | None,
                      instances: list[str]) -> list[models.ExceptionSummaryModel]:
    """Exceptions grouped by component and class (the first line's ``Name:`` prefix)."""
    groups: dict[tuple[str, str], models.ExceptionSummaryModel] = {}
    for e in exceptions(record, component, instances):
        head = e.stacktrace.strip().splitlines()[0] if e.stacktrace.strip() else ""
        class_name = head.split(":", 1)[0].strip() or "unknown"
        key = (e.component, class_name)
        summary = groups.get(key)
        if summary is None:
            groups[key] = models.ExceptionSummaryModel(
                class_name=class_name, component=e.component, count=e.count,
                firsttime=e.firsttime, lasttime=e.lasttime, instances=[e.instance_id])
            continue
        summary.count += e.count
        summary.lasttime = max(summary.lasttime, e.lasttime)
        summary.firsttime = min(t for t in (summary.firsttime, e.firsttime) if t) \
            if summary.firsttime or e.firsttime else ""
        if e.instance_id not in summary.instances:
            summary.instances.append(e.instance_id)
    return list(groups.values())


def backpressure(record: TopologyRecord, interval: int) -> models.BackpressureModel:
    pplan = record.pplan()
    win = record.tracker.window(record, interval)
    plan = record.plan
    stmgrs: dict[str, models.StmgrBackpressureModel] = {}
    for s in pplan.stmgrs:
        values = win.values.get(s.id, {})
        stmgrs[s.id] = models.StmgrBackpressureModel(
            id=s.id, container=s.container_id if s.HasField("container_id") else None,
            paused=bool(values.get("__backpressure", 0)),
            initiated=bool(values.get("__backpressure-initiated", 0)),
            time_paused_ms=values.get("__time-spouts-paused-ms"),
            time_initiated_ms=values.get("__time-spent-back-pressure-initiated-ms"),
            buffered_bytes=values.get("__buffered-bytes"),
            largest_queue_bytes=values.get("__largest-queue-bytes"),
            instance_ids=[i.instance_id for i in pplan.instances if i.stmgr_id == s.id])
    instances: dict[str, models.InstanceBackpressureModel] = {}
    for inst in pplan.instances:
        component = inst.info.component_name
        spout = component in plan.spouts
        stmgr = stmgrs.get(inst.stmgr_id)
        suffix = "/" + inst.instance_id
        by_stmgr = {name[:-len(suffix)]: value
                    for name, value in win.values.get(inst.stmgr_id, {}).items()
                    if name.endswith(suffix)}
        instances[inst.instance_id] = models.InstanceBackpressureModel(
            id=inst.instance_id, component=component, stmgr_id=inst.stmgr_id, spout=spout,
            throttled=bool(spout and stmgr is not None and stmgr.paused),
            stmgr_initiated=bool(stmgr is not None and stmgr.initiated), by_stmgr=by_stmgr)
    return models.BackpressureModel(topology=record.name, interval=interval,
                                    starttime=win.start, endtime=win.end, stmgrs=stmgrs,
                                    instances=instances)


def log_files(record: TopologyRecord) -> list[models.LogFileModel]:
    return [models.LogFileModel(name=f.name, owner=f.owner, container=f.container, size=f.size,
                                mtime=f.mtime, host=f.host, url=log_url(record.name, f.name))
            for f in record.log_files()]


# -- checkpoints (EFFECTIVELY_ONCE) ------------------------------------------------------------
def reliability_mode(conf: dict[str, Any]) -> str:
    """The topology's reliability mode as the engines resolve it (Heron's key, else
    Storm's ackers); a config that does not resolve shows the mode key's text."""
    try:
        resolved = reliability(conf)
    except ConfigError:
        return str(conf.get(RELIABILITY_MODE_KEY, "?")).upper()
    if resolved.effectively_once:
        return "EFFECTIVELY_ONCE"
    return "ATLEAST_ONCE" if resolved.acking else "ATMOST_ONCE"


def _int(values: dict[str, str], name: str) -> int:
    try:
        return int(float(values.get(name, 0)))
    except ValueError:
        return 0


def _float(values: dict[str, str], name: str) -> float:
    try:
        return float(values.get(name, 0))
    except ValueError:
        return 0.0


def _restore(reason: str, checkpoint_id: str) -> checkpoint_models.RestoreModel:
    return checkpoint_models.RestoreModel(reason=reason, checkpoint_id=checkpoint_id,
                                          at_start=reason in START_REASONS)


def _task_ids(record: TopologyRecord) -> dict[str, int]:
    """Instance id -> task id, from the physical plan, else the packing plan (the one
    the Topology Master builds the physical plan from), so a task's row names its task
    even before the physical plan is stored."""
    pplan = record.node("pplans")
    if pplan is not None:
        return {i.instance_id: i.info.task_id for i in pplan.instances}
    packing = record.node("packingplans")
    return {instance_id(c.id, i.component_name, i.task_id): i.task_id
            for c in (packing.container_plans if packing is not None else ())
            for i in c.instance_plans}


def checkpoint_figures(tm: dict[str, str]) -> checkpoint_models.CheckpointFiguresModel:
    """The Topology Master's ``__checkpoint*`` and ``__restore*`` metrics as one model; a
    restore log that is not the JSON list it writes counts as empty rather than failing
    the whole answer (the other figures are still right)."""
    try:
        log = [(str(r), str(c)) for r, c in json.loads(tm.get("__restore-log") or "[]")]
    except (TypeError, ValueError):
        log = []
    restores = [_restore(r, c) for r, c in reversed(log)]  # newest first
    last_reason = tm.get("__restore-last-reason", "")
    last = _restore(last_reason, tm.get("__restore-last-checkpoint", "")) \
        if last_reason or _int(tm, "__restores") else None
    return checkpoint_models.CheckpointFiguresModel(
        completed=_int(tm, "__checkpoints-completed"),
        abandoned=_int(tm, "__checkpoints-abandoned"),
        last_checkpoint_id=tm.get("__checkpoint-last-id", ""),
        last_duration_ms=_int(tm, "__checkpoint-last-duration-ms"),
        last_bytes=_int(tm, "__checkpoint-last-bytes"),
        restores=_int(tm, "__restores"),
        rollbacks=sum(1 for r in restores if not r.at_start),
        last_restore=last, last_restore_ms=_int(tm, "__restore-last-ms"),
        restore_log=restores, last_rescale=_rescales(tm))


def _rescales(tm: dict[str, str]) -> list[checkpoint_models.RescaleModel]:
    try:
        last = json.loads(tm.get("__rescale-last") or "{}")
        return [checkpoint_models.RescaleModel(component=str(c), tasks_before=int(b),
                                               tasks_after=int(a), key_groups_moved=int(m))
                for c, (b, a, m) in sorted(last.items())]
    except (TypeError, ValueError):
        return []


def checkpoints(record: TopologyRecord) -> checkpoint_models.CheckpointsModel:
    """An EFFECTIVELY_ONCE topology's checkpoints: the consistent ones from the state
    manager (there even while its Topology Master is down, which is when a rollback
    will need them), the Topology Master's figures, and each task's and Stream Manager's
    side, asked now. Another mode is an answer that says it takes none, not an error:
    the page asks every topology."""
    conf = topology_config(record.topology)
    mode = reliability_mode(conf)
    interval = conf.get(CHECKPOINT_INTERVAL_KEY)
    out = checkpoint_models.CheckpointsModel(
        topology=record.name, reliability_mode=mode,
        effectively_once=effectively_once(record.topology),
        interval_secs=float(interval) if isinstance(interval, (int, float))
        and not isinstance(interval, bool) else None)
    if not out.effectively_once:
        out.note = (f"topology {record.name!r} is {mode}: it takes no checkpoints "
                    f"({RELIABILITY_MODE_KEY}: EFFECTIVELY_ONCE turns them on)")
        return out
    stored = record.node("statefulcheckpoints")
    for c in stored.consistent_checkpoints if stored is not None else ():
        out.consistent.append(checkpoint_models.ConsistentCheckpointModel(
            checkpoint_id=c.checkpoint_id, packing_plan_id=c.packing_plan_id,
            completed_at=c.completed_at_ms / 1000 if c.HasField("completed_at_ms") else None,
            duration_secs=c.duration_secs, bytes=c.bytes))
    try:
        snap = record.tracker.snapshot(record)
    except (Unavailable, TManagerUnavailable) as exc:
        out.note = f"no live figures: {exc}"
        return out
    out.endtime = snap.time
    stateful = stateful_components(record.topology)
    task_ids = _task_ids(record)
    for instance, values in sorted(snap.values.items()):
        owner = snap.components.get(instance, "")
        if owner == TMANAGER_COMPONENT and "__checkpoints-completed" in values:
            out.tmanager = checkpoint_figures(values)
        elif owner == STMGR_COMPONENT and "__checkpoint-markers-sent" in values:
            out.stmgrs.append(checkpoint_models.StmgrCheckpointModel(
                id=instance, markers_sent=_int(values, "__checkpoint-markers-sent"),
                alignments_abandoned=_int(values, "__checkpoint-alignments-abandoned"),
                held_bytes=_int(values, "__checkpoint-held-bytes"),
                rollback_discarded_messages=_int(values, "__rollback-discarded-messages")))
        elif "__checkpoint-saves" in values:
            out.tasks.append(checkpoint_models.TaskCheckpointModel(
                instance=instance, component=owner, task_id=task_ids.get(instance),
                stateful=owner in stateful, saves=_int(values, "__checkpoint-saves"),
                state_bytes=_int(values, "__checkpoint-bytes"),
                save_ms=_float(values, "__checkpoint-save-ms"),
                restores=_int(values, "__restores"), restore_ms=_float(values, "__restore-ms"),
                keyed_keys=_int(values, "__keyed-keys"),
                key_groups=_int(values, "__key-groups-owned"),
                keys_written=_int(values, "__checkpoint-keys-written"),
                stale_secs=stale_age(values)))
    if out.tmanager is None:
        out.note = ("the Topology Master reports no checkpoint figures yet (it starts its "
                    "checkpoints once the physical plan is built)")
    return out


# -- source lag (Kafka spouts) ---------------------------------------------------------------
def source_lag(record: TopologyRecord, component: str | None) -> lag_models.SourceLagModel:
    """Kafka spouts' lag per partition and per component, from the Topology Master's
    latest figures (asked now: 503 when it does not answer, as ``metrics``). A topology
    without Kafka spouts is an answer with empty lists, not an error: the page asks
    every topology."""
    check_component(record, component)
    snap = record.tracker.snapshot(record)
    triples = [(snap.components.get(i, ""), i, v) for i, v in sorted(snap.values.items())
               if component is None or snap.components.get(i) == component]
    task_ids = _task_ids(record)
    out = lag_models.SourceLagModel(topology=record.name, endtime=snap.time, partitions=[
        lag_models.PartitionLagModel(
            component=r.component, instance=r.instance, task_id=task_ids.get(r.instance),
            topic=r.topic, partition=r.partition, lag=r.lag, emitted_offset=r.emitted,
            committed_offset=r.committed, earliest_offset=r.earliest, end_offset=r.end,
            stale_secs=stale_age(snap.values[r.instance]))
        for r in lag_rows(triples)], components=[
        lag_models.ComponentLagModel(**vars(t)) for t in component_totals(triples)])
    if not out.components:
        out.note = ("no instance reports Kafka offsets (a KafkaSpout reports them each "
                    "second once it has its partitions)")
    return out
