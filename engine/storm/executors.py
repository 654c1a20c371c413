"""Executors: the threads that run tasks, as Storm's executors do.

A bolt executor takes items from its bounded queue and hands them to its tasks; a spout
executor alternates between ack/fail callbacks and ``next_tuple`` (gated by
``topology.max.spout.pending``, sleeping Storm's spout-wait time when nothing was
emitted); the acker executor does Storm's XOR bookkeeping. A task whose user code raises
is logged in one line and restarted with a fresh instance, as a Storm worker would be,
forever, under the engines' restart policy (engine.common.process.restart_policy): at once after
progress, with backoff while it makes none, crash-looping after three failures in a row.

Under EFFECTIVELY_ONCE (``runtime.checkpointer`` set, :mod:`.checkpoint`) a failing task is
not restarted alone: it stays down, its inputs are dropped, and the checkpointer rolls the
whole topology back. Executors also obey the checkpointer's ``PARK`` requests (a bolt
queue item, a spout control message): they stop touching their components until
released, so the checkpointer can save or rebuild them from its own thread. Both paths sit
off the per-tuple path, so other modes pay nothing for them.
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
import time
from collections.abc import Callable
from random import getrandbits
from typing import Any, cast

from compat.storm_api.state import HashMapState
from engine.common.process.restart_policy import RestartPolicy, RestartTracker
from engine.common.runtime.errors import ComponentFailure, FatalRunError
from engine.common.runtime.stats import TaskStats
from engine.config.execution import spout_wait_secs
from engine.storm.collector import InputRecord, TaskCollector
from engine.storm.rotating_map import RotatingMap
from engine.storm.runtime import PARK, PARK_SLOT, POLL, TUPLE, Runtime

log = logging.getLogger("heron.storm")


class HostedTask:
    """One task: its hosted component, collector and counters, restartable."""

    def __init__(self, runtime: Runtime, component: str, task: int, is_spout: bool,
                 factory: Callable[[TaskCollector, Any], Any], logger: logging.Logger,
                 report_failure: Callable[[str], None],
                 restart_policy: RestartPolicy | None = None) -> None:
        self.runtime = runtime
        self.component = component
        self.task = task
        self.stats = TaskStats(component, task)
        self.logger = logger
        self.collector = TaskCollector(runtime, component, task, is_spout, self.stats, logger)
        self._factory = factory
        self._report_failure = report_failure
        self.hosted: Any = None
        #: True when the task runs as a multi-lang subprocess
        self.shell = False
        self.restart_tracker = RestartTracker(f"{component} task {task}", restart_policy)
        #: (emitted, executed, acked) when the component last started
        self._progress_base = (0, 0, 0)
        #: when the next start may be tried (monotonic), after a failure with no progress
        self._start_at = 0.0
        #: EFFECTIVELY_ONCE: the component mixes in StatefulComponent (set by the cluster)
        self.stateful = False
        #: EFFECTIVELY_ONCE: the State object the running instance was given
        self.state: Any = None
        #: EFFECTIVELY_ONCE: failed, down until the checkpointer's rollback rebuilds it
        self.awaiting_restore = False
        #: EFFECTIVELY_ONCE: the instance that raised, kept for ``pre_restore`` (its abort)
        self.failed_hosted: Any = None

    def start(self, state: Any = None) -> bool:
        """Try to create the component once (constructor and ``initialize``); on failure
        the next try waits for the restart policy's backoff (:meth:`ensure_started`).

        ``state``: the State a StatefulComponent gets in ``init_state`` (EFFECTIVELY_ONCE;
        the checkpointer passes the restored one). It is kept as ``self.state`` because
        the checkpointer saves that very object."""
        if self.stateful and self.runtime.checkpointer is not None and state is None:
            state = HashMapState()
        self.state = state
        try:
            self.hosted = self._factory(self.collector, state)
        except Exception as exc:  # user initialize() or constructor raised
            self.logger.exception("initialization failed")
            original = exc.original if isinstance(exc, ComponentFailure) else exc
            self._failed(original, "failed to initialize", progressed=False)
            return False
        self.restart_tracker.started()
        self._progress_base = self._progress_counts()
        return True

    def ensure_started(self) -> bool:
        """(Executor thread) Start the component if it is not running, waiting out the
        backoff between tries; False only when the run is stopping."""
        if self.awaiting_restore:
            return False  # EFFECTIVELY_ONCE: only the checkpointer's rollback rebuilds it
        stopping = self.runtime.stopping
        while self.hosted is None:
            delay = self._start_at - time.monotonic()
            if delay > 0 and stopping.wait(delay):
                return False
            if stopping.is_set():
                return False
            self.start()
        return True

    def _progress_counts(self) -> tuple[int, int, int]:
        return self.stats.emitted, self.stats.executed, self.stats.acked

    def progressed(self, executing: bool = False) -> bool:
        """Emitted, processed or acked a tuple since it last started (``executing``: the
        last tuple counted as executed is the one that raised)."""
        emitted, executed, acked = self._progress_base
        done = self.stats.executed - executed - (1 if executing else 0)
        return self.stats.emitted > emitted or done > 0 or self.stats.acked > acked

    @property
    def crash_looping(self) -> bool:
        """Failing again and again with no progress, and not (yet) progressing since."""
        tracker = self.restart_tracker
        if not tracker.crash_looping:
            return False
        return self.hosted is None or not (self.progressed() or tracker.ran_long_enough())

    def _failed(self, exc: BaseException, what: str, progressed: bool) -> None:
        error = f"{type(exc).__name__}: {exc}"
        self.stats.restarts += 1
        delay = self.restart_tracker.failed(error, progressed)
        self._start_at = time.monotonic() + delay
        self.stats.last_error = error
        record = self.restart_tracker.records[-1]
        checkpointer = self.runtime.checkpointer
        action = ("restarting the " + ("task" if not delay else f"task in {delay:g}s")
                  if checkpointer is None else
                  "rolling the topology back to its last checkpoint"
                  + ("" if not delay else f" in {delay:g}s"))
        self._report_failure(
            f"component {self.component!r} task {self.task} {what}: {error} ({action}"
            + ("; crash-looping" if record.crash_looping else "")
            + "; traceback in its log)")
        if checkpointer is not None:
            self.awaiting_restore = True
            checkpointer.task_failed(self, f"component {self.component!r} task {self.task} "
                                           f"{what}: {error}")

    def fail_in_hook(self, exc: BaseException, hook: str) -> None:
        """(Checkpointer thread, executors parked) A checkpoint hook raised: the task is
        down as if it had raised on a tuple, and the topology rolls back."""
        self.logger.error("%s failed", hook, exc_info=exc)
        self.failed_hosted, self.hosted = self.hosted, None
        self._failed(exc, f"raised in {hook}", self.progressed())

    def restart(self, failure: ComponentFailure, executing: bool = False) -> None:
        """Log one line, keep the traceback in the task's log, start a fresh instance: at
        once after progress, else after the restart policy's backoff."""
        if self.runtime.checkpointer is not None:
            # EFFECTIVELY_ONCE: down until the whole topology rolls back (Heron's restore)
            self.logger.error("task failed; the topology rolls back:\n%s",
                              failure.traceback_text)
            self.collector.inputs.clear()
            self.failed_hosted, self.hosted = self.hosted, None
            self._failed(failure.original, "raised", self.progressed(executing))
            return
        self.logger.error("task failed and is restarted:\n%s", failure.traceback_text)
        self._failed(failure.original, "raised", self.progressed(executing))
        # Inputs the dead instance held are gone with it; Storm lets their roots time out.
        self.collector.inputs.clear()
        try:
            self.hosted.close()
        except Exception:
            pass
        self.hosted = None
        self.ensure_started()


class BoltExecutor(threading.Thread):
    def __init__(self, runtime: Runtime, tasks: list[HostedTask], inbox: queue.Queue,
                 on_fatal: Callable[[BaseException], None]) -> None:
        super().__init__(name=f"bolt-{tasks[0].component}-{tasks[0].task}", daemon=True)
        self.runtime = runtime
        self.tasks = {t.task: t for t in tasks}
        self.inbox = inbox
        self._on_fatal = on_fatal
        #: tasks whose host must be polled (shell bolts answer asynchronously)
        self.polled = [t for t in tasks if t.shell]
        # A PARK item names this slot instead of a task, so the checkpointer's items
        # reach the park branch even while every task here is down, and the tuple path
        # tests nothing for them. (Typed as a task: the loop reads only its ``hosted``
        # before a PARK item's branch, which uses nothing else of it.)
        self.tasks[PARK_SLOT] = cast(HostedTask, _PARK_SLOT)

    def park(self, parked: threading.Event, release: threading.Event) -> None:
        """(This thread) Stop touching the components until ``release`` (the checkpointer
        saves or rebuilds them meanwhile), or until the run stops."""
        parked.set()
        stopping = self.runtime.stopping
        while not release.wait(0.05):
            if stopping.is_set():
                return

    def _poll(self, task: HostedTask) -> None:
        if task.hosted is None and not task.ensure_started():
            return
        try:
            task.hosted.poll()
        except ComponentFailure as failure:
            task.restart(failure)

    def run(self) -> None:
        rt = self.runtime
        inbox = self.inbox
        tasks = self.tasks
        loads = rt.serializer.loads
        stopping = rt.stopping
        polled = self.polled
        try:
            while True:
                try:
                    item = inbox.get(timeout=0.1)
                except queue.Empty:
                    if stopping.is_set():
                        return
                    for task in polled:
                        self._poll(task)
                    continue
                try:
                    task = tasks[item[1]]
                    if task.hosted is None and not task.ensure_started():
                        continue  # stopping
                    if item[0] == POLL:
                        self._poll(task)
                        continue
                    if item[0] == TUPLE:
                        _, _, source, stream, source_task, payload, edge, roots = item
                        tup_id = str(getrandbits(63))
                        task.collector.inputs[tup_id] = InputRecord(edge, roots)
                        hosted = task.hosted
                        tup = hosted.make_tuple(tup_id, source, stream, source_task, loads(payload))
                    else:  # TICK, or the checkpointer's PARK
                        if item[0] == PARK:
                            self.park(item[2], item[3])
                            continue
                        tup_id = str(getrandbits(63))
                        task.collector.inputs[tup_id] = InputRecord(0, ())
                        hosted = task.hosted
                        tup = hosted.make_tuple(tup_id, "__system", "__tick", -1, [item[2]])
                    task.stats.executed += 1
                    try:
                        hosted.execute(tup)
                    except ComponentFailure as failure:
                        task.restart(failure, executing=True)
                finally:
                    inbox.task_done()
        except FatalRunError as exc:
            self._on_fatal(exc)
        except BaseException as exc:  # engine bug: never die silently
            log.exception("bolt executor crashed")
            self._on_fatal(exc)


class _Unparked(Exception):
    """A spout executor was released from a park with no instance (the run stops while
    a rollback has discarded it): back to the top of its loop."""


class _ParkSlot:
    """Stands in for a task in a bolt executor's table, for PARK items (never down)."""

    hosted = True


_PARK_SLOT = _ParkSlot()


class AckerExecutor(threading.Thread):
    """Storm's acker: root -> [xor of edges, spout task, failed], completing at zero."""

    def __init__(self, runtime: Runtime, task: int, inbox: queue.Queue,
                 on_fatal: Callable[[BaseException], None]) -> None:
        super().__init__(name=f"acker-{task}", daemon=True)
        self.runtime = runtime
        self.task = task
        self.inbox = inbox
        self._on_fatal = on_fatal
        self.pending: RotatingMap[int, list] = RotatingMap(2)

    def run(self) -> None:
        rt = self.runtime
        timeout = rt.reliability.message_timeout_secs
        next_rotation = time.monotonic() + timeout
        pending = self.pending
        try:
            while True:
                try:
                    kind, root, value, *rest = self.inbox.get(timeout=0.1)
                except queue.Empty:
                    if rt.stopping.is_set():
                        return
                    kind = None
                if kind is not None:
                    try:
                        self._apply(pending, kind, root, value, rest)
                    finally:
                        self.inbox.task_done()
                now = time.monotonic()
                if now >= next_rotation:
                    pending.rotate()  # the spout times its roots out itself
                    next_rotation = now + timeout
        except BaseException as exc:
            log.exception("acker crashed")
            self._on_fatal(exc)

    def _apply(self, pending: RotatingMap, kind: str, root: int, value: int, rest: list) -> None:
        entry = pending.get(root)
        if entry is None:
            entry = [0, None, False]
            pending.put(root, entry)
        if kind == "init":
            entry[0] ^= value
            entry[1] = rest[0]
        elif kind == "ack":
            entry[0] ^= value
        elif kind == "fail":
            entry[2] = True
        spout_task = entry[1]
        if spout_task is None:
            return
        if entry[2]:
            pending.pop(root)
            self.runtime.spout_inboxes[spout_task](("fail", root))
        elif entry[0] == 0:
            pending.pop(root)
            self.runtime.spout_inboxes[spout_task](("ack", root))


class SpoutExecutor(threading.Thread):
    def __init__(self, runtime: Runtime, task: HostedTask,
                 on_fatal: Callable[[BaseException], None]) -> None:
        super().__init__(name=f"spout-{task.component}-{task.task}", daemon=True)
        self.runtime = runtime
        self.task = task
        self._on_fatal = on_fatal
        self._inbox: collections.deque[tuple] = collections.deque()
        self._wake = threading.Event()
        self.active = False
        self.exhausted = False
        rel = runtime.reliability
        self._timeouts = rel.timeouts_enabled and rel.acking
        self.pending: RotatingMap[int, Any] = RotatingMap(2)
        self._max_pending = rel.max_spout_pending
        self._timeout = rel.message_timeout_secs
        self._wait = spout_wait_secs(runtime.conf)
        self.max_pending_seen = 0
        self._busy = False

    # Called from other threads.
    def send(self, message: tuple) -> None:
        self._inbox.append(message)
        self._wake.set()

    @property
    def done(self) -> bool:
        """Exhausted and with nothing tracked still in flight."""
        return (self.exhausted and not self._busy and not self._inbox
                and len(self.pending) == 0)

    def run(self) -> None:
        rt = self.runtime
        task = self.task
        stats = task.stats
        inbox = self._inbox
        next_rotation = time.monotonic() + self._timeout
        try:
            while not rt.stopping.is_set():
                if task.hosted is None:
                    if not task.ensure_started():
                        if rt.stopping.is_set():
                            return
                        # EFFECTIVELY_ONCE: down until the rollback; obey only control
                        while inbox:
                            self._handle(inbox.popleft())
                        self._wake.wait(0.05)
                        self._wake.clear()
                        continue
                    if self.active:
                        # ensure_started() set task.hosted, which the checker still
                        # narrows to None from the test above
                        self._call(task.hosted.activate)  # type: ignore[attr-defined]
                    continue
                try:
                    while inbox:
                        self._busy = True
                        self._handle(inbox.popleft())
                        self._busy = False
                except _Unparked:  # released with no instance: the run is stopping
                    self._busy = False
                    continue
                if self._timeouts:
                    now = time.monotonic()
                    if now >= next_rotation:
                        for msg_id in self.pending.rotate().values():
                            def fail(m: Any = msg_id) -> None:
                                task.hosted.fail(m)
                            self._call(fail)
                            stats.failed += 1
                        next_rotation = now + self._timeout
                if not self.active or self.exhausted or (
                        self._max_pending is not None and len(self.pending) >= self._max_pending):
                    self._wake.wait(0.05 if not self.active or self.exhausted else self._wait)
                    self._wake.clear()
                    continue
                before = stats.emitted
                self._call(task.hosted.next_tuple)
                if task.hosted is None:
                    continue  # its restart was cut short: the run is stopping
                if task.hosted.is_exhausted():
                    self.exhausted = True
                if stats.emitted == before:
                    self._wake.wait(self._wait)
                    self._wake.clear()
        except FatalRunError as exc:
            self._on_fatal(exc)
        except BaseException as exc:
            log.exception("spout executor crashed")
            self._on_fatal(exc)

    def _call(self, fn: Callable[[], Any]) -> None:
        """Call into the spout, then track what it emitted (even if it raised)."""
        try:
            fn()
        except ComponentFailure as failure:
            self._after_call()
            self.task.restart(failure)
            if self.active and self.task.hosted is not None:
                self._call(self.task.hosted.activate)
            return
        self._after_call()

    def _after_call(self) -> None:
        """Start tracking (or ack at once) what the last call emitted with an id."""
        collector = self.task.collector
        if not collector.new_roots:
            return
        rt = self.runtime
        for root, msg_id, xor, had_targets in collector.new_roots:
            if not had_targets:
                self._inbox.append(("ack-now", msg_id))
                continue
            self.pending.put(root, msg_id)
            rt.acker_send(root, ("init", root, xor, self.task.task))
        collector.new_roots.clear()
        n = len(self.pending)
        if n > self.max_pending_seen:
            self.max_pending_seen = n

    def _handle(self, message: tuple) -> None:
        kind = message[0]
        hosted = self.task.hosted
        stats = self.task.stats
        if hosted is None:  # restarting (the run is stopping), or down until a rollback
            if kind in ("activate", "deactivate"):
                self.active = kind == "activate"
            elif kind == "park":
                self._park(message[1], message[2])
            return
        if kind == "ack":
            msg_id = self.pending.pop(message[1])
            if msg_id is not None:
                stats.acked += 1
                self._call(lambda: hosted.ack(msg_id))
        elif kind == "fail":
            msg_id = self.pending.pop(message[1])
            if msg_id is not None:
                stats.failed += 1
                self._call(lambda: hosted.fail(msg_id))
        elif kind == "ack-now":
            stats.acked += 1
            self._call(lambda: hosted.ack(message[1]))
        elif kind == "activate":
            if not self.active:
                self.active = True
                self._call(hosted.activate)
        elif kind == "deactivate":
            if self.active:
                self.active = False
                self._call(hosted.deactivate)
        elif kind == "park":
            self._park(message[1], message[2])

    def _park(self, parked: threading.Event, release: threading.Event) -> None:
        """(This thread) Call nothing on the spout until ``release``: no ``next_tuple``
        while the checkpointer drains, saves or rolls back. When the checkpointer rebuilt
        the spout meanwhile, the new instance starts over: activated as the old one was,
        not exhausted, nothing pending."""
        before = self.task.hosted
        self._busy = True  # not done while parked: a rollback may undo exhaustion
        parked.set()
        stopping = self.runtime.stopping
        while not release.wait(0.05):
            if stopping.is_set():
                return
        self._busy = False
        hosted = self.task.hosted
        if hosted is None:
            if before is not None:
                raise _Unparked  # the loop must not go on to next_tuple
            return
        if hosted is not before and self.active:
            self._call(hosted.activate)

    def discard_in_flight(self) -> None:
        """(Checkpointer thread, this executor parked) Forget what was in flight before a
        rollback: tracked roots and queued acks; activation messages stay. The rebuilt
        spout is not exhausted until it says so again."""
        self.exhausted = False
        self.pending = RotatingMap(2)
        self.task.collector.new_roots.clear()
        for _ in range(len(self._inbox)):
            message = self._inbox.popleft()
            if message[0] in ("activate", "deactivate", "park"):
                self._inbox.append(message)
