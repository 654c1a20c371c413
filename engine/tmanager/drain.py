"""Waiting for a deactivated topology's in-flight tuples to drain.

Heron's kill deactivates first so spouts stop; what is already between processes still
has to arrive. At-most-once there is no ack to wait for, so "drained" is read from the
Topology Master's metrics: no Stream Manager holds buffered bytes and no counter (tuples
routed, tuples executed) moved between two snapshots a metrics interval apart.
"""

from __future__ import annotations

import time

from engine.common.network.sockets import RequestTimeout, request
from engine.common.security.guard import SocketSecurity
from engine.messages import tmanager_pb2

#: a little over the instances' and Metrics Managers' one-second publishing interval
SNAPSHOT_INTERVAL = 1.2
_MOVING = ("__tuples-received", "__tuples-sent", "__execute-count", "__emit-count")


def metrics_snapshot(controller_endpoint: str, timeout: float = 2.0, *,
                     security: SocketSecurity | None) -> dict[str, dict[str, str]]:
    """instance id -> {metric name: value}, from the Topology Master (``security``: the
    topology's SocketSecurity)."""
    response = request(controller_endpoint, tmanager_pb2.MetricRequest(), timeout,
                       security=security)
    out: dict[str, dict[str, str]] = {}
    for task_metric in response.metric:
        values = out.setdefault(task_metric.instance_id, {})
        for metric in task_metric.metric:
            values[metric.name.partition("/")[2]] = metric.value
    return out


def _signature(snapshot: dict[str, dict[str, str]]) -> tuple[tuple, int]:
    moving = tuple(sorted((inst, name, values.get(name)) for inst, values in snapshot.items()
                          for name in _MOVING if name in values))
    buffered = sum(int(values.get("__buffered-bytes", 0) or 0) for values in snapshot.values())
    return moving, buffered


def wait_drained(controller_endpoint: str, timeout: float, *,
                 security: SocketSecurity | None) -> bool:
    """True once the topology is quiet, False when ``timeout`` passes first (or the
    Topology Master stops answering)."""
    deadline = time.monotonic() + timeout
    previous = None
    while time.monotonic() < deadline:
        try:
            current = _signature(metrics_snapshot(
                controller_endpoint, timeout=max(0.1, min(2.0, deadline - time.monotonic())),
                security=security))
        except RequestTimeout:
            return False
        if previous is not None and current == previous and current[1] == 0:
            return True
        previous = current
        time.sleep(max(0.0, min(SNAPSHOT_INTERVAL, deadline - time.monotonic())))
    return False
