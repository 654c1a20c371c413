"""The Topology Master's state machine, one thread over two ROUTER sockets."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import zmq
from google.protobuf.message import Message

from engine.common.launch import (
    SUPERSEDED,
    TMANAGER,
    LaunchSpec,
    instance_id,
    split_peer_identity,
    stmgr_id,
)
from engine.common.network import MalformedMessage, bind_router, decode, encode
from engine.common.plan import LogicalPlan
from engine.common.process.progress import mark_progress
from engine.common.process.stopping import STOP_POLL_MS
from engine.common.security.guard import ConnectionGuard
from engine.config.checkpointing import checkpointing
from engine.config.key_groups import key_groups
from engine.config.keys import with_defaults
from engine.config.reliability import reliability
from engine.messages import (
    ckptmgr_pb2,
    common_pb2,
    packing_plan_pb2,
    physical_plan_pb2,
    stmgr_pb2,
    tmanager_pb2,
    topology_pb2,
)
from engine.spi.statemgr import StateManager
from engine.statefulstorage import open_storage
from engine.statemgr import NodeExistsError
from engine.tmanager.counter_totals import CounterTotals
from engine.tmanager.staleness import REPORT_AGE_METRIC
from engine.tmanager.stateful_controller import StatefulController

log = logging.getLogger("heron.tmanager")

#: how often the stored packing plan is checked for `heron update`
PACKING_CHECK_SECS = 1.0
#: Heron's heron.tmanager.establish.retry.times / interval.sec
ESTABLISH_RETRIES = 30
ESTABLISH_INTERVAL = 1.0
#: a Stream Manager that sent no heartbeat for this long (three of its 5 s beats) is
#: reported: its executor restarts one that died, but a hung one silently stops its
#: container's tuples
STMGR_SILENT_SECS = 15.0
OK = common_pb2.OK
#: the component name the Topology Master's own metrics are listed under
TMANAGER_COMPONENT = "__tmanager__"


class TopologyMaster:
    #: the reason of a packing plan change (heron update) until its plan is built
    _update_reason: str | None = None
    #: the stored topology and its packing plan, read by load()
    topology: topology_pb2.Topology
    packing: packing_plan_pb2.PackingPlan

    def __init__(self, spec: LaunchSpec, state: StateManager, *, shell_endpoint: str = "") -> None:
        self.spec = spec
        #: where container 0's shell serves its logs (engine/shell); "" when local
        self.shell_endpoint = shell_endpoint
        self.name = spec.topology_name
        self.state = state
        self.ctx = zmq.Context()
        self.guard = ConnectionGuard.for_launch(self.ctx, spec, process="tmanager")
        self.server, self.server_endpoint = bind_router(self.ctx, f"tcp://{spec.bind_host}:0",
                                                        mandatory=False, guard=self.guard,
                                                        kind="tmanager")
        self.controller, self.controller_endpoint = bind_router(
            self.ctx, f"tcp://{spec.bind_host}:0", mandatory=False, guard=self.guard,
            kind="controller")
        self.absent: set[str] = set()
        #: stmgr id -> (StMgr record, [Instance]), for registered Stream Managers
        self.stmgrs: dict[str, tuple[physical_plan_pb2.StMgr,
                                     list[physical_plan_pb2.Instance]]] = {}
        self.last_heartbeat: dict[str, float] = {}
        #: stmgr id -> the zmq identity of its newest incarnation, and that incarnation
        self.senders: dict[str, bytes] = {}
        self.incarnations: dict[str, int] = {}
        #: Stream Managers reported silent (see STMGR_SILENT_SECS), until they beat again
        self.silent: set[str] = set()
        self.pplan: Any = None
        #: (component, instance id) -> {metric: value}; exceptions per instance
        self.metrics: dict[tuple[str, str], dict[str, str]] = {}
        #: each instance's counters added up across its restarts
        self.counter_totals = CounterTotals()
        #: (component, instance id) -> unix time of its newest figures (the time its
        #: process published them, as its Metrics Manager stamps them): REPORT_AGE_METRIC
        self.reported_at: dict[tuple[str, str], float] = {}
        self.exceptions: dict[tuple[str, str], list[tmanager_pb2.TmanagerExceptionLog]] = {}
        #: checkpoints and restores, for an EFFECTIVELY_ONCE topology (else None)
        self.stateful: StatefulController | None = None
        #: why the next physical plan is made (the reason a restore gives)
        self._plan_reason = "the topology started"

    # -- startup -----------------------------------------------------------------------
    def load(self, wait: float = 30.0) -> None:
        """Read the topology and packing plan (retrying: the submitter may still be writing)."""
        deadline = time.monotonic() + wait
        while True:
            topology = self.state.get("topologies", self.name)
            packing = self.state.get("packingplans", self.name)
            if topology is not None and packing is not None:
                break
            if time.monotonic() > deadline:
                raise SystemExit(f"topology {self.name!r} or its packing plan is missing from "
                                 f"{self.spec.state.describe()}")
            time.sleep(0.5)
        self.topology, self.packing = topology, packing
        if self.topology.id != self.spec.topology_id:
            raise SystemExit(f"the stored topology {self.name!r} has id {self.topology.id}, "
                             f"not {self.spec.topology_id}: a stale launch file?")
        self.absent = {stmgr_id(c.id) for c in self.packing.container_plans if c.id != 0}
        stored = self.state.get("pplans", self.name)
        restarted = False
        if stored is not None and stored.topology.id == self.spec.topology_id:
            restarted = True
            # A restarted Topology Master keeps the live state (RUNNING/PAUSED) it had.
            self.topology.state = stored.topology.state
            self._plan_reason = "the topology master was restarted"
            log.info("adopted the stored physical plan (%s)",
                     topology_pb2.TopologyState.Name(stored.topology.state))
        self._load_stateful(first_start=not restarted)

    def _load_stateful(self, *, first_start: bool) -> None:
        conf = with_defaults(LogicalPlan.from_proto(self.topology).config)
        if not reliability(conf).effectively_once:
            return
        settings = checkpointing(conf)
        storage = open_storage(settings, topology_name=self.name,
                               working_dir=self.spec.working_dir)
        self.stateful = StatefulController(self.name, self.state, settings, storage,
                                           send=self._send_to_stmgr,
                                           key_groups=key_groups(conf))
        self.stateful.load(first_start=first_start)
        log.info("effectively-once: a checkpoint every %g s into %s", settings.interval_secs,
                 storage.describe())

    def _send_to_stmgr(self, sid: str, message: Message) -> None:
        self._reply(self.server, self.senders.get(sid, sid.encode()), message)

    def establish(self) -> None:
        """Create the ephemeral location, waiting while a dead predecessor's lingers."""
        location = tmanager_pb2.TManagerLocation(
            topology_name=self.name, topology_id=self.spec.topology_id, host=self.spec.bind_host,
            server_endpoint=self.server_endpoint, controller_endpoint=self.controller_endpoint,
            server_port=_port(self.server_endpoint),
            controller_port=_port(self.controller_endpoint),
            shell_endpoint=self.shell_endpoint)
        self.location = location
        for attempt in range(ESTABLISH_RETRIES):
            try:
                self.state.create("tmanagers", self.name, location, ephemeral=True)
                log.info("topology master location: server %s, controller %s",
                         self.server_endpoint, self.controller_endpoint)
                return
            except NodeExistsError:
                if attempt == 0:
                    log.info("another topology master location exists; waiting for it to expire")
                time.sleep(ESTABLISH_INTERVAL)
        raise SystemExit("the topology master location is still held by another process")

    # -- the loop ----------------------------------------------------------------------
    def serve(self, running: Callable[[], bool]) -> None:
        poller = zmq.Poller()
        poller.register(self.server, zmq.POLLIN)
        poller.register(self.controller, zmq.POLLIN)
        next_packing_check = time.monotonic() + PACKING_CHECK_SECS
        while running():
            events = dict(poller.poll(STOP_POLL_MS))
            if time.monotonic() >= next_packing_check:
                next_packing_check = time.monotonic() + PACKING_CHECK_SECS
                self._check_packing()
                self._check_heartbeats(time.monotonic())
                if not self.check_location():
                    break
            if self.stateful is not None:
                self.stateful.tick()
            if events.get(self.server):
                self._drain(self.server, self._on_server)
            if events.get(self.controller):
                self._drain(self.controller, self._on_control)

    def check_location(self) -> bool:
        """Whether this Topology Master still owns ``tmanagers/<name>``. Its ephemeral
        node goes when its state-manager session expires (a partition, a long pause): it
        takes it back if nobody else did. If another Topology Master holds it (container
        0 was started again elsewhere), this one is a replaced copy: it leaves the
        superseded marker, so its executor stops the container for good, and stops."""
        try:
            stored = self.state.get("tmanagers", self.name)
        except Exception as exc:  # a state-store hiccup says nothing about ownership
            log.warning("cannot read tmanagers/%s: %s", self.name, exc)
            return True
        if stored is None:
            try:
                self.state.create("tmanagers", self.name, self.location, ephemeral=True)
                log.warning("the topology master location was lost (state-manager session "
                            "expired?); recorded it again")
            except Exception as exc:
                log.warning("cannot record the topology master location again: %s", exc)
            return True
        if stored.controller_endpoint == self.controller_endpoint:
            return True
        text = (f"{SUPERSEDED}: another topology master runs {self.name} at "
                f"{stored.controller_endpoint}; this one ({self.controller_endpoint}) stops")
        log.error("%s", text)
        try:
            self.spec.superseded_marker.write_text(text + "\n")
        except OSError as exc:
            log.error("cannot write %s: %s", self.spec.superseded_marker, exc)
        return False

    def _check_heartbeats(self, now: float) -> None:
        """Report a Stream Manager whose heartbeats stopped, once, and when they resume."""
        for sid, last in self.last_heartbeat.items():
            quiet = now - last
            if quiet > STMGR_SILENT_SECS and sid not in self.silent:
                self.silent.add(sid)
                log.warning("%s has sent no heartbeat for %.0f s: if it is hung, its "
                            "container's tuples are stopped (a process that died is "
                            "restarted by its executor)", sid, quiet)
            elif quiet <= STMGR_SILENT_SECS and sid in self.silent:
                self.silent.discard(sid)
                log.info("%s sends heartbeats again", sid)

    def _check_packing(self) -> None:
        """``heron update`` stores a new packing plan: Stream Managers of dropped
        containers are forgotten, new ones are waited for, and the physical plan is built
        again once every instance of the new plan is registered (each executor restarts
        its Stream Manager, which registers its new instance set)."""
        try:
            stored = self.state.get("packingplans", self.name)
            topology = self.state.get("topologies", self.name)
        except Exception as exc:  # a state-store hiccup is not a plan change
            log.warning("cannot read the packing plan: %s", exc)
            return
        if stored is None or stored.id == self.packing.id:
            return
        log.info("new packing plan %s (was %s)", stored.id, self.packing.id)
        # kept until the plan it leads to is built: the Stream Managers of changed
        # containers register again meanwhile, and the rollback is the update's
        self._update_reason = f"heron update: {packing_change(self.packing, stored)}"
        self._plan_reason = self._update_reason
        self.packing = stored
        if topology is not None and topology.id == self.spec.topology_id:
            state = self.topology.state
            self.topology = topology
            self.topology.state = state
        expected = {stmgr_id(c.id) for c in stored.container_plans if c.id != 0}
        for sid in set(self.stmgrs) - expected:
            del self.stmgrs[sid]
            self.last_heartbeat.pop(sid, None)
        for key in [k for k in self.metrics if k[1] not in self._live_instance_ids(stored)
                    and k[0] not in ("__stmgr__", "__metricsmgr__", TMANAGER_COMPONENT)]:
            del self.metrics[key]
            self.reported_at.pop(key, None)
            self.counter_totals.forget(key)
        self.absent = expected - set(self.stmgrs)
        if not self.absent:
            self._make_pplan()

    @staticmethod
    def _live_instance_ids(packing: packing_plan_pb2.PackingPlan) -> set[str]:
        return {instance_id(c.id, i.component_name, i.task_id)
                for c in packing.container_plans for i in c.instance_plans}

    def _drain(self, sock: zmq.Socket, handler: Callable[[bytes, Message], None]) -> None:
        while True:
            try:
                frames = sock.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            if len(frames) != 3:
                log.warning("dropped a message of %d frames (expected [identity, type, payload])",
                            len(frames))
                continue
            sender = frames[0]
            try:
                message = decode(frames[1:])
            except MalformedMessage as exc:
                log.warning("dropped a malformed message from %r: %s", sender[:80], exc)
                continue
            try:
                handler(sender, message)
            except Exception:
                log.exception("handling %s from %r failed", message.DESCRIPTOR.name, sender[:80])

    def _reply(self, sock: zmq.Socket, identity: bytes, message: Message) -> None:
        try:
            sock.send_multipart([identity, *encode(message)], zmq.NOBLOCK)
        except zmq.ZMQError as exc:
            log.warning("could not answer %r: %s", identity[:80], exc)

    # -- Stream Managers and Metrics Managers ---------------------------------------------
    def _on_server(self, sender: bytes, message: Message) -> None:
        if isinstance(message, tmanager_pb2.StMgrRegisterRequest):
            self._register(sender, message)
        elif isinstance(message, tmanager_pb2.StMgrHeartbeatRequest):
            sid, _ = split_peer_identity(sender)
            response = tmanager_pb2.StMgrHeartbeatResponse()
            if sid in self.senders and self.senders[sid] != sender:
                response.status.status = common_pb2.NOTOK
                response.status.message = self._superseded(sid, sender)
            else:
                self.last_heartbeat[sid] = time.monotonic()
                response.status.status = OK
            self._reply(self.server, sender, response)
        elif isinstance(message, tmanager_pb2.PublishMetrics):
            self._store_metrics(message)
        elif self.stateful is not None and isinstance(message, ckptmgr_pb2.InstanceStateStored):
            self.stateful.on_stored(message)
        elif (self.stateful is not None
              and isinstance(message, ckptmgr_pb2.RestoreTopologyStateResponse)):
            self.stateful.on_restore_response(message)
        elif self.stateful is not None and isinstance(message, ckptmgr_pb2.ResetTopologyState):
            self.stateful.on_reset(message, split_peer_identity(sender)[0])
        else:
            log.warning("ignored %s from %r", message.DESCRIPTOR.name, sender[:80])

    def _register(self, sender: bytes, request: tmanager_pb2.StMgrRegisterRequest) -> None:
        sid = request.stmgr.id
        response = tmanager_pb2.StMgrRegisterResponse()
        expected = {stmgr_id(c.id) for c in self.packing.container_plans if c.id != 0}
        named, incarnation = split_peer_identity(sender)
        if sid not in expected or named != sid or incarnation != request.stmgr.incarnation:
            response.status.status = common_pb2.INVALID_STMGR
            response.status.message = f"{sid!r} is not a stream manager of this packing plan"
            self._reply(self.server, sender, response)
            return
        newest = self.incarnations.get(sid, 0)
        if incarnation < newest or (incarnation == newest and sid in self.senders
                                    and self.senders[sid] != sender):
            response.status.status = common_pb2.NOTOK
            response.status.message = self._superseded(sid, sender)
            self._reply(self.server, sender, response)
            return
        if incarnation > newest and sid in self.senders:
            log.warning("%s: incarnation %d replaces incarnation %d (its container was started "
                        "again); the old one is refused from now on", sid, incarnation, newest)
        self.senders[sid] = sender
        self.incarnations[sid] = incarnation
        again = sid in self.stmgrs
        if again and self._update_reason is None:
            self._plan_reason = f"{sid} registered again (it or one of its instances restarted)"
        self.stmgrs[sid] = (physical_plan_pb2.StMgr(), list(request.instances))
        self.stmgrs[sid][0].CopyFrom(request.stmgr)
        self.absent.discard(sid)
        self.last_heartbeat[sid] = time.monotonic()
        response.status.status = OK
        self._reply(self.server, sender, response)
        log.info("%s registered%s with %d instances; absent: %s", sid, " again" if again else "",
                 len(request.instances), sorted(self.absent) or "none")
        if not self.absent:
            self._make_pplan()

    def _superseded(self, sid: str, sender: bytes) -> str:
        _, incarnation = split_peer_identity(sender)
        log.warning("refused %s: incarnation %d of %s was superseded by incarnation %d",
                    sender.decode(errors="replace"), incarnation, sid,
                    self.incarnations.get(sid, 0))
        return (f"{SUPERSEDED}: {sid} incarnation {incarnation} was replaced by incarnation "
                f"{self.incarnations.get(sid, 0)}; this container must stop")

    def _make_pplan(self) -> None:
        expected = sum(len(c.instance_plans) for c in self.packing.container_plans)
        instances = [inst for _, insts in self.stmgrs.values() for inst in insts]
        if len(instances) != expected:
            log.warning("%d instances registered, the packing plan has %d; waiting",
                        len(instances), expected)
            return
        pplan = physical_plan_pb2.PhysicalPlan()
        pplan.topology.CopyFrom(self.topology)
        for sid in sorted(self.stmgrs):
            pplan.stmgrs.add().CopyFrom(self.stmgrs[sid][0])
        for inst in sorted(instances, key=lambda i: i.info.task_id):
            pplan.instances.add().CopyFrom(inst)
        self.pplan = pplan
        self._store_pplan()
        self._broadcast()
        self._update_reason = None
        if self.stateful is not None:
            self.stateful.new_plan(pplan, self.packing.id, self._plan_reason)

    def _store_pplan(self) -> None:
        if self.state.get("pplans", self.name) is None:
            self.state.create("pplans", self.name, self.pplan)
        else:
            self.state.set("pplans", self.name, self.pplan)

    def _broadcast(self) -> None:
        message = stmgr_pb2.NewPhysicalPlanMessage(new_pplan=self.pplan)
        for sid in self.stmgrs:
            self._reply(self.server, self.senders.get(sid, sid.encode()), message)
        log.info("physical plan sent to %d stream managers (%s)", len(self.stmgrs),
                 topology_pb2.TopologyState.Name(self.pplan.topology.state))
        # the topology runs: a later death of this process is not a crash loop
        mark_progress()

    def _store_metrics(self, message: tmanager_pb2.PublishMetrics) -> None:
        now = time.time()
        for datum in message.metrics:
            key = (datum.component_name, datum.instance_id)
            self.metrics.setdefault(key, {})[datum.name] = self.counter_totals.total(
                key, datum.name, datum.value)
            # unstamped (0) or stamped ahead of this clock: as of now
            stamped = min(float(datum.timestamp), now) if datum.timestamp else now
            if stamped > self.reported_at.get(key, 0.0):
                self.reported_at[key] = stamped
        for exc in message.exceptions:
            key = (exc.component_name, exc.instance_id)
            entries = self.exceptions.setdefault(key, [])
            for entry in entries:
                if entry.stacktrace == exc.stacktrace:
                    entry.count = exc.count
                    entry.lasttime = exc.lasttime
                    break
            else:
                copy = tmanager_pb2.TmanagerExceptionLog()
                copy.CopyFrom(exc)
                entries.append(copy)

    # -- control (CLI, tracker) ----------------------------------------------------------
    def _on_control(self, sender: bytes, message: Message) -> None:
        if isinstance(message, (tmanager_pb2.TopologyActivateRequest,
                                tmanager_pb2.TopologyDeactivateRequest)):
            self._reply(self.controller, sender, self._set_state(message))
        elif isinstance(message, tmanager_pb2.MetricRequest):
            self._reply(self.controller, sender, self._metric_response(message))
        elif isinstance(message, tmanager_pb2.ExceptionLogRequest):
            response = tmanager_pb2.ExceptionLogResponse()
            response.status.status = OK
            for (component, _instance), entries in sorted(self.exceptions.items()):
                if message.component_name and component != message.component_name:
                    continue
                response.exceptions.extend(entries)
            self._reply(self.controller, sender, response)
        elif isinstance(message, ckptmgr_pb2.SavepointRequest):
            self._savepoint(sender, message)
        elif isinstance(message, tmanager_pb2.StmgrsRegistrationSummaryRequest):
            summary = tmanager_pb2.StmgrsRegistrationSummaryResponse(
                registered_stmgrs=sorted(self.stmgrs), absent_stmgrs=sorted(self.absent))
            self._reply(self.controller, sender, summary)
        else:
            log.warning("ignored %s on the controller", message.DESCRIPTOR.name)

    def _savepoint(self, sender: bytes, request: ckptmgr_pb2.SavepointRequest) -> None:
        """Answered when the savepoint is written (or cannot be): the CLI waits for it."""
        if self.stateful is None:
            answer = ckptmgr_pb2.SavepointResponse(savepoint_id=request.savepoint_id)
            answer.status.status = common_pb2.NOTOK
            answer.status.message = (f"{self.name} takes no checkpoints: savepoints need "
                                     "topology.reliability.mode: EFFECTIVELY_ONCE")
            self._reply(self.controller, sender, answer)
            return
        self.stateful.request_savepoint(
            request.savepoint_id, lambda answer: self._reply(self.controller, sender, answer),
            final=request.final)

    def _set_state(self, request: tmanager_pb2.TopologyActivateRequest
                   | tmanager_pb2.TopologyDeactivateRequest
                   ) -> tmanager_pb2.TopologyControlResponse:
        response = tmanager_pb2.TopologyControlResponse()
        activate = isinstance(request, tmanager_pb2.TopologyActivateRequest)
        if request.topology_name != self.name or (
                request.topology_id and request.topology_id != self.spec.topology_id):
            response.status.status = common_pb2.INVALID_TOPOLOGY_NAME
            response.status.message = f"this topology master runs {self.name!r}"
            return response
        if self.pplan is None:
            response.status.status = common_pb2.NOTOK
            response.status.message = ("the physical plan is not ready yet (stream managers "
                                       f"absent: {', '.join(sorted(self.absent))})")
            return response
        wanted = topology_pb2.RUNNING if activate else topology_pb2.PAUSED
        if activate and self.stateful is not None:
            # active again (or still): a `heron kill --savepoint` that stopped checkpoints
            # for its final savepoint failed or gave up, so checkpoints go on
            self.stateful.resume()
        if self.topology.state == wanted:
            response.status.status = (common_pb2.TOPOLOGY_ALREADY_ACTIVE if activate
                                      else common_pb2.TOPOLOGY_ALREADY_DEACTIVE)
            current = 'active' if activate else 'deactivated'
            response.status.message = f"{self.name} is already {current}"
            return response
        self.topology.state = wanted
        self.pplan.topology.state = wanted
        self._store_pplan()
        self._broadcast()
        response.status.status = OK
        return response

    def _metric_response(self, request: tmanager_pb2.MetricRequest) -> tmanager_pb2.MetricResponse:
        response = tmanager_pb2.MetricResponse()
        response.status.status = OK
        # The Topology Master's own figures, beside what the Metrics Managers forward.
        own = self.metrics.setdefault((TMANAGER_COMPONENT, TMANAGER), {})
        own["__connections-refused"] = str(self.guard.refused)
        if self.stateful is not None:
            own.update(self.stateful.metrics())
        wanted = set(request.metric)
        now = time.time()
        for (component, instance), values in sorted(self.metrics.items()):
            if request.component_name and component != request.component_name:
                continue
            if request.instance_id and instance not in request.instance_id:
                continue
            task_metric = response.metric.add(instance_id=instance)
            for name, value in sorted(values.items()):
                if not wanted or name in wanted:
                    task_metric.metric.add(name=f"{component}/{name}", value=value)
            reported = self.reported_at.get((component, instance))
            if reported is not None and (not wanted or REPORT_AGE_METRIC in wanted):
                task_metric.metric.add(name=f"{component}/{REPORT_AGE_METRIC}",
                                       value=f"{max(0.0, now - reported):.0f}")
        return response

    def close(self) -> None:
        self.server.close(linger=200)
        self.controller.close(linger=200)
        self.guard.stop()
        self.ctx.term()


def _port(endpoint: str) -> int:
    return int(endpoint.rsplit(":", 1)[1])


def packing_change(before: packing_plan_pb2.PackingPlan,
                   after: packing_plan_pb2.PackingPlan) -> str:
    """What ``heron update`` changed between two packing plans, for the reason a rollback
    is reported with: each component whose task count changed, and the containers."""
    def tasks(packing: packing_plan_pb2.PackingPlan) -> dict[str, int]:
        counts: dict[str, int] = {}
        for container in packing.container_plans:
            for instance in container.instance_plans:
                counts[instance.component_name] = counts.get(instance.component_name, 0) + 1
        return counts

    old, new = tasks(before), tasks(after)
    changes = [f"{name} {old.get(name, 0)} -> {new.get(name, 0)} tasks"
               for name in sorted(set(old) | set(new)) if old.get(name, 0) != new.get(name, 0)]
    containers = (sum(1 for c in before.container_plans if c.id != 0),
                  sum(1 for c in after.container_plans if c.id != 0))
    if containers[0] != containers[1]:
        changes.append(f"{containers[0]} -> {containers[1]} containers")
    return f"rescale to packing plan {after.id} ({', '.join(changes) or 'containers repacked'})"
