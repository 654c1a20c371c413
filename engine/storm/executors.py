"""Executors: the threads that run tasks, as Storm's executors do.

A bolt executor takes items from its bounded queue and hands them to its tasks; a spout
executor alternates between ack/fail callbacks and ``next_tuple`` (gated by
``topology.max.spout.pending``, sleeping Storm's spout-wait time when nothing was
emitted); the acker executor does Storm's XOR bookkeeping. A task whose user code raises
is logged in one line and restarted with a fresh instance, as a Storm worker would be,
forever, under the engines' restart policy (engine.process.restart_policy): at once after
progress, with backoff while it makes none, crash-looping after three failures in a row.
"""

from __future__ import annotations

import collections
import logging
import queue
import threading
import time
from random import getrandbits
from typing import Any, Callable

from compat.storm_api.exceptions import ComponentFailure
from engine.process.restart_policy import RestartPolicy, RestartTracker
from engine.runtime.stats import TaskStats
from engine.storm.collector import InputRecord, TaskCollector
from engine.storm.rotating_map import RotatingMap
from engine.storm.runtime import POLL, TUPLE, Runtime

log = logging.getLogger("heron.storm")


class FatalRunError(Exception):
    """An executor cannot go on (an engine error); the run stops."""


class HostedTask:
    """One task: its hosted component, collector and counters, restartable."""

    def __init__(self, runtime: Runtime, component: str, task: int, is_spout: bool,
                 factory: Callable[[TaskCollector], Any], logger: logging.Logger,
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

    def start(self) -> bool:
        """Try to create the component once (constructor and ``initialize``); on failure
        the next try waits for the restart policy's backoff (:meth:`ensure_started`)."""
        try:
            self.hosted = self._factory(self.collector)
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
        self._report_failure(
            f"component {self.component!r} task {self.task} {what}: {error} (restarting the "
            + ("task" if not delay else f"task in {delay:g}s")
            + ("; crash-looping" if record.crash_looping else "")
            + "; traceback in its log)")

    def restart(self, failure: ComponentFailure, executing: bool = False) -> None:
        """Log one line, keep the traceback in the task's log, start a fresh instance: at
        once after progress, else after the restart policy's backoff."""
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
                    else:  # TICK
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
        self._wait = float(runtime.conf.get("topology.sleep.spout.wait.strategy.time.ms", 1)) / 1000.0
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
                        return  # stopping
                    if self.active:
                        self._call(task.hosted.activate)
                    continue
                while inbox:
                    self._busy = True
                    self._handle(inbox.popleft())
                    self._busy = False
                if self._timeouts:
                    now = time.monotonic()
                    if now >= next_rotation:
                        for msg_id in self.pending.rotate().values():
                            self._call(lambda m=msg_id: task.hosted.fail(m))
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
        if hosted is None:  # restarting (the run is stopping)
            if kind in ("activate", "deactivate"):
                self.active = kind == "activate"
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
