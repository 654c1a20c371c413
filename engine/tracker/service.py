"""The tracker itself: reads the state manager, asks Topology Masters, keeps history.

One :class:`Tracker` per server. It opens the state manager once (the ZooKeeper client
and the local manager are both safe to share between threads), reads a topology's nodes
on every request (the state manager is the source of truth: a kill or a resubmission
shows at once), and polls every running topology's Topology Master in a background
thread to keep the metric snapshots the time windows are computed from.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from engine.tracker import dag, logs, models
from engine.tracker.errors import BadParameter, NotFound, TrackerError, Unavailable
from engine.tracker.history import MetricsHistory, Window
from engine.tracker.tmanager_client import MetricsSnapshot, TManagerClient

log = logging.getLogger("heron.tracker")

STMGR_COMPONENT = "__stmgr__"


@dataclass
class TrackerSettings:
    """How often to poll, how much to keep, how long to wait."""

    #: seconds between two metric snapshots of each topology
    poll_interval: float = 5.0
    #: seconds of snapshots kept per topology (the longest window served)
    history_secs: float = 3 * 3600.0
    #: bound on one request to a Topology Master; past it the answer is a 503
    tm_timeout: float = 3.0
    #: HERON_HOME, to find working directories the state does not name
    home: Path | None = None


def _check_name(name: str) -> None:
    if not name or "/" in name or name.startswith("."):
        raise BadParameter("topology", f"{name!r} is not a topology name (not empty, no '/', "
                                       "no leading '.')")


class TopologyRecord:
    """One topology's stored nodes, each read on first use during one request.

    The ``topologies`` node itself is read on first use too, so a request's parameters
    are all validated (422) before an unknown topology is looked up (404)."""

    def __init__(self, tracker: Tracker, name: str, topology: Any = None, *,
                 cluster: str | None = None, environ: str | None = None) -> None:
        _check_name(name)
        self.tracker = tracker
        self.name = name
        self._cache: dict[str, Any] = {}
        if topology is not None:
            self._cache["topologies"] = topology
        self._wanted = (cluster, environ)
        self._checked = False

    def node(self, kind: str) -> Any:
        if kind != "topologies":
            self.topology  # noqa: B018 (an unknown topology is a 404 before anything else)
        if kind not in self._cache:
            self._cache[kind] = self.tracker.read(kind, self.name)
        return self._cache[kind]

    @property
    def topology(self) -> Any:
        """The stored Topology; NotFound naming the ones there are, or when it is not in
        the cluster/environ asked for."""
        if "topologies" not in self._cache:
            self._cache["topologies"] = self.tracker.read("topologies", self.name)
        topology = self._cache["topologies"]
        if topology is None:
            running = self.tracker.names()
            raise NotFound(f"no topology named {self.name!r} in {self.tracker.describe_state()} "
                           f"(topologies: {', '.join(running) or 'none'})")
        if not self._checked:
            self._checked = True
            cluster, environ = self._wanted
            if cluster is not None and cluster != self.cluster:
                raise NotFound(f"topology {self.name!r} runs in cluster {self.cluster!r}, "
                               f"not {cluster!r}")
            if environ is not None and environ != self.environ:
                raise NotFound(f"topology {self.name!r} runs in environ {self.environ!r}, "
                               f"not {environ!r}")
        return topology

    @property
    def id(self) -> str:
        return self.topology.id

    @property
    def execution(self) -> Any:
        return self.node("executionstate")

    @property
    def cluster(self) -> str:
        return (self.execution.cluster if self.execution is not None else "") or "local"

    @property
    def environ(self) -> str:
        return (self.execution.environ if self.execution is not None else "") or "default"

    @property
    def role(self) -> str:
        e = self.execution
        return ((e.role or e.submission_user) if e is not None else "") or "unknown"

    @property
    def state(self) -> str:
        pplan = self.node("pplans")
        live = pplan.topology.state if pplan is not None and pplan.HasField("topology") \
            else self.topology.state
        return models.state_name(live)

    @property
    def plan(self) -> Any:
        return self.tracker.logical_plan(self.topology)

    @property
    def working_dir(self) -> Path | None:
        return logs.working_dir(self.name, self.node("schedulers"), self.node("pplans"),
                                self.tracker.settings.home)

    def components(self) -> list[str]:
        return list(self.plan.components)

    def log_files(self) -> list[logs.ServedLog]:
        """The topology's log files: this machine's and, on a cluster, its running
        containers' (through their shells), read once per request."""
        if "_logs" not in self._cache:
            from engine.shell.client import ShellClient, container_shells

            shells = container_shells(_Nodes(self), self.name)
            timeout = min(self.tracker.settings.tm_timeout, 3.0)
            security = None
            if shells:
                try:
                    security = self.tracker.security(self.name)
                except Unavailable as exc:  # no keys here: the plans still show, sans logs
                    log.warning("cannot read the logs of %s's containers: %s", self.name, exc)
                    shells = {}
            self._cache["_logs"] = logs.served_logs(
                self.working_dir, shells,
                lambda c, endpoint: ShellClient(c, endpoint, self.topology.id, security,
                                                timeout=timeout))
        return self._cache["_logs"]

    def tmanager(self) -> TManagerClient:
        location = self.node("tmanagers")
        if location is None or not location.controller_endpoint:
            raise Unavailable(f"the Topology Master of {self.name!r} is not running (no "
                              f"tmanagers/{self.name} in {self.tracker.describe_state()})")
        return TManagerClient(self.name, location.controller_endpoint,
                              self.tracker.settings.tm_timeout,
                              security=self.tracker.security(self.name))

    def pplan(self) -> Any:
        pplan = self.node("pplans")
        if pplan is None:
            raise Unavailable(f"the physical plan of {self.name!r} is not built yet (its "
                              "Topology Master builds it once every Stream Manager registers)")
        return pplan


class _Nodes:
    """A record's cached nodes with the state manager's ``get``, for code written
    against the state manager (engine.shell.client.container_shells)."""

    def __init__(self, record: TopologyRecord) -> None:
        self.record = record

    def get(self, kind: str, name: str) -> Any:
        return self.record.node(kind)


class Tracker:
    def __init__(self, state_spec: Any, settings: TrackerSettings | None = None) -> None:
        self.state_spec = state_spec
        self.settings = settings or TrackerSettings()
        self.history = MetricsHistory(max_age=self.settings.history_secs,
                                      min_spacing=self.settings.poll_interval * 0.8)
        self._state: Any = None
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None
        self._plans: dict[str, tuple[Any, Any]] = {}  # topology id -> (plan, layout)
        self._plans_lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------------------
    def start(self, *, poll: bool = True) -> None:
        """Open the state manager (StateError when it cannot be) and start polling."""
        if self._state is None:
            self._state = self.state_spec.open()
        if poll and self._poller is None and self.settings.poll_interval > 0:
            self._stop.clear()
            self._poller = threading.Thread(target=self._poll_loop, name="tracker-poller",
                                            daemon=True)
            self._poller.start()

    def stop(self) -> None:
        self._stop.set()
        if self._poller is not None:
            self._poller.join(self.settings.tm_timeout + 5)
            self._poller = None
        if self._state is not None:
            self._state.close()
            self._state = None

    def describe_state(self) -> str:
        return self.state_spec.describe()

    # -- the state manager ---------------------------------------------------------------
    def read(self, kind: str, name: str) -> Any:
        from engine.statemgr import StateError

        if self._state is None:
            raise Unavailable("the tracker is not started")
        try:
            return self._state.get(kind, name)
        except StateError as exc:
            raise Unavailable(f"state manager ({self.describe_state()}): {exc}") from None

    def security(self, name: str) -> Any:
        """The SocketSecurity that lets the tracker talk to ``name``'s Topology Master
        (its keys, read from the state manager the tracker was given)."""
        from engine.security.guard import SocketSecurity
        from engine.security.keys import KeysError, keys_from_state
        from engine.statemgr import StateError

        if self._state is None:
            raise Unavailable("the tracker is not started")
        try:
            # a tree that cannot keep secrets leaves them in the working directory
            wd = logs.working_dir(name, self.read("schedulers", name),
                                  self.read("pplans", name), self.settings.home)
            return SocketSecurity(keys_from_state(self._state, name, wd))
        except (KeysError, StateError) as exc:
            raise Unavailable(str(exc)) from None

    def names(self) -> list[str]:
        from engine.statemgr import StateError

        if self._state is None:
            raise Unavailable("the tracker is not started")
        try:
            return self._state.topologies()
        except StateError as exc:
            raise Unavailable(f"state manager ({self.describe_state()}): {exc}") from None

    def record(self, name: str, cluster: str | None = None, environ: str | None = None, *,
               lazy: bool = False) -> TopologyRecord:
        """The topology ``name``; NotFound naming the ones there are, or when it is not in
        ``cluster``/``environ`` (at once, or on first use when ``lazy``)."""
        record = TopologyRecord(self, name, cluster=cluster, environ=environ)
        if not lazy:
            record.topology  # noqa: B018 (reads and checks it)
        return record

    def records(self) -> list[TopologyRecord]:
        out = []
        for name in self.names():
            try:
                topology = self.read("topologies", name)
            except Unavailable:
                continue
            if topology is not None:  # killed between the listing and the read
                out.append(TopologyRecord(self, name, topology))
        return out

    def logical_plan(self, topology: Any) -> Any:
        return self._plan_and_layout(topology)[0]

    def layout(self, topology: Any) -> dag.Layout:
        return self._plan_and_layout(topology)[1]

    def _plan_and_layout(self, topology: Any) -> tuple[Any, dag.Layout]:
        """A topology's LogicalPlan and DAG layout, computed once per topology id."""
        from engine.plan.errors import PlanningError
        from engine.plan.logical import LogicalPlan

        with self._plans_lock:
            cached = self._plans.get(topology.id)
        if cached is not None:
            return cached
        try:
            plan = LogicalPlan.from_proto(topology)
        except PlanningError as exc:
            raise TrackerError(f"the stored topology {topology.name!r} cannot be read: "
                               f"{exc}") from None
        cached = (plan, dag.layout_plan(plan))
        with self._plans_lock:
            if len(self._plans) > 256:
                self._plans.clear()
            self._plans[topology.id] = cached
        return cached

    # -- metrics -------------------------------------------------------------------------
    def snapshot(self, record: TopologyRecord) -> MetricsSnapshot:
        """Every metric of the topology now (a live request), also kept in the history."""
        snapshot = record.tmanager().metrics()
        snapshot.parallelism = parallelism_of(record.node("pplans"))
        self.history.record(record.name, record.id, snapshot)
        return snapshot

    def window(self, record: TopologyRecord, interval: int) -> Window:
        return self.history.window(record.name, record.id, self.snapshot(record), interval)

    def _poll_loop(self) -> None:
        while True:
            began = time.monotonic()
            try:
                self.poll_once()
            except Exception:  # a poller that dies silently would freeze every window
                log.exception("polling the Topology Masters failed")
            wait = max(0.05, self.settings.poll_interval - (time.monotonic() - began))
            if self._stop.wait(wait):
                return

    def poll_once(self) -> None:
        """One snapshot of every running topology; topologies gone lose their history."""
        try:
            names = self.names()
        except Unavailable as exc:
            log.debug("cannot list topologies: %s", exc)
            return
        self.history.forget_except(names)
        timeout = min(self.settings.tm_timeout, max(self.settings.poll_interval, 0.5))
        for name in names:
            if self._stop.is_set():
                return
            try:
                location = self.read("tmanagers", name)
                if location is None or not location.controller_endpoint:
                    continue
                snapshot = TManagerClient(name, location.controller_endpoint, timeout,
                                          security=self.security(name)).metrics()
                snapshot.parallelism = parallelism_of(self.read("pplans", name))
                self.history.record(name, location.topology_id, snapshot)
            except Unavailable as exc:
                log.debug("no metrics of %s: %s", name, exc)


def parallelism_of(pplan: Any) -> dict[str, int]:
    """Instances per component in a stored PhysicalPlan (empty for None)."""
    out: dict[str, int] = {}
    for inst in pplan.instances if pplan is not None else ():
        out[inst.info.component_name] = out.get(inst.info.component_name, 0) + 1
    return out


# -- building answers ----------------------------------------------------------------------------
def log_url(topology: str, name: str) -> str:
    return "/topologies/logfile?" + urlencode({"topology": topology, "name": name})


def status(record: TopologyRecord) -> models.TopologyStatus:
    e = record.execution
    release = e.release_state if e is not None else None
    return models.TopologyStatus(
        name=record.name, id=record.id, cluster=record.cluster, environ=record.environ,
        role=record.role, state=record.state,
        submission_time=e.submission_time if e is not None and e.HasField("submission_time") else None,
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
    for instance, values in win.values.items():
        owner = win.components.get(instance, "")
        if component is not None and owner != component:
            continue
        if wanted_instances and instance not in wanted_instances:
            continue
        components[instance] = owner
        for name, value in values.items():
            if not wanted_names or name in wanted_names:
                out.setdefault(name, {})[instance] = value
    return models.MetricsModel(topology=record.name, component=component, interval=interval,
                               starttime=win.start, endtime=win.end, metrics=out,
                               components=components)


def timeline(record: TopologyRecord, component: str | None, names: list[str],
             instances: list[str], start: float, end: float) -> models.TimelineModel:
    check_component(record, component)
    check_instances(record, component, instances)
    from engine.tracker.history import parse_value

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
    from engine.healthmgr.errors import HealthConfigError
    from engine.healthmgr.policies.config import HEALTHMGR_MODE, healthmgr_enabled
    from engine.healthmgr.store import KIND, records_of
    from engine.healthmgr.view import topology_config

    mode = topology_config(record.topology).get(HEALTHMGR_MODE, "disabled")
    try:
        enabled = healthmgr_enabled({HEALTHMGR_MODE: mode})
    except HealthConfigError:
        enabled = False
    return models.HealthModel(topology=record.name, mode=str(mode), enabled=enabled,
                              records=records_of(record.node(KIND)))


def restarts(record: TopologyRecord, component: str | None) -> models.RestartsModel:
    from engine.process.restart_policy import LAST_ERROR_METRIC, crash_loop_error

    check_component(record, component)
    snap = record.tracker.snapshot(record)
    rows = []
    for instance, values in sorted(snap.values.items()):
        owner = snap.components.get(instance, "")
        if component is not None and owner != component:
            continue
        if "__restart-count" not in values and "__process-restarts" not in values:
            continue

        def count(name: str) -> int:
            try:
                return int(float(values.get(name, 0)))
            except ValueError:
                return 0
        error = crash_loop_error(values)
        rows.append(models.InstanceRestartsModel(
            instance=instance, component=owner,
            restarts=count("__restart-count") + count("__process-restarts"),
            crash_looping=error is not None,
            last_error=error or values.get(LAST_ERROR_METRIC, "")))
    return models.RestartsModel(topology=record.name,
                                crash_looping=[r for r in rows if r.crash_looping],
                                instances=rows)


def scheduler_status(record: TopologyRecord) -> models.SchedulerStatusModel:
    """The cluster scheduler's view: jobs, nodes, recoveries (NotFound for a topology
    whose scheduler keeps no such status, e.g. ``local``)."""
    import json

    from engine.scheduler.slurm.scheduler import STATUS_FILE

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
