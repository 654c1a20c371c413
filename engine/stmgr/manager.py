"""The Stream Manager process: one thread, one poll loop, every socket owned by it."""

from __future__ import annotations

import logging
import os
import socket
import time
from typing import TYPE_CHECKING, Any

import zmq

from engine.launch import (SUPERSEDED, LaunchSpec, local_socket_name, metrics_socket_name,
                           peer_identity, stmgr_id)
from engine.messages import (metrics_pb2, stmgr_pb2, tmanager_pb2,
                             topology_pb2, tuple_pb2)
from engine.security.guard import ConnectionGuard
from engine.process.progress import mark_progress
from engine.network import (DATA_HWM, SOCKET_BUFFER_BYTES, MalformedMessage, bind_router,
                            connect_dealer, decode, encode, ipc_endpoint, type_frame)
from compat.storm_api.config import checkpointing, reliability, with_defaults
from engine.grouping.key_groups import key_groups
from engine.network.credits import (CREDIT, CreditLedger, capacities, decode_credit,
                                     encode_credit, give_back_at)
from engine.network.watermarks import blame_wait_watermarks, wait_watermarks, watermarks
from engine.stmgr.backpressure import Backpressure, EpisodeLog, InstanceBackpressure
from engine.stmgr.outbox import Outbox
from engine.codec import selected_module
from engine.stmgr.routes import build_routes
from engine.stmgr.stateful import (DOWNSTREAM_MARKER, FROM_INSTANCE, StatefulRole,
                                   upstream_tasks)

log = logging.getLogger("heron.stmgr")

TUPLE_BATCH = type_frame(tuple_pb2.TupleBatch)
TASK_DONE = type_frame(tuple_pb2.TaskDone)
CONTROL_BATCH = type_frame(tuple_pb2.ControlBatch)
STREAM_MESSAGE = type_frame(stmgr_pb2.TupleStreamMessage)
START_BACKPRESSURE = type_frame(stmgr_pb2.StartBackPressureMessage)
STOP_BACKPRESSURE = type_frame(stmgr_pb2.StopBackPressureMessage)
REGISTER_INSTANCE = type_frame(stmgr_pb2.RegisterInstanceRequest)
NEW_PPLAN = type_frame(stmgr_pb2.NewPhysicalPlanMessage)
STMGR_REGISTER_RESPONSE = type_frame(tmanager_pb2.StMgrRegisterResponse)
HEARTBEAT_RESPONSE = type_frame(tmanager_pb2.StMgrHeartbeatResponse)

HEARTBEAT_SECS = 5.0
LOCATION_CHECK_SECS = 2.0
METRICS_SECS = 1.0

if TYPE_CHECKING:
    from engine.stmgr.acking import AckTracker

#: the routing and acking this process runs: the compiled twins (``_routing.pyx``,
#: ``_acking.pyx``) where built, else ``routing.py`` and ``acking.py``
_routing = selected_module("routing")
_acking = selected_module("acking")



class StreamManager:
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
        #: read credit per local bolt instance (engine.network.credits): what it may be
        #: sent before it says it executed it
        caps = capacities(dict(plan.config))
        self.credits = CreditLedger(caps.bolt_read)
        self.outbox = Outbox(credits=self.credits)
        #: identity -> [socket, bytes] of write credit owed to a local instance: the
        #: tuple batches read from it, given back after a round of reading once they
        #: reach ``_give_back_at`` (a quarter of the smaller write capacity, so below
        #: what any instance may have in flight: engine.network.credits.give_back_at)
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

    def _give_write_credit(self) -> None:
        """Give local instances back the write credit of the batches read from them once
        it reaches a quarter of the smaller write capacity, one message each, straight to
        the socket: never queued behind data waiting for
        read credit (an instance waiting for write credit may be the one that has to
        execute that data first). A full socket keeps it owed until the next round."""
        for identity in list(self._owed_credit):
            sock, owed = self._owed_credit[identity]
            if owed < self._give_back_at:
                continue
            try:
                sock.send_multipart([identity, *encode_credit(owed)], zmq.NOBLOCK)
            except zmq.Again:
                continue
            except zmq.ZMQError as exc:  # gone: its next registration starts afresh
                log.debug("credit for %r not sent: %s", identity[:60], exc)
            del self._owed_credit[identity]

    def _may_read_peers(self) -> bool:
        """Peers' tuples wait in the socket until this Stream Manager has a physical plan:
        a peer whose spouts started first (it got the plan a moment earlier) would otherwise
        have its tuples dropped here for want of a route. Also not while a local instance
        is congested (see ``_instances_congested``)."""
        return self.pplan is not None and not self._instances_congested()

    def _instances_congested(self) -> bool:
        """A local instance has more than the high watermark waiting: stop reading from
        peers until it is under it (their own queues to us then grow, and they pause their
        spouts), so what waits here stays within the watermark plus one message."""
        return (self.outbox.largest_instance_queue() >= self.bp.high
                or self.outbox.longest_instance_wait() >= self.bp.high_secs)

    def _spouts_must_wait(self) -> bool:
        """Checked before each spout message: one batch past the watermark at most."""
        self._backpressure()
        return self.bp.paused

    @property
    def bp_log(self) -> EpisodeLog:
        """This manager's backpressure log lines, limited when it flaps (EpisodeLog)."""
        found = self.__dict__.get("_bp_log")
        if found is None:
            found = self.__dict__["_bp_log"] = EpisodeLog("backpressure")
        return found

    @property
    def peer_bp_logs(self) -> dict[str, EpisodeLog]:
        """Each peer's backpressure news' log lines, limited when it flaps."""
        return self.__dict__.setdefault("_peer_bp_logs", {})

    def _backpressure(self) -> None:
        key, waiting = self.outbox.largest_queue()
        oldest_key, waited = self.outbox.longest_wait()
        change = self.bp.update(waiting, waited)
        if change is None:
            self.bp_log.flush(active=self.bp.initiated)
            for peer, peer_log in self.peer_bp_logs.items():
                peer_log.flush(active=peer in self.bp.from_peers)
            return
        if change == "start":
            self.bp_log.start("backpressure: %d bytes waiting for %s, the oldest for %.0f ms "
                              "(for %s); local spouts paused, telling %d peer(s)", waiting, key,
                              waited * 1000, oldest_key, len(self.peers))
            message = stmgr_pb2.StartBackPressureMessage()
        else:
            self.bp_log.stop("backpressure over")
            message = stmgr_pb2.StopBackPressureMessage()
        message.topology_name = self.spec.topology_name
        message.topology_id = self.spec.topology_id
        message.stmgr = self.id
        message.message_id = str(self.bp.episodes)
        message.data_endpoint = self.data_endpoint
        frames = encode(message)
        for peer_id, (_, sock) in self.peers.items():
            try:  # ahead of the data queued for that peer, when there is room
                sock.send_multipart(frames, zmq.NOBLOCK)
            except zmq.Again:
                self.outbox.send(peer_id, sock, frames)

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
        status = 1
        text = ""
        inst = request.instance
        if request.topology_name != self.spec.topology_name or request.topology_id != self.spec.topology_id:
            status, text = 100, (f"topology {request.topology_name}/{request.topology_id} is not "
                                 f"{self.spec.topology_name}/{self.spec.topology_id}")
        elif self.expected.get(inst.instance_id) != inst.info.task_id or identity != inst.instance_id.encode():
            status, text = 2, f"instance {inst.instance_id!r} does not belong to {self.id}"
        response = stmgr_pb2.RegisterInstanceResponse()
        response.status.status = status
        if text:
            response.status.message = text
            log.warning("refused instance registration: %s", text)
        else:
            old = self.instances.get(identity)
            self.instances[identity] = (sock, inst)
            # a registration starts with full credit either way (engine.network.credits)
            self._owed_credit.pop(identity, None)
            component = self.plan.components.get(inst.info.component_name)
            if component is not None and component.kind != "spout":
                self.credits.open(identity)
            else:
                self.credits.close(identity)
            self.task_identity[inst.info.task_id] = identity
            repeated = old is not None and request.pid and self._instance_pids.get(identity) == request.pid
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
            self._warn_once(key, f"nobody to send tuples of {key} to (no plan yet, or a leaf stream)")
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
                self._warn_once(("peer", owner, task), f"no connection to {owner} for task {task}; dropping")
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
            raise MalformedMessage("a peer stream manager sent something other than a TupleStreamMessage")
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

    def _connect_peers(self, pplan: Any) -> None:
        """A connection to each peer Stream Manager of the plan: kept while the peer is at
        the same endpoint, replaced when it moved (it was restarted), closed when the plan
        no longer has it (`heron update --container-number` removed its container)."""
        in_plan = {r.id for r in pplan.stmgrs if r.id != self.id}
        self.bp.keep_peers(in_plan)
        for peer_id in [p for p in self.peers if p not in in_plan]:
            # Forget it with everything queued for it: nothing will ever read that socket
            # again, so a message left for it (the backpressure news broadcast to every
            # peer) would wait for good, and its age alone would keep this manager in
            # backpressure, its spouts paused and every checkpoint abandoned.
            endpoint, sock = self.peers.pop(peer_id)
            self.outbox.forget(peer_id)
            sock.close(linger=0)
            # its news still waiting in our socket is stale (see _peer_backpressure)
            self._replaced_peers.add(endpoint)
            log.info("disconnected from %s at %s: not in the new physical plan",
                     peer_id, endpoint)
        for record in pplan.stmgrs:
            if record.id == self.id:
                continue
            current = self.peers.get(record.id)
            if current is not None and current[0] == record.data_endpoint:
                continue
            if current is not None:
                self.outbox.forget(record.id)
                current[1].close(linger=0)
                self._replaced_peers.add(current[0])
                # a peer at a new endpoint was restarted (`heron update` restarts the
                # Stream Manager of a changed container): the backpressure its old
                # incarnation announced ended with it, and no "stop" will ever come
                self.bp.peer_stopped(record.id)
            # an identity of this process alone: a replaced incarnation of this container
            # still connected from behind a partition must not hold the one we need
            sock = connect_dealer(self.ctx, record.data_endpoint,
                                  f"{self.id}:{os.getpid()}", sndhwm=DATA_HWM,
                                  security=self.guard.security,
                                  buffer_bytes=SOCKET_BUFFER_BYTES)
            self.peers[record.id] = (record.data_endpoint, sock)
            # a live peer's news counts, even at an endpoint an old incarnation once had
            self._replaced_peers.discard(record.data_endpoint)
            log.info("connected to %s at %s", record.id, record.data_endpoint)

    def _peer_backpressure(self, kind: bytes, payload: bytes) -> None:
        message = decode([kind, payload])
        if message.topology_id == self.spec.topology_id \
                and message.data_endpoint in self._replaced_peers:
            # sent by an incarnation a new plan has replaced or removed, and read only now
            # (it waited in the socket behind data): the pause it announced ended with it
            log.info("ignored backpressure news from %s's replaced or removed incarnation "
                     "at %s", message.stmgr, message.data_endpoint)
            return
        if message.topology_id != self.spec.topology_id or message.stmgr not in self.peers:
            raise MalformedMessage(f"backpressure message from {message.stmgr!r} of topology "
                                   f"{message.topology_id!r}: not a peer of this topology")
        peer_log = self.peer_bp_logs.get(message.stmgr)
        if peer_log is None:
            peer_log = self.peer_bp_logs[message.stmgr] = EpisodeLog(
                f"{message.stmgr}'s backpressure")
        if kind == START_BACKPRESSURE:
            if message.stmgr not in self.bp.from_peers:
                peer_log.start("%s is in backpressure: local spouts paused", message.stmgr)
            self.bp.peer_started(message.stmgr)
        else:
            if message.stmgr in self.bp.from_peers:
                peer_log.stop("%s is out of backpressure", message.stmgr)
            self.bp.peer_stopped(message.stmgr)

    # -- acking ------------------------------------------------------------------------
    def _on_control(self, payload: bytes) -> None:
        if self.acks is None:
            self._warn_once("control", "acks and fails arrived but this topology does not ack "
                                       "(topology.acker.executors is 0); dropped")
            return
        self.acks.on_control(tuple_pb2.ControlBatch.FromString(payload))

    def _send_control(self) -> None:
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

    # -- the Topology Master -----------------------------------------------------------
    def _check_tmanager(self) -> None:
        try:
            location = self.state.get("tmanagers", self.spec.topology_name)
        except Exception as exc:
            self._warn_once("state", f"cannot read the topology master's location: {exc}")
            return
        if location is None:
            return
        if location.topology_id != self.spec.topology_id:
            log.error("topology name/id mismatch between stmgr and topology master: %s != %s",
                      location.topology_id, self.spec.topology_id)
            return
        endpoint = location.server_endpoint
        if endpoint == self.tm_endpoint:
            return
        if self.tm is not None:
            self.tm.close(linger=0)
        log.info("connecting to the topology master at %s", endpoint)
        self.tm = connect_dealer(self.ctx, endpoint,
                                 peer_identity(self.id, self.spec.incarnation), sndhwm=100,
                                 security=self.guard.security)
        self.tm_endpoint = endpoint
        self.tm_registered = False
        self._register_with_tm()

    def _register_with_tm(self) -> None:
        if self.tm is None:
            return
        request = tmanager_pb2.StMgrRegisterRequest()
        me = request.stmgr
        me.id = self.id
        me.host_name = socket.gethostname()
        me.data_endpoint = self.data_endpoint
        me.local_endpoint = self.local_endpoint
        me.container_id = self.container
        me.incarnation = self.spec.incarnation
        me.shell_endpoint = self.shell_endpoint
        me.pid = os.getpid()
        me.cwd = os.getcwd()
        for _, inst in self.instances.values():
            request.instances.add().CopyFrom(inst)
        try:
            self.tm.send_multipart(encode(request), zmq.NOBLOCK)
        except zmq.Again:
            log.warning("the topology master is not taking messages; registration retried")
            self.tm_endpoint = None

    def _drain_tm(self) -> None:
        while True:
            try:
                frames = self.tm.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            try:
                message = decode(frames)
            except MalformedMessage as exc:
                log.warning("dropped a malformed message from the topology master: %s", exc)
                continue
            if isinstance(message, tmanager_pb2.StMgrRegisterResponse):
                if message.status.status != 1:
                    log.error("the topology master refused registration: %s", message.status.message)
                    self._check_superseded(message.status.message)
                    continue
                self.tm_registered = True
                log.info("registered with the topology master")
                mark_progress()  # a later death of this process is not a crash loop
                if message.HasField("pplan"):
                    self._new_pplan(message.pplan)
            elif isinstance(message, stmgr_pb2.NewPhysicalPlanMessage):
                self._new_pplan(message.new_pplan)
            elif isinstance(message, tmanager_pb2.StMgrHeartbeatResponse):
                if message.status.status != 1:
                    self._check_superseded(message.status.message)
            elif self.stateful is not None and self.stateful.from_tm(message):
                pass
            else:
                log.warning("ignored %s from the topology master", message.DESCRIPTOR.name)

    def _check_superseded(self, text: str) -> None:
        """A Topology Master that saw a newer incarnation of this container refuses this
        one: leave a marker for the executor, which stops the container, and stop."""
        if text.startswith(SUPERSEDED):
            log.error("%s; leaving", text)
            self.superseded = True
            try:
                self.spec.superseded_marker.write_text(text + "\n")
            except OSError as exc:
                log.error("cannot write %s: %s", self.spec.superseded_marker, exc)

    def _heartbeat(self) -> None:
        request = tmanager_pb2.StMgrHeartbeatRequest(heartbeat_time=int(time.time()))
        request.stats.tuples_received = self.counts["tuples_in"]
        request.stats.tuples_sent = self.counts["tuples_out"]
        request.stats.in_backpressure = self.bp.initiated
        try:
            self.tm.send_multipart(encode(request), zmq.NOBLOCK)
        except zmq.Again:
            pass

    def _new_pplan(self, pplan: Any) -> None:
        if not any(s.id == self.id for s in pplan.stmgrs):
            log.error("the new physical plan does not contain %s; ignored", self.id)
            return
        first = self.pplan is None
        self.pplan = pplan
        tasks_by_component: dict[str, list[int]] = {}
        self.task_stmgr = {}
        for inst in pplan.instances:
            tasks_by_component.setdefault(inst.info.component_name, []).append(inst.info.task_id)
            self.task_stmgr[inst.info.task_id] = inst.stmgr_id
        local = {t for t, s in self.task_stmgr.items() if s == self.id}
        if self._reliability.acking and self.acks is None:
            spouts = [t for c, ts in tasks_by_component.items() for t in ts
                      if self.plan.components[c].kind == "spout" and t in local]
            self.acks = _acking.AckTracker(self.id, spouts, self._reliability.message_timeout_secs,
                                   lambda task: self.task_stmgr.get(task))
        if first or tasks_by_component != self._tasks_by_component:
            # `heron update` moved tasks: route by the new layout (a Stream Manager whose
            # own container did not change is not restarted, so it must follow here)
            self.routes = build_routes(self.plan, tasks_by_component, local,
                                       self.stateful.key_groups if self.stateful else None)
        self._tasks_by_component = tasks_by_component
        self.component_of = {inst.info.task_id: inst.info.component_name
                             for inst in pplan.instances}
        if self.stateful is not None:
            self.stateful.new_layout(upstream_tasks(self.plan, tasks_by_component, local,
                                                    self.component_of.__getitem__))
        self.downstream = {}
        for comp in self.plan.components.values():
            targets: set[int] = set()
            for stream in comp.outputs.values():
                for consumer, _ in self.plan.consumers(comp.name, stream.name):
                    targets.update(tasks_by_component.get(consumer.name, ()))
            self.downstream[comp.name] = sorted(targets)
        self._connect_peers(pplan)
        state = topology_pb2.TopologyState.Name(pplan.topology.state)
        log.info("new physical plan: %d stream managers, %d instances, %s",
                 len(pplan.stmgrs), len(pplan.instances), state)
        assignment = encode(stmgr_pb2.NewInstanceAssignmentMessage(pplan=pplan))
        for identity, (sock, _) in self.instances.items():
            self.outbox.send(identity, sock, [identity, *assignment])

    _tasks_by_component: dict[str, list[int]] = {}

    # -- metrics -----------------------------------------------------------------------
    def _publish_metrics(self) -> None:
        message = metrics_pb2.MetricPublisherPublishMessage()
        initiated, paused = self.bp.totals()
        for name, value in (("__tuples-received", self.counts["tuples_in"]),
                            ("__tuples-sent", self.counts["tuples_out"]),
                            ("__tuples-dropped", self.counts["dropped"] + self.outbox.dropped),
                            ("__malformed-messages", self.counts["malformed"]),
                            ("__connections-refused", self.guard.refused),
                            ("__buffered-bytes", self.outbox.buffered_bytes),
                            ("__backpressure", int(self.bp.paused)),
                            ("__backpressure-initiated", int(self.bp.initiated)),
                            ("__time-spent-back-pressure-initiated-ms", int(initiated * 1000)),
                            ("__time-spouts-paused-ms", int(paused * 1000)),
                            ("__largest-queue-bytes", self.outbox.largest_queue()[1]),
                            ("__largest-queue-bytes-max", self.bp.max_queue_bytes),
                            ("__largest-batch-bytes-max", self.largest_batch_bytes),
                            ("__read-credit-in-flight-bytes-max", self.credits.max_in_flight),
                            ("__read-credit-bytes-in-flight",
                             sum(self.credits.in_flight.values())),
                            ("__longest-queue-wait-ms-max", int(self.bp.max_wait * 1000))):
            message.metrics.add(name=name, value=str(value))
        for name, value in self._instance_metrics():
            message.metrics.add(name=name, value=str(value))
        if self.stateful is not None:
            for name, value in self.stateful.metrics():
                message.metrics.add(name=name, value=str(value))
        if self.acks is not None:
            acks = self.acks
            for name, value in (("__trees-pending", acks.xor.pending()),
                                ("__trees-completed", acks.counts["completed"]),
                                ("__trees-failed", acks.counts["failed"]),
                                ("__trees-forgotten", acks.xor.forgotten)):
                message.metrics.add(name=name, value=str(value))
        try:
            self.metrics.send_multipart(encode(message), zmq.NOBLOCK)
        except zmq.Again:
            pass

    def _instance_metrics(self) -> list[tuple[str, int]]:
        """Heron's per-instance metrics, for every registered local instance: the
        cumulative ms its queue kept this manager in backpressure, and the bytes waiting
        for it now (what the Health Manager's sensors read)."""
        out = []
        for identity in self.instances:
            instance = identity.decode()
            out.append((f"__time_spent_back_pressure_by_compid/{instance}",
                        self.instance_bp.total_ms(identity)))
            out.append((f"__connection_buffer_by_instanceid/{instance}/bytes",
                        self.outbox.queued_bytes.get(identity, 0)))
        return out

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
