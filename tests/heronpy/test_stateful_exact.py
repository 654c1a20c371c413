"""Heron's stateful word count (a heronpy spout keeping its position and a heronpy
bolt keeping its counts in heronpy ``State``, EFFECTIVELY_ONCE) on the heron engine,
with real processes: its counts are exact through ``kill -9`` of a counting instance, a
Stream Manager and the Topology Master, and through ``heron update`` of the counting
bolt 2 -> 4 (its counts move with their words: what Heron never did).

Counts are read from what the counting bolt emits after each update, ``(word, count)``,
logged by a bolt downstream: a rollback replays the same words onto the restored counts,
so each word's largest logged count is its total exactly; a count counted twice shows as
a larger one, a count lost (state that did not move with its key) as a smaller one.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.e2e.heron.helpers import HeronRun, wait_until
from tests.e2e.heron.test_effectively_once import paced, run_under_kills
from tests.engine.cli.conftest import heron, heron_home, live_processes, real_engine, sweep  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

PROJECT = Path(__file__).parent / "examples"
TOPOLOGY = "stateful_paced_topology"
WORDS = ["hello", "bye", "good", "bad", "heron", "storm"]


def largest_counts(log_dir: Path) -> dict[str, int]:
    best: Counter = Counter()
    for path in log_dir.glob("*.log"):
        for line in path.read_text().splitlines():
            word, _, count = line.partition(" ")
            if count.isdigit():  # a line cut by a kill is not a count
                best[word] = max(best[word], int(count))
    return dict(best)


def test_counts_are_exact_through_kill_9_of_an_instance_a_stream_manager_and_the_tmanager(
        tmp_path, isolated_imports):
    rounds = 2_000
    log_dir = tmp_path / "counts"
    run = HeronRun(PROJECT, TOPOLOGY, tmp_path / "run", workers=2,
                   options=paced(tmp_path, **{"e2e.rounds": rounds, "e2e.pause_ms": 5,
                                              "e2e.count_log": str(log_dir)}))
    run_under_kills(run, [("counting instance", "container_?_count_bolt"),
                          ("stream manager", "stmgr-1"),
                          ("topology master", "heron-tmanager")])
    assert largest_counts(log_dir) == {word: rounds for word in WORDS}
    # the restarted Topology Master restored the topology from the last checkpoint
    assert int(run.runner.instances["heron-tmanager"]["__restores"]) >= 1


def count_tasks(state, name: str) -> int:
    pplan = state.get("pplans", name)
    return 0 if pplan is None else sum(1 for i in pplan.instances
                                       if i.info.component_name == "count_bolt")


def test_counts_are_exact_when_the_counting_bolt_goes_from_2_to_4_tasks_mid_stream(
        real_engine, sweep, live_processes, isolated_imports, tmp_path):  # noqa: F811 (a fixture imported above)
    from engine.statemgr import open_state_manager

    rounds, name = 1_500, TOPOLOGY
    log_dir = tmp_path / "counts"
    fast = tmp_path / "fast"
    submitted = heron("submit", "local", str(PROJECT / "topologies" / f"{TOPOLOGY}.py"),
                      "-o", f"e2e.rounds={rounds}", "-o", "e2e.pause_ms=4",
                      "-o", f"e2e.fast_flag={fast}", "-o", f"e2e.count_log={log_dir}")
    assert submitted.exit_code == 0, submitted.output
    with open_state_manager("local", root=real_engine / "state") as state:
        try:
            assert wait_until(lambda: sum(largest_counts(log_dir).values()) > 600, 90), \
                "no counts logged"
            updated = heron("update", name, "--component-parallelism", "count_bolt:4")
            assert updated.exit_code == 0, updated.output
            assert wait_until(lambda: count_tasks(state, name) == 4, 60), updated.output
            before = sum(largest_counts(log_dir).values())
            assert before < len(WORDS) * rounds, "the input ended before the update"
            fast.touch()
            wanted = {word: rounds for word in WORDS}
            assert wait_until(lambda: largest_counts(log_dir) == wanted, 120), \
                largest_counts(log_dir)
        finally:
            fast.touch()
            killed = heron("kill", name)
    assert killed.exit_code == 0, killed.output
    assert wait_until(lambda: not live_processes(), timeout=15)
