"""Heron's local scheduler: one executor process per container on this machine.

Usable in two ways, as Heron's schedulers are:

* as a library, in the CLI process (``heron run``): ``LocalScheduler(spec).launch()``,
  poll, then ``kill()``;
* as a service (``python -m engine.scheduler``, see engine.scheduler.service), detached
  from the CLI that submitted the topology, answering kill and restart requests.

Executors are started and restarted by a :class:`~engine.common.process.Supervisor` under the
launch spec's restart policy (forever, with backoff while they make no progress);
because they call ``die_with_parent()``, a scheduler that
dies (even by SIGKILL) takes its executors, and through them every process of the
topology, with it.
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Callable, Mapping
from typing import Any

from engine.common.launch import LaunchSpec, executor_name
from engine.common.network.endpoints import ipc_dir
from engine.common.process import Supervisor, SupervisorEvent
from engine.common.security.private import UnsafePathError, private_dir
from engine.executor.commands import executor_process
from engine.executor.packing_wait import PACKING_PLAN_WAIT_SECS, wait_for_packing_plan
from engine.packing import PackingPlan
from engine.spi import KillOnce, ServiceScheduler
from engine.spi.statemgr import StateManager

log = logging.getLogger("heron.scheduler")

#: how long an executor gets to stop its container before it is SIGKILLed (the executor
#: itself gives its processes 5 s)
EXECUTOR_STOP_GRACE_SECS = 10.0


class LocalScheduler(KillOnce, ServiceScheduler):
    """Start, restart and kill the executors of one topology.

    ``state`` is an open state manager (the scheduler opens ``spec.state`` itself and
    closes it on ``kill``/``close`` when none is given); ``packing`` skips reading
    ``packingplans/<name>``; ``modules`` overrides the executor module (tests).
    """

    def __init__(self, spec: LaunchSpec, *, state: StateManager | None = None,
                 packing: PackingPlan | None = None,
                 on_event: Callable[[SupervisorEvent], None] | None = None,
                 grace: float = EXECUTOR_STOP_GRACE_SECS,
                 packing_wait: float = PACKING_PLAN_WAIT_SECS,
                 modules: Mapping[str, str] | None = None) -> None:
        self.spec = spec
        self._state = state
        self._owns_state = state is None
        self.packing = packing
        self.grace = grace
        self.packing_wait = packing_wait
        self._on_event = on_event
        self._modules = modules
        self._supervisor: Supervisor | None = None
        self._killed = False
        self._lock = threading.Lock()
        self._kill_log = log

    # -- state ---------------------------------------------------------------------------
    @property
    def state(self) -> StateManager:
        if self._state is None:
            self._state = self.spec.state.open()
        return self._state

    @property
    def containers(self) -> list[int]:
        """Container indexes, 0 (the Topology Master) to the packing plan's largest id."""
        if self.packing is None:
            return []
        return list(range(0, max((c.id for c in self.packing.containers), default=0) + 1))

    def crash_looping(self) -> dict[str, str]:
        """Executors that keep exiting with no progress, with the reason of their last exit."""
        return self._supervisor.crash_looping() if self._supervisor else {}

    def executor_pids(self) -> dict[str, int]:
        """Live executors by process name (``executor-N``)."""
        return self._supervisor.pids() if self._supervisor else {}

    # -- engine.spi.Scheduler -------------------------------------------------------------
    def launch(self) -> list[int]:
        """Start one executor per container; returns the container indexes."""
        with self._lock:
            if self._supervisor is not None:
                raise RuntimeError(f"{self.spec.topology_name} is already launched")
            if self.packing is None:
                self.packing = wait_for_packing_plan(self.state, self.spec.topology_name,
                                                     timeout=self.packing_wait,
                                                     where=self.spec.state.describe())
            # owner-only directories, and the runtime root (ipc sockets) checked before any
            # process starts: another user's or a writable one is refused (UnsafePathError)
            private_dir(self.spec.log_dir)
            private_dir(self.spec.pid_dir)
            ipc_dir(self.spec.topology_id)
            specs = [executor_process(self.spec, c, modules=self._modules)
                     for c in self.containers]
            self._supervisor = Supervisor(specs, self.spec.restart_policy,
                                          on_event=self._on_event, pid_dir=self.spec.pid_dir,
                                          name="scheduler", status_dir=self.spec.restarts_dir)
            workers = len(specs) - 1  # container 0 is the Topology Master's
            log.info("launching %s (%s): %d container%s + Topology Master",
                     self.spec.topology_name, self.spec.topology_id, workers,
                     "" if workers == 1 else "s")
            self._supervisor.start()
            return self.containers

    def restart(self, container: int = -1) -> None:
        """Restart the executor of ``container`` (-1: every container)."""
        supervisor = self._require_launched()
        if container == -1:
            targets = self.containers
        elif container in self.containers:
            targets = [container]
        else:
            raise ValueError(f"no container {container} in {self.spec.topology_name}; "
                             f"containers are 0..{self.containers[-1]} (-1 for all)")
        for c in targets:
            log.info("restarting container %d", c)
            supervisor.restart(executor_name(c), grace=self.grace)

    def update(self, proposed: PackingPlan) -> tuple[list[int], list[int]]:
        """Move to a new packing plan (``heron update``): start executors for containers
        it adds, stop those of containers it drops; the executors of the others follow
        the stored plan themselves. Returns (added, removed) container indexes."""
        supervisor = self._require_launched()
        with self._lock:
            before = set(self.containers)
            self.packing = proposed
            after = set(self.containers)
        added = sorted(after - before)
        removed = sorted(before - after, reverse=True)
        for c in removed:
            log.info("update: stopping container %d", c)
            supervisor.remove(executor_name(c), grace=self.grace)
        for c in added:
            log.info("update: starting container %d", c)
            supervisor.add(executor_process(self.spec, c, modules=self._modules))
        return added, removed

    def stop(self) -> None:
        """Stop every executor (containers 1..N first, the Topology Master last); the
        stored state is left alone. Idempotent."""
        if self._supervisor is None:
            return
        first = [executor_name(c) for c in self.containers if c != 0]
        self._supervisor.stop(self.grace, stages=[first, [executor_name(0)]])

    # kill(): KillOnce's (stop, clean the state, then _after_kill), as every scheduler
    def _after_kill(self) -> None:
        """The topology's ipc directory goes, and the state manager if this opened it."""
        try:
            _remove_ipc_dir(self.spec.topology_id)
        finally:
            self.close()

    def status(self) -> dict[str, Any]:
        """Each container's executor (pid when alive) and what is crash-looping."""
        pids = self.executor_pids()
        return {"scheduler": "local", "topology": self.spec.topology_name,
                "containers": [{"container": c, "pid": pids.get(executor_name(c))}
                               for c in self.containers],
                "crash_looping": self.crash_looping()}

    def close(self) -> None:
        """Release the state manager if this scheduler opened it."""
        if self._owns_state and self._state is not None:
            self._state.close()
            self._state = None

    def _require_launched(self) -> Supervisor:
        if self._supervisor is None:
            raise RuntimeError(f"{self.spec.topology_name} is not launched")
        return self._supervisor


def _remove_ipc_dir(topology_id: str) -> None:
    try:
        directory = ipc_dir(topology_id)
    except UnsafePathError:
        return  # a runtime root we refused to use holds nothing of ours to remove
    shutil.rmtree(directory, ignore_errors=True)
