"""``heron submit k8s FILE.pex - ARGS --dry-run``: the pex's main writes the definition,
the package the pods would fetch is built from it (the definition and the pex), the
manifests are printed, nothing is uploaded and no definition is kept; a lone ``.py`` is
refused for a cluster in one line (its imports are directories of this machine). The
real cluster run is tests/heronpy/test_submit_slurm.py."""

from __future__ import annotations

import pytest
import yaml

from engine.scheduler.kubernetes import kubernetes_name
from tests.engine.cli.conftest import heron, heron_home  # noqa: F401
from tests.engine.cli.test_kubernetes_cli import k8s_cluster
from tests.heronpy.test_submit_heron_layout import build_pex, heron_tree

pytest.importorskip("kubernetes")


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_a_pex_dry_runs_on_kubernetes_and_a_lone_py_is_refused(heron_home, tmp_path,  # noqa: F811 (a fixture imported above)
                                                               isolated_imports):
    k8s_cluster(heron_home, tmp_path, "127.0.0.1:1")  # nothing listens: never connected
    tree = heron_tree(tmp_path / "heron")
    pex = build_pex(tree.parents[3], "examples.src.python.word_count_topology",
                    tmp_path / "wc.pex")
    result = heron("submit", "k8s", "--dry-run", str(pex), "-", "PexCount")
    assert result.exit_code == 0, result.output
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert [d["kind"] for d in docs] == ["Secret", "Service", "StatefulSet", "StatefulSet"]
    assert docs[2]["metadata"]["name"] == f"{kubernetes_name('PexCount')}-tmanager"
    packages = tmp_path / "packages"
    assert not packages.exists() or not any(packages.iterdir())  # nothing uploaded
    assert not any((heron_home / "definitions").iterdir())  # nothing kept

    refused = heron("submit", "k8s", str(tree), "-", "PyCount")
    assert refused.exit_code == 2
    assert refused.output.strip().splitlines()[-1] == (
        f"heron: error: {tree}: a lone .py finds its imports in directories of this machine, "
        "which the nodes of cluster 'k8s' do not have; submit it as a pex (python -m zipapp "
        "DIR -m module:main -o FILE.pex), or to local")
