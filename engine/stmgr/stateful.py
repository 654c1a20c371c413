"""A Stream Manager's part of effectively-once: markers, alignment, restores.

What it does, in Heron's order (proto/heron/proto/ckptmgr.proto has the whole protocol):

* a checkpoint the Topology Master starts is passed to the local spouts; when a task
  reports its state stored, a marker goes to every downstream task behind what that
  task emitted (the same queue as its data, so the order holds on every path), and the
  report goes on to the Topology Master;
* markers reaching a local bolt task are aligned (``CheckpointGateway``), and the task
  is told to save, in order with its input;
* a restore drops everything in flight, has every local instance load its state, and
  answers the Topology Master once all have; until processing starts again, data from
  an instance that has not restored yet, and data from a peer sent under another restore
  transaction, is dropped: it was emitted before the rollback.

State bytes never pass through here: instances read and write the storage themselves.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from engine.common.network import encode, type_frame
from engine.common.runtime.crash_points import crash
from engine.config.checkpointing import Checkpointing
from engine.messages import ckptmgr_pb2, common_pb2
from engine.stmgr.checkpoint_gateway import CheckpointGateway

log = logging.getLogger("heron.stmgr")

INSTANCE_STATE_STORED = type_frame(ckptmgr_pb2.InstanceStateStored)
RESTORE_INSTANCE_RESPONSE = type_frame(ckptmgr_pb2.RestoreInstanceStateResponse)
INSTANCE_FAILED = type_frame(ckptmgr_pb2.InstanceFailed)
DOWNSTREAM_MARKER = type_frame(ckptmgr_pb2.DownstreamStatefulCheckpoint)
FROM_INSTANCE = (INSTANCE_STATE_STORED, RESTORE_INSTANCE_RESPONSE, INSTANCE_FAILED)


class StatefulRole:
    """Owned by the Stream Manager; calls back into it to send (``manager`` exposes
    ``send_local(task, frames)``, ``send_peer(owner, frames)``, ``send_tm(message)``,
    ``local_tasks()``, ``task_stmgr`` and ``downstream_of(task)``)."""

    def __init__(self, manager: Any, settings: Checkpointing, key_groups: int) -> None:
        self.manager = manager
        self.settings = settings
        #: topology.stateful.key.groups: fields groupings route by key group
        self.key_groups = key_groups
        #: the restore transaction in force (0: none yet; nothing flows before the first)
        self.txid = 0
        self.restoring_to: str | None = None
        #: local tasks that restored under ``txid``
        self.restored: set[int] = set()
        #: every local task restored and answered: data of this transaction may flow
        self.ready = False
        self.gateway = CheckpointGateway({}, buffer_bytes=settings.buffer_bytes,
                                         timeout_secs=settings.timeout_secs)
        self.discarded = 0
        self.markers_sent = 0

    # -- the plan ------------------------------------------------------------------------
    def new_layout(self, upstream: dict[int, set[int]]) -> None:
        """Local bolt task -> its upstream tasks, from the new physical plan."""
        self.gateway = CheckpointGateway(upstream, buffer_bytes=self.settings.buffer_bytes,
                                         timeout_secs=self.settings.timeout_secs)

    # -- what may flow -------------------------------------------------------------------
    def accepts_from_instance(self, task: int) -> bool:
        """Data from a local instance counts only once it restored in this transaction
        (what it sent before was emitted before the rollback)."""
        return self.txid != 0 and task in self.restored

    def accepts_from_peer(self, txid: int) -> bool:
        return self.ready and txid == self.txid

    def deliver(self, task: int, src: int, item: Any, size: int) -> None:
        """Data for a local task, through alignment."""
        for kind, value in self.gateway.admit(task, src, item, size):
            self._hand(task, kind, value)

    def _hand(self, task: int, kind: str, value: Any) -> None:
        if kind == "data":
            self.manager.send_local_data(task, value)
        else:
            crash("stmgr.aligned.before_forward", self.manager.id)
            message = ckptmgr_pb2.InitiateStatefulCheckpoint(checkpoint_id=value)
            self.manager.send_local(task, encode(message))

    def expire(self) -> None:
        for task, deliveries in self.gateway.expire().items():
            for kind, value in deliveries:
                self._hand(task, kind, value)

    # -- messages from local instances ---------------------------------------------------
    def from_instance(self, task: int, kind: bytes, payload: bytes) -> None:
        if kind == INSTANCE_STATE_STORED:
            self._stored(task, ckptmgr_pb2.InstanceStateStored.FromString(payload))
        elif kind == RESTORE_INSTANCE_RESPONSE:
            self._restored(task, ckptmgr_pb2.RestoreInstanceStateResponse.FromString(payload))
        else:
            failed = ckptmgr_pb2.InstanceFailed.FromString(payload)
            self.manager.send_tm(ckptmgr_pb2.ResetTopologyState(
                dead_stmgr=self.manager.id, dead_taskid=task,
                reason=f"task {task} failed: {failed.reason}"[:500]))

    def _stored(self, task: int, message: Any) -> None:
        if not self.accepts_from_instance(task):
            return
        crash("stmgr.stored.before_markers", self.manager.id)
        message.task_id = task
        if not message.error:
            marker = ckptmgr_pb2.DownstreamStatefulCheckpoint(
                origin_task_id=task, checkpoint_id=message.checkpoint_id,
                restore_txid=self.txid)
            for target in self.manager.downstream_of(task):
                owner = self.manager.task_stmgr.get(target)
                if owner == self.manager.id:
                    self.marker(target, task, message.checkpoint_id)
                elif owner:
                    marker.destination_task_id = target
                    self.manager.send_peer(owner, encode(marker))
                self.markers_sent += 1
        self.manager.send_tm(message)

    def marker(self, task: int, src: int, checkpoint_id: str) -> None:
        for kind, value in self.gateway.marker(task, src, checkpoint_id):
            self._hand(task, kind, value)

    def peer_marker(self, payload: bytes) -> None:
        message = ckptmgr_pb2.DownstreamStatefulCheckpoint.FromString(payload)
        if not self.accepts_from_peer(message.restore_txid):
            return
        if self.manager.task_stmgr.get(message.destination_task_id) != self.manager.id:
            return
        self.marker(message.destination_task_id, message.origin_task_id, message.checkpoint_id)

    # -- messages from the Topology Master -----------------------------------------------
    def from_tm(self, message: Any) -> bool:
        """Handle a ckptmgr message from the Topology Master; False if it is not one."""
        if isinstance(message, ckptmgr_pb2.StartStatefulCheckpoint):
            if self.ready:
                initiate = encode(ckptmgr_pb2.InitiateStatefulCheckpoint(
                    checkpoint_id=message.checkpoint_id))
                for task in self.manager.local_spout_tasks():
                    self.manager.send_local(task, initiate)
        elif isinstance(message, ckptmgr_pb2.StatefulConsistentCheckpointSaved):
            frames = encode(message)
            for task in self.manager.local_tasks():
                self.manager.send_local(task, frames)
        elif isinstance(message, ckptmgr_pb2.RestoreTopologyStateRequest):
            self._restore(message)
        elif isinstance(message, ckptmgr_pb2.StartStmgrStatefulProcessing):
            if message.restore_txid == self.txid and self.ready:
                start = encode(ckptmgr_pb2.StartInstanceStatefulProcessing(
                    checkpoint_id=message.checkpoint_id))
                for task in self.manager.local_tasks():
                    self.manager.send_local(task, start)
                log.info("processing starts from %s", message.checkpoint_id or "empty state")
        else:
            return False
        return True

    def _restore(self, request: Any) -> None:
        log.info("restore %d to %s: %s", request.restore_txid,
                 request.checkpoint_id or "empty state", request.reason)
        self.txid = request.restore_txid
        self.restoring_to = request.checkpoint_id
        self.restored = set()
        self.ready = False
        self.gateway.clear()
        self.discarded += self.manager.discard_in_flight()
        frames = encode(ckptmgr_pb2.RestoreInstanceStateRequest(
            checkpoint_id=request.checkpoint_id, restore_txid=request.restore_txid))
        for task in self.manager.local_tasks():
            self.manager.send_local(task, frames)
        crash("stmgr.restore.mid", self.manager.id, grace=0.2)
        self._maybe_restored()

    def registered_again(self, task: int) -> None:
        """A local instance registered again from the same process (its answer was slow,
        or its connection came back): what was sent to it meanwhile may be lost, so a
        restore it has not answered is asked again."""
        if self.restoring_to is not None and task not in self.restored:
            self.manager.send_local(task, encode(ckptmgr_pb2.RestoreInstanceStateRequest(
                checkpoint_id=self.restoring_to, restore_txid=self.txid)))

    def _restored(self, task: int, response: Any) -> None:
        if response.restore_txid != self.txid or self.restoring_to is None:
            return
        if response.status.status != common_pb2.OK:
            log.warning("task %d cannot restore %s: %s", task, self.restoring_to,
                        response.status.message)
            self.manager.send_tm(ckptmgr_pb2.RestoreTopologyStateResponse(
                status=response.status, checkpoint_id=self.restoring_to,
                restore_txid=self.txid, stmgr=self.manager.id))
            self.restoring_to = None
            return
        self.restored.add(task)
        self._maybe_restored()

    def _maybe_restored(self) -> None:
        if self.restoring_to is None or not self.restored >= set(self.manager.local_tasks()):
            return
        crash("stmgr.restore.before_answer", self.manager.id)
        self.ready = True
        response = ckptmgr_pb2.RestoreTopologyStateResponse(
            checkpoint_id=self.restoring_to, restore_txid=self.txid, stmgr=self.manager.id)
        response.status.status = common_pb2.OK
        self.manager.send_tm(response)
        self.restoring_to = None

    def metrics(self) -> list[tuple[str, Any]]:
        return [("__checkpoint-markers-sent", self.markers_sent),
                ("__checkpoint-alignments-abandoned", self.gateway.abandoned),
                ("__checkpoint-held-bytes", self.gateway.held_bytes),
                ("__rollback-discarded-messages", self.discarded),
                ("__restore-txid", self.txid)]


def upstream_tasks(plan: Any, tasks_by_component: dict[str, list[int]],
                   local: set[int], component_of: Callable[[int], str]) -> dict[int, set[int]]:
    """Each local bolt task -> the tasks of every component feeding it."""
    out: dict[int, set[int]] = {}
    for task in local:
        comp = plan.components[component_of(task)]
        sources = {inp.source for inp in comp.inputs}
        if sources:
            out[task] = {t for s in sources for t in tasks_by_component.get(s, ())}
    return out
