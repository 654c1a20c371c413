"""Prometheus text exposition of what a Metrics Manager holds.

Every Metrics Manager serves the latest metrics of its container's processes on its own
loopback HTTP port (bound to port 0, the port written to
``<working dir>/metrics/<metricsmgr id>.url`` and published to the Topology Master as the
manager's own ``__prometheus-port`` metric), so a Prometheus server, ``curl`` or
``heron metrics`` can read them. Names follow Prometheus conventions: Heron's
``__emit-count`` becomes ``heron_emit_count``, a user's ``report_metric("hits", n)``
becomes ``heron_user_hits``; labels say which topology, component, instance and
container. Values that are not numbers (``__last-error``) are not exported.

A Kafka spout's offsets (Storm's ``kafkaOffset/<topic>/partition_<n>/spoutLag`` and its
siblings, engine/common/runtime/source_lag.py) become labelled gauges instead of one name per
topic and partition: ``heron_kafka_spout_lag{topic="t",partition="0",...}`` and
``heron_kafka_spout_{emitted,committed,earliest,end}_offset``; Storm's per-topic sums
``heron_kafka_spout_topic_lag{topic="t"}`` (and ``_topic_<figure>``), the spout's own
``totalSpoutLag`` ``heron_kafka_spout_total_lag``. A query then aggregates them by label
(``max by (topic) (heron_kafka_spout_lag)``) and a new partition is a new series, not a
new metric name.

Another local user can open a loopback port too, so the endpoint answers only requests
with the user's access token as a bearer token (engine/common/security/access_token.py; what a
Prometheus scrape config's ``authorization: {credentials_file: ~/.heron/access-token}``
sends), and anything else with a 401 and no metrics. prometheus_client's own server has
no such check, hence the small server here.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client.core import CollectorRegistry, GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector

from engine.common.process.stopping import STOP_POLL_MS
from engine.common.runtime.source_lag import PREFIX as KAFKA_PREFIX
from engine.common.runtime.source_lag import parse_name
from engine.common.runtime.stats import COUNTERS
from engine.common.security.access_token import bearer, matches

log = logging.getLogger("heron.metricsmgr")

_INVALID = re.compile(r"[^a-zA-Z0-9_]")



def prometheus_name(metric: str) -> str:
    """``__emit-count`` -> ``heron_emit_count``; ``user/hits`` -> ``heron_user_hits``."""
    name = _INVALID.sub("_", metric.strip("_").replace("/", "_"))
    return f"heron_{name.lower()}"


#: a Kafka figure's gauge name after ``heron_kafka_spout_`` (and ``topic_`` or ``total_``)
KAFKA_SUFFIXES = {"lag": "lag", "emitted": "emitted_offset", "committed": "committed_offset",
                  "earliest": "earliest_offset", "end": "end_offset", "records": "records"}
LABELS = ["topology", "component", "instance", "container"]


def kafka_gauge(metric: str) -> tuple[str, str, list[str], list[str]] | None:
    """A Kafka offset figure as (gauge name, help, extra label names, their values);
    None for every other metric."""
    found = parse_name(metric) if metric.startswith(KAFKA_PREFIX) else None
    if found is None:
        return None
    suffix = KAFKA_SUFFIXES[found.figure]
    if found.topic is None:
        return (f"heron_kafka_spout_total_{suffix}", f"Kafka spout {found.figure}, summed over "
                "its partitions (Storm's kafkaOffset total)", [], [])
    if found.partition is None:
        return (f"heron_kafka_spout_topic_{suffix}", f"Kafka spout {found.figure}, summed over "
                "a topic's partitions", ["topic"], [found.topic])
    return (f"heron_kafka_spout_{suffix}", f"Kafka spout {found.figure} per partition "
            "(lag: log end offset minus the spout's position)", ["topic", "partition"],
            [found.topic, str(found.partition)])


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
        #: series added: two names of one Kafka figure (Storm's latestTimeOffset and the
        #: connector's logHeadOffset) must not make one series twice, which a scrape refuses
        seen: set[tuple[str, ...]] = set()
        for component, instance, values in self._snapshot():
            for metric, raw in values.items():
                value = numeric(raw)
                if value is None:
                    continue
                labels = [self.topology, component, instance, self.container]
                kafka = kafka_gauge(metric)
                if kafka is not None:
                    name, text, extra, extra_values = kafka
                    labels += extra_values
                else:
                    name, extra = prometheus_name(metric), []
                    kind = ('counter (per process lifetime)' if metric in COUNTERS
                            else 'value')
                    text = f"Heron metric {metric}: {kind}"
                if (name, *labels) in seen:
                    continue
                seen.add((name, *labels))
                family = families.get(name)
                if family is None:
                    family = families[name] = GaugeMetricFamily(name, text, labels=LABELS + extra)
                family.add_metric(labels, value)
        return list(families.values())


class _Handler(BaseHTTPRequestHandler):
    """GET (or HEAD) of any path: the metrics with the token, else 401."""

    server: _Server
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self._answer(body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        endpoint = self.server.endpoint
        token = endpoint.token
        if token is None or not matches(token, bearer(self.headers.get("Authorization"))):
            endpoint.refused += 1
            if endpoint.refused == 1 or endpoint.refused % 100 == 0:
                log.warning("Prometheus endpoint refused a request without a valid access "
                            "token from %s (%d refused so far)", self.client_address[0],
                            endpoint.refused)
            self._send(401, b"missing or wrong access token (Authorization: Bearer TOKEN, "
                            b"TOKEN in HOME/access-token)\n", "text/plain; charset=utf-8",
                       body, {"WWW-Authenticate": 'Bearer realm="heron"'})
            return
        try:
            payload = generate_latest(endpoint.registry)
        except Exception as exc:  # a collector failing is the scrape's 500, not a crash
            log.warning("Prometheus scrape failed: %s", exc)
            self._send(500, b"collecting metrics failed\n", "text/plain; charset=utf-8", body)
            return
        self._send(200, payload, CONTENT_TYPE_LATEST, body)

    def _send(self, status: int, payload: bytes, content_type: str, body: bool,
              extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", "no-store")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if body:
            self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # no access log: nothing of a request (its headers) reaches the logs


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    endpoint: PrometheusEndpoint


class PrometheusEndpoint:
    """A loopback HTTP server exposing one Metrics Manager's metrics to requests that
    carry ``token`` (None: the token could not be read, and every request is refused)."""

    def __init__(self, collector: LatestMetricsCollector, token: str | None,
                 host: str = "127.0.0.1") -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(collector)
        self.token = token
        #: requests answered 401 since start
        self.refused = 0
        self._server = _Server((host, 0), _Handler)
        self._server.endpoint = self
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": STOP_POLL_MS / 1000},
                                        name="prometheus-endpoint", daemon=True)
        self._thread.start()
        self.port: int = self._server.server_port
        self.url = f"http://{host}:{self.port}/metrics"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(2)
