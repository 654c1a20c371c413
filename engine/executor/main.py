"""``python -m engine.executor --launch PATH --container N``: run one container.

The executor dies with its parent (the scheduler), reads the launch file and the packing
plan, starts its container's processes under the launch spec's restart policy, and on
SIGTERM/SIGINT stops them in Heron's order (instances, stream manager, metrics manager,
Topology Master) and exits 0. A process that keeps exiting is restarted forever, with
backoff while it makes no progress; one that is crash-looping is reported in its status
file (``<working dir>/restarts/<process>.json``), which the container's Metrics Manager
turns into metrics. It also
watches the packing plan: after ``heron update`` it stops and starts instances to match
and restarts its stream manager.

On a cluster (a launch spec whose scheduler is not ``local``) it also runs the
container's shell (engine/shell), which serves the container's log files to ``heron
logs`` and the tracker; its endpoint is handed to the Topology Master or Stream Manager,
which publish it.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import zmq

from engine.common.launch import (
    LaunchSpec,
    executor_name,
    local_socket_name,
    metrics_socket_name,
    stmgr_id,
)
from engine.common.network.endpoints import ipc_path
from engine.common.plan.topology_config import (
    HEALTHMGR_MODE,
    HealthModeError,
    healthmgr_mode_on,
    topology_config,
)
from engine.common.process import Supervisor
from engine.common.process.progress import mark_progress
from engine.common.security.guard import ConnectionGuard
from engine.common.startup import launch_parser, run_with_state, start
from engine.executor.commands import HEALTHMGR, container_processes, stop_stages
from engine.executor.packing_wait import PackingPlanMissing, wait_for_packing_plan
from engine.packing import PackingPlan
from engine.shell.server import ContainerShell

log = logging.getLogger("heron.executor")

#: how long the container's processes get to stop before SIGKILL
STOP_GRACE_SECS = 5.0
#: how often the packing plan is checked for a change
PLAN_POLL_SECS = 1.0


def main(argv: list[str] | None = None) -> int:
    def on_signal(args: argparse.Namespace, signum: int) -> None:
        log.info("received %s; stopping container %d", signal.Signals(signum).name, args.container)

    started = start(launch_parser("python -m engine.executor", "Run one container of a topology.",
                                  container="container index (0 = TM)"),
                    argv, on_signal=on_signal)
    args = started.args
    return run_with_state(args.launch, log,
                          lambda spec, state: _run(spec, args.container, state, started.stopping))


def _run(spec: LaunchSpec, container: int, state: object, stop: threading.Event) -> int:
    try:
        packing = wait_for_packing_plan(state, spec.topology_name, where=spec.state.describe(),
                                        cancel=stop, container=container)
    except PackingPlanMissing as exc:
        log.error("%s", exc)
        return 1
    if stop.is_set():
        return 0
    with container_shell(spec, container) as shell_endpoint:
        try:
            processes = container_processes(spec, container, packing,
                                            shell_endpoint=shell_endpoint,
                                            healthmgr=container == 0
                                            and wants_healthmgr(state, spec.topology_name))
        except ValueError as exc:
            log.error("%s", exc)
            return 1
        return _supervise(spec, container, state, stop, packing, processes, shell_endpoint)


def wants_healthmgr(state: Any, name: str) -> bool:
    """Whether the stored topology config asks for a Health Manager
    (``heron.topology.healthmgr.mode: cluster``). An invalid mode starts it too: it
    exits naming the key, which its supervision reports, rather than being skipped
    without a word."""
    topology = state.get("topologies", name)
    if topology is None:
        return False
    try:
        return healthmgr_mode_on(topology_config(topology))
    except HealthModeError as exc:
        log.error("%s: %s; starting the Health Manager to report it", HEALTHMGR_MODE, exc)
        return True


@contextlib.contextmanager
def container_shell(spec: LaunchSpec, container: int) -> Iterator[str]:
    """The container's shell while the container runs, yielding its endpoint; nothing
    (an empty endpoint) for a local topology, whose logs are on the submitting machine."""
    if spec.scheduler == "local":
        yield ""
        return
    ctx = zmq.Context()
    guard = ConnectionGuard.for_launch(ctx, spec, process=f"shell-{container}")
    try:
        shell = ContainerShell.for_launch(spec, container, ctx, guard)
        try:
            yield shell.endpoint
        finally:
            shell.stop()
    finally:
        guard.stop()
        ctx.term()


def _supervise(spec: LaunchSpec, container: int, state: object, stop: threading.Event,
               packing: PackingPlan, processes: list[Any], shell_endpoint: str) -> int:
    supervisor = Supervisor(processes, spec.restart_policy, pid_dir=spec.pid_dir,
                            name=executor_name(container), status_dir=spec.restarts_dir)
    log.info("container %d of %s (%s): starting %s", container, spec.topology_name,
             spec.topology_id, ", ".join(p.name for p in processes))
    supervisor.start()
    mark_progress()  # its container runs: a later exit of this executor restarts at once
    watcher = PackingPlanWatcher(state, spec.topology_name, packing)
    code = 0
    while not stop.wait(0.2):
        if spec.superseded_marker.exists():
            log.warning("container %d was started again elsewhere (its Stream Manager was "
                        "refused as superseded); stopping this copy for good", container)
            break
        changed = watcher.poll()
        if changed is not None:
            packing = changed
            apply_packing_plan(supervisor, spec, container, packing, shell_endpoint)
    supervisor.stop(STOP_GRACE_SECS, stop_stages(container, packing))
    if spec.scheduler != "local":  # the local scheduler removes the whole directory
        remove_container_sockets(spec.topology_id, container)
    log.info("container %d stopped", container)
    return code


def remove_container_sockets(topology_id: str, container: int) -> None:
    """The container's ipc sockets, once its processes are stopped, and the topology's
    ipc directory when no other container of it on this node still uses it: on a
    cluster node nothing else removes them, and ``/tmp/heron-UID`` filled with the
    folders of topologies long gone."""
    directory = ipc_path(topology_id)
    for name in (local_socket_name(container, spout=True),
                 local_socket_name(container, spout=False), metrics_socket_name(container)):
        with contextlib.suppress(FileNotFoundError):
            (directory / name).unlink()
    with contextlib.suppress(OSError):  # not empty: another container of it runs here
        directory.rmdir()


class PackingPlanWatcher:
    """Notices a new packing plan (``heron update``), checking the store once a second,
    as Heron's executor watches its packing-plan node."""

    def __init__(self, state: Any, name: str, current: PackingPlan,
                 interval: float = PLAN_POLL_SECS) -> None:
        self.state = state
        self.name = name
        self.current = current.to_proto().SerializeToString(deterministic=True)
        self.interval = interval
        self._next = time.monotonic() + interval

    def poll(self) -> PackingPlan | None:
        """The new plan when it changed since the last call, else None."""
        now = time.monotonic()
        if now < self._next:
            return None
        self._next = now + self.interval
        try:
            message = self.state.get("packingplans", self.name)
        except Exception as exc:  # a state-store hiccup is not a plan change
            log.warning("cannot read packingplans/%s: %s", self.name, exc)
            return None
        if message is None:
            return None
        data = message.SerializeToString(deterministic=True)
        if data == self.current:
            return None
        self.current = data
        return PackingPlan.from_proto(message)


def apply_packing_plan(supervisor: Supervisor, spec: LaunchSpec, container: int,
                       packing: PackingPlan, shell_endpoint: str = "") -> None:
    """Move the container to a new packing plan: stop processes it lost or whose command
    changed, start the new ones, and restart the stream manager when its instance set
    changed (it must register again with it), as Heron's executor does; a container the
    update leaves alone is not touched. The Topology Master is never
    restarted here: it watches the plan itself."""
    try:
        wanted = {p.name: p for p in container_processes(
            spec, container, packing, shell_endpoint=shell_endpoint,
            healthmgr=HEALTHMGR in supervisor.names)}
    except ValueError:
        log.warning("container %d is not in the new packing plan %s; stopping its processes",
                    container, packing.id)
        wanted = {}
    current = {name: supervisor.spec(name) for name in supervisor.names}
    removed = [n for n, p in current.items() if wanted.get(n) != p]
    added = [p for n, p in wanted.items() if current.get(n) != p]
    log.info("new packing plan %s: stopping %s; starting %s", packing.id,
             ", ".join(removed) or "nothing", ", ".join(p.name for p in added) or "nothing")
    for name in removed:
        supervisor.remove(name, grace=STOP_GRACE_SECS)
    for process in added:
        supervisor.add(process)
    stmgr = stmgr_id(container)
    if container != 0 and stmgr in wanted and stmgr not in removed and (removed or added):
        # its instance set changed: it must register again with the new set. A container
        # the update did not touch keeps its Stream Manager (and the trees it tracks); the
        # new physical plan reaches it from the Topology Master.
        supervisor.restart(stmgr, grace=STOP_GRACE_SECS)
