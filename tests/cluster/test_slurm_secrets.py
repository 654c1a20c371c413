"""Where a Slurm topology's secrets exist, on the real three-node cluster (tests/slurm/),
read from the files Slurm and the nodes keep, not from what the engine says (issue 44,
items 1 and 2; docs/security.md lists every place):

(1) through submit, update, restart and kill, the ZooKeeper digest's password and the
    topology's secret key appear in no file under the controller's StateSaveLocation,
    in no slurmd spool, and in no ``scontrol show job -d`` / ``scontrol write
    batch_script`` output of any job; the jobs get the digest from an owner-only file on
    the shared directory, which the script names and ``heron kill`` deletes;
(2) a node killed mid-run keeps its disk (tests/slurm/disk.py), comes back, and after
    ``heron kill`` no secret is left under any node's work root, any spool, the shared
    directory or the submitter's working directory.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from engine.common.security.keys import TopologyKeys
from tests.cluster.test_slurm_failures import DIGEST, all_running, files_under
from tests.cluster.test_slurm_topology import (  # noqa: F401
    NAME,
    SlurmTopology,
    container_of,
    forget_projects,
    job_of,
    reap_schedulers,
    slurm_cluster,
    slurm_zookeeper,
    wait_until,
)
from tests.slurm.disk import hold_disk, restart_with_disk

pytestmark = pytest.mark.timeout(300)


def secrets_of(topology: SlurmTopology) -> list[bytes]:
    return [DIGEST, TopologyKeys.load(topology.working_dir).secret_key]


def all_jobs(cluster) -> list[str]:
    out = cluster.run("squeue", "--noheader", "--states=all", "--format=%i").stdout
    return sorted(out.split())


def slurm_records(cluster) -> dict[str, bytes]:
    """Everything Slurm keeps or shows of every job it knows: the controller's state
    directory, every live node's spool, and scontrol's answers."""
    found: dict[str, bytes] = {}
    roots = [cluster._path("ctld", "state")]
    roots += [cluster.node_path(node, cluster._node_root / "slurmd")
              for node in cluster.node_names if cluster.slurmd_pid(node)]
    for root in roots:
        for path in files_under(root):
            try:
                found[str(path)] = path.read_bytes()
            except OSError:
                continue  # a file slurmd removed meanwhile
    for job in all_jobs(cluster):
        for argv in (("scontrol", "show", "job", "-d", job),
                     ("scontrol", "-dd", "show", "job", job),
                     ("scontrol", "write", "batch_script", job, "-")):
            done = cluster.run(*argv, check=False)
            found[" ".join(argv)] = (done.stdout + done.stderr).encode()
    return found


def leaks(records: dict[str, bytes], secrets: list[bytes]) -> list[str]:
    return [name for name, data in records.items() if any(s in data for s in secrets)]


def test_no_secret_enters_slurm_s_records_through_submit_update_restart_and_kill(
        slurm_cluster, slurm_zookeeper, tmp_path):  # noqa: F811 (a fixture imported above)
    topology = SlurmTopology(slurm_cluster, slurm_zookeeper, tmp_path, n=100000, rate=50)
    topology.submit(workers=2)
    killed = False
    try:
        assert wait_until(lambda: all_running(topology, 3), 90), topology.squeue()
        secrets = secrets_of(topology)
        keys = TopologyKeys.load(topology.working_dir)
        shared = slurm_cluster.shared_dir / "packages" / f"secrets-{keys.topology_id}"
        # the jobs' digest: owner-only on the shared directory, named by the script
        assert stat.S_IMODE(shared.stat().st_mode) == 0o700
        assert stat.S_IMODE((shared / "zk-auth").stat().st_mode) == 0o600
        assert DIGEST in (shared / "zk-auth").read_bytes()
        script = slurm_cluster.run("scontrol", "write", "batch_script",
                                   all_jobs(slurm_cluster)[0], "-").stdout
        assert str(shared / "zk-auth") in script, script
        # the nodes do hold the secrets (the searches below could see them)
        nodes = [slurm_cluster.node_path(n, slurm_cluster.local_dir) / f"heron-{os.getuid()}"
                 for n in slurm_cluster.node_names]
        assert wait_until(lambda: [p for d in nodes for p in files_under(d)
                                   if any(s in p.read_bytes() for s in secrets)], 30)
        assert not leaks(slurm_records(slurm_cluster), secrets)

        grown = topology.heron("update", NAME, "--component-parallelism", "sink:3",
                               "--container-number", "3")
        assert grown.exit_code == 0, grown.output
        assert wait_until(lambda: all_running(topology, 4), 60), topology.squeue()
        assert not leaks(slurm_records(slurm_cluster), secrets)

        before = all_running(topology, 4)
        restarted = topology.heron("restart", NAME, "1")
        assert restarted.exit_code == 0, restarted.output
        assert wait_until(lambda: (lambda j: j if j and j["1"] != before["1"] else None)(
            all_running(topology, 4)), 60), topology.squeue()
        assert not leaks(slurm_records(slurm_cluster), secrets)

        result = topology.heron("kill", NAME, "--wait", "0")
        killed = True
        assert result.exit_code == 0, result.output
        assert "not cleaned" not in result.output, result.output
    finally:
        if not killed:
            topology.heron("kill", NAME, "--wait", "0")
    assert wait_until(lambda: not topology.squeue(), 30), topology.squeue()
    assert not shared.exists()
    assert len(all_jobs(slurm_cluster)) >= 8  # 3 + 1 added + 1 restarted + 3 cleanups
    assert not leaks(slurm_records(slurm_cluster), secrets)
    left = [str(p) for root in (*nodes, topology.working_dir, slurm_cluster.shared_dir)
            for p in files_under(root) if any(s in p.read_bytes() for s in secrets)]
    assert not left, left


def test_a_dead_node_that_returns_keeps_no_secret_after_kill(slurm_cluster, slurm_zookeeper,  # noqa: F811 (a fixture imported above)
                                                              tmp_path):
    topology = SlurmTopology(slurm_cluster, slurm_zookeeper, tmp_path, n=2400, rate=120)
    topology.submit(workers=3)
    container = container_of(topology, "sink")
    node = None
    killed = False
    try:
        assert wait_until(lambda: len(topology.acked()) >= 200, 90), topology.status()
        secrets = secrets_of(topology)
        job = job_of(topology, container)
        assert job and job["state"] == "RUNNING", topology.status()
        node = job["node"]
        disk = hold_disk(slurm_cluster, node)
        slurm_cluster.kill_node(node)
        saved = disk.save()
        # the dead node's disk holds the secrets its jobs never got to remove
        assert [p for p in files_under(saved) if any(s in p.read_bytes() for s in secrets)]
        assert wait_until(lambda: (lambda j: j if j and j["state"] == "RUNNING"
                                   and j["node"] not in ("", node) else None)(
            job_of(topology, container)), 150), topology.status()
        restart_with_disk(slurm_cluster, node, saved)
        slurm_cluster.return_to_service(node)
        back = slurm_cluster.node_path(node, slurm_cluster.local_dir) / f"heron-{os.getuid()}"
        # the node's old disk is copied back as its slurmd starts: when the container was
        # moved before Slurm noticed the node's death (it fell silent), the node is still
        # "idle" to Slurm and comes back at once, perhaps before the copy is done
        assert wait_until(lambda: [p for p in files_under(back)
                                   if any(s in p.read_bytes() for s in secrets)], 30)

        result = topology.heron("kill", NAME, "--wait", "0")
        killed = True
        assert result.exit_code == 0, result.output
        assert "not cleaned" not in result.output, result.output
    finally:
        if not killed:
            topology.heron("kill", NAME, "--wait", "0")
        if node is not None:
            slurm_cluster.return_to_service(node)
    assert wait_until(lambda: not topology.squeue(), 30), topology.squeue()
    assert wait_until(lambda: not topology.engine_pids(), 30), topology.engine_pids()
    roots: list[Path] = [topology.working_dir, slurm_cluster.shared_dir]
    for n in slurm_cluster.node_names:
        roots.append(slurm_cluster.node_path(n, slurm_cluster.local_dir))
        roots.append(slurm_cluster.node_path(n, slurm_cluster._node_root))
    left = wait_until(lambda: [str(p) for root in roots for p in files_under(root)
                               if any(s in p.read_bytes() for s in secrets)] or None, 10)
    assert not left, left
    # the logs stay, on the node that came back too
    assert list(back.glob("*/container-*/logs/*.log")), files_under(back)
