"""What the Stream Manager reports to its container's Metrics Manager once a second:
its tuple counts, queues, credit and backpressure, each local instance's share of the
backpressure (what the Health Manager reads), checkpoint and acking figures. A part of
``StreamManager`` (``manager.py``)."""

from __future__ import annotations

from typing import Any

import zmq

from engine.common.network import encode
from engine.messages import metrics_pb2


class MetricsReport:
    """``StreamManager``'s metrics methods (its state, set by its ``__init__``)."""

    # the StreamManager's state these methods read
    metrics: zmq.Socket
    counts: dict[str, int]
    outbox: Any
    guard: Any
    bp: Any
    credits: Any
    instance_bp: Any
    instances: dict[bytes, tuple[zmq.Socket, Any]]
    stateful: Any
    acks: Any
    largest_batch_bytes: int

    def _publish_metrics(self) -> None:
        message = metrics_pb2.MetricPublisherPublishMessage()
        initiated, paused = self.bp.totals()
        for name, value in (("__tuples-received", self.counts["tuples_in"]),
                            ("__tuples-sent", self.counts["tuples_out"]),
                            ("__tuples-dropped", self.counts["dropped"] + self.outbox.dropped),
                            ("__malformed-messages", self.counts["malformed"]),
                            ("__connections-refused", self.guard.refused),
                            ("__buffered-bytes", self.outbox.buffered_bytes),
                            ("__backpressure", int(self.bp.paused)),
                            ("__backpressure-initiated", int(self.bp.initiated)),
                            ("__time-spent-back-pressure-initiated-ms", int(initiated * 1000)),
                            ("__time-spouts-paused-ms", int(paused * 1000)),
                            ("__largest-queue-bytes", self.outbox.largest_queue()[1]),
                            ("__largest-queue-bytes-max", self.bp.max_queue_bytes),
                            ("__largest-batch-bytes-max", self.largest_batch_bytes),
                            ("__read-credit-in-flight-bytes-max", self.credits.max_in_flight),
                            ("__read-credit-bytes-in-flight",
                             sum(self.credits.in_flight.values())),
                            ("__longest-queue-wait-ms-max", int(self.bp.max_wait * 1000))):
            message.metrics.add(name=name, value=str(value))
        for name, value in self._instance_metrics():
            message.metrics.add(name=name, value=str(value))
        if self.stateful is not None:
            for name, value in self.stateful.metrics():
                message.metrics.add(name=name, value=str(value))
        if self.acks is not None:
            acks = self.acks
            for name, value in (("__trees-pending", acks.xor.pending()),
                                ("__trees-completed", acks.counts["completed"]),
                                ("__trees-failed", acks.counts["failed"]),
                                ("__trees-forgotten", acks.xor.forgotten)):
                message.metrics.add(name=name, value=str(value))
        try:
            self.metrics.send_multipart(encode(message), zmq.NOBLOCK)
        except zmq.Again:
            pass

    def _instance_metrics(self) -> list[tuple[str, int]]:
        """Heron's per-instance metrics, for every registered local instance: the
        cumulative ms its queue kept this manager in backpressure, and the bytes waiting
        for it now (what the Health Manager's sensors read)."""
        out = []
        for identity in self.instances:
            instance = identity.decode()
            out.append((f"__time_spent_back_pressure_by_compid/{instance}",
                        self.instance_bp.total_ms(identity)))
            out.append((f"__connection_buffer_by_instanceid/{instance}/bytes",
                        self.outbox.queued_bytes.get(identity, 0)))
        return out
