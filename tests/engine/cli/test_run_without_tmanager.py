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


def run_with_dying_standins(tmp_path, monkeypatch, *, exit_after: float, secs: int,
                            backoff_ms: tuple[int, int]):
    """``heron run`` of a copy of the word count whose engine processes are stand-ins that
    exit (status 3) ``exit_after`` seconds after they start, restarted with ``backoff_ms``
    (initial, max); the CLI's result and its output on one line."""
    project = tmp_path / "wordcount"
    shutil.copytree(WORDCOUNT, project, ignore=shutil.ignore_patterns("logs"))
    monkeypatch.setenv("HERON_STANDIN_EXIT_AFTER", str(exit_after))
    result = heron("run", str(project), "--time", str(secs),
                   "-o", f"heron.executor.restart.backoff.initial.ms={backoff_ms[0]}",
                   "-o", f"heron.executor.restart.backoff.max.ms={backoff_ms[1]}")
    return result, " ".join(result.output.split())


def test_a_run_whose_topology_master_keeps_dying_exits_1_naming_it(heron_home, monkeypatch,
                                                                    tmp_path, isolated_imports):
    result, said = run_with_dying_standins(tmp_path, monkeypatch, exit_after=0.1, secs=5,
                                           backoff_ms=(100, 200))
    assert result.exit_code == 1, result.output
    assert "the Topology Master (heron-tmanager)" in said
    assert "exited with status 3" in said


def test_a_run_whose_topology_master_died_once_and_never_answered_exits_1(heron_home,
                                                                          monkeypatch, tmp_path,
                                                                          isolated_imports):
    # it dies once; the restart backoff outlasts the run, so it is not yet crash-looping
    result, said = run_with_dying_standins(tmp_path, monkeypatch, exit_after=0.3, secs=3,
                                           backoff_ms=(20000, 20000))
    assert result.exit_code == 1, result.output
    assert "the Topology Master never came up" in said
    assert "heron-tmanager.log" in "".join(said.split())  # its log (the path may wrap)
