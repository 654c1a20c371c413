"""A cluster's topology defaults on the real three-node Slurm cluster (tests/slurm/), on
nodes of RealMemory=1000: Heron's default padding (2 GiB) fits no such node, so without
the cluster's ``defaults.yaml`` every submit needed four ``-o`` sizing flags. Here the
cluster's conf holds them once (and the test topology's own options), ``heron submit``
gets no ``-o`` at all, and every container's job is sized by the defaults, as Slurm
lists it, and runs: every id is acked."""

from __future__ import annotations

import pytest

from tests.cluster.conftest import running_slurm_cluster, zookeeper_on
from tests.cluster.test_slurm_topology import (  # noqa: F401
    NAME,
    PROJECT,
    SlurmTopology,
    forget_projects,
    reap_schedulers,
    wait_until,
)
from tests.engine.cli.conftest import heron

pytestmark = pytest.mark.timeout(300)

SIZING = {"heron.resources.instance.ram": 134217728,   # 128 MiB per instance
          "heron.resources.instance.cpu": 0.5,         # a fraction: jobs round up
          "topology.container.padding.ram": 268435456,  # 256 MiB per container
          "topology.container.padding.cpu": 1}


def test_a_topology_submitted_with_no_o_onto_1000_mb_nodes_is_sized_by_the_cluster(tmp_path):
    with running_slurm_cluster(real_memory_mb=1000) as cluster, \
            zookeeper_on(cluster.host_address) as zookeeper:
        topology = SlurmTopology(cluster, zookeeper, tmp_path, n=300, rate=100)
        # what the suite passes with -o goes, once, into the cluster's defaults file
        pairs = [o.split("=", 1) for o in topology.options[1::2]]
        assert set(SIZING) <= {k for k, _ in pairs}, topology.options
        defaults = {k: v for k, v in pairs if k not in SIZING} | SIZING
        (topology.home / "conf" / "slurm" / "defaults.yaml").write_text(
            "".join(f"{k}: {v}\n" for k, v in defaults.items()))
        result = heron("submit", "slurm", str(PROJECT), "-n", NAME, "-w", "2",
                       "--home", str(topology.home))
        assert result.exit_code == 0, result.output
        try:
            running = wait_until(lambda: (lambda j: j if len(j) == 3 and all(
                s == "RUNNING" for _, _, s, _ in j) else None)(topology.squeue()), 90)
            assert running, topology.squeue()
            sizes = {}
            for job_id, name, _state, _node in running:
                job = cluster.job(int(job_id))
                sizes[int(name.rsplit("-", 1)[-1])] = (job["NumCPUs"], job["MinMemoryNode"])
            # container 0: the padding alone; the others: the larger one's instances
            # (0.5 CPU, 128 MiB each) plus the padding, CPUs rounded up; all below 1000 MB
            assert sizes[0] == ("1", "256M"), sizes
            for container in (1, 2):
                cpus, memory = sizes[container]
                assert memory.endswith("M") and 256 < int(memory[:-1]) <= 1000, sizes
                instances = (int(memory[:-1]) - 256) // 128
                assert int(cpus) == -(-(instances * 0.5 + 1) // 1), sizes
            assert wait_until(lambda: len(topology.acked()) == topology.n, 120), \
                (len(topology.acked()), topology.status())
            topology.check_counts()
            print(f"\njob sizes by container (CPUs, memory): {sizes}")
        finally:
            topology.kill()
        assert wait_until(lambda: not topology.squeue(), 30), topology.squeue()
        assert wait_until(lambda: not topology.engine_pids(), 30), topology.engine_pids()
