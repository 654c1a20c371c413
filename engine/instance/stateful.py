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

from compat.storm_api.state import HashMapState, StatefulComponent, checkpoint_order
from engine.common.network import encode, type_frame
from engine.common.runtime.crash_points import crash
from engine.common.runtime.errors import ComponentFailure
from engine.config.key_groups import DEFAULT_KEY_GROUPS
from engine.messages import ckptmgr_pb2, common_pb2
from engine.spi.statefulstorage import CheckpointUnreadable
from engine.statefulstorage.codec import decode_state, encode_state
from engine.statefulstorage.keyed import Chains, KeyedStateStore
from engine.statefulstorage.rescale import (
    RescaleRefused,
    owned_by,
    rescale_task_states,
    task_state_shape,
)
from engine.statefulstorage.savepoints import inner_id, is_savepoint, savepoint_storage

log = logging.getLogger("heron.instance")

INITIATE = type_frame(ckptmgr_pb2.InitiateStatefulCheckpoint)
SAVED = type_frame(ckptmgr_pb2.StatefulConsistentCheckpointSaved)
RESTORE = type_frame(ckptmgr_pb2.RestoreInstanceStateRequest)
START = type_frame(ckptmgr_pb2.StartInstanceStatefulProcessing)
KINDS = (INITIATE, SAVED, RESTORE, START)


class TaskCheckpointing:
    def __init__(self, storage: Any, serializer: Any, component: str, task_id: int, *,
                 key_groups: int = DEFAULT_KEY_GROUPS, component_class: Any = None,
                 from_savepoint: str | None = None, keyed_by_input: bool = False) -> None:
        self.storage = storage
        self.serializer = serializer
        self.component = component
        self.task_id = task_id
        self.component_class = component_class
        self.key_groups = key_groups
        #: the per-task state may move by key (engine.statefulstorage.rescale.keyed_by_input)
        self.keyed_by_input = keyed_by_input
        #: the savepoint the topology started from (restores named "savepoint:<id>")
        self.from_savepoint = from_savepoint
        #: keyed state, by key group (engine/statefulstorage/keyed.py)
        self.keyed_store = KeyedStateStore(storage, serializer, component, key_groups)
        #: each owned key group's chain of files, as of the last save or restore
        self.chains: Chains = {}
        #: (this task's index among its component's tasks, their number), from the plan
        #: of the last restore: which key groups it owns
        self.layout = (0, 1)
        #: its component's task ids in the plan of the last restore
        self.component_tasks: list[int] = []
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
        self.last_keys_written = 0
        #: the last restore shared out the state of another number of tasks (a rescale)
        self.rescaled = False

    def handle(self, loop: Any, kind: bytes, payload: bytes) -> None:
        if kind == INITIATE:
            initiate = ckptmgr_pb2.InitiateStatefulCheckpoint.FromString(payload)
            self.save(loop, initiate.checkpoint_id)
        elif kind == SAVED:
            record = ckptmgr_pb2.StatefulConsistentCheckpointSaved.FromString(payload)
            self.saved(loop, record.consistent_checkpoint.checkpoint_id)
        elif kind == RESTORE:
            self.restore(loop, ckptmgr_pb2.RestoreInstanceStateRequest.FromString(payload))
        elif kind == START:
            crash("instance.restore.at_start", self.component)
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
                crash("instance.save.after_pre_save", self.component)
                data = encode_state(self.state, self.serializer, component=self.component,
                                    task=self.task_id)
                report.bytes = self.storage.store(checkpoint_id, self.component, self.task_id,
                                                  data)
                index, parallelism = self.layout
                report.task_state = task_state_shape(
                    self.state, owned_by(index, parallelism, self.key_groups)
                    if self.keyed_by_input else None)
                if self.state.has_keyed() or self.chains:
                    keyed = self.keyed_store.save(checkpoint_id, self.task_id, index,
                                                  parallelism, self.state.keyed(), self.chains)
                    self.chains = keyed.chains
                    report.bytes += keyed.bytes
                    report.groups_written = keyed.groups_written
                    report.keys_written = keyed.keys_written
                    report.keyed_bytes = keyed.live_bytes
                    self.last_keys_written = keyed.keys_written
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
        crash("instance.save.after_store", self.component)
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
            crash("instance.saved.after_post_save", self.component)
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
        self.component_tasks = _tasks_of(loop.pplan, self.component)
        self.layout = _layout_of(self.component_tasks, self.task_id)
        try:
            self.state = self._load(loop, checkpoint_id)
        except (CheckpointUnreadable, RescaleRefused) as exc:
            log.error("cannot restore %s task %d from %s: %s", self.component, self.task_id,
                      checkpoint_id, exc)
            response.status.status = common_pb2.NOTOK
            response.status.message = str(exc)[:500]
            loop.send_data(encode(response))
            return
        crash("instance.restore.after_load", self.component)
        if self.rescaled:
            crash("instance.restore.rescaled", self.component)
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
        """This task's state in ``checkpoint_id`` under the current plan: its own per-task
        state (shared out by ``rescale_state`` when the component's parallelism changed)
        and exactly the key groups it owns now."""
        self.chains = {}
        self.keyed_store.chain_bytes = {}
        self.rescaled = False
        if not checkpoint_id or not loop.component_is_stateful:
            return HashMapState()
        storage, keyed_store = self.storage, self.keyed_store
        from_savepoint = is_savepoint(checkpoint_id)
        if from_savepoint:
            if not self.from_savepoint:
                raise CheckpointUnreadable(f"asked to restore {checkpoint_id}, but this topology "
                                           "names no savepoint to start from")
            storage = savepoint_storage(self.from_savepoint)
            keyed_store = KeyedStateStore(storage, self.serializer, self.component,
                                          self.key_groups)
            checkpoint_id = inner_id(checkpoint_id)
        index, parallelism = self.layout
        old_tasks = sorted(int(name[:-len(".state")]) for name in
                           storage.names(checkpoint_id, self.component)
                           if name.endswith(".state") and name[:-len(".state")].isdigit())
        if not old_tasks and not from_savepoint:
            # every task of a stateful component stores its state in every checkpoint, so
            # none here means the checkpoint's files are gone (deleted, or a directory that
            # is not mounted on this node): the Topology Master tries an older one, rather
            # than this task starting empty as if it had restored
            raise CheckpointUnreadable(f"{checkpoint_id} holds no state of {self.component} "
                                       f"(its files are missing from {storage.describe()})")
        if len(old_tasks) == parallelism:
            # by position: ids shift when another component's count changes (or a
            # savepoint is started as another topology), positions do not
            state = self._decode(storage, checkpoint_id, old_tasks[index])
        else:
            self.rescaled = True
            states = [self._decode(storage, checkpoint_id, task) for task in old_tasks]
            state = rescale_task_states(
                self.component_class, self.component, states, parallelism,
                key_groups=self.key_groups if self.keyed_by_input else None)[index]
            log.info("%s task %d: per-task state of %d task(s) shared out to %d", self.component,
                     self.task_id, len(old_tasks), parallelism)
        keyed, self.chains = keyed_store.load(checkpoint_id, index, parallelism)
        if from_savepoint:
            # the savepoint's files are not this topology's checkpoints: the next save
            # writes every group whole, into this topology's own storage
            self.chains = {}
            keyed.dirty.update(keyed)
        if keyed or self.chains:
            state.adopt_keyed(keyed)
        return state

    def _decode(self, storage: Any, checkpoint_id: str, task: int) -> HashMapState:
        data = storage.load(checkpoint_id, self.component, task)
        try:
            return decode_state(data, self.serializer)
        except Exception as exc:
            raise CheckpointUnreadable(f"the state of {self.component} task {task} in "
                                       f"{checkpoint_id} does not decode: {exc}") from exc

    def metrics(self) -> list[tuple[str, Any]]:
        return [("__checkpoint-saves", self.saves),
                ("__checkpoint-bytes", self.last_bytes),
                ("__checkpoint-keys-written", self.last_keys_written),
                ("__key-groups-owned", len(self.chains)),
                ("__keyed-keys", len(self.state.keyed()) if self.state.has_keyed() else 0),
                ("__checkpoint-save-ms", round(self.last_save_ms, 3)),
                ("__restores", self.restores),
                ("__restore-ms", round(self.last_restore_ms, 3))]


def _tasks_of(pplan: Any, component: str) -> list[int]:
    return sorted(i.info.task_id for i in pplan.instances if i.info.component_name == component)


def _layout_of(tasks: list[int], task_id: int) -> tuple[int, int]:
    """(index of ``task_id`` among its component's ``tasks`` (task-id order), their number)."""
    return (tasks.index(task_id) if task_id in tasks else 0), max(1, len(tasks))


def _failure(loop: Any, component: Any, exc: BaseException) -> ComponentFailure:
    return ComponentFailure(loop.task.component, loop.task.task_id, exc, format_exc())
