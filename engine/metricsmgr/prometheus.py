"""Prometheus text exposition of what a Metrics Manager holds.

Every Metrics Manager serves the latest metrics of its container's processes on its own
loopback HTTP port (bound to port 0, the port written to
``<working dir>/metrics/<metricsmgr id>.url`` and published to the Topology Master as the
manager's own ``__prometheus-port`` metric), so a Prometheus server, ``curl`` or
``heron metrics`` can read them. Names follow Prometheus conventions: Heron's
``__emit-count`` becomes ``heron_emit_count``, a user's ``report_metric("hits", n)``
becomes ``heron_user_hits``; labels say which topology, component, instance and
container. Values that are not numbers (``__last-error``) are not exported.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Callable, Iterable

from prometheus_client import start_http_server
from prometheus_client.core import CollectorRegistry, GaugeMetricFamily
from prometheus_client.registry import Collector

_INVALID = re.compile(r"[^a-zA-Z0-9_]")

#: Heron's counters: monotonic per process lifetime (a restarted process starts again)
COUNTERS = {"__emit-count", "__transfer-count", "__execute-count", "__ack-count",
            "__fail-count", "__error-count", "__restart-count", "__timeout-count",
            "__tuples-received", "__tuples-sent", "__tuples-dropped", "__malformed-messages",
            "__trees-completed", "__trees-failed", "__trees-forgotten"}


def prometheus_name(metric: str) -> str:
    """``__emit-count`` -> ``heron_emit_count``; ``user/hits`` -> ``heron_user_hits``."""
    name = _INVALID.sub("_", metric.strip("_").replace("/", "_"))
    return f"heron_{name.lower()}"


def numeric(value: str) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


class LatestMetricsCollector(Collector):
    """Turns ``{(component, instance): {metric: value}}`` into gauge families at scrape
    time (gauges, not counters: a restarted process starts its counts again, which a
    Prometheus counter would read as a reset anyway, and rates work the same)."""

    def __init__(self, topology: str, container: int,
                 snapshot: Callable[[], Iterable[tuple[str, str, dict[str, str]]]]) -> None:
        self.topology = topology
        self.container = str(container)
        self._snapshot = snapshot

    def collect(self) -> Iterable[Any]:
        families: dict[str, GaugeMetricFamily] = {}
        for component, instance, values in self._snapshot():
            for metric, raw in values.items():
                value = numeric(raw)
                if value is None:
                    continue
                name = prometheus_name(metric)
                family = families.get(name)
                if family is None:
                    kind = "counter (per process lifetime)" if metric in COUNTERS else "value"
                    family = families[name] = GaugeMetricFamily(
                        name, f"Heron metric {metric}: {kind}",
                        labels=["topology", "component", "instance", "container"])
                family.add_metric([self.topology, component, instance, self.container], value)
        return list(families.values())


class PrometheusEndpoint:
    """A loopback HTTP server exposing one Metrics Manager's metrics."""

    def __init__(self, collector: LatestMetricsCollector, host: str = "127.0.0.1") -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(collector)
        self._server, self._thread = start_http_server(0, addr=host, registry=self.registry)
        self.port: int = self._server.server_port
        self.url = f"http://{host}:{self.port}/metrics"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if isinstance(self._thread, threading.Thread):
            self._thread.join(2)
