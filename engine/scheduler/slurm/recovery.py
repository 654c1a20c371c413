"""How long a lost container took to come back, measured from when it failed.

Slurm notices a dead node only after it misses its pings (seconds), and a job's end only
at the next poll; timing a recovery from that notice hides the seconds the topology was
already without the container. The failure is the container's last sign of life: the
Topology Master stamps every figure with when its process published it
(engine/tmanager/staleness.py), and each container's Metrics Manager forwards its
figures every second, so ``metricsmgr-N``'s report age says when container N was last
alive; container 0 runs the Topology Master itself, alive while it answers. The
scheduler's monitor asks on each poll (:class:`LastSeen`) and keeps the newest time per
container, so that time survives the container (and, for container 0, the Topology
Master) it describes.

A recovery ends when the replacement is counted again: its processes report after its
job started running (not merely when Slurm says the job runs).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from engine.common.launch import metricsmgr_id
from engine.common.security.guard import SocketSecurity
from engine.spi.statemgr import StateManager
from engine.tmanager.client import TManagerClient, TManagerUnavailable
from engine.tmanager.staleness import report_age

log = logging.getLogger("heron.scheduler.slurm")

#: the events (``SchedulerEvent.what``) that start a recovery
LOST = ("node lost", "ended")
#: how long the monitor waits for the Topology Master on each poll
ASK_TIMEOUT_SECS = 1.0
#: the Metrics Managers' figures: one per container, forwarded every second
METRICSMGR_COMPONENT = "__metricsmgr__"


class MetricsAnswer(Protocol):
    time: float
    values: dict[str, dict[str, str]]


class Event(Protocol):
    """What recovery reads of a scheduler's event (engine.scheduler.slurm.scheduler's
    ``SchedulerEvent``, which imports this module)."""

    @property
    def time(self) -> float: ...
    @property
    def container(self) -> int: ...
    @property
    def what(self) -> str: ...
    @property
    def detail(self) -> str: ...
    @property
    def extra(self) -> Mapping[str, Any]: ...


class LastSeen:
    """Each container's newest sign of life (unix time), from the Topology Master.

    ``ask`` returns the Topology Master's metrics (a MetricsSnapshot) or raises
    TManagerUnavailable; ``containers`` lists the containers to watch."""

    def __init__(self, ask: Callable[[], MetricsAnswer]) -> None:
        self.ask = ask
        self.seen: dict[int, float] = {}

    def poll(self, containers: Iterable[int]) -> None:
        """Ask once; a Topology Master that does not answer leaves what is known."""
        try:
            answer = self.ask()
        except TManagerUnavailable as exc:
            log.debug("last seen: %s", exc)
            return
        self.note(0, answer.time)  # the Topology Master answered: container 0 is alive
        for container in containers:
            age = report_age(answer.values.get(metricsmgr_id(container), {}))
            if age is not None:
                self.note(container, answer.time - age)

    def note(self, container: int, when: float) -> None:
        if when > self.seen.get(container, 0.0):
            self.seen[container] = when

    def last(self, container: int) -> float | None:
        return self.seen.get(container)


def ask_topology_master(state: StateManager | None, name: str,
                        security: Callable[[], SocketSecurity],
                        timeout: float = ASK_TIMEOUT_SECS) -> Callable[[], MetricsAnswer]:
    """The Metrics Managers' figures from the topology's Topology Master, wherever its
    location (``tmanagers/NAME``) says it runs now; TManagerUnavailable for anything in
    the way (no location yet, a state manager that does not answer, no keys)."""
    keys: list[SocketSecurity] = []

    def ask() -> MetricsAnswer:
        try:
            location = state.get("tmanagers", name) if state is not None else None
            if not keys:
                keys.append(security())
        except Exception as exc:  # a state manager hiccup, keys not readable: not now
            raise TManagerUnavailable(f"cannot reach the Topology Master of {name!r}: "
                                      f"{exc}") from None
        if location is None or not location.controller_endpoint:
            raise TManagerUnavailable(f"no Topology Master location for {name!r} yet")
        client = TManagerClient(name, location.controller_endpoint, timeout, security=keys[0])
        return client.metrics(component=METRICSMGR_COMPONENT)
    return ask


def recovery_times(events: Iterable[Event]) -> list[dict[str, Any]]:
    """For each replacement, from the scheduler's events in order: how long from the
    failure (``failed_at`` of the loss event, else its notice) to the replacement counted
    again (a ``rejoined`` event), and when it was noticed and running on the way."""
    out = []
    pending: dict[int, tuple[Event, float | None]] = {}
    for event in events:
        if event.what in LOST:
            pending.setdefault(event.container, (event, None))
        elif event.what == "running" and event.container in pending:
            lost, _ = pending[event.container]
            pending[event.container] = (lost, event.time)
        elif event.what == "rejoined" and event.container in pending:
            lost, running = pending.pop(event.container)
            out.append(_recovery(lost, running, float(event.extra.get("reported_at",
                                                                      event.time))))
    return out


def _recovery(lost: Event, running: float | None, rejoined: float) -> dict[str, Any]:
    failed_at = _failed_at(lost.extra)
    began = failed_at if failed_at is not None else lost.time
    return {"container": lost.container, "cause": lost.detail,
            "seconds": round(rejoined - began, 2),
            "measured_from": "last report" if failed_at is not None else "detection",
            "detected_after": round(lost.time - began, 2),
            "running_after": round(running - began, 2) if running is not None else None}


def _failed_at(extra: Mapping[str, Any]) -> float | None:
    value = extra.get("failed_at")
    return float(value) if isinstance(value, (int, float)) else None
