"""``heron logs NAME stmgr`` / ``executor`` / ``metricsmgr`` / ``tmanager`` /
``scheduler`` tail the engine processes' logs that ``heron logs NAME`` lists (issue 44):
every container's, or one container's with a number; a component's instances as before.
A local topology's folder, as a killed local run leaves it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.cli.conftest import heron


@pytest.fixture
def logs(heron_home: Path) -> Path:
    folder = heron_home / "topologies" / "wordcount" / "logs"
    folder.mkdir(parents=True)
    for stem in ("stmgr-1", "stmgr-2", "metricsmgr-1", "executor-1", "executor-2",
                 "heron-tmanager", "scheduler", "container_1_count_bolt_1",
                 "container_2_count_bolt_2"):
        (folder / f"{stem}.log").write_text(f"first of {stem}\nlast of {stem}\n")
    return folder


def test_the_listing_names_them(logs):
    listed = heron("logs", "wordcount")
    assert listed.exit_code == 0, listed.output
    assert "stmgr-1.log" in listed.output and "executor-2.log" in listed.output


@pytest.mark.parametrize("args, shown", [
    (["stmgr"], ["stmgr-1", "stmgr-2"]),
    (["stmgr", "2"], ["stmgr-2"]),
    (["executor"], ["executor-1", "executor-2"]),
    (["executor", "1"], ["executor-1"]),
    (["metricsmgr"], ["metricsmgr-1"]),
    (["tmanager"], ["heron-tmanager"]),
    (["scheduler"], ["scheduler"]),
    (["stmgr-1"], ["stmgr-1"]),
    (["heron-tmanager"], ["heron-tmanager"]),
    (["count_bolt"], ["container_1_count_bolt_1", "container_2_count_bolt_2"]),
    (["count_bolt", "2"], ["container_2_count_bolt_2"]),
])
def test_a_process_kind_is_tailed_like_a_component(logs, args, shown):
    result = heron("logs", "wordcount", *args, "-n", "1")
    assert result.exit_code == 0, result.output
    assert sorted(line.split()[-1] for line in result.output.splitlines()
                  if line.startswith("last of ")) == shown
    assert "first of" not in result.output  # -n 1: the last line only
    if len(shown) > 1:
        assert all(f"==> {stem}.log <==" in result.output for stem in shown)


def test_a_missing_container_names_what_there_is(logs):
    result = heron("logs", "wordcount", "stmgr", "7")
    assert result.exit_code == 2
    assert "no logs for container 7's stmgr" in result.output
    assert "components: count_bolt; processes: stmgr, metricsmgr, executor, tmanager, " \
           "scheduler" in result.output
