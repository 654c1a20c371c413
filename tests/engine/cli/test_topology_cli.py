"""heron submit / list / logs / restart / kill / activate against the local scheduler,
with stand-ins for the Topology Master, Stream Managers and instances."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from engine.tools.cli import kill_command as topology_commands
from tests.engine.cli.conftest import heron

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[3]
WORDCOUNT = REPO / "examples" / "wordcount"
#: the Summingbird job project `heron run` is tested with (tests/summingbird/streaming)
SB_WORDCOUNT = REPO / "tests" / "summingbird" / "streaming" / "projects" / "sb_wordcount"


def wait_for(cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def test_kill_of_an_unknown_name_is_bad_input(heron_home):
    result = heron("kill", "nope")
    assert result.exit_code == 2
    assert "heron: error: no topology named 'nope' (running: none)" in result.output


def test_list_when_nothing_runs(heron_home):
    result = heron("list")
    assert result.exit_code == 0
    assert "no topologies" in result.output


def test_activate_unknown_and_restart_unknown(heron_home):
    assert heron("activate", "ghost").exit_code == 2
    assert heron("restart", "ghost", "1").exit_code == 2
    result = heron("logs", "ghost")
    assert result.exit_code == 2 and "no logs for topology 'ghost'" in result.output


def test_submit_list_refuse_restart_logs_kill(heron_home, sweep, isolated_imports,
                                               live_processes):
    result = heron("submit", "local", str(WORDCOUNT), "-w", "2", "-o", "wordcount.seed=7")
    assert result.exit_code == 0, result.output
    assert "submitted topology 'wordcount'" in result.output
    working = heron_home / "topologies" / "wordcount"
    assert (working / "launch.json").exists()
    assert str(working / "logs") in result.output

    listed = heron("list")
    assert listed.exit_code == 0
    assert "wordcount" in listed.output and "RUNNING" in listed.output
    row = next(line for line in listed.output.splitlines() if "wordcount-" in line)
    assert "RUNNING" in row and "│ 2 " in row  # two containers

    again = heron("submit", "local", str(WORDCOUNT))
    assert again.exit_code == 2
    assert ("heron: error: topology 'wordcount' is already running; heron kill wordcount first"
            in again.output)

    assert heron("restart", "wordcount", "2").exit_code == 0
    bad = heron("restart", "wordcount", "9")
    assert bad.exit_code == 2 and "no container 9" in bad.output

    # The Topology Master is a stand-in: it never publishes a location.
    act = heron("activate", "wordcount")
    assert act.exit_code == 1 and "Topology Master is not running" in act.output
    metrics = heron("metrics", "wordcount")
    assert metrics.exit_code == 1
    assert "no metrics for 'wordcount': its Topology Master is not running" in metrics.output

    assert wait_for(lambda: any("standin" in p.read_text()
                                for p in (working / "logs").glob("container_*_count_bolt_*.log")))
    logs = heron("logs", "wordcount")
    assert "scheduler.log" in logs.output and "stmgr-1.log" in logs.output
    one = heron("logs", "wordcount", "count_bolt", "-n", "5")
    assert one.exit_code == 0 and "standin" in one.output

    killed = heron("kill", "wordcount", "--wait", "0")
    assert killed.exit_code == 0, killed.output
    assert "killed topology 'wordcount'" in killed.output
    assert "no topologies" in heron("list").output
    # kill returns once its processes are gone, not while they are still exiting
    assert live_processes() == []
    assert not (working / "pids" / "scheduler.pid").exists()


def test_deploy_deactivated_and_kill_when_the_scheduler_does_not_answer(
        heron_home, sweep, isolated_imports, live_processes, monkeypatch):
    result = heron("submit", "local", str(WORDCOUNT), "--deploy-deactivated")
    assert result.exit_code == 0, result.output
    assert "PAUSED" in heron("list").output
    working = heron_home / "topologies" / "wordcount"
    assert wait_for(lambda: len(live_processes()) >= 1 + 2 + 1 + 2)
    # the service that answers (its supervisor only restarts it): alive but deaf
    assert wait_for(lambda: (working / "pids" / "scheduler-service.pid").exists())
    scheduler_pid = int((working / "pids" / "scheduler-service.pid").read_text().split()[0])
    os.kill(scheduler_pid, signal.SIGSTOP)
    monkeypatch.setattr(topology_commands, "KILL_TIMEOUT_SECS", 1.0)
    killed = heron("kill", "wordcount", "--wait", "0")
    assert killed.exit_code == 0, killed.output
    assert "did not answer" in killed.output and "pid files" in killed.output
    assert wait_for(lambda: live_processes() == [])
    assert "no topologies" in heron("list").output


def test_submit_of_a_summingbird_job_prints_its_planned_components(
        heron_home, sweep, isolated_imports, live_processes, tmp_path, monkeypatch):
    # the job's store (a SQLite file) out of the source tree; the stand-ins never write it
    monkeypatch.setenv("SB_WORDCOUNT_STORE", str(tmp_path / "counts.sqlite"))
    result = heron("submit", "local", str(SB_WORDCOUNT))
    assert result.exit_code == 0, result.output
    assert "submitted topology 'sb_wordcount'" in result.output
    lines = result.output.splitlines()
    first = lines.index("  components:") + 1
    # the nodes the Summingbird planner made, as `heron run` lists them (its summary)
    assert [line.split() for line in lines[first:first + 4]] == [
        ["source-0", "spout", "1", "task"], ["flat_map-1", "bolt", "1", "task"],
        ["sum_by_key-2-word-counts", "bolt", "2", "tasks"],
        ["working", "dir:", str(heron_home / "topologies" / "sb_wordcount")]]
    # the scheduler, two executors, Topology Master, Stream Manager, Metrics Manager and
    # one (stand-in) instance per planned task
    assert wait_for(lambda: len(live_processes()) >= 1 + 2 + 3 + 4)

    killed = heron("kill", "sb_wordcount", "--wait", "0")
    assert killed.exit_code == 0, killed.output
    assert "killed topology 'sb_wordcount'" in killed.output
    assert wait_for(lambda: live_processes() == [])
    assert "no topologies" in heron("list").output


def test_submit_of_a_broken_project_is_bad_input(heron_home, tmp_path):
    result = heron("submit", "local", str(tmp_path / "missing"))
    assert result.exit_code == 2
    assert result.output.startswith("heron: error: ")
    assert not (heron_home / "topologies").exists()


def test_unreachable_zookeeper_fails_in_bounded_time(heron_home):
    started = time.monotonic()
    result = heron("list", "--state-manager", "zookeeper", "--zk", "127.0.0.1:1")
    assert result.exit_code == 1
    assert "heron: error: state manager (zookeeper 127.0.0.1:1/heron)" in result.output
    assert time.monotonic() - started < 30
    missing = heron("list", "--state-manager", "zookeeper")
    assert missing.exit_code == 2 and "--zk" in missing.output
