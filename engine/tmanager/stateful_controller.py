"""The Topology Master's part of effectively-once (Heron's ``StatefulController``: its
checkpointer and its restorer), for one topology.

Checkpointer: on a timer, when the physical plan is in force and no restore runs, a new
checkpoint id is sent to every Stream Manager; each task's "stored" report is counted,
and when every task of the physical plan has reported, the checkpoint is globally
consistent: it is recorded in the state manager (newest first, ``retained`` kept),
every Stream Manager is told (instances then run ``post_save``), and checkpoints no
longer kept are deleted from the storage. Beyond Heron: a checkpoint that is not
complete within the timeout, or that a task failed to store, is abandoned and counted,
and the next one starts on time; there is never more than one in flight.

Restorer: any new physical plan (a Stream Manager registered, or registered again
because one of its instances came back) or a reset from a Stream Manager (a component
raised) rolls the whole topology back to the newest consistent checkpoint, under a new
restore transaction number; a Stream Manager that cannot restore it (a checkpoint file
unreadable) answers NOTOK and the next older checkpoint is tried, then empty state.
Answers of an older transaction are ignored. When every Stream Manager restored,
processing starts.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from google.protobuf.message import Message

from compat.storm_api.state import checkpoint_order
from engine.common.grouping.key_groups import moves
from engine.common.runtime.crash_points import crash
from engine.config.checkpointing import Checkpointing
from engine.config.key_groups import DEFAULT_KEY_GROUPS
from engine.messages import ckptmgr_pb2, common_pb2, physical_plan_pb2
from engine.spi.statemgr import StateManager
from engine.statefulstorage.rescale import combine_shapes
from engine.statefulstorage.savepoints import (
    SavepointError,
    check_id,
    read_savepoint,
    restore_id,
    write_savepoint,
)

log = logging.getLogger("heron.tmanager")

KIND: Final = "statefulcheckpoints"


@dataclass
class _Wanted:
    """A savepoint asked for: its id, who gets the answer, and whether it is the final
    one of a ``heron kill --savepoint`` (no checkpoint may follow it once written)."""

    savepoint_id: str
    reply: Callable[[ckptmgr_pb2.SavepointResponse], None]
    final: bool = False


@dataclass
class _InFlight:
    checkpoint_id: str
    started: float
    waiting: set[int]
    bytes: int = 0
    #: component -> its tasks' per-task state shapes and bytes so far
    shapes: dict[str, list[str]] = field(default_factory=dict)
    component_bytes: dict[str, int] = field(default_factory=dict)
    #: component -> its tasks' whole keyed state as stored, so far
    keyed_bytes: dict[str, int] = field(default_factory=dict)
    #: a savepoint to write once it completes
    savepoint: _Wanted | None = None


@dataclass
class _Restore:
    txid: int
    candidates: list[str]  # checkpoint ids to try, newest first; "" is empty state
    waiting: set[str]
    reason: str
    started: float
    #: when the current attempt was sent (a restore unanswered too long is sent again)
    sent: float = 0.0


@dataclass
class StatefulFigures:
    completed: int = 0
    abandoned: int = 0
    restores: int = 0
    last_id: str = ""
    last_duration_secs: float = 0.0
    last_bytes: int = 0
    last_restore_reason: str = ""
    last_restore_checkpoint: str = ""
    last_restore_secs: float = 0.0
    #: (reason, checkpoint restored) of every restore, oldest first (bounded)
    restore_log: list[tuple[str, str]] = field(default_factory=list)
    #: the last parallelism change: component -> [old tasks, new tasks, key groups moved]
    last_rescale: dict[str, list[int]] = field(default_factory=dict)


class StatefulController:
    def __init__(self, name: str, state: StateManager, settings: Checkpointing,
                 storage: Any, *, send: Callable[[str, Message], None],
                 key_groups: int = DEFAULT_KEY_GROUPS,
                 clock: Callable[[], float] = time.monotonic,
                 wall_ms: Callable[[], int] = lambda: int(time.time() * 1000)) -> None:
        self.name = name
        self.state = state
        self.settings = settings
        self.key_groups = key_groups
        self.storage = storage
        #: send(stmgr id, message)
        self._send = send
        self._clock = clock
        self._wall_ms = wall_ms
        self.consistent: list[ckptmgr_pb2.StatefulConsistentCheckpoint] = []
        self._last_number = 0
        self.stmgrs: list[str] = []
        #: task id -> component, of the physical plan in force
        self.tasks: dict[int, str] = {}
        self.packing_id = ""
        self.in_flight: _InFlight | None = None
        self.restore: _Restore | None = None
        #: processing runs (a restore completed since the last physical plan)
        self.running = False
        self.next_checkpoint = 0.0
        self.figures = StatefulFigures()
        #: savepoints asked for and not yet started
        self.savepoints_wanted: list[_Wanted] = []
        #: a final savepoint (``heron kill --savepoint``) was written: no more checkpoints
        #: until the topology is activated again or another savepoint is asked for (the
        #: kill that asked for it failed). Only a written final savepoint sets it: one
        #: that is abandoned or cannot be written leaves the checkpoints going.
        self.stopped = False
        #: "savepoint:<checkpoint id>" of the savepoint this topology started from: the
        #: restore to fall back on before empty state (None: it started from nothing)
        self.origin: str | None = None

    # -- startup -------------------------------------------------------------------------
    def load(self, *, first_start: bool) -> None:
        """Read the consistent checkpoints; ``topology.stateful.start.clean`` forgets them
        on the topology's first start (never when a Topology Master is restarted: that
        would throw the state away on every failure of container 0)."""
        if self.settings.from_savepoint:
            manifest = read_savepoint(self.settings.from_savepoint)
            self.origin = restore_id(manifest["checkpoint_id"])
            self._seen(manifest["checkpoint_id"])
            log.info("started from savepoint %s (%s)", manifest.get("savepoint_id"),
                     self.settings.from_savepoint)
        if first_start and self.settings.start_clean:
            log.info("topology.stateful.start.clean: starting with empty state")
            self._store([])
            return
        stored = self.state.get(KIND, self.name)
        self.consistent = list(stored.consistent_checkpoints) if stored is not None else []
        for record in self.consistent:
            self._seen(record.checkpoint_id)
        if self.consistent:
            log.info("consistent checkpoints: %s",
                     ", ".join(c.checkpoint_id for c in self.consistent))

    # -- the physical plan and failures --------------------------------------------------
    def new_plan(self, pplan: physical_plan_pb2.PhysicalPlan, packing_id: str, reason: str) -> None:
        self.stmgrs = sorted({s.id for s in pplan.stmgrs})
        old = _counts(self.tasks)
        self.tasks = {i.info.task_id: i.info.component_name for i in pplan.instances}
        new = _counts(self.tasks)
        changed = {c: [old[c], new[c], len(moves(old[c], new[c], self.key_groups))]
                   for c in new if c in old and old[c] != new[c]}
        if changed:
            self.figures.last_rescale = changed
            for component, (before, after, moved) in sorted(changed.items()):
                log.info("%s: %d -> %d tasks; %d of %d key groups move to a new owner",
                         component, before, after, moved, self.key_groups)
        self.packing_id = packing_id
        self.start_restore(reason)

    def start_restore(self, reason: str) -> None:
        if not self.stmgrs:
            return
        flight = self.in_flight
        if flight is not None:
            log.info("checkpoint %s given up: the topology rolls back", flight.checkpoint_id)
            self.in_flight = None
            if flight.savepoint is not None:  # its requester waits: tell it now
                flight.savepoint.reply(_savepoint_answer(
                    flight.savepoint.savepoint_id,
                    error=f"its checkpoint {flight.checkpoint_id} was given up: the topology "
                          f"rolls back ({reason})"))
        self.running = False
        candidates = ([c.checkpoint_id for c in self.consistent]
                      + ([self.origin] if self.origin else []) + [""])
        self.restore = _Restore(self._next_txid(), candidates, set(self.stmgrs), reason,
                                self._clock())
        self._send_restore(self.restore)

    def _send_restore(self, restore: _Restore) -> None:
        """Ask every Stream Manager to roll back to ``restore``'s first candidate (the
        restore under way, ``self.restore``)."""
        restore.sent = self._clock()
        checkpoint_id = restore.candidates[0]
        log.info("restore %d: rolling back to %s (%s)", restore.txid,
                 checkpoint_id or "empty state", restore.reason)
        request = ckptmgr_pb2.RestoreTopologyStateRequest(
            checkpoint_id=checkpoint_id, restore_txid=restore.txid, reason=restore.reason)
        for sid in self.stmgrs:
            self._send(sid, request)
            crash("tmanager.restore.sent_some", "tmanager", grace=0.2)

    def on_restore_response(self, response: ckptmgr_pb2.RestoreTopologyStateResponse) -> None:
        restore = self.restore
        if restore is None or response.restore_txid != restore.txid:
            return  # an answer to a restore that was superseded
        if response.checkpoint_id != restore.candidates[0]:
            return
        if response.status.status != common_pb2.OK:
            failed = restore.candidates.pop(0)
            log.warning("restore %d: %s cannot restore %s: %s", restore.txid, response.stmgr,
                        failed or "empty state", response.status.message)
            if not restore.candidates:
                restore.candidates = [""]
            restore.txid = self._next_txid()
            restore.waiting = set(self.stmgrs)
            self._send_restore(restore)
            return
        restore.waiting.discard(response.stmgr)
        if restore.waiting:
            return
        checkpoint_id = restore.candidates[0]
        figures = self.figures
        figures.restores += 1
        figures.last_restore_reason = restore.reason
        figures.last_restore_checkpoint = checkpoint_id or "empty"
        figures.last_restore_secs = self._clock() - restore.started
        figures.restore_log = (figures.restore_log + [(restore.reason, checkpoint_id)])[-20:]
        log.info("restore %d done in %.2f s: %s restored; processing starts", restore.txid,
                 figures.last_restore_secs, checkpoint_id or "empty state")
        crash("tmanager.restore.before_start", "tmanager")
        start = ckptmgr_pb2.StartStmgrStatefulProcessing(checkpoint_id=checkpoint_id,
                                                         restore_txid=restore.txid)
        for sid in self.stmgrs:
            self._send(sid, start)
        self.restore = None
        self.running = True
        self.next_checkpoint = self._clock() + self.settings.interval_secs

    def on_reset(self, message: ckptmgr_pb2.ResetTopologyState, sender: str) -> None:
        reason = message.reason or f"{sender} asked for a rollback"
        log.warning("rollback asked by %s: %s", sender, reason)
        self.start_restore(reason)

    # -- checkpoints ---------------------------------------------------------------------
    def tick(self) -> None:
        now = self._clock()
        restore = self.restore
        if restore is not None and now - restore.sent > self.settings.timeout_secs:
            # an answer was lost (a process died or a connection dropped mid-restore and
            # nothing registered again): ask again rather than wait for ever
            log.warning("restore %d: no answer from %s after %g s; asking again", restore.txid,
                        ", ".join(sorted(restore.waiting)), self.settings.timeout_secs)
            restore.txid = self._next_txid()
            restore.waiting = set(self.stmgrs)
            self._send_restore(restore)
        flight = self.in_flight
        if flight is not None and now - flight.started > self.settings.timeout_secs:
            self._abandon(flight, f"{len(flight.waiting)} task(s) had not stored their state "
                                  f"after {self.settings.timeout_secs:g} s "
                                  f"({_tasks_text(flight.waiting, self.tasks)})")
        if not self.running or self.in_flight is not None or self.stopped:
            return
        savepoint = self.savepoints_wanted.pop(0) if self.savepoints_wanted else None
        if savepoint is None and now < self.next_checkpoint:
            return
        self.next_checkpoint = now + self.settings.interval_secs
        checkpoint_id = f"ckpt-{self._next_number()}"
        self.in_flight = _InFlight(checkpoint_id, now, set(self.tasks), savepoint=savepoint)
        start = ckptmgr_pb2.StartStatefulCheckpoint(checkpoint_id=checkpoint_id)
        for sid in self.stmgrs:
            self._send(sid, start)

    def on_stored(self, message: ckptmgr_pb2.InstanceStateStored) -> None:
        flight = self.in_flight
        if flight is None or message.checkpoint_id != flight.checkpoint_id:
            return
        if message.error:
            self._abandon(flight, f"task {message.task_id} ({message.component_name}) could "
                                  f"not store its state: {message.error}")
            return
        flight.waiting.discard(message.task_id)
        flight.bytes += message.bytes
        if message.task_state:
            component = message.component_name or self.tasks.get(message.task_id, "")
            flight.shapes.setdefault(component, []).append(message.task_state)
            flight.component_bytes[component] = (flight.component_bytes.get(component, 0)
                                                 + message.bytes)
            flight.keyed_bytes[component] = (flight.keyed_bytes.get(component, 0)
                                             + message.keyed_bytes)
        if flight.waiting:
            return
        self._completed(flight)

    def _completed(self, flight: _InFlight) -> None:
        duration = self._clock() - flight.started
        record = ckptmgr_pb2.StatefulConsistentCheckpoint(
            checkpoint_id=flight.checkpoint_id, packing_plan_id=self.packing_id,
            completed_at_ms=self._wall_ms(), duration_secs=duration, bytes=flight.bytes,
            components=[ckptmgr_pb2.ComponentCheckpoint(
                component=c, tasks=len(shapes), task_state=combine_shapes(shapes),
                bytes=flight.component_bytes.get(c, 0),
                keyed_bytes=flight.keyed_bytes.get(c, 0))
                for c, shapes in sorted(flight.shapes.items())])
        kept = [record] + self.consistent[:self.settings.retained - 1]
        crash("tmanager.consistent.before_record", "tmanager")
        try:
            self._store(kept)
        except Exception as exc:  # not recorded: it cannot be restored, so it is not done
            self._abandon(flight, f"recording it failed: {exc}")
            return
        self.in_flight = None
        figures = self.figures
        figures.completed += 1
        figures.last_id = flight.checkpoint_id
        figures.last_duration_secs = duration
        figures.last_bytes = flight.bytes
        saved = ckptmgr_pb2.StatefulConsistentCheckpointSaved(consistent_checkpoint=record)
        crash("tmanager.consistent.before_notify", "tmanager")
        for sid in sorted(self.stmgrs):
            self._send(sid, saved)
            crash("tmanager.consistent.notified_some", "tmanager", grace=0.2)
        if flight.savepoint is not None:
            self._write_savepoint(flight, flight.savepoint, record)
        try:
            self.storage.dispose({c.checkpoint_id for c in kept} | {""})
        except OSError as exc:
            log.warning("could not delete old checkpoints from %s: %s",
                        self.storage.describe(), exc)

    def _abandon(self, flight: _InFlight, why: str) -> None:
        self.figures.abandoned += 1
        log.warning("checkpoint %s abandoned: %s", flight.checkpoint_id, why)
        self.in_flight = None
        if flight.savepoint is not None:
            wanted = flight.savepoint
            if wanted.final:
                log.warning("the final savepoint %s failed: checkpoints go on",
                            wanted.savepoint_id)
            wanted.reply(_savepoint_answer(wanted.savepoint_id,
                                           error=f"its checkpoint {flight.checkpoint_id} "
                                                 f"was abandoned: {why}"))

    # -- savepoints ----------------------------------------------------------------------
    def request_savepoint(self, savepoint_id: str,
                          reply: Callable[[ckptmgr_pb2.SavepointResponse], None],
                          final: bool = False) -> None:
        """Take a checkpoint now (or once the one in flight is done) and copy it into
        the savepoints directory; ``reply`` gets the answer when it is written. ``final``:
        the topology is being stopped; once this one is written, no checkpoint is taken
        after it (what a two-phase-commit sink committed then would not be in the
        savepoint). A final savepoint that fails stops nothing. A savepoint asked for
        after a final one was written means the kill did not happen: checkpoints resume."""
        if not self.settings.savepoints:
            reply(_savepoint_answer(savepoint_id, error="no savepoints directory is configured "
                                                        "(heron.statefulstorage.savepoints.path)"))
            return
        try:
            check_id(savepoint_id)
            if (Path(self.settings.savepoints) / savepoint_id).exists():
                raise SavepointError(f"savepoint {savepoint_id!r} already exists in "
                                     f"{self.settings.savepoints}")
        except SavepointError as exc:
            reply(_savepoint_answer(savepoint_id, error=str(exc)))
            return
        if self.stopped:
            log.info("savepoint %s asked for after the final one: checkpoints resume",
                     savepoint_id)
            self.stopped = False
        log.info("%ssavepoint %s asked for: a checkpoint starts as soon as it can",
                 "final " if final else "", savepoint_id)
        self.savepoints_wanted.append(_Wanted(savepoint_id, reply, final))

    def resume(self) -> None:
        """The topology is activated (again): a kill that asked for a final savepoint is
        over (it failed, or gave up waiting), so checkpoints go on, and a final savepoint
        still to be written is written as a plain one."""
        if self.stopped:
            log.info("the topology is activated: checkpoints resume after the final savepoint")
        self.stopped = False
        pending = list(self.savepoints_wanted)
        if self.in_flight is not None and self.in_flight.savepoint is not None:
            pending.append(self.in_flight.savepoint)
        for wanted in pending:
            if wanted.final:
                log.info("savepoint %s is no longer final: the topology is active",
                         wanted.savepoint_id)
                wanted.final = False

    def _write_savepoint(self, flight: _InFlight, wanted: _Wanted,
                         record: ckptmgr_pb2.StatefulConsistentCheckpoint) -> None:
        """Copy ``flight``'s checkpoint, consistent now, into the savepoint ``wanted``
        (``flight.savepoint``) asked for."""
        savepoints = self.settings.savepoints
        # a savepoint is only asked for with a directory configured (see _savepoint)
        assert savepoints is not None
        savepoint_id, reply = wanted.savepoint_id, wanted.reply
        metadata = {"topology": self.name, "key_groups": self.key_groups,
                    "components": {c.component: {"tasks": c.tasks, "task_state": c.task_state,
                                                 "bytes": c.bytes}
                                   for c in record.components}}
        try:
            path = write_savepoint(self.storage, flight.checkpoint_id, savepoints,
                                   savepoint_id, metadata)
        except (OSError, SavepointError) as exc:
            log.warning("%ssavepoint %s: cannot be written: %s%s",
                        "final " if wanted.final else "", savepoint_id, exc,
                        " (checkpoints go on)" if wanted.final else "")
            reply(_savepoint_answer(savepoint_id, error=str(exc)))
            return
        log.info("savepoint %s written: %s (checkpoint %s)", savepoint_id, path,
                 flight.checkpoint_id)
        if wanted.final:
            self.stopped = True
            log.info("the final savepoint is written: no more checkpoints")
            self._refuse_wanted(f"the final savepoint {savepoint_id} of this topology was "
                                f"just written: it is being stopped")
        reply(_savepoint_answer(savepoint_id, path=str(path),
                                checkpoint_id=flight.checkpoint_id))

    def _refuse_wanted(self, why: str) -> None:
        """Answer every savepoint still waiting with ``why``: none is taken."""
        waiting, self.savepoints_wanted = self.savepoints_wanted, []
        for wanted in waiting:
            wanted.reply(_savepoint_answer(wanted.savepoint_id, error=why))

    def _store(self, records: list[ckptmgr_pb2.StatefulConsistentCheckpoint]) -> None:
        message = ckptmgr_pb2.StatefulConsistentCheckpoints(consistent_checkpoints=records)
        if self.state.get(KIND, self.name) is None:
            self.state.create(KIND, self.name, message)
        else:
            self.state.set(KIND, self.name, message)
        self.consistent = list(records)

    def metrics(self) -> dict[str, str]:
        f = self.figures
        return {"__checkpoints-completed": str(f.completed),
                "__checkpoints-abandoned": str(f.abandoned),
                "__checkpoint-last-id": f.last_id,
                "__checkpoint-last-duration-ms": str(round(f.last_duration_secs * 1000)),
                "__checkpoint-last-bytes": str(f.last_bytes),
                "__restores": str(f.restores),
                "__restore-last-reason": f.last_restore_reason,
                "__restore-last-checkpoint": f.last_restore_checkpoint,
                "__restore-last-ms": str(round(f.last_restore_secs * 1000)),
                "__restore-log": json.dumps(f.restore_log),
                "__rescale-last": json.dumps(f.last_rescale)}

    # -- ids -----------------------------------------------------------------------------
    def _seen(self, checkpoint_id: str) -> None:
        self._last_number = max(self._last_number, checkpoint_order(checkpoint_id)[0])

    def _next_number(self) -> int:
        """Wall-clock ms, and always above any id seen: ids grow across restarts of the
        Topology Master (the stored ones were made by its predecessors)."""
        self._last_number = max(self._last_number + 1, self._wall_ms())
        return self._last_number

    def _next_txid(self) -> int:
        return self._next_number()


def _savepoint_answer(savepoint_id: str, *, error: str = "", path: str = "",
                      checkpoint_id: str = "") -> ckptmgr_pb2.SavepointResponse:
    answer = ckptmgr_pb2.SavepointResponse(savepoint_id=savepoint_id, path=path,
                                           checkpoint_id=checkpoint_id)
    answer.status.status = common_pb2.NOTOK if error else common_pb2.OK
    if error:
        answer.status.message = error[:1000]
    return answer


def _counts(tasks: dict[int, str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for component in tasks.values():
        out[component] = out.get(component, 0) + 1
    return out


def _tasks_text(tasks: set[int], components: dict[int, str], limit: int = 6) -> str:
    named = [f"{components.get(t, '?')} task {t}" for t in sorted(tasks)[:limit]]
    return ", ".join(named) + (" ..." if len(tasks) > limit else "")
