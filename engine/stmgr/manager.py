"""The Stream Manager process: one thread, one poll loop, every socket owned by it."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import zmq

from engine.common.codec import selected_module
from engine.common.launch import LaunchSpec, local_socket_name, metrics_socket_name, stmgr_id
from engine.common.network import (
    DATA_HWM,
    SOCKET_BUFFER_BYTES,
    MalformedMessage,
    bind_router,
    connect_dealer,
    decode,
    encode,
    ipc_endpoint,
    type_frame,
)
from engine.common.network.credits import (
    CREDIT,
    CreditLedger,
    decode_credit,
    give_back_at,
)
from engine.common.security.guard import ConnectionGuard
from engine.config.backpressure import blame_wait_watermarks, wait_watermarks, watermarks
from engine.config.checkpointing import checkpointing
from engine.config.credits import capacities
from engine.config.key_groups import key_groups
from engine.config.keys import with_defaults
from engine.config.reliability import reliability
from engine.messages import common_pb2, metrics_pb2, stmgr_pb2, tmanager_pb2, tuple_pb2
from engine.stmgr.backpressure import Backpressure, InstanceBackpressure
from engine.stmgr.flow_control import START_BACKPRESSURE, STOP_BACKPRESSURE, FlowControl
from engine.stmgr.metrics_report import MetricsReport
from engine.stmgr.outbox import Outbox
from engine.stmgr.stateful import DOWNSTREAM_MARKER, FROM_INSTANCE, StatefulRole
from engine.stmgr.tmanager_link import TopologyMasterLink

log = logging.getLogger("heron.stmgr")

TUPLE_BATCH = type_frame(tuple_pb2.TupleBatch)
TASK_DONE = type_frame(tuple_pb2.TaskDone)
CONTROL_BATCH = type_frame(tuple_pb2.ControlBatch)
STREAM_MESSAGE = type_frame(stmgr_pb2.TupleStreamMessage)
REGISTER_INSTANCE = type_frame(stmgr_pb2.RegisterInstanceRequest)
NEW_PPLAN = type_frame(stmgr_pb2.NewPhysicalPlanMessage)
STMGR_REGISTER_RESPONSE = type_frame(tmanager_pb2.StMgrRegisterResponse)
HEARTBEAT_RESPONSE = type_frame(tmanager_pb2.StMgrHeartbeatResponse)

HEARTBEAT_SECS = 5.0
LOCATION_CHECK_SECS = 2.0
METRICS_SECS = 1.0

if TYPE_CHECKING:
    from engine.stmgr.acking import AckTracker

#: the routing this process runs: the compiled twin (``_routing.pyx``) where built, else
#: ``routing.py``
_routing = selected_module("routing")



class StreamManager(FlowControl, TopologyMasterLink, MetricsReport):
    """One per container: every tuple of its instances, and every tuple for them, goes
    through here (the poll loop, the instances' registration, routing and delivery,
    acking). Its other jobs are its parts: flow control (``flow_control.py``), the
    Topology Master and each physical plan (``tmanager_link.py``), metrics
    (``metrics_report.py``), checkpoints (``stateful.py``)."""

    def __init__(self, spec: LaunchSpec, container: int, plan: Any, expected: dict[str, int],
                 state: Any, *, shell_endpoint: str = "") -> None:
        self.spec = spec
        #: where the container's shell serves its logs (engine/shell); "" when local
        self.shell_endpoint = shell_endpoint
        self.container = container
        self.id = stmgr_id(container)
        self.plan = plan
        self.state = state
        #: instance id -> task id, from the packing plan
        self.expected = expected
        self.ctx = zmq.Context()
        self.guard = ConnectionGuard.for_launch(self.ctx, spec, process=self.id)
        tid = spec.topology_id
        self.local, self.local_endpoint = bind_router(
            self.ctx, ipc_endpoint(tid, local_socket_name(container, spout=False)), sndhwm=DATA_HWM,
            rcvhwm=DATA_HWM, buffer_bytes=SOCKET_BUFFER_BYTES)
        self.spouts, _ = bind_router(
            self.ctx, ipc_endpoint(tid, local_socket_name(container, spout=True)), sndhwm=DATA_HWM,
            rcvhwm=DATA_HWM, buffer_bytes=SOCKET_BUFFER_BYTES)
        self.data, self.data_endpoint = bind_router(self.ctx, f"tcp://{spec.bind_host}:0",
                                                     sndhwm=DATA_HWM, rcvhwm=DATA_HWM,
                                                     guard=self.guard, kind="data",
                                                     buffer_bytes=SOCKET_BUFFER_BYTES)
        self.metrics = connect_dealer(self.ctx, ipc_endpoint(tid, metrics_socket_name(container)),
                                      self.id, sndhwm=10)
        #: read credit per local bolt instance (engine.common.network.credits): what it may be
        #: sent before it says it executed it
        caps = capacities(dict(plan.config))
        self.credits = CreditLedger(caps.bolt_read)
        self.outbox = Outbox(credits=self.credits)
        #: identity -> [socket, bytes] of write credit owed to a local instance: the
        #: tuple batches read from it, given back after a round of reading once they
        #: reach ``_give_back_at`` (a quarter of the smaller write capacity, so below
        #: what any instance may have in flight: engine.common.network.credits.give_back_at)
        self._owed_credit: dict[bytes, list] = {}
        self._give_back_at = give_back_at(min(caps.spout_write, caps.bolt_write))
        #: the largest tuple batch a local instance has sent
        self.largest_batch_bytes = 0
        #: identity -> (socket, Instance) of registered local instances
        self.instances: dict[bytes, tuple[zmq.Socket, Any]] = {}
        #: identity -> the process id it registered from (a repeat from it is no restart)
        self._instance_pids: dict[bytes, int] = {}
        self.task_identity: dict[int, bytes] = {}
        self.tm: zmq.Socket | None = None
        self.tm_endpoint: str | None = None
        #: data endpoints of peer incarnations a new plan replaced (a restarted peer):
        #: their backpressure news, still waiting in a socket, is stale
        self._replaced_peers: set[str] = set()
        self.tm_registered = False
        self.pplan: Any = None
        self.peers: dict[str, tuple[str, zmq.Socket]] = {}
        self.task_stmgr: dict[int, str] = {}
        self.routes: dict[tuple[str, str], list] = {}
        self.downstream: dict[str, list[int]] = {}
        high, low = watermarks(dict(plan.config))
        high_secs, low_secs = wait_watermarks(dict(plan.config))
        self.bp = Backpressure(high, low, high_secs=high_secs, low_secs=low_secs)
        #: which local instance's queue keeps this manager in backpressure (Health Manager)
        blame_high, blame_low = blame_wait_watermarks(dict(plan.config))
        self.instance_bp = InstanceBackpressure(high, low, high_secs=blame_high,
                                                low_secs=blame_low)
        #: at-least-once tracking (None when the topology does not ack)
        self.acks: AckTracker | None = None
        self._reliability = reliability(with_defaults(dict(plan.config)))
        #: markers, alignment and restores, for an EFFECTIVELY_ONCE topology (else None)
        self.stateful: StatefulRole | None = None
        if self._reliability.effectively_once:
            conf = with_defaults(dict(plan.config))
            self.stateful = StatefulRole(self, checkpointing(conf), key_groups(conf))
        #: task id -> component, of the physical plan in force
        self.component_of: dict[int, str] = {}
        self.counts = {"tuples_in": 0, "tuples_out": 0, "batches_in": 0, "dropped": 0,
                       "malformed": 0}
        self._warned: set[Any] = set()
        #: the Topology Master refused this incarnation of the container (see above)
        self.superseded = False

    # -- the loop ----------------------------------------------------------------------
    def serve(self, running: Any) -> None:
        next_heartbeat = next_location = next_metrics = 0.0
        self.metrics.send_multipart(encode(metrics_pb2.MetricPublisherRegisterRequest(
            publisher=metrics_pb2.MetricPublisher(hostname="127.0.0.1", component_name="__stmgr__",
                                                  instance_id=self.id))), zmq.NOBLOCK)
        # One poller per set of sockets read, built once: the loop turns once per
        # message or two under load, and building a poller each turn showed in its profile.
        pollers: dict[tuple[bool, bool, Any], zmq.Poller] = {}
        while running() and not self.superseded:
            key = (self._may_read_peers(), not self.bp.paused, self.tm)
            poller = pollers.get(key)
            if poller is None:
                if any(tm is not self.tm for _, _, tm in pollers):
                    pollers.clear()  # a new Topology Master connection: the old is closed
                poller = pollers[key] = self._poller(*key)
            events = dict(poller.poll(2 if self.outbox.pending() else 100))
            # The Topology Master first: a new physical plan must be in place before the
            # tuples routed by it, which may already wait on the other sockets.
            if self.tm is not None and events.get(self.tm):
                self._drain_tm()
            if events.get(self.data):
                self._drain(self.data, self._from_peer, stop=self._instances_congested)
            if events.get(self.local):
                self._drain(self.local, self._from_instance)
            if events.get(self.spouts):
                self._drain(self.spouts, self._from_instance, stop=self._spouts_must_wait)
            if self._owed_credit:
                self._give_write_credit()
            if events.get(self.metrics):
                try:
                    self.metrics.recv_multipart(zmq.NOBLOCK)
                except zmq.Again:
                    pass
            if self.acks is not None:
                self._send_control()
            if self.outbox.pending():
                self.outbox.retry()
            self._backpressure()
            self.instance_bp.update(self.outbox.queued_bytes, self.outbox.waited())
            now = time.monotonic()
            if now >= next_location and self._all_registered():
                next_location = now + LOCATION_CHECK_SECS
                self._check_tmanager()
            if now >= next_heartbeat and self.tm_registered:
                next_heartbeat = now + HEARTBEAT_SECS
                self._heartbeat()
            if now >= next_metrics:
                next_metrics = now + METRICS_SECS
                if self.stateful is not None:
                    self.stateful.expire()
                self._publish_metrics()

    def _poller(self, read_peers: bool, read_spouts: bool, tm: zmq.Socket | None) -> zmq.Poller:
        """A poller for the local instances, the metrics manager and what else is read:
        peers (unless a local instance is congested), spouts (unless in backpressure),
        the Topology Master (once connected)."""
        poller = zmq.Poller()
        poller.register(self.local, zmq.POLLIN)
        if read_peers:
            poller.register(self.data, zmq.POLLIN)
        if read_spouts:
            poller.register(self.spouts, zmq.POLLIN)
        if tm is not None:
            poller.register(tm, zmq.POLLIN)
        poller.register(self.metrics, zmq.POLLIN)
        return poller

    def _drain(self, sock: zmq.Socket, handler: Any, limit: int = 256,
               stop: Any = None) -> None:
        for _ in range(limit):
            if stop is not None and stop():
                return
            try:
                frames = sock.recv_multipart(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return
            try:
                handler(sock, frames)
            except MalformedMessage as exc:
                self.counts["malformed"] += 1
                log.warning("dropped a malformed message from %r: %s", frames[0].bytes[:80], exc)
            except Exception as exc:  # a bad message must not kill the process
                self.counts["malformed"] += 1
                log.warning("dropped a message from %r that could not be handled: %s: %s",
                            frames[0].bytes[:80], type(exc).__name__, exc)

    # -- local instances ---------------------------------------------------------------
    def _from_instance(self, sock: zmq.Socket, frames: list[Any]) -> None:
        if len(frames) != 3:
            raise MalformedMessage(f"expected [identity, type, payload], got {len(frames)} frames")
        identity = frames[0].bytes
        kind = frames[1].bytes
        if kind == TUPLE_BATCH:
            # the instance may send as much again, whatever becomes of this batch
            owed = self._owed_credit.get(identity)
            if owed is None:
                self._owed_credit[identity] = [sock, len(frames[2])]
            else:
                owed[1] += len(frames[2])
        elif kind == CREDIT:
            returned = decode_credit(frames[2].bytes)
            if returned is not None and not self.credits.give_back(identity, returned):
                self._warn_once(("credit", identity), f"credit from {identity[:60]!r}, which "
                                                      f"is not a registered bolt; ignored")
            return
        if self.stateful is not None and kind != REGISTER_INSTANCE:
            registered = self.instances.get(identity)
            if registered is None:
                raise MalformedMessage(f"{identity[:60]!r} sent {kind[:60]!r} before registering")
            task = registered[1].info.task_id
            if kind in FROM_INSTANCE:
                self.stateful.from_instance(task, kind, frames[2].bytes)
                return
            if kind in (TUPLE_BATCH, TASK_DONE) and not self.stateful.accepts_from_instance(task):
                self.stateful.discarded += 1  # emitted before the rollback it has not seen yet
                return
        if kind == TUPLE_BATCH:
            payload = frames[2].bytes
            if len(payload) > self.largest_batch_bytes:
                # what one message on a hop can weigh: the hop caps are counted in these
                self.largest_batch_bytes = len(payload)
            self._route_batch(payload)
        elif kind == TASK_DONE:
            self._route_done(frames[2].bytes)
        elif kind == REGISTER_INSTANCE:
            self._register_instance(sock, identity, decode([kind, frames[2].bytes]))
        elif kind == CONTROL_BATCH:
            self._on_control(frames[2].bytes)
        else:
            raise MalformedMessage(f"unexpected message type {kind[:60]!r} from an instance")

    def _register_instance(self, sock: zmq.Socket, identity: bytes, request: Any) -> None:
        status = common_pb2.OK
        text = ""
        inst = request.instance
        if (request.topology_name != self.spec.topology_name
                or request.topology_id != self.spec.topology_id):
            status, text = common_pb2.INVALID_TOPOLOGY_NAME, (
                f"topology {request.topology_name}/{request.topology_id} is not "
                f"{self.spec.topology_name}/{self.spec.topology_id}")
        elif (self.expected.get(inst.instance_id) != inst.info.task_id
                or identity != inst.instance_id.encode()):
            status, text = common_pb2.NOTOK, (
                f"instance {inst.instance_id!r} does not belong to {self.id}")
        response = stmgr_pb2.RegisterInstanceResponse()
        response.status.status = status
        if text:
            response.status.message = text
            log.warning("refused instance registration: %s", text)
        else:
            old = self.instances.get(identity)
            self.instances[identity] = (sock, inst)
            # a registration starts with full credit either way (engine.common.network.credits)
            self._owed_credit.pop(identity, None)
            component = self.plan.components.get(inst.info.component_name)
            if component is not None and component.kind != "spout":
                self.credits.open(identity)
            else:
                self.credits.close(identity)
            self.task_identity[inst.info.task_id] = identity
            repeated = (old is not None and request.pid
                        and self._instance_pids.get(identity) == request.pid)
            self._instance_pids[identity] = request.pid
            log.info("instance %s registered%s", inst.instance_id,
                     " again (the same process)" if repeated else " again" if old else "")
            if self.pplan is not None:
                response.pplan.CopyFrom(self.pplan)
        self.outbox.send(identity, sock, [identity, *encode(response)])
        if text:
            return
        if repeated:
            if self.stateful is not None:
                self.stateful.registered_again(inst.info.task_id)
        elif self.tm_registered:
            # a restarted instance: the Topology Master rebuilds the plan when told again
            self._register_with_tm()

    def _all_registered(self) -> bool:
        return len(self.task_identity) >= len(self.expected)

    # -- routing -----------------------------------------------------------------------
    def _route_batch(self, payload: bytes) -> None:
        batch = tuple_pb2.TupleBatch.FromString(payload)
        key = (batch.stream.component_name, batch.stream.id)
        routes = self.routes.get(key)
        n = len(batch.values)
        self.counts["tuples_in"] += n
        self.counts["batches_in"] += 1
        if routes is None:
            self._warn_once(key, f"nobody to send tuples of {key} to (no plan yet, or a leaf "
                                 "stream)")
            self.counts["dropped"] += n
            return
        if self.acks is not None and len(batch.root_counts):
            for task, part, count in self.acks.route_tracked(batch, routes):
                self._deliver(task, TUPLE_BATCH, part, count, batch.src_task_id, "data")
            return
        for task, part, count in _routing.split_rebatched(batch, payload, routes):
            self._deliver(task, TUPLE_BATCH, part, count, batch.src_task_id, "data")

    def _route_done(self, payload: bytes) -> None:
        done = tuple_pb2.TaskDone.FromString(payload)
        for task in self.downstream.get(done.component, ()):
            self._deliver(task, TASK_DONE, payload, 0, done.src_task_id, "done")

    def _deliver(self, task: int, kind: bytes, payload: bytes, count: int, src: int,
                 field: str) -> None:
        owner = self.task_stmgr.get(task)
        if owner == self.id and self.stateful is not None:
            self.stateful.deliver(task, src, (kind, payload, count), len(payload))
            return
        if owner == self.id:
            identity = self.task_identity.get(task)
            if identity is None:
                self.counts["dropped"] += count
                self._warn_once(("absent", task), f"task {task} has not connected to us; dropping")
                return
            sock = self.instances[identity][0]
            self.outbox.send(identity, sock, [identity, kind, payload],
                             len(payload) if kind == TUPLE_BATCH else 0)
        else:
            peer = self.peers.get(owner) if owner else None
            if peer is None:
                self.counts["dropped"] += count
                self._warn_once(("peer", owner, task),
                                f"no connection to {owner} for task {task}; dropping")
                return
            message = stmgr_pb2.TupleStreamMessage(task_id=task, src_task_id=src, num_tuples=count)
            setattr(message, field, payload)
            if self.stateful is not None:
                message.restore_txid = self.stateful.txid
            self.outbox.send(owner, peer[1], encode(message))
        self.counts["tuples_out"] += count

    def _from_peer(self, sock: zmq.Socket, frames: list[Any]) -> None:
        if len(frames) == 3 and frames[1].bytes in (START_BACKPRESSURE, STOP_BACKPRESSURE):
            self._peer_backpressure(frames[1].bytes, frames[2].bytes)
            return
        if len(frames) == 3 and frames[1].bytes == DOWNSTREAM_MARKER and self.stateful is not None:
            self.stateful.peer_marker(frames[2].bytes)
            return
        if len(frames) != 3 or frames[1].bytes != STREAM_MESSAGE:
            raise MalformedMessage("a peer stream manager sent something other than a "
                                   "TupleStreamMessage")
        message = stmgr_pb2.TupleStreamMessage.FromString(frames[2].bytes)
        if self.stateful is not None and not self.stateful.accepts_from_peer(message.restore_txid):
            self.stateful.discarded += 1  # sent before a rollback, or before we restored
            return
        which = message.WhichOneof("set")
        if which == "data":
            self._deliver(message.task_id, TUPLE_BATCH, message.data, message.num_tuples,
                          message.src_task_id, "data")
        elif which == "done":
            self._deliver(message.task_id, TASK_DONE, message.done, 0, message.src_task_id, "done")
        elif which == "control":
            self._on_control(message.control)
        else:
            raise MalformedMessage("TupleStreamMessage without a payload")

    # -- acking ------------------------------------------------------------------------
    def _on_control(self, payload: bytes) -> None:
        if self.acks is None:
            self._warn_once("control", "acks and fails arrived but this topology does not ack "
                                       "(topology.acker.executors is 0); dropped")
            return
        self.acks.on_control(tuple_pb2.ControlBatch.FromString(payload))

    def _send_control(self) -> None:
        assert self.acks is not None  # only topologies that ack have control to send
        peers, spouts = self.acks.take_outgoing()
        for owner, entries in peers.items():
            peer = self.peers.get(owner)
            if peer is None:
                self.counts["dropped"] += len(entries)
                self._warn_once(("peer-control", owner), f"no connection to {owner}; acks dropped")
                continue
            message = stmgr_pb2.TupleStreamMessage(task_id=-1, src_task_id=-1,
                                                   control=entries.encode(-1))
            self.outbox.send(owner, peer[1], encode(message))
        for task, entries in spouts.items():
            identity = self.task_identity.get(task)
            if identity is None:
                self.counts["dropped"] += len(entries)
                continue
            self.outbox.send(identity, self.instances[identity][0],
                             [identity, CONTROL_BATCH, entries.encode(-1)])

    # -- what the stateful role (engine/stmgr/stateful.py) calls -------------------------
    def send_local(self, task: int, frames: list[Any]) -> None:
        """A message for a local instance, in order with its data."""
        identity = self.task_identity.get(task)
        if identity is not None and identity in self.instances:
            self.outbox.send(identity, self.instances[identity][0], [identity, *frames])

    def send_local_data(self, task: int, item: tuple[bytes, bytes, int]) -> None:
        kind, payload, count = item
        identity = self.task_identity.get(task)
        if identity is None:
            self.counts["dropped"] += count
            self._warn_once(("absent", task), f"task {task} has not connected to us; dropping")
            return
        self.outbox.send(identity, self.instances[identity][0], [identity, kind, payload],
                         len(payload) if kind == TUPLE_BATCH else 0)
        self.counts["tuples_out"] += count

    def send_peer(self, owner: str, frames: list[Any]) -> None:
        peer = self.peers.get(owner)
        if peer is not None:
            self.outbox.send(owner, peer[1], frames)

    def send_tm(self, message: Any) -> None:
        if self.tm is None:
            return
        try:
            self.tm.send_multipart(encode(message), zmq.NOBLOCK)
        except zmq.Again:
            log.warning("the topology master is not taking messages; %s dropped",
                        message.DESCRIPTOR.name)

    def local_tasks(self) -> set[int]:
        return set(self.expected.values())

    def local_spout_tasks(self) -> list[int]:
        kinds = {name: comp.kind for name, comp in self.plan.components.items()}
        return sorted(t for t in self.expected.values()
                      if kinds.get(self.component_of.get(t, "")) == "spout")

    def downstream_of(self, task: int) -> list[int]:
        return self.downstream.get(self.component_of.get(task, ""), [])

    def discard_in_flight(self) -> int:
        """A rollback: what waits in the queues was emitted before it; dropped.

        The physical plan in force is sent again to every local instance that had
        anything waiting: a new plan queued behind the data of a busy instance (one in
        backpressure when a resize's rollback comes) went with it, and the instance would
        restore its keyed state with the layout of the old plan (the key groups of
        another task index and parallelism)."""
        busy = [key for key in self.outbox.queued_bytes if key in self.instances]
        dropped = self.outbox.clear()
        if busy and self.pplan is not None:
            assignment = encode(stmgr_pb2.NewInstanceAssignmentMessage(pplan=self.pplan))
            for identity in busy:
                self.outbox.send(identity, self.instances[identity][0], [identity, *assignment])
        return dropped

    def _warn_once(self, key: Any, text: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning("%s", text)

    def close(self) -> None:
        for sock in [self.local, self.spouts, self.data, self.metrics, self.tm,
                     *(p[1] for p in self.peers.values())]:
            if sock is not None:
                sock.close(linger=500)
        self.guard.stop()
        self.ctx.term()
