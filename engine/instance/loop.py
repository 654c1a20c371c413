"""What a task's executor thread does whatever its component is: the base loop.

An instance process runs one task on one thread (Heron's ``spout_instance`` and
``bolt_instance`` share the same plumbing). ``ExecutorLoop`` holds that shared part: the
pipe to the gateway thread, the physical plan and activation, the component's start and
restarts under the restart policy, counters and the metrics it publishes, and the end of
the stream (``TaskDone``). The spout's loop (``engine.instance.spout_loop``) and the
bolt's (``engine.instance.bolt_loop``) add only their own per-tuple paths, so each of the
three reads on its own.
"""

from __future__ import annotations

import logging
import resource
import time
from collections.abc import Callable
from typing import Any

import zmq

from engine.common.network import encode, type_frame
from engine.common.network.credits import WriteCredit, encode_credit, give_back_at
from engine.common.process.progress import mark_progress
from engine.common.process.restart_policy import CRASH_LOOPING_METRIC, RestartPolicy, RestartTracker
from engine.common.runtime.errors import ComponentFailure
from engine.config.batching import DEFAULT_BATCH_TIME_MS
from engine.instance.gateway import GATEWAY_FAILED, STOP, TO_METRICS, TO_STMGR
from engine.instance.stateful import KINDS as STATEFUL_KINDS
from engine.messages import ckptmgr_pb2, metrics_pb2, stmgr_pb2, topology_pb2, tuple_pb2

log = logging.getLogger("heron.instance")

TUPLE_BATCH = type_frame(tuple_pb2.TupleBatch)
TASK_DONE = type_frame(tuple_pb2.TaskDone)
ASSIGNMENT = type_frame(stmgr_pb2.NewInstanceAssignmentMessage)
PUBLISH = type_frame(metrics_pb2.MetricPublisherPublishMessage)

#: how often counters go to the Metrics Manager
METRICS_INTERVAL = 1.0
#: most time a row waits in an open batch before it is sent, unless the topology sets
#: ``heron.instance.emit.batch.time.ms`` (engine.config.batching)
FLUSH_INTERVAL = DEFAULT_BATCH_TIME_MS / 1000.0


class ReadCreditPipe:
    """The executor's end of the pipe, giving the Stream Manager back the read credit of
    the tuple batches the loop has run (engine.common.network.credits).

    A batch's bytes are owed from the moment the loop receives it; by the next time the
    loop looks at its input it has executed the batch. What it owes goes back then once it
    reaches ``give_back_at(capacity)`` (a quarter of the read capacity), and always before
    the loop waits for input (a ``poll`` with a timeout, or a receive with nothing ready):
    a busy bolt returns credit in a few messages instead of one per batch, and an idle one
    owes nothing. Every batch received is given back, executed or dropped, so no credit
    leaks. Everything else is the pipe's."""

    def __init__(self, pipe: zmq.Socket, running: Callable[[], bool],
                 capacity: int | None = None) -> None:
        self._pipe = pipe
        self._running = running
        #: owed bytes that are given back without waiting for the loop to go idle
        self.threshold = give_back_at(capacity) if capacity else 1
        #: bytes received and not yet given back
        self.owed = 0
        self.given_back = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pipe, name)

    def recv_multipart(self, *args: Any, **kwargs: Any) -> Any:
        owed = self.owed
        if owed and (owed >= self.threshold or not self._pipe.poll(0)):
            self.give_back()
        frames = self._pipe.recv_multipart(*args, **kwargs)
        if len(frames) == 2:
            kind = frames[0]
            if (kind.bytes if isinstance(kind, zmq.Frame) else kind) == TUPLE_BATCH:
                self.owed += len(frames[1])
        return frames

    def poll(self, timeout: Any = None, flags: int = zmq.POLLIN) -> int:
        owed = self.owed
        if owed and flags & zmq.POLLIN and (timeout != 0 or owed >= self.threshold):
            self.give_back()
        return self._pipe.poll(timeout, flags)

    def send_multipart(self, *args: Any, **kwargs: Any) -> Any:
        return self._pipe.send_multipart(*args, **kwargs)

    def give_back(self) -> None:
        """Send the credit owed to the Stream Manager, through the gateway; waits (still
        watching for stop) while the pipe is full, as a data batch would."""
        frames = [TO_STMGR, *encode_credit(self.owed)]
        pipe = self._pipe
        while True:
            try:
                pipe.send_multipart(frames, zmq.NOBLOCK)
                break
            except zmq.Again:
                if not self._running():
                    return
                pipe.poll(50, zmq.POLLOUT)
        self.given_back += self.owed
        self.owed = 0


def _task_layout(pplan: Any) -> set[tuple[str, int]]:
    return {(i.info.component_name, i.info.task_id) for i in pplan.instances}


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
        #: the pipe, or it wrapped to give back read credit (``use_credits``)
        self.pipe: zmq.Socket[Any] | ReadCreditPipe = pipe
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
        #: checkpoints and restores under EFFECTIVELY_ONCE (engine.instance.stateful), else None
        self.stateful: Any = None
        #: the component keeps state (a StatefulComponent): only its state is stored
        self.component_is_stateful = False
        #: bytes of tuple batches this task may hand the gateway before its Stream
        #: Manager has read them (engine.common.network.credits); None: not limited
        self.write_credit: WriteCredit | None = None

    def use_credits(self, write_credit: WriteCredit | None, *, read: bool,
                    read_capacity: int | None = None) -> None:
        """Take part in the Stream Manager's flow control: spend ``write_credit`` (shared
        with the gateway, which gives it back) on each tuple batch sent, and, with
        ``read`` (bolts), give back read credit for the batches run (a quarter of
        ``read_capacity`` at a time, and all of it before waiting for input)."""
        self.write_credit = write_credit
        if read and not isinstance(self.pipe, ReadCreditPipe):
            self.pipe = ReadCreditPipe(self.pipe, self._running, read_capacity)

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
        credit = self.write_credit
        if credit is not None and frames[0] == TUPLE_BATCH:
            # wait for the Stream Manager to have read enough of what went before
            # (backpressure: it has stopped reading this spout); keep reporting
            if not credit.acquire(len(frames[1]), self._running, self._waiting_for_credit):
                return
        self.send([TO_STMGR, *frames])

    def _waiting_for_credit(self) -> None:
        if self.metrics_pipe is not None:
            self.publish_metrics()

    def handle_plan(self, payload: bytes) -> None:
        message = stmgr_pb2.NewInstanceAssignmentMessage.FromString(payload)
        previous = self.pplan
        self.pplan = message.pplan
        if (previous is not None and self.on_new_layout is not None
                and _task_layout(previous) != _task_layout(message.pplan)):
            self.on_new_layout(message.pplan)
        running = message.pplan.topology.state == topology_pb2.RUNNING
        if self.hosted is None and self.stateful is None:
            if not running and not self.starts_while_inactive:
                return  # a spout deployed deactivated opens once the topology runs
            self.start_component()
        # under EFFECTIVELY_ONCE the component is built by the restore that follows a plan
        if running and not self.active:
            self.active = True
            if self.hosted is not None:
                self.on_activate()
        elif not running and self.active:
            self.active = False
            if self.hosted is not None:
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
        last_line = (failure.traceback_text.strip().splitlines()[-1]
                     if failure.traceback_text else '')
        headline = f"{type(failure.original).__name__}: {failure.original}\n{last_line}"
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
        self.discard_component()
        if not self._backoff(delay):
            return
        if self.stateful is not None:
            # its state is gone with it: the whole topology rolls back, and the restore
            # builds the component again
            reason = f"{type(failure.original).__name__}: {failure.original}"
            self.send_data(encode(ckptmgr_pb2.InstanceFailed(task_id=self.task.task_id,
                                                             reason=reason[:400])))
            return
        self.start_component()
        if self.active and self.hosted is not None:
            self.on_activate()

    def discard_component(self) -> None:
        """Close the component and forget it (a restart or a rollback follows)."""
        hosted, self.hosted = self.hosted, None
        if hosted is not None:
            try:
                hosted.close()
            except Exception:
                pass

    def reset_stream(self) -> None:
        """A rollback: the task has not finished its stream any more (it is replayed)."""
        self.done = False
        self.exhausted = False

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
        the first progress of this process tells its executor (engine.common.process.progress)."""
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
                            ("__restart-count", s.restarts), ("__done", int(self.finished())),
                            ("__active", int(self.active)),
                            (CRASH_LOOPING_METRIC, int(self.restart_tracker.crash_looping))):
            message.metrics.add(name=name, value=str(value))
        if s.last_error:
            message.metrics.add(name="__last-error", value=s.last_error)
        for name, value in self.extra_metrics():
            message.metrics.add(name=name, value=str(value))
        if self.write_credit is not None:
            message.metrics.add(name="__write-credit-in-flight-bytes-max",
                                value=str(self.write_credit.max_in_flight))
            message.metrics.add(name="__write-credit-wait-ms",
                                value=str(int(self.write_credit.waited_secs * 1000)))
        if self.stateful is not None:
            for name, value in self.stateful.metrics():
                message.metrics.add(name=name, value=str(value))
        for name, value in self.process_metrics():
            message.metrics.add(name=name, value=str(value))
        for name, value in self.collector.user_metrics.items():
            message.metrics.add(name=f"user/{name}", value=str(value))
        for text, count in self.exceptions:
            message.exceptions.add(stacktrace=text, count=count)
        frames = [PUBLISH, message.SerializeToString()]
        if self.metrics_pipe is None:
            self.send([TO_METRICS, *frames])
            return
        try:
            self.metrics_pipe.send_multipart(frames, zmq.NOBLOCK)
        except zmq.Again:
            pass  # the gateway has older snapshots to send; this one is dropped

    def finished(self) -> bool:
        """The task's stream is over for good: done, and under EFFECTIVELY_ONCE also
        recorded in a consistent checkpoint (a rollback can no longer replay it)."""
        return self.done and (self.stateful is None or self.stateful.done_checkpointed)

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
        elif self.stateful is not None and kind in STATEFUL_KINDS:
            self.stateful.handle(self, kind, frames[1].bytes)
        elif kind == GATEWAY_FAILED:
            raise TaskGaveUp("the gateway thread failed: "
                             f"{frames[1].bytes.decode(errors='replace')}")
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
