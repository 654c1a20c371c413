"""``heron submit CLUSTER TOPOLOGY.yaml`` to a cluster that is not this machine: the
Flux file goes in the topology package (engine/common/cluster/package.py) like a project; here
a Kubernetes ``--dry-run``, whose pods would fetch that package (the real Slurm run is
tests/cluster/test_slurm_flux.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.engine.cli.conftest import heron
from tests.engine.cli.test_kubernetes_cli import k8s_cluster

pytest.importorskip("kubernetes")

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "flux_wordcount"


def test_a_flux_file_dry_runs_on_kubernetes(heron_home, tmp_path, isolated_imports):
    k8s_cluster(heron_home, tmp_path, "127.0.0.1:1")
    result = heron("submit", "k8s", str(EXAMPLE / "wordcount.yaml"), "--filter",
                   str(EXAMPLE / "dev.properties"), "--dry-run")
    assert result.exit_code == 0, result.output
    docs = [d for d in yaml.safe_load_all(result.output) if d]
    assert [d["kind"] for d in docs] == ["Secret", "Service", "StatefulSet", "StatefulSet"]
    assert docs[2]["metadata"]["name"] == "flux-wordcount-tmanager"
    packages = tmp_path / "packages"
    assert not packages.exists() or not any(packages.iterdir())  # nothing uploaded
