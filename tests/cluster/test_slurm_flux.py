"""A Storm Flux topology on the real three-node Slurm cluster (tests/slurm/): `heron
submit slurm TOPOLOGY.yaml --filter FILE` packs the YAML, its resources/, its src/ and an
include from outside its directory (tests/cluster/projects/flux, ../flux_shared), and
each container rebuilds the topology on its node from the unpacked package with the
recorded substitution values: the filter file is deleted right after submit, and the
shell bolt (``record.py``, named relative to resources/) starts in the unpacked
resources/. Every id is acked and recorded with its word."""

from __future__ import annotations

import json
import sys
import tarfile
from pathlib import Path

import psutil
import pytest

from tests.cluster.conftest import running_slurm_cluster, zookeeper_on
from tests.cluster.test_slurm_topology import (  # noqa: F401
    SlurmTopology,
    forget_projects,
    reap_schedulers,
    wait_until,
)
from tests.engine.cli.conftest import heron

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

FLUX = Path(__file__).resolve().parent / "projects" / "flux" / "wordcount.yaml"
NAME = "flux_durable"


def shell_bolts(script: str) -> dict[int, str]:
    """The live processes running ``script``, by pid, with their working directory."""
    found = {}
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if script in (proc.info["cmdline"] or ()):
                found[proc.pid] = proc.cwd()
        except psutil.Error:
            continue
    return found


def test_a_flux_topology_runs_from_its_package_on_the_slurm_nodes(tmp_path):
    with running_slurm_cluster() as cluster, zookeeper_on(cluster.host_address) as zookeeper:
        topology = SlurmTopology(cluster, zookeeper, tmp_path, n=300, rate=200,
                                 project=FLUX, name=NAME)
        props = tmp_path / "cluster.properties"
        props.write_text(f"topology.name = {NAME}\nmax.pending = 100\n"
                         f"python = {sys.executable}\n")
        result = heron("submit", "slurm", str(FLUX), "--filter", str(props), "-w", "2",
                       "--home", str(topology.home), *topology.options)
        assert result.exit_code == 0, result.output
        props.unlink()  # the nodes rebuild the topology from the recorded values
        try:
            [package] = (cluster.shared_dir / "packages").glob(f"{NAME}-*")
            with tarfile.open(package) as tar:
                names = set(tar.getnames())
                manifest = json.load(tar.extractfile("heron-package.json"))
            assert {"flux/wordcount.yaml", "flux/resources/record.py",
                    "flux/src/flux_ledger.py", "flux_shared/sink.yaml"} <= names, names
            assert manifest["submission"]["flux_values"]["python"] == sys.executable
            assert wait_until(lambda: len(topology.acked()) == topology.n, 90), \
                (len(topology.acked()), topology.status(), topology.squeue())
            topology.check_counts()
            # each sink task's record.py runs on a node, in that node's unpacked resources/
            sinks = shell_bolts("record.py")
            assert len(sinks) == 2 and all(
                cwd.endswith("/project/flux/resources") and not cwd.startswith(str(FLUX.parent))
                and cluster.node_of_pid(pid) in cluster.node_names
                for pid, cwd in sinks.items()), sinks
        finally:
            topology.kill()
        assert wait_until(lambda: not topology.squeue(), 30), topology.squeue()
        assert wait_until(lambda: not topology.engine_pids(), 30), topology.engine_pids()
