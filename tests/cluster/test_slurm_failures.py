"""Failures around the Slurm scheduler, on the real three-node cluster (tests/slurm/):
a request Slurm refuses, a controller that does not answer, a scheduler service killed
with SIGKILL, and nodes too small for the old fixed-size container 0. What is checked
is what Slurm lists (squeue), which processes live in which namespace, and which files
the nodes and the submitting machine keep, not what the engine says about itself.

(a) an update whose new container can never be placed is refused, naming the keys to
    change; the topology keeps its old jobs and plan and the service lives on;
(b) a restart while the controller is stopped (SIGSTOP) is refused and leaves one job
    per container, the old one or its replacement, never neither;
(c) a scheduler service killed with SIGKILL is started again by its supervisor, which
    adopts the jobs (no duplicate); with the supervisor killed too, `heron kill` still
    cancels every job and no engine process is left in any namespace;
(d) nodes with RealMemory=1000 run a topology sized by the documented keys, and after
    `heron kill` no file on any node or on the submitting machine holds the ZooKeeper
    digest or the topology's secret key.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psutil
import pytest

from engine.common.process import read_pid_file
from engine.common.security.keys import TopologyKeys
from engine.scheduler.supervise import SERVING_MARKER
from tests.cluster.conftest import running_slurm_cluster, zookeeper_on
from tests.cluster.test_slurm_topology import (  # noqa: F401
    NAME,
    SlurmTopology,
    forget_projects,
    reap_schedulers,
    state_of,
    wait_until,
)

pytestmark = pytest.mark.timeout(300)

DIGEST = b"cluster-secret"  # what SlurmTopology writes into the digest file


def jobs(topology: SlurmTopology) -> dict[str, str]:
    """container -> job id of the topology's jobs Slurm lists (pending or running)."""
    out: dict[str, str] = {}
    for job_id, name, _state, _node in topology.squeue():
        container = name.rsplit("-", 1)[-1]
        assert container not in out, f"two jobs for container {container}: {topology.squeue()}"
        out[container] = job_id
    return out


def all_running(topology: SlurmTopology, containers: int) -> dict[str, str] | None:
    listed = topology.squeue()
    if len(listed) == containers and all(state == "RUNNING" for _, _, state, _ in listed):
        return jobs(topology)
    return None


def service_pids(topology: SlurmTopology) -> tuple[int | None, int | None]:
    """(supervisor, service) pids, None for one that is not alive."""
    supervisor = read_pid_file(topology.working_dir / "pids" / "scheduler.pid")
    try:
        child = int((topology.working_dir / "pids" / SERVING_MARKER).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        child = None
    alive = child is not None and psutil.pid_exists(child) and \
        psutil.Process(child).status() != psutil.STATUS_ZOMBIE
    return (supervisor.pid if supervisor else None), (child if alive else None)


def test_refused_requests_keep_the_old_jobs_and_kill_needs_no_service(
        slurm_cluster, slurm_zookeeper, tmp_path):
    topology = SlurmTopology(slurm_cluster, slurm_zookeeper, tmp_path, n=100000, rate=50)
    with open(topology.home / "conf" / "slurm" / "scheduler.yaml", "a") as conf:
        conf.write("heron.slurm.submit.timeout.secs: 8\n")
    topology.submit(workers=2)
    ctld = slurm_cluster.slurmctld.pid
    killed = False
    try:
        before = wait_until(lambda: all_running(topology, 3), 90)
        assert before, topology.squeue()
        with state_of(topology) as state:
            plan_id = state.get("packingplans", NAME).id

        # (a) 21 instances over 3 containers: 7 x 0.5 CPU + 1 of padding > 4 CPUs a node
        grown = topology.heron("update", NAME, "--component-parallelism", "sink:20",
                               "--container-number", "3")
        assert grown.exit_code != 0, grown.output
        assert "Requested node configuration is not available" in grown.output, grown.output
        assert "heron.resources.instance.cpu" in grown.output, grown.output
        assert "Traceback" not in grown.output, grown.output
        supervisor, service = service_pids(topology)
        assert supervisor and service, "the scheduler service died of a refused update"
        assert jobs(topology) == before
        with state_of(topology) as state:
            assert state.get("packingplans", NAME).id == plan_id

        # (b) the controller stopped for the duration of a restart
        os.kill(ctld, signal.SIGSTOP)
        try:
            restarted = topology.heron("restart", NAME, "1")
        finally:
            os.kill(ctld, signal.SIGCONT)
        assert restarted.exit_code != 0, restarted.output
        assert "sbatch" in restarted.output and any(
            why in restarted.output for why in ("did not answer within 8s", "timed out")), \
            restarted.output
        assert "Traceback" not in restarted.output, restarted.output
        after = wait_until(lambda: all_running(topology, 3), 60)
        assert after and after["0"] == before["0"] and after["2"] == before["2"], \
            (before, topology.squeue())
        assert service_pids(topology) == (supervisor, service)
        # with the controller back, the same restart works: a new job, then the old gone
        restarted = topology.heron("restart", NAME, "1")
        assert restarted.exit_code == 0, restarted.output
        now = wait_until(lambda: (lambda j: j if j and j["1"] != after["1"] else None)(
            all_running(topology, 3)), 60)
        assert now, topology.squeue()

        # (c) SIGKILL the service: its supervisor starts another, which adopts the jobs
        os.kill(service, signal.SIGKILL)
        again = wait_until(lambda: (lambda p: p[1] if p[1] not in (None, service) else None)(
            service_pids(topology)), 60)
        assert again, (topology.working_dir / "logs").iterdir()
        assert wait_until(lambda: all_running(topology, 3), 30) == now, topology.squeue()
        # and with the supervisor gone too, heron kill cancels the jobs itself
        os.kill(supervisor, signal.SIGKILL)
        os.kill(again, signal.SIGKILL)
        result = topology.heron("kill", NAME, "--wait", "0")
        killed = True
        assert result.exit_code == 0, result.output
        assert "cancelled Slurm jobs" in result.output, result.output
    finally:
        os.kill(ctld, signal.SIGCONT)
        if not killed:
            topology.heron("kill", NAME, "--wait", "0")
    assert wait_until(lambda: not topology.squeue(), 30), topology.squeue()
    assert wait_until(lambda: not topology.engine_pids(), 30), topology.engine_pids()


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()] \
        if root.exists() else []


def executor_logs(cluster) -> str:
    """The tail of every executor's own log on every node (for a failure's message)."""
    out = []
    for node in cluster.node_names:
        root = cluster.node_path(node, cluster.local_dir)
        for path in sorted(root.glob("heron-*/*/container-*/logs/executor-*.log")):
            out.append(f"{node}:{path.name}: {path.read_text(errors='replace')[-1500:]}")
    return "\n".join(out)


def test_small_nodes_run_a_topology_sized_by_the_keys_and_kill_leaves_no_secret(tmp_path):
    with running_slurm_cluster(real_memory_mb=1000) as cluster, \
            zookeeper_on(cluster.host_address) as zookeeper:
        topology = SlurmTopology(cluster, zookeeper, tmp_path, n=300, rate=100)
        topology.submit(workers=2)
        killed = False
        try:
            assert wait_until(lambda: all_running(topology, 3), 90), topology.squeue()
            assert wait_until(lambda: len(topology.acked()) == topology.n, 120), \
                (len(topology.acked()), topology.status(), executor_logs(cluster))
            keys = TopologyKeys.load(topology.working_dir)
            secrets = [DIGEST, keys.secret_key]
            node_dirs = [cluster.node_path(node, cluster.local_dir) / f"heron-{os.getuid()}"
                         / keys.topology_id for node in cluster.node_names]
            # while it runs, the nodes hold the secrets (so the search below can see them)
            held = [p for d in node_dirs for p in files_under(d)
                    if any(s in p.read_bytes() for s in secrets)]
            assert held, [str(p) for d in node_dirs for p in files_under(d)]
            topology.kill()
            killed = True
        finally:
            if not killed:
                topology.heron("kill", NAME, "--wait", "0")
        assert wait_until(lambda: not topology.squeue(), 30), topology.squeue()
        assert wait_until(lambda: not topology.engine_pids(), 30), topology.engine_pids()
        # the jobs' scripts scrub as they end: give the last one a moment
        leaks = wait_until(lambda: [str(p) for d in [*node_dirs, topology.working_dir]
                                    for p in files_under(d)
                                    if any(s in p.read_bytes() for s in secrets)] or None,
                           10) or []
        assert not leaks, leaks
        assert files_under(topology.working_dir / "logs"), "the submitter's logs went too"
        assert any(files_under(d / "container-0" / "logs") for d in node_dirs)
        assert not list((cluster.shared_dir / "packages").glob(f"{NAME}-*"))
