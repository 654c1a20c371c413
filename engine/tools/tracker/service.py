"""The tracker itself: reads the state manager, asks Topology Masters, keeps history.

One :class:`Tracker` per server. It opens the state manager once (the ZooKeeper client
and the local manager are both safe to share between threads), reads a topology's nodes
on every request (the state manager is the source of truth: a kill or a resubmission
shows at once), and polls every running topology's Topology Master in a background
thread to keep the metric snapshots the time windows are computed from.

The answers each endpoint returns are built from a :class:`TopologyRecord` in
``engine.tools.tracker.answers``; this module only reads and keeps.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.common.launch import StateManagerSpec
from engine.common.plan.errors import PlanningError
from engine.common.plan.logical import LogicalPlan
from engine.common.security.guard import SocketSecurity
from engine.common.security.keys import KeysError, keys_from_state
from engine.messages import execution_state_pb2, physical_plan_pb2, topology_pb2
from engine.shell.client import ShellClient, container_shells
from engine.spi.statemgr import StateManager
from engine.statemgr import StateError
from engine.tmanager.client import MetricsSnapshot, TManagerClient, TManagerUnavailable
from engine.tools.tracker import dag, logs, models
from engine.tools.tracker.errors import BadParameter, NotFound, TrackerError, Unavailable
from engine.tools.tracker.history import MetricsHistory, Window

log = logging.getLogger("heron.tracker")


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

    def __init__(self, tracker: Tracker, name: str,
                 topology: topology_pb2.Topology | None = None, *,
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
    def topology(self) -> topology_pb2.Topology:
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
    def execution(self) -> execution_state_pb2.ExecutionState | None:
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
    def plan(self) -> LogicalPlan:
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

    def pplan(self) -> physical_plan_pb2.PhysicalPlan:
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
    def __init__(self, state_spec: StateManagerSpec,
                 settings: TrackerSettings | None = None) -> None:
        self.state_spec = state_spec
        self.settings = settings or TrackerSettings()
        self.history = MetricsHistory(max_age=self.settings.history_secs,
                                      min_spacing=self.settings.poll_interval * 0.8)
        self._state: StateManager | None = None
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None
        self._plans: dict[str, tuple[LogicalPlan, dag.Layout]] = {}  # topology id -> (plan, layout)
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
        if self._state is None:
            raise Unavailable("the tracker is not started")
        try:
            return self._state.get(kind, name)
        except StateError as exc:
            raise Unavailable(f"state manager ({self.describe_state()}): {exc}") from None

    def security(self, name: str) -> SocketSecurity:
        """The SocketSecurity that lets the tracker talk to ``name``'s Topology Master
        (its keys, read from the state manager the tracker was given)."""
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

    def logical_plan(self, topology: topology_pb2.Topology) -> LogicalPlan:
        return self._plan_and_layout(topology)[0]

    def layout(self, topology: topology_pb2.Topology) -> dag.Layout:
        return self._plan_and_layout(topology)[1]

    def _plan_and_layout(self, topology: topology_pb2.Topology
                         ) -> tuple[LogicalPlan, dag.Layout]:
        """A topology's LogicalPlan and DAG layout, computed once per topology id."""
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
            except (Unavailable, TManagerUnavailable) as exc:
                log.debug("no metrics of %s: %s", name, exc)


def parallelism_of(pplan: physical_plan_pb2.PhysicalPlan | None) -> dict[str, int]:
    """Instances per component in a stored PhysicalPlan (empty for None)."""
    out: dict[str, int] = {}
    for inst in pplan.instances if pplan is not None else ():
        out[inst.info.component_name] = out.get(inst.info.component_name, 0) + 1
    return out
