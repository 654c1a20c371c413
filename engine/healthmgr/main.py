"""``python -m engine.healthmgr --launch PATH``: a topology's Health Manager process.

Container 0's executor runs it beside the Topology Master when the topology config has
``heron.topology.healthmgr.mode: cluster``, supervised like every other process. Every
``POLL_SECS`` it asks the Topology Master for the latest metrics (the Topology Master
keeps no history, so the polls are kept in a :class:`SnapshotHistory` one window long),
builds the :class:`TopologyView` from the state manager (the stored topology, with its
run-time toggles, the packing plan and the physical plan), and runs
:meth:`HealthLoop.tick`. Actions go through :class:`SchedulerActuator` (the ``heron
update`` / ``heron restart`` requests). The loop state and every record are stored in
``healthmgr/<name>`` (engine/healthmgr/store.py), so a restarted Health Manager keeps
the wait after its last action, and ``heron health`` and the tracker show the records.

Exit codes: 0 when stopped (SIGTERM/SIGINT), 1 when the launch file or the state manager
cannot be read, :data:`CONFIG_ERROR` when the Health Manager configuration is invalid
(one log line names the key; the executor's supervisor restarts it with backoff and
reports it crash-looping, which ``heron list`` shows).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from engine.common.launch import LaunchSpec
from engine.common.process.progress import mark_progress
from engine.common.security.guard import SocketSecurity
from engine.common.startup import launch_parser, run_with_state, start
from engine.healthmgr.errors import HealthConfigError
from engine.healthmgr.loop import HealthLoop
from engine.healthmgr.policies.config import HealthConfig, parse_health_config
from engine.healthmgr.records import HealthEvent
from engine.healthmgr.scheduler_actuator import SchedulerActuator
from engine.healthmgr.source import SnapshotHistory
from engine.healthmgr.store import HealthStore
from engine.healthmgr.view import build_view, topology_config
from engine.tmanager.client import TManagerClient, TManagerUnavailable

log = logging.getLogger("heron.healthmgr")

#: how often the Topology Master's metrics are polled (its Stream Managers and instances
#: publish once a second)
POLL_SECS = 1.0
#: how long the Topology Master gets to answer a metrics request
METRICS_TIMEOUT_SECS = 5.0
#: how long to wait for the stored topology at start
TOPOLOGY_WAIT_SECS = 60.0
CONFIG_ERROR = 2


def main(argv: list[str] | None = None) -> int:
    started = start(launch_parser("python -m engine.healthmgr",
                                  "Run a topology's Health Manager."), argv, tuple_path=False)
    return run_with_state(started.args.launch, log,
                          lambda spec, state: run(spec, state, started.stopping))


def _wait_for(read: Callable[[], Any], stop: threading.Event, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while not stop.is_set():
        value = read()
        if value is not None or time.monotonic() > deadline:
            return value
        stop.wait(0.5)
    return None


def history_secs(config: HealthConfig) -> float:
    """How long polls are kept: the longest window plus two intervals of slack."""
    longest = max((max(p.durations.values(), default=0.0) + 2 * p.interval_secs
                   for p in config.policies), default=60.0)
    return max(longest, 10.0)


def run(spec: LaunchSpec, state: Any, stop: threading.Event,
        clock: Callable[[], float] = time.time) -> int:
    name = spec.topology_name
    topology = _wait_for(lambda: state.get("topologies", name), stop, TOPOLOGY_WAIT_SECS)
    if topology is None:
        if stop.is_set():
            return 0
        log.error("topology %r is not in the state manager (%s)", name, spec.state.describe())
        return 1
    try:
        config = parse_health_config(topology_config(topology))
    except HealthConfigError as exc:
        log.error("the Health Manager of %r cannot start: invalid setting %s", name, exc)
        return CONFIG_ERROR
    if not config.enabled:
        log.info("heron.topology.healthmgr.mode is not cluster: nothing to do")
        stop.wait()
        return 0
    security = SocketSecurity.for_launch(spec)
    store = HealthStore(state, name, spec.topology_id)
    previous = store.loop_state()
    history = SnapshotHistory(history_secs(config))
    loop = HealthLoop(config, history, SchedulerActuator(state, name, security), clock,
                      previous, on_state=lambda s: store.save(s))
    log.info("Health Manager of %s (%s): policies %s%s", name, spec.topology_id,
             ", ".join(f"{p.id} ({'activated' if p.activated else 'deactivated'}, every "
                       f"{p.interval_secs:g}s, wait {p.wait_secs:g}s)" for p in config.policies),
             f"; resuming after its last action at {previous.last_action_time:.3f}"
             if previous is not None and previous.last_action_time is not None else "")
    poller = MetricsPoller(state, name, security)
    while not stop.wait(POLL_SECS):
        if poller.poll_into(history, clock):
            mark_progress()  # it watches the topology: a later death is not a crash loop
        view = _view(state, name)
        if view is None:
            continue
        events = loop.tick(view)
        for event in events:
            _log_event(event)
        if events:
            try:
                store.save(loop.state, events)
            except Exception as exc:  # a state-store hiccup must not stop the loop
                log.warning("cannot store the health records: %s", exc)
    log.info("stopped")
    return 0


class MetricsPoller:
    """Latest metrics from the Topology Master, wherever it is now."""

    def __init__(self, state: Any, name: str, security: Any) -> None:
        self.state = state
        self.name = name
        self.security = security
        self._warned = ""

    def poll_into(self, history: SnapshotHistory, clock: Callable[[], float]) -> bool:
        try:
            location = self.state.get("tmanagers", self.name)
            if location is None or not location.controller_endpoint:
                raise TManagerUnavailable("the Topology Master has not published its location")
            snapshot = TManagerClient(self.name, location.controller_endpoint,
                                      METRICS_TIMEOUT_SECS, security=self.security).metrics()
        except Exception as exc:
            if str(exc) != self._warned:
                log.warning("no metrics this time: %s", exc)
                self._warned = str(exc)
            return False
        self._warned = ""
        history.record(max(clock(), history.last_time or 0.0), snapshot.values,
                       snapshot.components)
        return True


def _view(state: Any, name: str) -> Any:
    try:
        topology = state.get("topologies", name)
        packing = state.get("packingplans", name)
        pplan = state.get("pplans", name)
        checkpoints = state.get("statefulcheckpoints", name)
    except Exception as exc:
        log.warning("cannot read the topology's plans: %s", exc)
        return None
    if topology is None or packing is None or pplan is None:
        return None
    return build_view(topology, packing, pplan, checkpoints)


def _log_event(event: HealthEvent) -> None:
    record = event.to_json()
    kind = record["type"]
    what = record.get("kind") or record.get("message", "")
    level = logging.WARNING if record.get("status") == "failed" else logging.INFO
    log.log(level, "%s %s %s %s", kind, what, record.get("component", ""),
            {k: v for k, v in record.items()
             if k in ("current", "target", "container", "status", "note", "instances")
             and v not in (None, "", [])})
