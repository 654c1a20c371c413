"""The ``config`` rule: config.json becomes heron.yaml, cluster-only settings reported."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from migrate.cli import command
from migrate.findings import Level
from migrate.outcome import Status
from migrate.rules.config import ConfigRule

CONFIG = {
    "serializer": "json", "topology_specs": "topologies/", "virtualenv_specs": "virtualenvs/",
    "colour": "blue",
    "envs": {"prod": {"user": "storm", "nimbus": "n1", "workers": ["w1"],
                      "log": {"path": "/tmp/l", "level": "info"},
                      "options": {"topology.message.timeout.secs": 30, "wordcount.seed": 1},
                      "mystery": 1}},
}


def project_with(tmp_path: Path, config: object) -> Path:
    (tmp_path / "config.json").write_text(json.dumps(config))
    return tmp_path


def test_config_json_becomes_heron_yaml_with_options_and_log_kept(tmp_path: Path) -> None:
    [outcome] = ConfigRule().apply(project_with(tmp_path, CONFIG))
    assert outcome.status is Status.CHANGED and outcome.created
    data = yaml.safe_load(outcome.migrated)
    assert data == {"serializer": "json", "topology_specs": "topologies/", "colour": "blue",
                    "envs": {"prod": {"log": {"path": "/tmp/l", "level": "info"},
                                      "options": {"topology.message.timeout.secs": 30,
                                                  "wordcount.seed": 1},
                                      "mystery": 1}}}


def test_cluster_settings_are_info_and_unknown_ones_warnings(tmp_path: Path) -> None:
    [outcome] = ConfigRule().apply(project_with(tmp_path, CONFIG))
    by_level = {level: [f.message for f in outcome.findings if f.level is level] for level in Level}
    assert "envs.prod.nimbus dropped: sparse's Storm-cluster setting has no meaning here" \
        in by_level[Level.INFO]
    assert any(m.startswith("virtualenv_specs dropped") for m in by_level[Level.INFO])
    assert by_level[Level.WARNING] == ["unknown setting 'colour' kept as it is",
                                       "unknown setting envs.prod.'mystery' kept as it is"]


def test_existing_heron_yaml_means_nothing_to_do(tmp_path: Path) -> None:
    project = project_with(tmp_path, CONFIG)
    (project / "heron.yaml").write_text("envs: {}\n")
    assert ConfigRule().apply(project) == []


def test_invalid_config_json_is_a_failure(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{nope")
    [outcome] = ConfigRule().apply(tmp_path)
    assert outcome.status is Status.FAILED and "cannot convert" in outcome.error
    assert outcome.path == tmp_path / "config.json"  # the file that failed, not heron.yaml


def test_cli_diff_shows_new_file_and_write_then_check_is_clean(tmp_path: Path) -> None:
    project = project_with(tmp_path, {"envs": {"prod": {"options": {"a": 1}}}})
    diff = CliRunner().invoke(command, [str(project)])
    assert diff.exit_code == 1 and "--- /dev/null\n+++ b/heron.yaml" in diff.stdout
    assert not (project / "heron.yaml").exists()
    assert CliRunner().invoke(command, ["--write", str(project)]).exit_code == 0
    assert yaml.safe_load((project / "heron.yaml").read_text()) == {
        "envs": {"prod": {"options": {"a": 1}}}}
    assert CliRunner().invoke(command, ["--check", str(project)]).exit_code == 0
