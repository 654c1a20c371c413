"""``heron submit slurm FILE.pex - ARGS`` on the real three-node Slurm cluster
(tests/slurm/), as Heron's CLI submits a pex: the pex's main runs on the submitting
machine and writes the definition, the topology's package carries the definition and
the pex (nothing of the submitting machine's paths), and every container rebuilds the
topology on its node from the unpacked package, importing the spout and bolts from the
unpacked pex (whose bundled heronpy is never imported). Heron's word count with a
results bolt writing to the directory every node mounts: each word counted 100 times.
``heron kill`` cancels the jobs and removes the definition kept for it."""

from __future__ import annotations

import json
import tarfile
import uuid

import pytest

from tests.cluster.conftest import running_slurm_cluster, zookeeper_on
from tests.cluster.test_slurm_topology import (  # noqa: F401
    SlurmTopology,
    forget_projects,
    reap_schedulers,
    wait_until,
)
from tests.engine.cli.conftest import heron
from tests.heronpy.test_submit_heron_layout import WORDS, _results, build_pex, heron_tree

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

NAME = "heronpy_pex_slurm"


def test_a_pex_runs_from_its_package_on_the_slurm_nodes(tmp_path):
    pex = build_pex(heron_tree(tmp_path / "heron").parents[3],
                    "examples.src.python.word_count_results", tmp_path / "wc.pex")
    with running_slurm_cluster() as cluster, zookeeper_on(cluster.host_address) as zookeeper:
        topology = SlurmTopology(cluster, zookeeper, tmp_path, n=0, name=NAME)
        results = cluster.shared_dir / f"results-{uuid.uuid4().hex[:8]}"
        results.mkdir(mode=0o700)
        resources = [o for pair in zip(topology.options[::2], topology.options[1::2])
                     if not pair[1].startswith("e2e.") for o in pair]
        result = heron("submit", "slurm", "--home", str(topology.home), "-w", "2", *resources,
                       str(pex), "-", "-r", str(results), "-t", NAME)
        assert result.exit_code == 0, result.output
        pex.unlink()  # the nodes run the package's copy
        definitions = topology.home / "definitions"
        try:
            [package] = (cluster.shared_dir / "packages").glob(f"{NAME}-*")
            with tarfile.open(package) as tar:
                names = set(tar.getnames())
                manifest = json.load(tar.extractfile("heron-package.json"))
            assert names == {"heron-package.json", f"{NAME}.defn", f"{NAME}.pex"}, names
            assert manifest["submission"]["project"] == f"{NAME}.defn"
            assert wait_until(lambda: _results(results) == {w: 100 for w in WORDS}, 90), \
                (_results(results), topology.status(), topology.squeue())
            [kept] = definitions.iterdir()
            assert {p.name for p in kept.iterdir()} == {f"{NAME}.defn", f"{NAME}.pex"}
        finally:
            topology.kill()
        assert not list(definitions.iterdir())
        assert wait_until(lambda: not topology.squeue(), 30), topology.squeue()
        assert wait_until(lambda: not topology.engine_pids(), 30), topology.engine_pids()
