"""EFFECTIVELY_ONCE in the storm engine: checkpoints and whole-topology rollbacks.

Heron takes a checkpoint without stopping the topology: markers flow behind the tuples
and each Stream Manager aligns a task's inputs (DESIGN, "State (effectively-once)"). This
engine is one process, so it reaches the same cut more simply, and with the same result
for the components (the same hooks, in the same order, with the same guarantees):

* **checkpoint** (every ``topology.stateful.checkpoint.interval.seconds``): park every
  spout (no ``next_tuple``), stop tick tuples, wait until no tuple is queued or being
  processed, park every bolt executor; then ``pre_save(id)`` on each stateful task,
  upstream first, with the bolts running so that what a hook emits is processed before
  any state is stored (it belongs to this checkpoint, as it does in the heron engine,
  where it goes out before the task's marker), park and drain the bolts again, store
  each stateful task's ``State`` (non-stateful tasks store nothing: a restore rebuilds
  them fresh), store a marker last, which makes the checkpoint consistent, keep the
  newest ``retained`` and dispose of older ones, ``post_save(id)`` on each stateful task,
  release everything. A checkpoint that cannot drain within
  ``topology.stateful.checkpoint.timeout.secs`` is abandoned and counted, never a stall.
* **rollback** (any task raising, in user code or a hook, or failing to start): park
  everything, drop every queued tuple, ``pre_restore(id)`` on every stateful instance
  (the one that raised included: its open transaction is aborted), rebuild every task
  with the state of the newest consistent checkpoint (older ones when one cannot be
  read, empty state when none can), release. A task failing again during the rebuild
  starts another rollback after the restart policy's backoff.

The consistent checkpoints are those whose marker (component ``__consistent``, task 0)
can be read; it is written only after every task's state, so a checkpoint cut short by a
crash is never restored. Checkpoint ids are ``ckpt-<n>``, ``n`` milliseconds since the
epoch and always above every id already stored. Reading them back is
engine/storm/checkpoint_store.py's job.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from compat.storm_api.state import State, StatefulComponent
from engine.common.runtime.checkpoint_stats import CheckpointStats, RestoreRecord
from engine.common.runtime.crash_points import crash
from engine.common.runtime.errors import FatalRunError
from engine.config.checkpointing import Checkpointing
from engine.spi.statefulstorage import StatefulStorage
from engine.statefulstorage.codec import StateNotSerializable, encode_state
from engine.statefulstorage.keyed import Chains, KeyedStateStore
from engine.storm.checkpoint_store import (
    MARKER_COMPONENT,
    checkpoint_number,
    load_newest,
    stored_consistent,
)
from engine.storm.executors import HostedTask, SpoutExecutor
from engine.storm.runtime import PARK, PARK_SLOT, Runtime

log = logging.getLogger("heron.storm")

class _Stop(Exception):
    """The run is stopping: leave whatever phase the checkpointer is in."""


class Checkpointer(threading.Thread):
    """The storm engine's Topology Master for EFFECTIVELY_ONCE: one thread that takes
    checkpoints on a timer and rolls the topology back after a failure."""

    def __init__(self, runtime: Runtime, settings: Checkpointing, storage: StatefulStorage,
                 *, topology: str, quiet: Callable[[], bool],
                 on_fatal: Callable[[BaseException], None], key_groups: int = 128,
                 classes: dict[str, Any] | None = None) -> None:
        super().__init__(name="checkpointer", daemon=True)
        self.runtime = runtime
        self.settings = settings
        self.storage = storage
        self.key_groups = key_groups
        #: component -> its class (its rescale_state, when its parallelism changed)
        self.classes = classes or {}
        #: task -> its keyed state's chains of files (engine/statefulstorage/keyed.py)
        self.chains: dict[int, Chains] = {}
        self.topology = topology
        self._quiet = quiet
        self._on_fatal = on_fatal
        self.tasks: list[HostedTask] = []
        self.spouts: list[SpoutExecutor] = []
        #: one input queue per bolt executor (set by the cluster)
        self.bolt_queues: list[queue.Queue] = []
        self.stats = CheckpointStats(storage=storage.describe())
        #: consistent checkpoint ids, oldest first
        self.consistent: list[str] = []
        self._last_number = -1
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._failures: list[str] = []
        self._requested = False
        self._busy = False
        #: what parked spouts and parked bolt executors wait for (set by _thaw)
        self._release: threading.Event | None = None
        self._release_bolts: threading.Event | None = None
        self._parked_spouts: set[int] = set()
        #: id(queue) -> set once its executor is parked (its PARK item taken)
        self._parked_queues: dict[int, threading.Event] = {}
        #: (emitted total, restores) when the last checkpoint froze, if it completed
        self._settled_mark: tuple[int, int] | None = None
        #: component -> its place upstream first (``_component_order``)
        self._order: dict[str, int] | None = None

    # -- called from other threads ----------------------------------------------------
    def task_failed(self, task: HostedTask, reason: str) -> None:
        """A task is down (it raised or failed to start): roll the topology back."""
        with self._lock:
            self._failures.append(reason)
        self._wake.set()

    def request_checkpoint(self) -> None:
        """Take a checkpoint as soon as possible (the final one of a finite run); none
        more while one is under way (if it does not settle the run, ask again after)."""
        if self._busy:
            return
        self._requested = True
        self._wake.set()

    def settled(self) -> bool:
        """True when a checkpoint completed after which nothing was emitted and nothing
        rolled back: a finished run may end, its two-phase-commit sinks committed."""
        if self._busy or self._failures or self._settled_mark is None:
            return False
        return self._settled_mark == (self._emitted_total(), len(self.stats.restores))

    # -- the restore at start ---------------------------------------------------------
    def initial_states(self, stateful_tasks: dict[str, list[int]],
                       start_clean: bool) -> dict[int, State]:
        """The state every stateful task starts with: the newest consistent checkpoint's
        (older ones when it cannot be read), none with ``start_clean``, which also
        deletes the stored checkpoints so that no later rollback reaches them. A stateful
        component with another number of tasks than the checkpoint's gets its keyed state
        by key group and its per-task state shared out (``rescale_state``); raises
        ``LocalEngineError`` when that per-task state cannot be shared out."""
        if start_clean:
            self.storage.dispose(keep=set())
            return {}
        self.consistent = stored_consistent(self.storage)
        if self.consistent:
            self._last_number = checkpoint_number(self.consistent[-1])
        chosen, states, skipped = self._load_newest(stateful_tasks)
        if chosen or skipped:
            self.stats.restores.append(RestoreRecord(chosen, "start", skipped))
            log.info("%s: restored checkpoint %s%s", self.topology, chosen or "(none: empty state)",
                     f" (unreadable: {'; '.join(skipped)})" if skipped else "")
        return states

    def _load_newest(self, stateful_tasks: dict[str, list[int]]
                     ) -> tuple[str, dict[int, State], list[str]]:
        """(checkpoint id, task -> state, skipped) for the newest readable consistent
        checkpoint (its keyed state's chains kept for the next save); ("", {}, skipped)
        when there is none."""
        cid, states, chains, skipped = load_newest(
            self.storage, self.consistent, stateful_tasks, serializer=self.runtime.serializer,
            inputs_of=lambda comp: [i.grouping for i in self.runtime.plan.components[comp].inputs],
            classes=self.classes, key_groups=self.key_groups, topology=self.topology)
        if chains is not None:
            self.chains = chains
        return cid, states, skipped

    # -- the thread -------------------------------------------------------------------
    def run(self) -> None:
        stopping = self.runtime.stopping
        interval = self.settings.interval_secs
        due = time.monotonic() + interval
        try:
            while not stopping.is_set():
                self._wake.wait(max(0.0, min(0.1, due - time.monotonic())))
                self._wake.clear()
                if stopping.is_set():
                    return
                if self._failures:
                    self._rollback()
                    due = time.monotonic() + interval
                elif self._requested or time.monotonic() >= due:
                    self._requested = False
                    self._checkpoint()
                    if self._failures:
                        self._rollback()
                    due = time.monotonic() + interval
        except _Stop:
            return
        except FatalRunError as exc:
            self._on_fatal(exc)
        except BaseException as exc:  # engine bug: never die silently
            log.exception("checkpointer crashed")
            self._on_fatal(exc)
        finally:
            self._thaw()

    # -- parking ----------------------------------------------------------------------
    def _wait(self, events: Iterable[threading.Event], deadline: float | None,
              while_waiting: Callable[[], None] | None = None) -> bool:
        """Wait for every event; False at ``deadline``; _Stop when the run stops."""
        pending = list(events)
        stopping = self.runtime.stopping
        while pending:
            if stopping.is_set():
                raise _Stop
            if deadline is not None and time.monotonic() >= deadline:
                return False
            if while_waiting is not None:
                while_waiting()
            pending[0].wait(0.01)
            pending = [e for e in pending if not e.is_set()]
        return True

    def _pause_ticks(self) -> None:
        with self.runtime.tick_lock:
            self.runtime.ticks_paused = True

    def _park_spouts(self, deadline: float | None) -> bool:
        if self._release is None:
            self._release = threading.Event()
        events = []
        for spout in self.spouts:
            if id(spout) not in self._parked_spouts:
                parked = threading.Event()
                spout.send(("park", parked, self._release))
                self._parked_spouts.add(id(spout))
                events.append(parked)
        return self._wait(events, deadline)

    def _park_bolts(self, deadline: float | None, discard: bool) -> bool:
        """Park every bolt executor; ``discard``: drop what is queued first (a rollback),
        and keep dropping what running bolts still send to parked ones."""
        if self._release_bolts is None:
            self._release_bolts = threading.Event()
        events = []
        for q in self.bolt_queues:
            if id(q) in self._parked_queues:
                continue
            if discard:
                _drain(q)
            parked = threading.Event()
            self._put(q, (PARK, PARK_SLOT, parked, self._release_bolts), discard)
            self._parked_queues[id(q)] = parked
            events.append(parked)
        return self._wait(events, deadline, self._discard_queued if discard else None)

    def _discard_queued(self) -> None:
        """Drop what is queued for parked executors (never their PARK item: a queue is
        drained only once its executor has taken that item and parked)."""
        for q in self.bolt_queues:
            parked = self._parked_queues.get(id(q))
            if parked is not None and parked.is_set():
                _drain(q)

    def _put(self, q: queue.Queue, item: tuple, discard: bool) -> None:
        while True:
            try:
                q.put(item, timeout=0.05)
                return
            except queue.Full:
                if self.runtime.stopping.is_set():
                    raise _Stop from None
                if discard:
                    self._discard_queued()  # a rollback: what fills it is dropped anyway

    def _wait_quiet(self, deadline: float | None) -> bool:
        stopping = self.runtime.stopping
        while not self._quiet():
            if stopping.is_set():
                raise _Stop
            if deadline is not None and time.monotonic() >= deadline:
                return False
            if self._failures:
                return True  # a rollback follows: no need to drain
            time.sleep(0.002)
        return True

    def _unpark_bolts(self) -> None:
        release = self._release_bolts
        self._release_bolts = None
        self._parked_queues.clear()
        if release is not None:
            release.set()

    def _thaw(self) -> None:
        self._unpark_bolts()
        release = self._release
        self._release = None
        self._parked_spouts.clear()
        with self.runtime.tick_lock:
            self.runtime.ticks_paused = False
        if release is not None:
            release.set()

    def _drained(self) -> bool:
        """(Every executor parked) True when no tuple waits in any bolt queue. Checked
        parked because ``quiet()`` reads the queues one by one, and a tuple can move from
        one not yet read to one already read."""
        return all(q.qsize() == 0 for q in self.bolt_queues)

    def _emitted_total(self) -> int:
        return sum(t.stats.emitted for t in self.tasks)

    # -- a checkpoint -----------------------------------------------------------------
    def _next_id(self) -> str:
        number = max(int(time.time() * 1000), self._last_number + 1)
        self._last_number = number
        return f"ckpt-{number}"

    def _checkpoint(self) -> None:
        """One checkpoint. Leaves everything parked when a failure came meanwhile (the
        rollback that follows parks the rest); releases everything otherwise."""
        began = time.monotonic()
        deadline = began + self.settings.timeout_secs
        stats = self.stats
        self._busy = True
        try:
            ok = (self._park_spouts(deadline) and self._wait_quiet(deadline))
            if ok and not self._failures:
                self._pause_ticks()
                while True:
                    ok = (self._wait_quiet(deadline)
                          and self._park_bolts(deadline, discard=False))
                    if not ok or self._failures or self._drained():
                        break
                    self._unpark_bolts()  # not drained after all: let them go on
            if self._failures:
                stats.abandoned += 1
                return  # stay parked: the rollback goes on from here
            if not ok:
                stats.abandoned += 1
                stats.timed_out += 1
                log.warning("%s: checkpoint abandoned: not drained within %gs", self.topology,
                            self.settings.timeout_secs)
                self._thaw()
                return
            self._save(began, deadline)
            if not self._failures:
                self._thaw()
        finally:
            self._busy = False

    def _stateful(self) -> list[HostedTask]:
        """Tasks running a StatefulComponent, spouts first (Heron: spouts save first), then
        each component after every component it reads from (Heron: a bolt saves once the
        markers of all its inputs arrived)."""
        tasks = [t for t in self.tasks if t.stateful and t.hosted is not None]
        spout_tasks = {s.task.task for s in self.spouts}
        order = self._component_order()
        return sorted(tasks, key=lambda t: (t.task not in spout_tasks,
                                            order.get(t.component, len(order)), t.task))

    def _component_order(self) -> dict[str, int]:
        """component -> its place in a topological order of the topology (upstream first;
        the components of a cycle, if any, last, by name)."""
        if self._order is not None:
            return self._order
        plan = getattr(self.runtime, "plan", None)
        components = getattr(plan, "components", None) or {}
        downstream: dict[str, set[str]] = {name: set() for name in components}
        for comp in components.values():
            assert plan is not None  # the components came from it
            for stream in comp.outputs.values():
                for consumer, _ in plan.consumers(comp.name, stream.name):
                    if consumer.name != comp.name and consumer.name in downstream:
                        downstream[comp.name].add(consumer.name)
        inputs = {name: 0 for name in downstream}
        for targets in downstream.values():
            for name in targets:
                inputs[name] += 1
        ready = sorted(name for name, n in inputs.items() if n == 0)
        order: dict[str, int] = {}
        while ready:
            name = ready.pop(0)
            order[name] = len(order)
            for target in sorted(downstream[name]):
                inputs[target] -= 1
                if inputs[target] == 0:
                    ready.append(target)
        for name in sorted(set(downstream) - set(order)):
            order[name] = len(order)
        self._order = order
        return order

    def _pre_save(self, cid: str, tasks: list[HostedTask], deadline: float) -> bool:
        """(Everything parked and drained) ``pre_save(cid)`` on each stateful task, upstream
        first, as the heron engine does: what a task emits in ``pre_save`` goes out before
        its marker there, so it belongs to this checkpoint. Here the bolts run while the
        hooks do (spouts and ticks stay stopped), what a hook emitted is processed before
        the next task's hook, and every bolt is parked again, drained, before anything is
        stored. False when the checkpoint cannot go on: a failure (a rollback follows) or
        what was emitted did not drain in time."""
        self._unpark_bolts()  # a hook's emits never wait on a parked executor's full queue
        ok = True
        for task in tasks:
            before = self._emitted_total()
            try:
                task.hosted.component.pre_save(cid)
            except Exception as exc:
                task.fail_in_hook(exc, f"pre_save({cid})")
            if self._failures:
                return False
            if self._emitted_total() != before and not self._wait_quiet(deadline):
                ok = False
                break
        while ok and not self._failures:
            ok = (self._wait_quiet(deadline)
                  and self._park_bolts(deadline, discard=False))
            if not ok or self._failures or self._drained():
                break
            self._unpark_bolts()  # not drained after all: let them go on
        if ok or self._failures:
            return ok and not self._failures
        self.stats.timed_out += 1
        log.warning("%s: checkpoint %s abandoned: what pre_save emitted was not processed "
                    "within %gs", self.topology, cid, self.settings.timeout_secs)
        return False

    def _save(self, began: float, deadline: float) -> None:
        """(Everything parked and drained) pre_save, store, mark consistent, post_save."""
        stats = self.stats
        cid = self._next_id()
        tasks = self._stateful()
        if not self._pre_save(cid, tasks, deadline):
            stats.abandoned += 1
            return
        crash("storm.save.after_pre_save", self.topology)
        emitted = self._emitted_total()
        serializer = self.runtime.serializer
        per_task: dict[str, int] = {}
        layout: dict[str, list[int]] = {}
        by_component: dict[str, list[int]] = {}
        for task in tasks:
            by_component.setdefault(task.component, []).append(task.task)
        try:
            for task in tasks:
                data = encode_state(task.state, serializer, component=task.component,
                                    task=task.task)
                written = self.storage.store(cid, task.component, task.task, data)
                if task.state.has_keyed() or self.chains.get(task.task):
                    siblings = sorted(by_component[task.component])
                    keyed = KeyedStateStore(self.storage, serializer, task.component,
                                            self.key_groups).save(
                        cid, task.task, siblings.index(task.task), len(siblings),
                        task.state.keyed(), self.chains.get(task.task, {}))
                    self.chains[task.task] = keyed.chains
                    written += keyed.bytes
                per_task[f"{task.component}:{task.task}"] = written
                layout.setdefault(task.component, []).append(task.task)
                crash("storm.save.stored_some", self.topology)
            marker = json.dumps({"topology": self.topology, "tasks": layout,
                                 "time": time.time()}).encode("utf-8")
            self.storage.store(cid, MARKER_COMPONENT, 0, marker)
        except StateNotSerializable as exc:
            raise FatalRunError(str(exc)) from exc
        except OSError as exc:
            stats.abandoned += 1
            log.error("%s: checkpoint %s abandoned: storing it failed: %s (%s)", self.topology,
                      cid, exc, self.storage.describe())
            return
        self.consistent.append(cid)
        keep = self.consistent[-self.settings.retained:]
        self.consistent = list(keep)
        try:
            self.storage.dispose(keep=set(keep))
        except OSError as exc:
            log.warning("%s: could not delete old checkpoints: %s", self.topology, exc)
        stats.completed += 1
        stats.last_checkpoint_id = cid
        stats.last_bytes = sum(per_task.values())
        stats.last_bytes_per_task = per_task
        stats.last_duration_secs = time.monotonic() - began
        self._settled_mark = (emitted, len(stats.restores))
        crash("storm.save.before_post_save", self.topology)
        for task in tasks:
            if task.hosted is None:
                continue
            try:
                task.hosted.component.post_save(cid)
            except Exception as exc:
                task.fail_in_hook(exc, f"post_save({cid})")
            crash("storm.saved.post_save_some", self.topology)

    # -- a rollback -------------------------------------------------------------------
    def _take_failures(self) -> list[str]:
        with self._lock:
            failures, self._failures = self._failures, []
        return failures

    def _rollback(self) -> None:
        """Roll the whole topology back to the newest consistent checkpoint; again while
        tasks fail during the rebuild. Releases everything at the end."""
        self._busy = True
        try:
            while self._failures:
                reasons = self._take_failures()
                self._park_spouts(None)
                self._pause_ticks()
                self._park_bolts(None, discard=True)
                self._discard_queued()
                for spout in self.spouts:
                    spout.discard_in_flight()
                for task in self.tasks:
                    task.collector.inputs.clear()
                stateful: dict[str, list[int]] = {}
                for task in self.tasks:
                    if task.stateful:
                        stateful.setdefault(task.component, []).append(task.task)
                cid, states, skipped = self._load_newest(stateful)
                self._discard_instances(cid)
                self._wait_backoff()
                record = RestoreRecord(cid, "; ".join(reasons), skipped)
                self.stats.restores.append(record)
                log.warning("%s: rolled back to %s after: %s", self.topology,
                            cid or "empty state (no readable checkpoint)", record.reason)
                for task in self.tasks:
                    task.start(states.get(task.task))
            self._thaw()
        finally:
            self._busy = False

    def _discard_instances(self, cid: str) -> None:
        """``pre_restore(cid)`` on every stateful instance, then close every instance."""
        for task in self.tasks:
            for hosted in (task.hosted, task.failed_hosted):
                if hosted is None:
                    continue
                component = getattr(hosted, "component", None)
                if task.stateful and isinstance(component, StatefulComponent):
                    try:
                        component.pre_restore(cid)
                    except Exception:
                        task.logger.exception("pre_restore(%r) failed", cid)
                try:
                    hosted.close()
                except Exception:
                    pass
            task.hosted = None
            task.failed_hosted = None
            task.awaiting_restore = False

    def _wait_backoff(self) -> None:
        """Wait out the restart policy's backoff of the tasks that failed (none after a
        failure that followed progress)."""
        delay = max((t._start_at for t in self.tasks), default=0.0) - time.monotonic()
        if delay > 0 and self.runtime.stopping.wait(delay):
            raise _Stop


def _drain(q: queue.Queue) -> None:
    """Drop every queued item (the executor holding a PARK item is parked)."""
    while True:
        try:
            q.get_nowait()
        except queue.Empty:
            return
        q.task_done()


__all__ = ["CheckpointStats", "Checkpointer", "RestoreRecord"]
