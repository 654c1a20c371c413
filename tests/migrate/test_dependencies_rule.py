"""The ``dependencies`` rule: virtualenv specs become requirements files with streamparse
replaced by this project; project.clj JVM dependencies are reported."""

from __future__ import annotations

from pathlib import Path

from migrate.findings import Level
from migrate.outcome import Status
from migrate.rules.dependencies import DependenciesRule

CLJ = '''(defproject demo "0.0.1"
  :dependencies [[org.apache.storm/storm-core "1.1.0"]
                 [com.example/kafka-spout "2.0"]])
'''


def test_single_spec_becomes_requirements_txt_with_streamparse_replaced(tmp_path: Path) -> None:
    (tmp_path / "virtualenvs").mkdir()
    (tmp_path / "virtualenvs" / "wc.txt").write_text(
        "streamparse>=4.0  # core\nrequests==2.0\npystorm\n# note\n")
    [outcome] = DependenciesRule().apply(tmp_path)
    assert outcome.path == tmp_path / "requirements.txt" and outcome.created
    assert outcome.migrated == ("# written by heron-migrate from virtualenvs/wc.txt\n"
                                "heron-storm-compat  # core\nrequests==2.0\n# note\n")
    replaced = [f for f in outcome.findings if "replaced by" in f.message]
    assert [(f.line, f.old) for f in replaced] == [(1, "streamparse>=4.0  # core"), (3, "pystorm")]


def test_several_specs_get_one_requirements_file_each(tmp_path: Path) -> None:
    (tmp_path / "virtualenvs").mkdir()
    for name in ("a", "b"):
        (tmp_path / "virtualenvs" / f"{name}.txt").write_text("streamparse\n")
    names = sorted(o.path.name for o in DependenciesRule().apply(tmp_path))
    assert names == ["requirements-a.txt", "requirements-b.txt"]


def test_existing_requirements_file_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "virtualenvs").mkdir()
    (tmp_path / "virtualenvs" / "wc.txt").write_text("streamparse\n")
    (tmp_path / "requirements.txt").write_text("mine\n")
    assert DependenciesRule().apply(tmp_path) == []


def test_project_clj_storm_runtime_is_info_other_jvm_deps_warning(tmp_path: Path) -> None:
    (tmp_path / "project.clj").write_text(CLJ)
    [outcome] = DependenciesRule().apply(tmp_path)
    assert outcome.status is Status.UNCHANGED
    assert [(f.line, f.level, f.message) for f in outcome.findings] == [
        (2, Level.INFO, "org.apache.storm/storm-core not needed: the engines replace Storm"),
        (3, Level.WARNING, "JVM dependency com.example/kafka-spout not carried over"),
    ]


def test_a_spec_that_is_not_a_regular_file_is_reported_not_read(tmp_path: Path) -> None:
    import os

    specs = tmp_path / "virtualenvs"
    specs.mkdir()
    (specs / "wc.txt").write_text("streamparse\n")
    os.mkfifo(specs / "pipe.txt")  # reading it would block for ever
    (specs / "dir.txt").mkdir()
    outcomes = {o.path.name: o for o in DependenciesRule().apply(tmp_path)}
    # the one real spec is the only one: it still becomes requirements.txt
    assert outcomes["requirements.txt"].created
    for name in ("pipe.txt", "dir.txt"):
        outcome = outcomes[name]
        assert outcome.status is Status.UNCHANGED and not outcome.created
        [finding] = outcome.findings
        assert finding.level is Level.WARNING
        assert f"virtualenvs/{name} is not a regular file" in finding.message
