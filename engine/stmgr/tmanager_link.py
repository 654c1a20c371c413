"""The Stream Manager's link to the Topology Master: finding it (the state manager's
location), registering with it and its heartbeats, and each physical plan it sends,
which sets the routes, the acking, the peers to connect to and the instances'
assignments. A part of ``StreamManager`` (``manager.py``), kept apart because it runs
once per plan, never per tuple."""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
from typing import Any

import zmq

from engine.common.codec import selected_module
from engine.common.launch import SUPERSEDED, peer_identity
from engine.common.network import (
    DATA_HWM,
    SOCKET_BUFFER_BYTES,
    MalformedMessage,
    connect_dealer,
    decode,
    encode,
)
from engine.common.process.progress import mark_progress
from engine.messages import stmgr_pb2, tmanager_pb2, topology_pb2
from engine.stmgr.routes import build_routes
from engine.stmgr.stateful import upstream_tasks

log = logging.getLogger("heron.stmgr")

#: the acking this process runs: the compiled twin (``_acking.pyx``) where built, else
#: ``acking.py``
_acking = selected_module("acking")


class TopologyMasterLink:
    """``StreamManager``'s Topology Master methods (its state: ``tm``, ``pplan``,
    ``routes``, ``acks``, ``peers``..., set by its ``__init__``)."""

    # the StreamManager's state these methods read and change
    spec: Any
    id: str
    ctx: zmq.Context
    guard: Any
    state: Any
    plan: Any
    tm: zmq.Socket | None
    tm_endpoint: str | None
    tm_registered: bool
    pplan: Any
    acks: Any
    stateful: Any
    instances: dict[bytes, tuple[zmq.Socket, Any]]
    peers: dict[str, tuple[str, zmq.Socket]]
    outbox: Any
    bp: Any
    counts: dict[str, int]
    container: int
    data_endpoint: str
    local_endpoint: str
    shell_endpoint: str
    superseded: bool
    _reliability: Any
    _replaced_peers: set[str]
    _warn_once: Callable[[Any, str], None]

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
            assert self.tm is not None  # drained only when connected (the loop polls it)
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
                    log.error("the topology master refused registration: %s",
                              message.status.message)
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
        assert self.tm is not None  # heartbeats go only once registered, so connected
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
