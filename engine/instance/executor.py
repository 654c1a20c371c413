"""The executor thread: runs the user's spout or bolt.

Spouts: ``next_tuple`` is called in bursts while it emits, batches are flushed by size
or after a few milliseconds, message ids are acked at once (at-most-once, as Heron does
without acking), and once ``is_exhausted()`` is true the task sends ``TaskDone`` after
its last batch. Bolts: each arriving batch is decoded value by value into the tuples the
component expects, output is flushed when the input pipe is momentarily empty (so
batches grow under load and latency stays low when idle), and ``TaskDone`` is passed on
once every upstream task has sent one.
"""

from __future__ import annotations

import logging
import resource
import time
from typing import Any, Callable

import zmq

from google.protobuf.message import DecodeError

from compat.storm_api.exceptions import ComponentFailure, StormWentAwayError
from compat.storm_api.hosting import DirectHooks
from compat.storm_api.tuple import Tuple
from engine.fastpath import MalformedBatch, Undecodable, tuple_codec
from engine.instance.collector import UNTRACKED
from engine.instance.gateway import GATEWAY_FAILED, STOP, TO_STMGR
from engine.messages import metrics_pb2, stmgr_pb2, topology_pb2, tuple_pb2
from engine.network import type_frame
from engine.network.inflight import DEFAULT_BATCH_TIME_MS
from engine.process.progress import mark_progress
from engine.process.restart_policy import CRASH_LOOPING_METRIC, RestartPolicy, RestartTracker

log = logging.getLogger("heron.instance")

TUPLE_BATCH = type_frame(tuple_pb2.TupleBatch)
TASK_DONE = type_frame(tuple_pb2.TaskDone)
CONTROL_BATCH = type_frame(tuple_pb2.ControlBatch)
ASSIGNMENT = type_frame(stmgr_pb2.NewInstanceAssignmentMessage)
PUBLISH = type_frame(metrics_pb2.MetricPublisherPublishMessage)
ACK = tuple_pb2.ACK

#: how often counters go to the Metrics Manager
METRICS_INTERVAL = 1.0
#: most time a row waits in an open batch before it is sent, unless the topology sets
#: ``heron.instance.emit.batch.time.ms`` (engine.network.inflight)
FLUSH_INTERVAL = DEFAULT_BATCH_TIME_MS / 1000.0
#: a burst of next_tuple calls ends after this long
SPOUT_BURST_SECS = 0.01


def _task_layout(pplan: Any) -> set[tuple[str, int]]:
    return {(i.info.component_name, i.info.task_id) for i in pplan.instances}


def tuple_runner(hosted: Any, source: str, stream: str, task: int) -> Callable[[str, Any], None]:
    """``run(id, values)`` building and executing the tuples one source stream's batch
    becomes (one call per tuple where the hosted bolt offers it)."""
    runner = getattr(hosted, "tuple_runner", None)
    if runner is not None:
        return runner(source, stream, task)
    factory = getattr(hosted, "tuple_factory", None)
    if factory is not None:
        make = factory(source, stream, task)
    else:
        make_tuple = hosted.make_tuple

        def make(id: str, values: Any) -> Any:
            return make_tuple(id, source, stream, task, values)
    execute = hosted.execute

    def run(id: str, values: Any) -> None:
        execute(make(id, values))
    return run


def tuple_executor(hosted: Any, source: str, stream: str,
                   task: int) -> tuple[type | None, Callable[[Any], None]] | None:
    """``(values_type, run)`` when the hosted bolt lets the tuple path build its ``Tuple``
    objects (``HostedBolt.tuple_executor``), else None (then ``tuple_runner``)."""
    executor = getattr(hosted, "tuple_executor", None)
    return executor(source, stream, task) if executor is not None else None


def _rejecting_undecodable(run: Callable[[str, Any], None]) -> Callable[[str, Any], None]:
    def run_checked(id: str, values: Any) -> None:
        if type(values) is Undecodable:
            raise values.error
        run(id, values)
    return run_checked


def _rejecting_undecodable_tuple(run: Callable[[Any], None]) -> Callable[[Any], None]:
    def run_checked(tup: Any) -> None:
        if type(tup) is Undecodable:
            raise tup.error
        run(tup)
    return run_checked


def _reraise(exc: Exception) -> None:
    raise exc


def spout_hooks(hosted: Any) -> DirectHooks:
    """``next_tuple``, ``ack``, ``fail`` and ``on_error`` for the spout loop's per-tuple
    paths: the spout's own hooks where skipping the wrappers is exact
    (``HostedSpout.direct_hooks``), else the hosted wrappers, which handle what user code
    raises themselves (``on_error`` then passes on anything else unchanged)."""
    direct = getattr(hosted, "direct_hooks", None)
    hooks = direct() if direct is not None else None
    if hooks is None:
        hooks = DirectHooks(hosted.next_tuple, hosted.ack, hosted.fail, _reraise)
    return hooks


class TaskGaveUp(Exception):
    """The task cannot go on in this process (its gateway failed); the process exits and
    its executor restarts it. A component that raises never causes this: it is restarted
    in the process, forever, under the restart policy."""


class ExecutorLoop:
    """State shared by the spout and bolt loops: the pipe, the plan, counters, metrics."""

    #: Start the component on the first plan even when the topology is deactivated.
    #: Storm opens a spout only once its topology is active, but prepares bolts at once.
    starts_while_inactive = False

    def __init__(self, pipe: zmq.Socket, task: Any, hosted_factory: Callable[[], Any],
                 collector: Any, running: Callable[[], bool],
                 restart_policy: RestartPolicy | None = None,
                 flush_secs: float = FLUSH_INTERVAL) -> None:
        self.pipe = pipe
        #: the most a row waits in an open batch (heron.instance.emit.batch.time.ms)
        self.flush_secs = flush_secs
        self.task = task  # TaskInfo: component, task_id, kind, upstream tasks...
        self.factory = hosted_factory
        self.hosted: Any = None
        self.collector = collector
        self.stats = collector.stats
        self._running = running
        self.active = False
        self.done = False
        self.exhausted = False
        self.pplan: Any = None
        #: restarts of the component in this process: when, how long after, crash-looping
        self.restart_tracker = RestartTracker(f"{task.component} task {task.task_id}",
                                              restart_policy)
        #: (emitted, executed, acked) when the component last started: progress is more
        self._progress_base = (0, 0, 0)
        self.exceptions: list[tuple[str, int]] = []  # (first lines, count)
        self._next_metrics = 0.0
        #: where metrics snapshots go (a PUSH socket to the gateway; None: through ``send``)
        self.metrics_pipe: zmq.Socket | None = None
        #: called with a new physical plan whose task layout changed (``heron update``)
        self.on_new_layout: Callable[[Any], None] | None = None

    # -- plumbing ----------------------------------------------------------------------
    def send(self, frames: list[Any]) -> None:
        """Hand frames to the gateway; waits (still watching for stop) while the pipe is full."""
        pipe = self.pipe
        while True:
            try:
                pipe.send_multipart(frames, zmq.NOBLOCK, copy=False)
                return
            except zmq.Again:
                if not self._running():
                    return
                # backpressure: nothing can go out; keep reporting while waiting
                if self.metrics_pipe is not None:
                    self.publish_metrics()
                pipe.poll(100, zmq.POLLOUT)

    def send_data(self, frames: list[bytes]) -> None:
        self.send([TO_STMGR, *frames])

    def handle_plan(self, payload: bytes) -> None:
        message = stmgr_pb2.NewInstanceAssignmentMessage.FromString(payload)
        previous = self.pplan
        self.pplan = message.pplan
        if (previous is not None and self.on_new_layout is not None
                and _task_layout(previous) != _task_layout(message.pplan)):
            self.on_new_layout(message.pplan)
        running = message.pplan.topology.state == topology_pb2.RUNNING
        if self.hosted is None:
            if not running and not self.starts_while_inactive:
                return  # a spout deployed deactivated opens once the topology runs
            self.start_component()
        if running and not self.active:
            self.active = True
            self.on_activate()
        elif not running and self.active:
            self.active = False
            self.on_deactivate()

    def start_component(self) -> None:
        """Create the component (its ``initialize``/``open`` runs), retrying with the
        restart policy's backoff for as long as it raises; returns with ``hosted`` still
        None only when the task is stopping."""
        while True:
            try:
                self.hosted = self.factory()
            except ComponentFailure as failure:
                delay = self._failed(failure, progressed=False)
                if not self._backoff(delay):
                    return
                continue
            self.restart_tracker.started()
            self._progress_base = self._progress_counts()
            return

    @property
    def restarts(self) -> int:
        """Failures of the component in this process (each followed by a restart)."""
        return self.restart_tracker.attempts

    def _progress_counts(self) -> tuple[int, int, int]:
        return self.collector.emitted, self.stats.executed, self.stats.acked

    def _progressed(self, executing: bool = False) -> bool:
        """Whether the component emitted, processed or acked a tuple since it last
        started; ``executing``: the last tuple counted as executed is the one that raised."""
        emitted, executed, acked = self._progress_base
        done = self.stats.executed - executed - (1 if executing else 0)
        return (self.collector.emitted > emitted or done > 0 or self.stats.acked > acked)

    def _failed(self, failure: ComponentFailure, progressed: bool) -> float:
        """Record a failure under the restart policy; the seconds to wait before the restart."""
        self.stats.restarts += 1
        delay = self.restart_tracker.failed(
            f"{type(failure.original).__name__}: {failure.original}", progressed)
        record = self.restart_tracker.records[-1]
        self.record_failure(failure)
        log.warning("restart %d of component %r task %s: %s; %s", record.attempt,
                    self.task.component, self.task.task_id,
                    "after progress, at once" if record.progressed
                    else f"no progress ({record.failures_in_a_row} in a row), in {delay:g}s",
                    "crash-looping" if record.crash_looping else "not crash-looping")
        return delay

    def _backoff(self, delay: float) -> bool:
        """Wait ``delay`` seconds before a restart, still reporting metrics; False when
        the task is told to stop meanwhile."""
        if delay <= 0:
            return True
        deadline = time.monotonic() + delay
        while self._running():
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            self.publish_metrics()
            time.sleep(min(left, 0.05))
        return False

    def record_failure(self, failure: ComponentFailure) -> None:
        log.error("component %r task %s raised:\n%s", self.task.component, self.task.task_id,
                  failure.traceback_text)
        headline = (f"{type(failure.original).__name__}: {failure.original}\n"
                    f"{failure.traceback_text.strip().splitlines()[-1] if failure.traceback_text else ''}")
        for i, (text, count) in enumerate(self.exceptions):
            if text == headline:
                self.exceptions[i] = (text, count + 1)
                break
        else:
            self.exceptions.append((headline, 1))
        self.stats.last_error = f"{type(failure.original).__name__}: {failure.original}"
        self.publish_metrics(force=True)

    def restart(self, failure: ComponentFailure, executing: bool = False) -> None:
        """Log, count, replace the component with a fresh instance, as a worker restart
        would: at once after progress, else after the policy's backoff. ``executing``: the
        failure is the last tuple counted as executed. Leaves ``hosted`` None only when
        the task is stopping."""
        delay = self._failed(failure, self._progressed(executing))
        try:
            self.hosted.close()
        except Exception:
            pass
        self.hosted = None
        if not self._backoff(delay):
            return
        self.start_component()
        if self.active and self.hosted is not None:
            self.on_activate()

    def on_activate(self) -> None:
        pass

    def on_deactivate(self) -> None:
        pass

    def finish(self) -> None:
        """Flush, then tell everyone downstream this task will send nothing more."""
        self.collector.flush()
        done = tuple_pb2.TaskDone(src_task_id=self.task.task_id, component=self.task.component)
        self.send_data([TASK_DONE, done.SerializeToString()])
        self.done = True
        if self.collector.capture is not None:
            self.collector.capture.write_summary()
        self.publish_metrics(force=True)
        log.info("task finished: everything it will emit has been sent")

    def _watch_progress(self) -> None:
        """Progress clears a crash-loop (as does running for the policy's reset time), and
        the first progress of this process tells its executor (engine.process.progress)."""
        tracker = self.restart_tracker
        if self.hosted is None or tracker.progress_seen:
            tracker.tick()
            return
        if self._progressed():
            mark_progress()
            if tracker.progressed():
                log.warning("component %r task %s makes progress again; no longer crash-looping",
                            self.task.component, self.task.task_id)
        else:
            tracker.tick()

    def publish_metrics(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now < self._next_metrics:
            return
        self._next_metrics = now + METRICS_INTERVAL
        self._watch_progress()
        s = self.collector.sync_stats()
        message = metrics_pb2.MetricPublisherPublishMessage()
        for name, value in (("__emit-count", s.emitted), ("__transfer-count", s.transferred),
                            ("__execute-count", s.executed), ("__ack-count", s.acked),
                            ("__fail-count", s.failed), ("__error-count", s.errors),
                            ("__restart-count", s.restarts), ("__done", int(self.done)),
                            ("__active", int(self.active)),
                            (CRASH_LOOPING_METRIC, int(self.restart_tracker.crash_looping))):
            message.metrics.add(name=name, value=str(value))
        if s.last_error:
            message.metrics.add(name="__last-error", value=s.last_error)
        for name, value in self.extra_metrics():
            message.metrics.add(name=name, value=str(value))
        for name, value in self.process_metrics():
            message.metrics.add(name=name, value=str(value))
        for name, value in self.collector.user_metrics.items():
            message.metrics.add(name=f"user/{name}", value=str(value))
        for text, count in self.exceptions:
            message.exceptions.add(stacktrace=text, count=count)
        frames = [PUBLISH, message.SerializeToString()]
        if self.metrics_pipe is None:
            from engine.instance.gateway import TO_METRICS
            self.send([TO_METRICS, *frames])
            return
        try:
            self.metrics_pipe.send_multipart(frames, zmq.NOBLOCK)
        except zmq.Again:
            pass  # the gateway has older snapshots to send; this one is dropped

    def extra_metrics(self) -> list[tuple[str, Any]]:
        """Metrics only one kind of task has."""
        return []

    @staticmethod
    def process_metrics() -> list[tuple[str, Any]]:
        """CPU seconds and memory of this process (one task per process: the task's)."""
        usage = resource.getrusage(resource.RUSAGE_SELF)
        rss = 0
        try:
            with open("/proc/self/statm", "rb") as statm:
                rss = int(statm.read().split()[1]) * resource.getpagesize()
        except (OSError, ValueError, IndexError):
            rss = usage.ru_maxrss * 1024
        return [("__cpu-seconds", round(usage.ru_utime + usage.ru_stime, 3)),
                ("__rss-bytes", rss), ("__peak-rss-bytes", usage.ru_maxrss * 1024)]

    def control(self, frames: list[Any]) -> bool:
        """Handle a non-data message; False when the loop must stop."""
        kind = frames[0].bytes
        if kind == ASSIGNMENT:
            self.handle_plan(frames[1].bytes)
        elif kind == GATEWAY_FAILED:
            raise TaskGaveUp(f"the gateway thread failed: {frames[1].bytes.decode(errors='replace')}")
        else:
            log.warning("executor dropped an unexpected message of type %r", kind[:60])
        return True

    def close(self) -> None:
        try:
            self.collector.flush()
        except Exception:
            log.exception("flushing the last batches failed")
        self.publish_metrics(force=True)
        if self.collector.capture is not None:
            try:
                self.collector.capture.close()
            except Exception:
                log.exception("writing the capture summary failed")
        if self.hosted is not None:
            try:
                self.hosted.close()
            except Exception:
                log.exception("closing the component failed")
        self.send([STOP])


class SpoutLoop(ExecutorLoop):
    def __init__(self, *args: Any, wait_secs: float = 0.001, max_pending: int | None = None,
                 timeout_secs: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.wait_ms = max(1, int(wait_secs * 1000))
        #: topology.max.spout.pending: no next_tuple while this many trees are pending
        self.max_pending = max_pending if self.collector.acking else None
        #: topology.message.timeout.secs, None when timeouts are off or nothing is tracked
        self.timeout_secs = timeout_secs if self.collector.acking else None
        self._next_timeout_scan = 0.0
        self.timed_out = 0
        #: complete latencies (seconds) since the last metrics publish
        self.latencies: list[float] = []

    def control(self, frames: list[Any]) -> bool:
        if frames[0].bytes == CONTROL_BATCH:
            self._settle(frames[1].bytes)
            return True
        return super().control(frames)

    def _settle(self, payload: bytes) -> None:
        """Trees the Stream Manager says completed (ack) or failed: tell the spout. Roots
        no longer pending (already timed out) are ignored, as Heron does. The table's
        work (which roots are pending, their latencies) is the tuple path's; the spout's
        own ``ack`` and ``fail`` run here, in order."""
        try:
            batch = tuple_pb2.ControlBatch.FromString(payload)
        except DecodeError as exc:
            log.warning("dropped an ack batch that does not decode: %s", exc)
            return
        try:
            settled = self.collector.pending_trees.settle(
                batch.kinds, batch.root_keys, time.monotonic(), self.latencies,
                10_000 - len(self.latencies))  # latency samples kept per metrics interval
        except MalformedBatch as exc:
            log.warning("dropped a malformed ack batch: %s", exc)
            return
        stats = self.stats
        _, ack, fail, on_error = spout_hooks(self.hosted)
        acked = 0
        try:
            for kind, tup_id in settled:
                try:
                    try:
                        if kind == ACK:
                            acked += 1
                            ack(tup_id)
                        else:
                            stats.failed += 1
                            fail(tup_id)
                    except (ComponentFailure, StormWentAwayError):
                        raise
                    except Exception as exc:
                        on_error(exc)  # ComponentFailure, unless the spout keeps running
                except ComponentFailure as failure:
                    stats.acked += acked  # what it acked before raising is progress
                    acked = 0
                    self.restart(failure)
                    if self.hosted is None:
                        return  # stopping
                    _, ack, fail, on_error = spout_hooks(self.hosted)
        finally:
            stats.acked += acked

    def _expire(self) -> None:
        """Fail trees older than the message timeout (Heron enforces it in the spout
        instance, scanning oldest first a few times per timeout)."""
        now = time.monotonic()
        if self.timeout_secs is None or now < self._next_timeout_scan:
            return
        self._next_timeout_scan = now + max(0.05, self.timeout_secs / 10)
        for tup_id in self.collector.pending_trees.expire(now - self.timeout_secs):
            self.timed_out += 1
            self.stats.failed += 1
            try:
                self.hosted.fail(tup_id)
            except ComponentFailure as failure:
                self.restart(failure)  # the rest are failed to the restarted spout
                if self.hosted is None:
                    return  # stopping

    def extra_metrics(self) -> list[tuple[str, Any]]:
        if not self.collector.acking:
            return []
        out: list[tuple[str, Any]] = [("__timeout-count", self.timed_out),
                                      ("__pending", len(self.collector.pending_trees))]
        if self.latencies:
            lat = sorted(self.latencies)
            self.latencies = []
            pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000.0  # noqa: E731
            out += [("__complete-latency", round(sum(lat) / len(lat) * 1000.0, 3)),
                    ("__complete-latency-p50", round(pick(0.50), 3)),
                    ("__complete-latency-p99", round(pick(0.99), 3))]
        return out

    def _may_emit(self) -> bool:
        return self.max_pending is None or len(self.collector.pending_trees) < self.max_pending

    def on_activate(self) -> None:
        self._call(self.hosted.activate)

    def on_deactivate(self) -> None:
        self.collector.flush()
        self._call(self.hosted.deactivate)

    def _call(self, fn: Callable[[], Any]) -> None:
        try:
            fn()
        except ComponentFailure as failure:
            self._ack_emitted()
            self.restart(failure)
            return
        self._ack_emitted()

    def _ack_emitted(self) -> None:
        ids = self.collector.emitted_ids
        if ids:
            self.collector.emitted_ids = []
            hosted = self.hosted
            for msg_id in ids:
                self.stats.acked += 1
                try:
                    hosted.ack(msg_id)
                except ComponentFailure as failure:
                    self.restart(failure)
                    return

    def _burst(self, hosted: Any) -> bool:
        """Call ``next_tuple`` while it emits, for up to ``SPOUT_BURST_SECS`` (or until
        max spout pending is reached); whether anything was emitted. This is the spout's
        per-tuple path, so ``_call``'s work is inlined."""
        collector = self.collector
        next_tuple, _, _, on_error = spout_hooks(hosted)
        pending = collector.pending_trees
        max_pending = self.max_pending
        monotonic = time.monotonic
        burst_end = monotonic() + SPOUT_BURST_SECS
        emitted_any = False
        while True:
            before = collector.emitted
            try:
                try:
                    next_tuple()
                except (ComponentFailure, StormWentAwayError):
                    raise
                except Exception as exc:
                    on_error(exc)  # ComponentFailure, unless the spout keeps running
            except ComponentFailure as failure:
                self._ack_emitted()
                self.restart(failure)
                return emitted_any
            if collector.emitted_ids:
                self._ack_emitted()
                if self.hosted is not hosted:
                    return emitted_any  # restarted
            if collector.emitted == before:
                return emitted_any
            emitted_any = True
            if monotonic() >= burst_end or (max_pending is not None
                                             and len(pending) >= max_pending):
                return emitted_any

    def run(self) -> None:
        pipe = self.pipe
        collector = self.collector
        running = self._running
        last_flush = time.monotonic()
        while running():
            # control first: plans (activate/deactivate) and stop
            while pipe.poll(0):
                if not self.control(pipe.recv_multipart(copy=False)):
                    return
            if self.hosted is None or not self.active or self.done:
                collector.flush()
                self.publish_metrics()
                if pipe.poll(50):
                    if not self.control(pipe.recv_multipart(copy=False)):
                        return
                continue
            if collector.acking:
                self._expire()
                if self.hosted is None:
                    continue
                if not self._may_emit():
                    # max spout pending reached: wait for acks, fails or timeouts. Rows
                    # not yet sent go now only when little else is in flight (acks would
                    # stop coming back) or they have waited flush_secs: flushing at
                    # every stop would send each handful of rows freed by one ack batch
                    # as a message of its own, and per-message costs would dominate.
                    now = time.monotonic()
                    unsent = collector.pending
                    if (len(collector.pending_trees) - unsent < self.max_pending // 2
                            or now - last_flush >= self.flush_secs):
                        collector.flush()
                        last_flush = now
                    self.publish_metrics()
                    if pipe.poll(self.wait_ms):
                        if not self.control(pipe.recv_multipart(copy=False)):
                            return
                    continue
            hosted = self.hosted
            emitted_any = self._burst(hosted)
            if self.hosted is hosted and hosted.is_exhausted():
                if not collector.pending_trees:
                    self.exhausted = True
                    self.finish()
                    continue
                # exhausted, but trees are pending: a fail may replay, so wait for them
                emitted_any = False
            now = time.monotonic()
            if not emitted_any:
                collector.flush()
                last_flush = now
                self.publish_metrics()
                if pipe.poll(self.wait_ms):
                    if not self.control(pipe.recv_multipart(copy=False)):
                        return
            elif now - last_flush >= self.flush_secs:
                collector.flush()
                last_flush = now
                self.publish_metrics()


class BoltLoop(ExecutorLoop):
    #: A bolt must be ready before any spout emits: after `heron activate` a spout in
    #: one container can start, and its tuples arrive here, before this container's copy
    #: of the RUNNING plan does (tuples reaching an unprepared bolt would be lost).
    starts_while_inactive = True

    def __init__(self, *args: Any, loads: Callable[[bytes], Any], tick_secs: float | None,
                 shell: bool, loads_many: Callable[[Any], list[Any]] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.loads = loads
        self.loads_many = loads_many or (lambda blobs: [loads(blob) for blob in blobs])
        self.tick_secs = tick_secs
        self.shell = shell
        self.upstream_done: set[int] = set()
        self._counter = 0
        self.malformed = 0
        #: time in the component's execute and tuples executed since the last publish
        self._exec_secs = 0.0
        self._exec_tuples = 0

    def on_deactivate(self) -> None:
        self.collector.flush()

    def _execute(self, tup: Any) -> None:
        try:
            self.hosted.execute(tup)
        except ComponentFailure as failure:
            self.restart(failure)

    def _malformed(self, what: str, exc: BaseException) -> None:
        """Stream Managers forward payloads without decoding them, so a corrupt one can
        reach us: log it (once in a while) and drop it; the process must not die of it."""
        self.malformed += 1
        if self.malformed <= 10 or self.malformed % 1000 == 0:
            log.warning("dropped %s that does not decode (%d so far): %s: %s", what,
                        self.malformed, type(exc).__name__, exc)

    def extra_metrics(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        if self._exec_tuples:
            latency = self._exec_secs / self._exec_tuples * 1000.0
            self._exec_secs, self._exec_tuples = 0.0, 0
            out.append(("__execute-latency", round(latency, 4)))
        collector = self.collector
        if collector.processed:
            latency = collector.process_secs / collector.processed * 1000.0
            collector.process_secs, collector.processed = 0.0, 0
            out.append(("__process-latency", round(latency, 4)))
        return out

    def _process_batch(self, payload: bytes) -> None:
        began = time.perf_counter()
        executed = self.stats.executed
        self.collector.sample_received(str(self._counter + 1), began)
        try:
            self._execute_batch(payload)
        finally:
            self._exec_secs += time.perf_counter() - began
            self._exec_tuples += self.stats.executed - executed

    def _execute_batch(self, payload: bytes) -> None:
        try:
            batch = tuple_pb2.TupleBatch.FromString(payload)
        except DecodeError as exc:
            self._malformed("a tuple batch", exc)
            return
        source = batch.stream.component_name
        stream = batch.stream.id
        src_task = batch.src_task_id
        values, clean = self._decode_values(batch.values)
        total = len(values)
        stats = self.stats
        # Storm gives shell bolts string ids; in-process bolts get the same
        first = self._counter + 1
        ids: list[str] | None = None
        self._counter += total
        if self.collector.acking:
            ids = list(map(str, range(first, first + total)))
            self._register_inputs(batch, ids)
        # the Tuples, built by the tuple path a batch at a time where the bolt allows it
        tuples: list[Any] | None = None
        built_for: Any = None
        start = 0
        while start < total:
            plan = tuple_executor(self.hosted, source, stream, src_task)
            if plan is not None:
                if tuples is None or plan[0] is not built_for:  # (a restart's new types)
                    tuples, tuples_clean = tuple_codec.make_tuples(
                        first, values, source, stream, src_task, plan[0], Tuple)
                    built_for = plan[0]
                run_tuple = plan[1] if tuples_clean else _rejecting_undecodable_tuple(plan[1])
            else:
                if ids is None:
                    ids = list(map(str, range(first, first + total)))
                run = tuple_runner(self.hosted, source, stream, src_task)
                if not clean:
                    run = _rejecting_undecodable(run)
            i = start
            try:
                if plan is not None:
                    for tup in (tuples if start == 0 else tuples[start:]):
                        run_tuple(tup)
                        i += 1
                elif start == 0:
                    for tup_id, value in zip(ids, values):
                        run(tup_id, value)
                        i += 1
                else:
                    for tup_id, value in zip(ids[start:], values[start:]):
                        run(tup_id, value)
                        i += 1
            except ComponentFailure as failure:
                i += 1  # the tuple that raised is done with (failed)
                stats.executed += i - start
                start = i
                self.restart(failure, executing=True)
                if self.hosted is None:
                    return  # stopping
                continue
            except StormWentAwayError:
                raise
            except Exception as exc:
                # user code failures arrive as ComponentFailure: this value did not
                # decode, or does not fit the stream's fields; drop it alone
                stats.executed += i - start
                i += 1
                start = i
                self._malformed(f"a tuple from {source}/{stream}", exc)
                continue
            stats.executed += i - start
            break

    def _decode_values(self, blobs: Any) -> tuple[list[Any], bool]:
        """(values, clean): the batch decoded in one pass; when that fails, blob by blob,
        each blob that does not decode becoming an ``Undecodable`` in its place (its
        tuple is dropped and logged, and still takes its id, so acking stays aligned)."""
        try:
            return self.loads_many(blobs), True
        except Exception:
            pass
        loads = self.loads
        out: list[Any] = []
        for blob in blobs:
            try:
                out.append(loads(blob))
            except Exception as exc:
                out.append(Undecodable(exc))
        return out, False

    def _register_inputs(self, batch: Any, ids: list[str]) -> None:
        """Under acking, remember each input's tree (roots and this copy's key) under the
        id the bolt will see, before any of them runs: the bolt acks, fails or anchors by id."""
        inflight = self.collector.inflight
        n = len(ids)
        counts = list(batch.root_counts)
        if not counts:
            inflight.update(dict.fromkeys(ids, UNTRACKED))
            return
        tasks = batch.root_tasks
        keys = batch.root_keys
        edges = list(batch.edge_keys)
        if len(edges) < n:
            edges.extend([0] * (n - len(edges)))
        if len(counts) == n and counts.count(1) == n and len(keys) == n:
            # the common case, every input has one root: no per-row slicing
            inflight.update(zip(ids, [(((task, key),), edge)
                                      for task, key, edge in zip(tasks, keys, edges)]))
            return
        pos = 0
        for i in range(n):
            c = counts[i] if i < len(counts) else 0
            if c:
                inflight[ids[i]] = (tuple(zip(tasks[pos:pos + c], keys[pos:pos + c])), edges[i])
                pos += c
            else:
                inflight[ids[i]] = UNTRACKED

    def _task_done(self, payload: bytes) -> None:
        try:
            message = tuple_pb2.TaskDone.FromString(payload)
        except DecodeError as exc:
            self._malformed("an end-of-stream message", exc)
            return
        self.upstream_done.add(message.src_task_id)
        if self.task.upstream_tasks and self.task.upstream_tasks <= self.upstream_done:
            if self.shell:
                self._settle_shell()
            self.finish()

    def _settle_shell(self, quiet_secs: float = 0.5, limit_secs: float = 10.0) -> None:
        """A shell bolt answers asynchronously: let it finish what it was given."""
        deadline = time.monotonic() + limit_secs
        last = (self.collector.emitted, self.stats.acked, self.stats.failed)
        quiet_since = time.monotonic()
        while time.monotonic() < deadline:
            try:
                self.hosted.poll()
            except ComponentFailure as failure:
                self.restart(failure)
                if self.hosted is None:
                    return  # stopping
            now_counts = (self.collector.emitted, self.stats.acked, self.stats.failed)
            if now_counts != last:
                last = now_counts
                quiet_since = time.monotonic()
            elif (self.stats.acked + self.stats.failed >= self.stats.executed
                  or time.monotonic() - quiet_since >= quiet_secs):
                return
            time.sleep(0.01)

    def run(self) -> None:
        pipe = self.pipe
        collector = self.collector
        running = self._running
        next_tick = time.monotonic() + self.tick_secs if self.tick_secs else None
        while running():
            timeout = 100
            if self.shell:
                timeout = 5
            if next_tick is not None:
                timeout = max(0, min(timeout, int((next_tick - time.monotonic()) * 1000)))
            if pipe.poll(timeout):
                frames = pipe.recv_multipart(copy=False)
                kind = frames[0].bytes
                if kind == TUPLE_BATCH and self.hosted is not None:
                    self._process_batch(frames[1].bytes)
                    # more input waiting: keep filling the output batches
                    if not pipe.poll(0):
                        collector.flush()
                elif kind == TASK_DONE:
                    self._task_done(frames[1].bytes)
                elif kind == TUPLE_BATCH:
                    log.warning("dropped a batch that arrived before the component started")
                elif not self.control(frames):
                    return
            else:
                collector.flush()
            if self.shell and self.hosted is not None:
                try:
                    self.hosted.poll()
                except ComponentFailure as failure:
                    self.restart(failure)
            if next_tick is not None and time.monotonic() >= next_tick:
                next_tick = time.monotonic() + self.tick_secs
                if self.hosted is not None and self.active:
                    self._counter += 1
                    if collector.acking:
                        collector.register_input(str(self._counter), (), 0)
                    self._execute(self.hosted.make_tuple(str(self._counter), "__system", "__tick",
                                                         -1, [self.tick_secs]))
            self.publish_metrics()
