"""Latest metrics per publisher, forwarded to the Topology Master every interval and
served in Prometheus text format on the manager's own port.

It also forwards its executor's view of the container's processes: the restart status
files the executor's supervisor writes (``<working dir>/restarts/<process>.json``)
become ``__process-crash-looping``, ``__process-last-error`` and ``__process-restarts``
of that process, so a process that keeps exiting before it can publish anything (or
between its publishes) is still shown as crash-looping."""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import zmq

from engine.common.launch import LaunchSpec, metrics_socket_name, metricsmgr_id, peer_identity
from engine.common.network import (
    MalformedMessage,
    bind_router,
    connect_dealer,
    decode,
    encode,
    ipc_endpoint,
)
from engine.common.process.progress import mark_progress
from engine.common.process.restart_policy import (
    PROCESS_CRASH_LOOPING_METRIC,
    PROCESS_LAST_ERROR_METRIC,
)
from engine.common.process.stopping import STOP_POLL_MS
from engine.common.security.access_token import (
    AccessTokenError,
    home_of_working_dir,
    load_or_create,
)
from engine.common.security.guard import SocketSecurity
from engine.messages import common_pb2, metrics_pb2, tmanager_pb2
from engine.metricsmgr.prometheus import LatestMetricsCollector, PrometheusEndpoint
from engine.spi.statemgr import StateManager

log = logging.getLogger("heron.metricsmgr")

FORWARD_SECS = 1.0
#: what an instance publishes as 1 once it will emit nothing more (engine.instance.loop)
DONE_METRIC = "__done"
#: process names (engine.common.launch): instances and Stream Managers
_INSTANCE_ID = re.compile(r"^container_\d+_(?P<component>.+)_\d+$")
_STMGR_ID = re.compile(r"^stmgr-\d+$")


def component_of(sender: bytes) -> str:
    """The component of a publisher that never registered with this manager: one that
    registered with the process this one replaced (a restarted Metrics Manager). Process
    names say it: ``container_<c>_<component>_<task>``, ``stmgr-<c>``."""
    name = sender.decode(errors="replace")
    match = _INSTANCE_ID.match(name)
    if match:
        return match.group("component")
    if _STMGR_ID.match(name):
        return "__stmgr__"
    return "?"


def restart_statuses(directory: Path, container: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """(process name, status) of the container's processes that have restart status
    files (engine.common.process.supervisor); unreadable files are skipped."""
    try:
        paths = sorted(directory.glob("*.json"))
    except OSError:
        return
    prefixes = (f"container_{container}_", f"stmgr-{container}")
    for path in paths:
        name = path.stem
        if not (name.startswith(prefixes) or (container == 0 and name == "heron-tmanager")):
            continue
        try:
            yield name, json.loads(path.read_text())
        except (OSError, ValueError):
            continue


def endpoint_token(working_dir: str | Path) -> str | None:
    """The access token the Prometheus endpoint asks for: the one of the user's Heron
    home, found as the CLI finds it (``home_of_working_dir``). A token file that cannot
    be used is logged in one line and the endpoint refuses everyone (None) rather than
    serve without it or stop the topology."""
    try:
        return load_or_create(home_of_working_dir(working_dir))
    except AccessTokenError as exc:
        log.error("the Prometheus endpoint refuses every request: %s", exc)
        return None


class MetricsManager:
    def __init__(self, spec: LaunchSpec, container: int, state: StateManager) -> None:
        self.spec = spec
        self.container = container
        self.id = metricsmgr_id(container)
        self.state = state
        self.ctx = zmq.Context()
        #: the Metrics Manager only connects out over TCP (to the Topology Master)
        self.security = SocketSecurity.for_launch(spec)
        self.sock, self.endpoint = bind_router(
            self.ctx, ipc_endpoint(spec.topology_id, metrics_socket_name(container)),
            mandatory=False)
        self.publishers: dict[bytes, Any] = {}
        self.latest: dict[bytes, dict[str, str]] = {}
        #: when each publisher last published (unix s): the timestamp its forwarded values
        #: carry, so a dead publisher's frozen figures read as old, not as now
        self.published_at: dict[bytes, int] = {}
        self.exceptions: dict[bytes, list[Any]] = {}
        #: a task reported __done since the last forward: forward now, not at the interval
        self._task_finished = False
        self.tm: zmq.Socket | None = None
        self.tm_endpoint: str | None = None
        self.prometheus = PrometheusEndpoint(LatestMetricsCollector(
            spec.topology_name, container, self._snapshot), endpoint_token(spec.working_dir))
        self.url_file = self._publish_url()
        log.info("Prometheus metrics at %s", self.prometheus.url)

    def _publish_url(self) -> Path:
        """Where people and tools find the endpoint: a file beside the logs."""
        directory = Path(self.spec.working_dir) / "metrics"
        directory.mkdir(parents=True, exist_ok=True)
        target = directory / f"{self.id}.url"
        tmp = directory / f".{self.id}.url.{os.getpid()}"
        tmp.write_text(self.prometheus.url + "\n")
        os.replace(tmp, target)
        return target

    def _snapshot(self) -> Iterator[tuple[str, str, dict[str, str]]]:
        """(component, instance, metrics) of every publisher, and this manager's own."""
        for sender, values in list(self.latest.items()):
            publisher = self.publishers.get(sender)
            component = publisher.component_name if publisher is not None else component_of(sender)
            yield component, sender.decode(errors="replace"), dict(values)

    def serve(self, running: Callable[[], bool]) -> None:
        next_forward = time.monotonic() + FORWARD_SECS
        while running():
            if self.sock.poll(STOP_POLL_MS):
                self._drain()
            now = time.monotonic()
            if now >= next_forward or self._task_finished:
                # a task that finished is forwarded at once: a finite run (heron run,
                # the conformance engines) ends when the Topology Master has seen every
                # task's __done, and would otherwise wait up to a whole interval for it
                next_forward = now + FORWARD_SECS
                self._task_finished = False
                self._forward()

    def _drain(self) -> None:
        while True:
            try:
                frames = self.sock.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            if len(frames) != 3:
                log.warning("dropped a message of %d frames", len(frames))
                continue
            sender = frames[0]
            try:
                message = decode(frames[1:])
            except MalformedMessage as exc:
                log.warning("dropped a malformed message from %r: %s", sender[:80], exc)
                continue
            if isinstance(message, metrics_pb2.MetricPublisherRegisterRequest):
                self.publishers[sender] = message.publisher
                response = metrics_pb2.MetricPublisherRegisterResponse()
                response.status.status = common_pb2.OK
                try:
                    self.sock.send_multipart([sender, *encode(response)], zmq.NOBLOCK)
                except zmq.ZMQError:
                    pass
            elif isinstance(message, metrics_pb2.MetricPublisherPublishMessage):
                values = self.latest.setdefault(sender, {})
                self.published_at[sender] = int(time.time())
                was_done = values.get(DONE_METRIC) == "1"
                for datum in message.metrics:
                    values[datum.name] = datum.value
                if not was_done and values.get(DONE_METRIC) == "1":
                    self._task_finished = True
                if message.exceptions:
                    self.exceptions[sender] = list(message.exceptions)
            else:
                log.warning("ignored %s from %r", message.DESCRIPTOR.name, sender[:80])

    def _connect_tm(self) -> bool:
        try:
            location = self.state.get("tmanagers", self.spec.topology_name)
        except Exception as exc:
            log.warning("cannot read the topology master location: %s", exc)
            return False
        if location is None or location.topology_id != self.spec.topology_id:
            return False
        if location.server_endpoint != self.tm_endpoint:
            if self.tm is not None:
                self.tm.close(linger=0)
            self.tm = connect_dealer(self.ctx, location.server_endpoint,
                                     peer_identity(self.id, self.spec.incarnation), sndhwm=10,
                                     security=self.security)
            self.tm_endpoint = location.server_endpoint
        return True

    def _forward(self) -> None:
        if not self.latest or not self._connect_tm():
            return
        message = tmanager_pb2.PublishMetrics()
        now = int(time.time())
        message.metrics.add(component_name="__metricsmgr__", instance_id=self.id,
                            name="__prometheus-port", value=str(self.prometheus.port),
                            timestamp=now)
        # requests its endpoint refused for want of the access token (docs/security.md)
        message.metrics.add(component_name="__metricsmgr__", instance_id=self.id,
                            name="__prometheus-refused", value=str(self.prometheus.refused),
                            timestamp=now)
        for sender, values in self.latest.items():
            publisher = self.publishers.get(sender)
            component = publisher.component_name if publisher is not None else component_of(sender)
            instance = sender.decode(errors="replace")
            published = self.published_at.get(sender, now)
            for name, value in values.items():
                message.metrics.add(component_name=component, instance_id=instance, name=name,
                                    value=value, timestamp=published)
            for exc in self.exceptions.get(sender, ()):
                message.exceptions.add(component_name=component, instance_id=instance,
                                       hostname="127.0.0.1", stacktrace=exc.stacktrace,
                                       count=exc.count, lasttime=str(now))
        for name, status in restart_statuses(self.spec.restarts_dir, self.container):
            component = ("__tmanager__" if name == "heron-tmanager"
                         else component_of(name.encode()))
            process_metrics: tuple[tuple[str, int | str], ...] = (
                (PROCESS_CRASH_LOOPING_METRIC, int(bool(status.get("crash_looping")))),
                (PROCESS_LAST_ERROR_METRIC, status.get("last_error") or ""),
                ("__process-restarts", int(status.get("attempts") or 0)))
            for metric, figure in process_metrics:
                message.metrics.add(component_name=component, instance_id=name, name=metric,
                                    value=str(figure), timestamp=now)
        assert self.tm is not None  # _connect_tm() said it is connected
        try:
            self.tm.send_multipart(encode(message), zmq.NOBLOCK)
        except zmq.Again:
            return
        mark_progress()  # it forwards: a later death of this process is not a crash loop

    def close(self) -> None:
        self.prometheus.close()
        try:
            self.url_file.unlink()
        except OSError:
            pass
        self.sock.close(linger=0)
        if self.tm is not None:
            self.tm.close(linger=200)
        self.ctx.term()
