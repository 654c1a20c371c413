"""The bolt's executor loop: turns arriving batches into ``execute`` calls.

Each arriving batch is decoded value by value into the tuples the component expects
(built by the tuple path a batch at a time where the hosted bolt allows it), output is
flushed when the input pipe is momentarily empty (so batches grow under load and latency
stays low when idle), tick tuples are made on time, and ``TaskDone`` is passed on once
every upstream task has sent one. A value that does not decode is dropped alone and
logged: Stream Managers forward payloads without decoding them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from google.protobuf.message import DecodeError

from compat.storm_api.exceptions import StormWentAwayError
from compat.storm_api.tuple import Tuple
from engine.common.codec import Undecodable, tuple_codec
from engine.common.runtime.errors import ComponentFailure
from engine.common.serialization import MsgpackSerializer
from engine.instance.collector import UNTRACKED
from engine.instance.loop import TASK_DONE, TUPLE_BATCH, ExecutorLoop, log
from engine.messages import tuple_pb2


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


def batch_runner(hosted: Any, source: str, stream: str,
                 task: int) -> tuple[type | None, Any] | None:
    """``(values_type, bolt)`` when the hosted bolt lets the tuple path run a batch's
    tuples through it in one loop (``HostedBolt.batch_runner``), else None."""
    runner = getattr(hosted, "batch_runner", None)
    return runner(source, stream, task) if runner is not None else None


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


class BoltLoop(ExecutorLoop):
    """A bolt task's loop: batches in, ``execute`` per tuple, ticks, end of stream."""

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
        #: the tuple path's row-at-a-time runner, for msgpack rows (the only rows it decodes)
        self._run_blobs = (getattr(self.collector, "run_blobs", None)
                           if type(getattr(self.collector, "serializer", None))
                           is MsgpackSerializer else None)
        #: time in the component's execute and tuples executed since the last publish
        self._exec_secs = 0.0
        self._exec_tuples = 0

    def on_deactivate(self) -> None:
        self.collector.flush()

    def reset_stream(self) -> None:
        super().reset_stream()
        self.upstream_done = set()

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
        blobs = batch.values
        total = len(blobs)
        stats = self.stats
        # Storm gives shell bolts string ids; in-process bolts get the same
        first = self._counter + 1
        ids: list[str] | None = None
        self._counter += total
        if self.collector.acking:
            ids = list(map(str, range(first, first + total)))
            self._register_inputs(batch, ids)
        # msgpack rows into a stock bolt: each decoded, built and run by the tuple path,
        # one after another; anything else (or what is left when a restart changes that)
        # below, a batch at a time
        start = 0
        if self._run_blobs is not None:
            left = self._run_blobs_of(blobs, first, source, stream, src_task, ids, payload)
            if left is None:
                return
            start = left
        values, clean = self._decode_values(blobs)
        # the Tuples, built by the tuple path a batch at a time where the bolt allows it,
        # and run through the bolt by the tuple path's loop where that is exact
        tuples: list[Any] | None = None
        tuples_clean = clean
        built_for: Any = None
        run_tuples = getattr(self.collector, "run_tuples", None)
        while start < total:
            runner = (batch_runner(self.hosted, source, stream, src_task)
                      if run_tuples is not None else None)
            plan = (tuple_executor(self.hosted, source, stream, src_task)
                    if runner is None else None)
            found = runner if runner is not None else plan
            if found is not None:
                values_type = found[0]
                if tuples is None or values_type is not built_for:  # (a restart's new types)
                    tuples, tuples_clean = tuple_codec.make_tuples(
                        first, values, source, stream, src_task, values_type, Tuple)
                    built_for = values_type
                if runner is not None and not tuples_clean:
                    # a value that did not decode must stop its own tuple: one at a time
                    runner = None
                    plan = tuple_executor(self.hosted, source, stream, src_task)
            if plan is not None:
                run_tuple = plan[1] if tuples_clean else _rejecting_undecodable_tuple(plan[1])
            elif runner is None:
                if ids is None:
                    ids = list(map(str, range(first, first + total)))
                run = tuple_runner(self.hosted, source, stream, src_task)
                if not clean:
                    run = _rejecting_undecodable(run)
            i = start
            try:
                if runner is not None:
                    # a runner is only looked for when the collector has run_tuples
                    assert run_tuples is not None
                    try:
                        run_tuples(runner[1], tuples, start)
                    finally:
                        i = start + self.collector.ran  # the one that raised included
                elif plan is not None:
                    assert tuples is not None  # built above whenever there is a plan
                    for tup in (tuples if start == 0 else tuples[start:]):
                        run_tuple(tup)
                        i += 1
                elif start == 0:
                    assert ids is not None  # made above when neither runner nor plan
                    for tup_id, value in zip(ids, values):
                        run(tup_id, value)
                        i += 1
                else:
                    assert ids is not None  # as above
                    for tup_id, value in zip(ids[start:], values[start:]):
                        run(tup_id, value)
                        i += 1
            except ComponentFailure as failure:
                if runner is None:
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
                if runner is None:
                    i += 1
                stats.executed += i - start
                start = i
                self._malformed(f"a tuple from {source}/{stream}", exc)
                continue
            stats.executed += i - start
            break

    def _run_blobs_of(self, blobs: Any, first: int, source: str, stream: str,
                      src_task: int, ids: list[str] | None = None,
                      payload: bytes | None = None) -> int | None:
        """A batch's rows run by the tuple path's ``run_blobs`` while the hosted bolt allows
        it (``batch_runner``): None when every row is done with (or the loop is stopping),
        else the index of the first row left to the batch-at-a-time path. A row that does
        not decode or fit the stream is dropped alone and logged, as there. ``ids``
        (at-least-once): the inputs' ids as registered, which the Tuples then carry;
        ``payload``: the batch as it arrived, where the compiled path reads the rows."""
        stats = self.stats
        total = len(blobs)
        start = 0
        run_blobs = self._run_blobs
        assert run_blobs is not None  # the caller runs rows here only when it is set
        while start < total:
            runner = batch_runner(self.hosted, source, stream, src_task)
            if runner is None:
                return start
            done = 0
            try:
                try:
                    error = run_blobs(runner[1], blobs, first, source, stream, src_task,
                                      runner[0], start, ids, payload)
                finally:
                    done = self.collector.ran  # the row that raised or was bad included
            except ComponentFailure as failure:
                stats.executed += done
                start += done
                self.restart(failure, executing=True)
                if self.hosted is None:
                    return None  # stopping
                continue
            if error is None:
                stats.executed += done
                return None
            stats.executed += done - 1  # the bad row is dropped, not executed
            start += done
            self._malformed(f"a tuple from {source}/{stream}", error)
        return None

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

    def ticks_now(self) -> bool:
        """Whether a tick tuple due now is executed. Under EFFECTIVELY_ONCE not until the
        Topology Master says processing starts after a restore, as a spout waits for it: a
        tick changes state and emits, and what it emitted to a container still restoring
        would be dropped while the state change stayed (a windowed bolt's flushed window
        lost). Ticks skipped meanwhile are not made up: Storm sends none to a bolt that
        is not running either."""
        return (self.hosted is not None and self.active
                and (self.stateful is None or self.stateful.processing))

    def _tick(self) -> None:
        if not self.ticks_now():
            return
        self._counter += 1
        if self.collector.acking:
            self.collector.register_input(str(self._counter), (), 0)
        self._execute(self.hosted.make_tuple(str(self._counter), "__system", "__tick",
                                             -1, [self.tick_secs]))

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
                    if self.stateful is None:  # else: failed, the rollback replays it
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
                assert self.tick_secs is not None  # next_tick is only set when ticks are on
                next_tick = time.monotonic() + self.tick_secs
                self._tick()
            self.publish_metrics()
