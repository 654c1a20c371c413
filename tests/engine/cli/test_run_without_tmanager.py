"""``heron run`` whose Topology Master never comes up fails (exit 1), naming it and its
log: the counts and the end of a run come through the Topology Master, so a run that
never heard from it used to print all-zero counts and exit 0."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.engine.cli.conftest import heron

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[3]
WORDCOUNT = REPO / "examples" / "wordcount"


def test_a_run_whose_topology_master_keeps_dying_exits_1_naming_it(heron_home, monkeypatch,
                                                                    tmp_path, isolated_imports):
    project = tmp_path / "wordcount"
    shutil.copytree(WORDCOUNT, project, ignore=shutil.ignore_patterns("logs"))
    # every engine process is a stand-in that exits (status 3) 0.1 s after it starts
    monkeypatch.setenv("HERON_STANDIN_EXIT_AFTER", "0.1")
    result = heron("run", str(project), "--time", "5",
                   "-o", "heron.executor.restart.backoff.initial.ms=100",
                   "-o", "heron.executor.restart.backoff.max.ms=200")
    assert result.exit_code == 1, result.output
    said = " ".join(result.output.split())
    assert "the Topology Master (heron-tmanager)" in said
    assert "exited with status 3" in said


def test_a_run_whose_topology_master_died_once_and_never_answered_exits_1(heron_home,
                                                                          monkeypatch, tmp_path,
                                                                          isolated_imports):
    project = tmp_path / "wordcount"
    shutil.copytree(WORDCOUNT, project, ignore=shutil.ignore_patterns("logs"))
    # it dies once; the restart backoff outlasts the run, so it is not yet crash-looping
    monkeypatch.setenv("HERON_STANDIN_EXIT_AFTER", "0.3")
    result = heron("run", str(project), "--time", "3",
                   "-o", "heron.executor.restart.backoff.initial.ms=20000",
                   "-o", "heron.executor.restart.backoff.max.ms=20000")
    assert result.exit_code == 1, result.output
    said = " ".join(result.output.split())
    assert "the Topology Master never came up" in said
    assert "heron-tmanager.log" in "".join(said.split())  # its log (the path may wrap)
