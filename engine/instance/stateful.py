"""A task's part of effectively-once: save, restore, start, and the hooks around them.

The instance writes its own state to the storage and reads it back (state bytes never
travel through the Stream Manager), so no packet cap limits a state's size. A save
flushes what the task emitted first, so the "stored" report, and the marker the Stream
Manager sends downstream because of it, come after that output on every path.

A restore throws the component away (``pre_restore`` first) and builds a fresh one with
the restored state (``init_state`` before ``initialize``, as heronpy orders them): a
component is never left half-way between two checkpoints. Until the Topology Master says
processing starts, a spout emits nothing.

A task whose component raises does not restart it with lost state, as it does in the
other modes: it asks for a rollback of the whole topology, after the restart policy's
backoff, and waits for the restore.
"""

from __future__ import annotations

import logging
import time
from traceback import format_exc
from typing import Any

from compat.storm_api.exceptions import ComponentFailure
from compat.storm_api.state import HashMapState, StatefulComponent, checkpoint_order
from engine.messages import ckptmgr_pb2, common_pb2
from engine.network import encode, type_frame
from engine.spi.statefulstorage import CheckpointUnreadable
from engine.statefulstorage.codec import decode_state, encode_state

log = logging.getLogger("heron.instance")

INITIATE = type_frame(ckptmgr_pb2.InitiateStatefulCheckpoint)
SAVED = type_frame(ckptmgr_pb2.StatefulConsistentCheckpointSaved)
RESTORE = type_frame(ckptmgr_pb2.RestoreInstanceStateRequest)
START = type_frame(ckptmgr_pb2.StartInstanceStatefulProcessing)
KINDS = (INITIATE, SAVED, RESTORE, START)


class TaskCheckpointing:
    def __init__(self, storage: Any, serializer: Any, component: str, task_id: int) -> None:
        self.storage = storage
        self.serializer = serializer
        self.component = component
        self.task_id = task_id
        #: the state the component was (or will be) given; the factory reads it
        self.state = HashMapState()
        #: the Topology Master said processing starts (spouts may emit)
        self.processing = False
        #: the task had finished its stream when it saved these checkpoints
        self._saved_done: dict[str, bool] = {}
        #: a checkpoint taken after the task finished is consistent: the end is durable
        self.done_checkpointed = False
        self.saves = 0
        self.restores = 0
        self.last_bytes = 0
        self.last_save_ms = 0.0
        self.last_restore_ms = 0.0

    def handle(self, loop: Any, kind: bytes, payload: bytes) -> None:
        if kind == INITIATE:
            self.save(loop, ckptmgr_pb2.InitiateStatefulCheckpoint.FromString(payload).checkpoint_id)
        elif kind == SAVED:
            record = ckptmgr_pb2.StatefulConsistentCheckpointSaved.FromString(payload)
            self.saved(loop, record.consistent_checkpoint.checkpoint_id)
        elif kind == RESTORE:
            self.restore(loop, ckptmgr_pb2.RestoreInstanceStateRequest.FromString(payload))
        elif kind == START:
            self.processing = True

    @staticmethod
    def _stateful(loop: Any) -> StatefulComponent | None:
        component = getattr(loop.hosted, "component", None)
        return component if isinstance(component, StatefulComponent) else None

    # -- checkpoint ------------------------------------------------------------------------
    def save(self, loop: Any, checkpoint_id: str) -> None:
        if loop.hosted is None:
            return  # failed, waiting for the rollback: this checkpoint cannot complete
        began = time.perf_counter()
        loop.collector.flush()
        report = ckptmgr_pb2.InstanceStateStored(checkpoint_id=checkpoint_id,
                                                 task_id=self.task_id,
                                                 component_name=self.component)
        component = self._stateful(loop)
        try:
            if component is not None:
                try:
                    component.pre_save(checkpoint_id)
                except Exception as exc:
                    raise _failure(loop, component, exc) from exc
                loop.collector.flush()  # what pre_save emitted belongs before the marker
                data = encode_state(self.state, self.serializer, component=self.component,
                                    task=self.task_id)
                report.bytes = self.storage.store(checkpoint_id, self.component, self.task_id,
                                                  data)
        except ComponentFailure as failure:
            loop.restart(failure)
            return
        except (OSError, ValueError) as exc:
            log.error("checkpoint %s: cannot store the state of %s task %d: %s",
                      checkpoint_id, self.component, self.task_id, exc)
            report.error = str(exc)[:500]
        report.save_secs = time.perf_counter() - began
        self.saves += 1
        self.last_bytes = report.bytes
        self.last_save_ms = report.save_secs * 1000
        self._saved_done[checkpoint_id] = loop.done
        loop.send_data(encode(report))

    def saved(self, loop: Any, checkpoint_id: str) -> None:
        if self._saved_done.pop(checkpoint_id, False):
            self.done_checkpointed = True
        newest = checkpoint_order(checkpoint_id)
        for older in [c for c in self._saved_done if checkpoint_order(c) < newest]:
            del self._saved_done[older]
        component = self._stateful(loop)
        if component is None:
            return
        try:
            try:
                component.post_save(checkpoint_id)
            except Exception as exc:
                raise _failure(loop, component, exc) from exc
        except ComponentFailure as failure:
            loop.restart(failure)

    # -- restore ---------------------------------------------------------------------------
    def restore(self, loop: Any, request: Any) -> None:
        began = time.perf_counter()
        checkpoint_id = request.checkpoint_id
        self.processing = False
        component = self._stateful(loop)
        if component is not None:
            try:
                component.pre_restore(checkpoint_id)
            except Exception:
                log.exception("pre_restore of %s task %d raised; restoring anyway",
                              self.component, self.task_id)
        loop.discard_component()
        # Rows still in open batches were emitted before the rollback: sent now, ahead of
        # our answer, the Stream Manager drops them (sent after it, they would count).
        loop.collector.flush()
        response = ckptmgr_pb2.RestoreInstanceStateResponse(
            checkpoint_id=checkpoint_id, restore_txid=request.restore_txid, task_id=self.task_id)
        try:
            self.state = self._load(loop, checkpoint_id)
        except CheckpointUnreadable as exc:
            log.error("cannot restore %s task %d from %s: %s", self.component, self.task_id,
                      checkpoint_id, exc)
            response.status.status = common_pb2.NOTOK
            response.status.message = str(exc)[:500]
            loop.send_data(encode(response))
            return
        self._saved_done.clear()
        self.done_checkpointed = False
        loop.reset_stream()
        loop.start_component()
        if loop.hosted is not None and loop.active:
            loop.on_activate()
        self.restores += 1
        self.last_restore_ms = (time.perf_counter() - began) * 1000
        response.status.status = common_pb2.OK
        loop.send_data(encode(response))

    def _load(self, loop: Any, checkpoint_id: str) -> HashMapState:
        if not checkpoint_id or not loop.component_is_stateful:
            return HashMapState()
        data = self.storage.load(checkpoint_id, self.component, self.task_id)
        try:
            return decode_state(data, self.serializer)
        except Exception as exc:
            raise CheckpointUnreadable(f"the state of {self.component} task {self.task_id} in "
                                       f"{checkpoint_id} does not decode: {exc}") from exc

    def metrics(self) -> list[tuple[str, Any]]:
        return [("__checkpoint-saves", self.saves),
                ("__checkpoint-bytes", self.last_bytes),
                ("__checkpoint-save-ms", round(self.last_save_ms, 3)),
                ("__restores", self.restores),
                ("__restore-ms", round(self.last_restore_ms, 3))]


def _failure(loop: Any, component: Any, exc: BaseException) -> ComponentFailure:
    return ComponentFailure(loop.task.component, loop.task.task_id, exc, format_exc())
