"""The spout's executor loop: calls ``next_tuple`` and settles the trees it started.

``next_tuple`` is called in bursts while it emits, batches are flushed by size or after a
few milliseconds, and once ``is_exhausted()`` is true the task sends ``TaskDone`` after
its last batch. Without acking, message ids are acked at once (at-most-once, as Heron
does); with acking, the Stream Manager's ack batches settle the pending trees,
``topology.max.spout.pending`` holds ``next_tuple`` back and trees older than
``topology.message.timeout.secs`` are failed here, as Heron's spout instance does.
The burst and the settling are the spout's per-tuple paths: they call the spout's hooks
directly (``spout_hooks``) and keep everything they touch in locals.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from google.protobuf.message import DecodeError

from compat.storm_api.exceptions import StormWentAwayError
from compat.storm_api.hosting import DirectHooks
from engine.common.codec import MalformedBatch
from engine.common.network import type_frame
from engine.common.runtime.errors import ComponentFailure
from engine.instance.loop import ExecutorLoop, log
from engine.messages import tuple_pb2

CONTROL_BATCH = type_frame(tuple_pb2.ControlBatch)
ACK = tuple_pb2.ACK

#: a burst of next_tuple calls ends after this long
SPOUT_BURST_SECS = 0.01


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


class SpoutLoop(ExecutorLoop):
    """A spout task's loop: bursts of ``next_tuple``, ack batches, timeouts."""

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
        per-tuple path: the calls run in the tuple path's loop (``CollectorCore.burst``),
        which comes back here only to ack at-most-once message ids or with what
        ``next_tuple`` raised."""
        collector = self.collector
        next_tuple, _, _, on_error = spout_hooks(hosted)
        pending = collector.pending_trees
        max_pending = -1 if self.max_pending is None else self.max_pending
        monotonic = time.monotonic
        burst_end = monotonic() + SPOUT_BURST_SECS
        burst = collector.burst
        emitted_any = False
        while True:
            try:
                try:
                    if not burst(next_tuple, burst_end, pending, max_pending):
                        return emitted_any or collector.burst_emitted
                except (ComponentFailure, StormWentAwayError):
                    raise
                except Exception as exc:
                    on_error(exc)  # ComponentFailure, unless the spout keeps running
            except ComponentFailure as failure:
                emitted_any = emitted_any or collector.burst_emitted
                self._ack_emitted()
                self.restart(failure)
                return emitted_any
            # after a call that left message ids to ack, or raised and the spout keeps
            # running: what the loop checks after every call
            emitted_any = emitted_any or collector.burst_emitted
            if collector.emitted_ids:
                self._ack_emitted()
                if self.hosted is not hosted:
                    return emitted_any  # restarted
            if collector.emitted == collector.burst_before:
                return emitted_any
            emitted_any = True
            if monotonic() >= burst_end or (max_pending >= 0 and len(pending) >= max_pending):
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
            if (self.hosted is None or not self.active or self.done
                    or (self.stateful is not None and not self.stateful.processing)):
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
                    assert self.max_pending is not None  # _may_emit stops only at a bound
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
