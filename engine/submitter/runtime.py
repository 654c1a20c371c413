"""The runtime manager (Heron's ``RuntimeManagerMain``): kill, restart and update a
running topology on whichever cluster runs it, local included.

A topology whose scheduler runs as a service (local, Slurm) is reached through that
service's location in the state manager (``schedulers/<name>``); one submitted to
Kubernetes (its execution state names the cluster) through the Kubernetes scheduler in
this process. Kill first deactivates the topology through its Topology Master and lets
in-flight tuples drain. A scheduler service that does not answer a kill is stopped with
everything else from the working directory's pid files.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import psutil

from engine.common.cluster.config import ClusterConfigError, ClusterRef, load_cluster
from engine.common.launch import LaunchError, LaunchSpec
from engine.common.network import request
from engine.common.network.endpoints import ipc_dir
from engine.common.network.sockets import RequestTimeout
from engine.common.process import read_pid_file, stop_groups
from engine.common.security.guard import SocketSecurity
from engine.messages import common_pb2, scheduler_pb2, tmanager_pb2, topology_pb2
from engine.scheduler.kubernetes import KubernetesScheduler
from engine.spi.packing_plan import PackingPlan
from engine.spi.statemgr import StateManager
from engine.submitter.errors import SubmitterError, refused
from engine.submitter.update import UpdatePlan, apply_update
from engine.tmanager.drain import wait_drained
from engine.uploader import delete_package

#: how long a request to the Topology Master may take
TM_TIMEOUT_SECS = 10.0
#: how long a kill waits for the topology's processes on this machine to exit
KILL_EXIT_SECS = 15.0


class RuntimeManager:
    """Act on the running topology ``name``: ``state`` is its state manager, open;
    ``home`` holds the cluster directories (``conf/CLUSTER``); ``working_dir`` is the
    topology's on this machine; ``security`` reaches its processes; ``notify`` prints a
    warning line."""

    def __init__(self, state: StateManager, name: str, *, home: Path, working_dir: Path,
                 security: SocketSecurity | None = None,
                 notify: Callable[[str], None] = lambda _line: None) -> None:
        self.state = state
        self.name = name
        self.home = home
        self.working_dir = working_dir
        self.security = security
        self.notify = notify

    # -- which scheduler -------------------------------------------------------------------
    def kubernetes_scheduler(self) -> KubernetesScheduler | None:
        """The Kubernetes scheduler the topology was submitted with (its execution state
        names the cluster); None for any other scheduler."""
        execution = self.state.get("executionstate", self.name)
        if execution is None or not execution.cluster or execution.cluster == "local":
            return None
        try:
            config = load_cluster(self.home, ClusterRef.parse(execution.cluster).cluster)
        except ClusterConfigError:
            return None
        if config.scheduler != "kubernetes":
            return None
        return KubernetesScheduler({**config.values, "heron.topology.name": self.name})

    def scheduler_endpoint(self) -> str | None:
        """Where the topology's scheduler service listens, or None."""
        scheduler = self.state.get("schedulers", self.name)
        return scheduler.http_endpoint if scheduler is not None and scheduler.http_endpoint \
            else None

    def _require_service(self, hint: str = "") -> str:
        endpoint = self.scheduler_endpoint()
        if endpoint is None:
            raise SubmitterError(f"the scheduler of {self.name!r} is not running (no "
                                 f"schedulers/{self.name}){hint}")
        return endpoint

    # -- kill -------------------------------------------------------------------------------
    def deactivate_and_drain(self, topology: topology_pb2.Topology, wait_secs: float) -> None:
        """Deactivate through the Topology Master and wait up to ``wait_secs`` for the
        in-flight tuples; a Topology Master that does not answer is only a warning."""
        tm = self.state.get("tmanagers", self.name)
        if tm is None or not tm.controller_endpoint:
            return
        try:
            request(tm.controller_endpoint, tmanager_pb2.TopologyDeactivateRequest(
                topology_name=self.name, topology_id=tm.topology_id or topology.id),
                timeout=min(TM_TIMEOUT_SECS, max(wait_secs, 1.0)), security=self.security)
            if wait_secs > 0 and not wait_drained(tm.controller_endpoint, wait_secs,
                                                  security=self.security):
                self.notify(f"{self.name!r} was still moving tuples after {wait_secs:g}s; "
                            "stopping it anyway")
        except RequestTimeout:
            self.notify(f"the Topology Master of {self.name!r} did not answer; killing without "
                        f"draining")

    def kill(self, topology: topology_pb2.Topology, timeout: float) -> str:
        """Stop every process of the topology and remove its state (and package). Returns
        how: ``"kubernetes"``, ``"scheduler"`` or ``"pid files"`` (the scheduler service did
        not answer within ``timeout``)."""
        library = self.kubernetes_scheduler()
        if library is not None:
            library.kill()
            self.state.clean(self.name)
            try:
                delete_package(LaunchSpec.load(self.working_dir))
            except LaunchError:
                pass  # submitted from another machine: its package stays where it was uploaded
            return "kubernetes"
        endpoint = self.scheduler_endpoint()
        # this machine's processes of the topology, seen before they are told to stop: a
        # kill returns once they are gone, not while they are still exiting
        running = self.local_processes()
        if endpoint is not None and self._scheduler_alive():
            try:
                response = request(endpoint,
                                   scheduler_pb2.KillTopologyRequest(topology_name=self.name),
                                   timeout=timeout, security=self.security)
                if response.status.status != common_pb2.OK:
                    raise SubmitterError(f"the scheduler refused to kill {self.name!r}: "
                                         f"{response.status.message}")
                self._wait_gone(running)
                return "scheduler"
            except RequestTimeout:
                # It may have finished but lost the reply: the state says.
                if self.state.get("topologies", self.name) is None:
                    self._wait_gone(running)
                    return "scheduler"
        self.kill_from_pid_files(topology.id)
        self._wait_gone(running)
        return "pid files"

    def local_processes(self) -> list[psutil.Process]:
        """The live processes of this topology that have pid files on this machine (the
        scheduler service, executors, and the processes they started)."""
        procs = []
        for path in sorted((self.working_dir / "pids").glob("*.pid")):
            proc = read_pid_file(path)
            if proc is not None:
                procs.append(proc)
        return procs

    def _wait_gone(self, procs: list[psutil.Process], timeout: float = KILL_EXIT_SECS) -> None:
        """Wait until ``procs`` have exited; past ``timeout`` stop those left (SIGKILL to
        their process groups) and say so, so a kill that returns leaves nothing running."""
        _, alive = psutil.wait_procs(procs, timeout=timeout)
        if not alive:
            return
        self.notify(f"{len(alive)} process(es) of {self.name!r} were still running "
                    f"{timeout:.0f} s after the kill: stopped with SIGKILL "
                    f"({', '.join(str(p.pid) for p in alive)})")
        stop_groups([p.pid for p in alive], grace=0.0)
        psutil.wait_procs(alive, timeout=5.0)

    def _scheduler_alive(self) -> bool:
        """False when the scheduler's pid file shows it is dead (a ZooKeeper location can
        outlive a SIGKILLed scheduler by a session timeout); True when alive or unknown."""
        pid_file = self.working_dir / "pids" / "scheduler.pid"
        if not pid_file.exists():
            return True
        return read_pid_file(pid_file) is not None

    def kill_from_pid_files(self, topology_id: str) -> None:
        """Stop the scheduler, then the executors, then everything else with a pid file;
        then clean the state and the ipc dir the scheduler would have cleaned."""
        files = sorted((self.working_dir / "pids").glob("*.pid"))
        phases = [[f for f in files if f.name == "scheduler.pid"],
                  [f for f in files if f.name.startswith("executor-")]]
        phases.append([f for f in files if f not in phases[0] and f not in phases[1]])
        for phase in phases:
            procs = [p for p in map(read_pid_file, phase) if p is not None]
            stop_groups([p.pid for p in procs], grace=3.0)
        self.state.clean(self.name)
        shutil.rmtree(ipc_dir(topology_id), ignore_errors=True)

    # -- restart ---------------------------------------------------------------------------
    def restart(self, container: int, timeout: float) -> str:
        """Restart ``container`` (-1: every container); returns what was done. The state
        is read first (callers may close it before)."""
        library = self.kubernetes_scheduler()
        endpoint = self.scheduler_endpoint()
        return self.restart_with(library, endpoint, container, timeout)

    def restart_with(self, library: KubernetesScheduler | None, endpoint: str | None,
                     container: int, timeout: float) -> str:
        if library is not None:
            library.restart(container)
            what = "every container" if container == -1 else f"container {container}"
            return (f"restarted {what} of {self.name!r} (Kubernetes starts the deleted pods "
                    "again)")
        if endpoint is None:
            raise SubmitterError(f"the scheduler of {self.name!r} is not running "
                                 f"(no schedulers/{self.name})")
        try:
            response = request(endpoint, scheduler_pb2.RestartTopologyRequest(
                topology_name=self.name, container_index=container), timeout=timeout,
                security=self.security)
        except RequestTimeout:
            raise SubmitterError(f"the scheduler of {self.name!r} did not answer within "
                                 f"{timeout:g}s") from None
        if response.status.status != common_pb2.OK:
            raise refused(f"cannot restart {self.name!r}: {response.status.message}")
        return response.status.message or f"restarted {self.name!r}"

    # -- update ----------------------------------------------------------------------------
    def update(self, plan: UpdatePlan, timeout: float) -> str:
        """Move the topology to ``plan``: the scheduler first (a scheduler service, or the
        Kubernetes StatefulSet), and only once it accepted, the new parallelism and
        packing plan in the state manager. A refusal leaves the stored plan as it was;
        a plan that cannot be stored after the scheduler accepted it is undone at the
        scheduler, so the two never disagree. Returns the scheduler's answer."""
        library = self.kubernetes_scheduler()
        if library is not None:
            # refused, with nothing changed, when the largest container grew
            library.update(plan.proposed)
            self._store_accepted(plan, lambda: library.update(plan.current))
            return f"the executors' StatefulSet now has {len(plan.proposed.containers)} pods"
        endpoint = self._require_service("; `heron update` works on topologies started with "
                                         "`heron submit`")
        message = self.send_update(endpoint, plan.current, plan.proposed, timeout)
        self._store_accepted(plan, lambda: self.send_update(endpoint, plan.proposed,
                                                            plan.current, timeout))
        return message

    def _store_accepted(self, plan: UpdatePlan, undo: Callable[[], object]) -> None:
        try:
            apply_update(self.state, plan)
        except Exception as exc:  # the store failed: take the scheduler back to the old plan
            try:
                undo()
            except Exception as undo_exc:
                raise SubmitterError(
                    f"the scheduler of {self.name!r} moved to packing plan "
                    f"{plan.proposed.id} but storing it failed ({exc}), and moving the "
                    f"scheduler back failed too ({undo_exc}); run `heron update` again "
                    "once the state manager answers") from None
            raise SubmitterError(f"cannot store the new packing plan of {self.name!r} "
                                 f"({exc}); the scheduler went back to packing plan "
                                 f"{plan.current.id}, nothing changed") from None

    def send_update(self, endpoint: str, current: PackingPlan, proposed: PackingPlan,
                    timeout: float) -> str:
        """Ask the scheduler service to move from packing plan ``current`` to
        ``proposed``; its answer. Raises :class:`SubmitterError` when it refuses or does
        not answer (nothing is stored either way)."""
        try:
            response = request(endpoint, scheduler_pb2.UpdateTopologyRequest(
                topology_name=self.name, current_packing_plan=current.to_proto(),
                proposed_packing_plan=proposed.to_proto()), timeout=timeout,
                security=self.security)
        except RequestTimeout:
            raise SubmitterError(f"the scheduler of {self.name!r} did not answer within "
                                 f"{timeout:g}s; the stored packing plan is unchanged (the "
                                 "scheduler may still act: see `heron status`)") from None
        if response.status.status != common_pb2.OK:
            raise SubmitterError(f"the scheduler of {self.name!r} refused the update: "
                                 f"{response.status.message}; the stored packing plan is "
                                 "unchanged")
        return response.status.message
