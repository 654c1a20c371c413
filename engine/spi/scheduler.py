"""The scheduler interface (Heron's ``IScheduler``): what every cluster manager's plug-in
does with a topology's containers.

* ``launch()``: start every container (the plug-in was built with everything it needs:
  the launch spec and state, or the cluster's keys and the packing plan);
* ``restart(container)``: restart one container, or every one with ``-1``;
* ``update(proposed)``: move to a new packing plan (add or remove containers);
* ``kill()``: stop every container and remove what the topology left (idempotent);
* ``status()``: a JSON-able picture of the containers, for logs and ``heron list``.

:class:`ServiceScheduler` adds what the scheduler service (engine.scheduler.service)
needs from the plug-ins it hosts: ``stop`` (without removing the state), the containers
crash-looping, and ``close``. :class:`KillOnce` is the ``kill`` those plug-ins share.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from engine.spi.packing_plan import PackingPlan

if TYPE_CHECKING:  # types only: the launch spec sits above the interfaces
    from engine.common.launch import LaunchSpec


@runtime_checkable
class Scheduler(Protocol):
    def launch(self) -> object:
        """Start every container of the topology (what it returns is the plug-in's)."""

    def restart(self, container: int = -1) -> None:
        """Restart ``container`` (-1: every container)."""

    def update(self, proposed: PackingPlan) -> object:
        """Move to the proposed packing plan (what it returns is the plug-in's)."""

    def kill(self) -> None:
        """Stop every container and remove the topology's traces; idempotent."""

    def status(self) -> dict[str, Any]:
        """The containers as this scheduler sees them (JSON-able)."""


@runtime_checkable
class ServiceScheduler(Scheduler, Protocol):
    """A scheduler the scheduler service runs (``python -m engine.scheduler``)."""

    def launch(self) -> list[int]:
        """Start every container; the containers started."""

    def update(self, proposed: PackingPlan) -> tuple[list[int], list[int]]:
        """Move to the proposed packing plan; the containers (added, removed)."""

    def stop(self) -> None:
        """Stop every container; the stored state is left alone."""

    def crash_looping(self) -> dict[str, str]:
        """Containers that keep failing with no progress -> their last error."""

    def close(self) -> None:
        """Release what the scheduler holds (its monitor, its state manager)."""


class KillOnce:
    """``kill`` for schedulers that own the topology's state: stop every container, then
    remove the topology's state, then whatever else the plug-in leaves
    (:meth:`_after_kill`); once, whoever calls it first (a request, a signal)."""

    spec: LaunchSpec
    state: Any
    _lock: threading.Lock | threading.RLock  # the plug-in's own (an RLock where it re-enters)
    _killed: bool
    _kill_log: logging.Logger

    def stop(self) -> None:  # pragma: no cover - every plug-in has its own
        raise NotImplementedError

    def _after_kill(self) -> None:
        """What the plug-in removes after the state (its ipc dir, its package)."""

    def kill(self) -> None:
        with self._lock:
            if self._killed:
                return
            self._killed = True
        try:
            self.stop()
        finally:
            try:
                self.state.clean(self.spec.topology_name)
            finally:
                self._after_kill()
        self._kill_log.info("killed %s", self.spec.topology_name)
