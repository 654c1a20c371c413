"""docs/clusters.md says what issue 44 asked of it: heron.slurm.work.root must be local
to each node (a one-host emulation must give each node its own), and the cluster's
defaults.yaml with its precedence and fractional CPUs."""

from pathlib import Path

DOC = (Path(__file__).resolve().parents[3] / "docs" / "clusters.md").read_text()


def test_work_root_must_be_per_node():
    row = next(line for line in DOC.splitlines() if line.startswith("| `heron.slurm.work.root`"))
    assert "must be local to each node" in row
    assert "one-host emulation" in row and "its own directory" in row


def test_defaults_yaml_is_documented_with_its_precedence():
    assert "`defaults.yaml`" in DOC
    assert ("cluster defaults < the project's `config.json` env\n`options` < "
            "`Topology.config` < `-o`") in DOC
    assert "fractions such as `0.5` are accepted" in DOC
