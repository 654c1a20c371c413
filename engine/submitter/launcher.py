"""Launchers (Heron's ``ILauncher``): how the submitter hands a written topology to its
scheduler.

:class:`ServiceLauncher` (the local and Slurm schedulers) starts the scheduler service
(``python -m engine.scheduler``) detached from the submitting CLI and waits until it
serves. The service gets its own session (a terminal closing or the CLI exiting does not reach
it), /dev/null as stdin and ``logs/scheduler.log`` as output. It does not watch its
parent: it is the root of the topology's process tree and lives until ``heron kill``.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

from engine.common.cluster.config import ClusterConfig
from engine.common.launch import LaunchSpec
from engine.common.process import PARENT_PID_ENV, write_pid_file
from engine.common.process.spawn import with_code_root
from engine.common.security.keys import TopologyKeys
from engine.executor.commands import resolve_modules
from engine.messages import scheduler_pb2
from engine.packing import PackingPlan
from engine.scheduler.kubernetes import KubernetesScheduler
from engine.scheduler.kubernetes.scheduler import KubernetesLaunch
from engine.spi.statemgr import StateManager
from engine.statemgr.zookeeper import read_digest_file

SCHEDULER_LOG = "scheduler"
#: how long ``heron submit`` waits for the scheduler to record its location
SERVE_WAIT_SECS = 30.0


class SchedulerStartError(Exception):
    """The scheduler exited or did not come up in time; the text ends with its log tail.
    ``returncode`` 2: it refused the request itself (e.g. a cluster that can never run it)."""

    def __init__(self, message: str, returncode: int | None = None) -> None:
        super().__init__(message)
        self.returncode = returncode


def start_detached(spec: LaunchSpec) -> subprocess.Popen:
    """Start ``python -m engine.scheduler --launch PATH`` in a new session."""
    log_path = spec.process_log(SCHEDULER_LOG)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = with_code_root(dict(os.environ))
    env.pop(PARENT_PID_ENV, None)
    module = resolve_modules()["scheduler"]
    with open(log_path, "ab", buffering=0) as log:
        proc = subprocess.Popen([spec.python, "-m", module, "--launch", str(spec.path)],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                cwd=spec.working_dir, env=env, start_new_session=True,
                                close_fds=True)
    write_pid_file(spec.pid_dir / "scheduler.pid", proc.pid)
    return proc


def wait_until_serving(spec: LaunchSpec, proc: subprocess.Popen, state: StateManager,
                       timeout: float = SERVE_WAIT_SECS) -> scheduler_pb2.SchedulerLocation:
    """The scheduler's ``SchedulerLocation`` once recorded; SchedulerStartError (with the
    tail of its log) if it exits first or the time runs out (it is then killed)."""
    deadline = time.monotonic() + timeout
    while True:
        location = state.get("schedulers", spec.topology_name)
        if location is not None:
            return location
        code = proc.poll()
        if code is not None:
            raise SchedulerStartError(f"the scheduler exited with status {code}: "
                                      f"{log_tail(spec.process_log(SCHEDULER_LOG))}", code)
        if time.monotonic() >= deadline:
            proc.kill()
            proc.wait()
            raise SchedulerStartError(f"the scheduler did not start within {timeout:g}s: "
                                      f"{log_tail(spec.process_log(SCHEDULER_LOG))}")
        time.sleep(0.1)


def log_tail(path: Path, lines: int = 5) -> str:
    """The last lines of a log, joined with ' | ' so an error stays on one line."""
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return f"(no log at {path})"
    tail = [line.strip() for line in text[-lines:] if line.strip()]
    return " | ".join(tail) if tail else f"(empty log {path})"


class ServiceLauncher:
    """The local and Slurm schedulers: a detached scheduler service runs them."""

    def launch(self, spec: LaunchSpec, state: StateManager) -> None:
        proc = start_detached(spec)
        wait_until_serving(spec, proc, state)


class KubernetesLauncher:
    """The Kubernetes scheduler runs in the submitting process (library mode), as Heron's
    does: it creates the topology's objects and returns."""

    def __init__(self, config: Any) -> None:
        self.config = config

    def scheduler(self, spec: LaunchSpec, state: Any) -> KubernetesScheduler:
        name = spec.topology_name
        keys = TopologyKeys.load(spec.home, topology_id=spec.topology_id)
        digest = read_digest_file(self.config.zk_auth_file).encode()
        packing = PackingPlan.from_proto(state.get("packingplans", name))
        return KubernetesScheduler(
            kubernetes_config(self.config, name, package_url=spec.package_url or "",
                              package_sha256=spec.package_sha256 or ""),
            submission=KubernetesLaunch(name, spec.topology_id, packing,
                                        keys.to_proto().SerializeToString(), digest))

    def launch(self, spec: LaunchSpec, state: StateManager) -> None:
        self.scheduler(spec, state).launch()


def kubernetes_config(cluster: ClusterConfig, name: str, *, package_url: str,
                      package_sha256: str) -> dict:
    """What engine.scheduler.kubernetes needs: the cluster's keys, where the package is,
    where ZooKeeper is, and the topology's name (for update/restart/kill later)."""
    return {**cluster.values, "heron.package.url": package_url,
            "heron.package.sha256": package_sha256,
            "heron.statemgr.connection.string": cluster.zk_hosts,
            "heron.statemgr.root.path": cluster.zk_root, "heron.topology.name": name}
