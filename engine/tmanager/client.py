"""Talking to a topology's Topology Master: metrics and exception queries.

The Topology Master keeps only the latest value of every metric, per instance; this
client asks for them with ``MetricRequest`` / ``ExceptionLogRequest`` over its
controller socket (zmq + protobuf, as the CLI does), bounded by a timeout, and turns a
silent or absent Topology Master into :class:`TManagerUnavailable`. The tracker and the
Health Manager both ask through it; the tracker answers 503 for that error.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import zmq
from google.protobuf.message import Message

from engine.common.network.sockets import RequestTimeout, request
from engine.common.security.guard import SocketSecurity
from engine.messages import common_pb2, tmanager_pb2


class TManagerUnavailable(Exception):
    """The Topology Master is not there, does not answer within the bound, or refuses;
    the message names the topology and the endpoint. Retrying later may work."""


@dataclass
class MetricsSnapshot:
    """Every metric of a topology at one moment, as the Topology Master had it.

    ``values`` maps instance id (or Stream Manager id) to {metric name: value text};
    ``components`` maps the same ids to their component (``__stmgr__`` for Stream
    Managers). ``time`` is the tracker's wall clock when the answer arrived.
    ``parallelism`` maps each component to its number of instances in the physical plan
    the tracker read with this answer (empty when there was none): the Topology Master's
    metrics may still hold an instance that a scale-down removed.
    """

    time: float
    values: dict[str, dict[str, str]] = field(default_factory=dict)
    components: dict[str, str] = field(default_factory=dict)
    parallelism: dict[str, int] = field(default_factory=dict)


class TManagerClient:
    """Bounded requests to one Topology Master's controller endpoint."""

    def __init__(self, topology: str, endpoint: str, timeout: float, *,
                 security: SocketSecurity | None) -> None:
        self.topology = topology
        self.endpoint = endpoint
        self.timeout = timeout
        #: the topology's SocketSecurity: its Topology Master refuses anyone without it
        self.security = security

    def _ask(self, message: Message) -> Any:
        try:
            response = request(self.endpoint, message, self.timeout, security=self.security)
        except RequestTimeout:
            raise TManagerUnavailable(f"the Topology Master of {self.topology!r} did not "
                                      f"answer within {self.timeout:g}s ({self.endpoint})"
                                      ) from None
        except zmq.ZMQError as exc:  # a malformed endpoint, an unreachable host
            raise TManagerUnavailable(f"the Topology Master of {self.topology!r} at "
                                      f"{self.endpoint} cannot be reached: {exc}") from None
        status = getattr(response, "status", None)
        if status is not None and status.HasField("status") and status.status != common_pb2.OK:
            raise TManagerUnavailable(
                f"the Topology Master of {self.topology!r} refused the request: "
                f"{status.message or common_pb2.StatusCode.Name(status.status)}")
        return response

    def metrics(self, component: str | None = None, instances: Iterable[str] = (),
                names: Iterable[str] = ()) -> MetricsSnapshot:
        """The latest metrics, optionally of one component, some instances, some names."""
        response = self._ask(tmanager_pb2.MetricRequest(
            component_name=component or "", instance_id=list(instances), metric=list(names)))
        if not isinstance(response, tmanager_pb2.MetricResponse):
            raise TManagerUnavailable(f"the Topology Master of {self.topology!r} answered a "
                                      f"metrics request with {response.DESCRIPTOR.name}")
        snapshot = MetricsSnapshot(time=time.time())
        for task_metric in response.metric:
            values = snapshot.values.setdefault(task_metric.instance_id, {})
            for metric in task_metric.metric:
                # The Topology Master names each metric "<component>/<metric>".
                owner, _, name = metric.name.partition("/")
                snapshot.components[task_metric.instance_id] = owner
                values[name] = metric.value
        return snapshot

    def exceptions(self, component: str | None = None,
                   instances: Iterable[str] = ()) -> list[Any]:
        """The deduplicated exception logs (``TmanagerExceptionLog``) it holds."""
        response = self._ask(tmanager_pb2.ExceptionLogRequest(
            component_name=component or "", instances=list(instances)))
        if not isinstance(response, tmanager_pb2.ExceptionLogResponse):
            raise TManagerUnavailable(f"the Topology Master of {self.topology!r} answered an "
                                      f"exceptions request with {response.DESCRIPTOR.name}")
        wanted = set(instances)
        return [e for e in response.exceptions if not wanted or e.instance_id in wanted]
