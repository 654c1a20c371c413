"""`heron update` on a running at-least-once topology (real processes): parallelism up,
then down, mid-stream; the sink's per-word sums cover every input and every input id is
acked; a dry run changes nothing; bad requests are clear errors."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from engine.statemgr import open_state_manager
from tests.e2e.heron.helpers import json_lines, wait_until
from tests.engine.cli.conftest import heron

pytestmark = pytest.mark.timeout(240)

PROJECT = Path(__file__).resolve().parents[2] / "e2e" / "heron" / "projects" / "acking"
LIMIT = 1500


def acked(out: Path) -> collections.Counter:
    events = [event for path in out.glob("*.jsonl") for event in json_lines(path)]
    return collections.Counter(e["id"] for e in events if e["event"] == "ack")


def word_sums(out: Path) -> collections.Counter:
    sums: collections.Counter = collections.Counter()
    for path in out.glob("sink-*.txt"):
        for line in path.read_text().splitlines():
            word, one = line.split()
            sums[word] += int(one)
    return sums


def instances_of(state, component: str) -> list[int]:
    pplan = state.get("pplans", "e2e_update")
    return sorted(i.info.task_id for i in pplan.instances if i.info.component_name == component)


def updates_seen(out: Path) -> dict[str, list[dict[str, int]]]:
    """sink task -> the parallelism (tasks per component) each ``update`` call gave it."""
    return {path.stem.split("-", 1)[1]: json_lines(path)
            for path in out.glob("updates-*.ndjson")}


def stream_managers(state) -> dict[str, tuple[int, frozenset[int]]]:
    """stmgr id -> (its pid, the task ids of its container), from the physical plan."""
    pplan = state.get("pplans", "e2e_update")
    tasks: dict[str, set[int]] = collections.defaultdict(set)
    for inst in pplan.instances:
        tasks[inst.stmgr_id].add(inst.info.task_id)
    return {s.id: (s.pid, frozenset(tasks[s.id])) for s in pplan.stmgrs}


def test_update_up_and_down_mid_stream_loses_nothing(real_engine, sweep, live_processes,
                                                     isolated_imports, tmp_path):
    out = tmp_path / "ledger"
    submitted = heron("submit", "local", str(PROJECT), "-n", "e2e_update",
                      "-o", f"e2e.limit={LIMIT}", "-o", f"e2e.out={out}", "-o", "e2e.rate=120")
    assert submitted.exit_code == 0, submitted.output
    with open_state_manager("local", root=real_engine / "state") as state:
        try:
            assert wait_until(lambda: len(acked(out)) > 100, timeout=60), "never got going"
            assert len(instances_of(state, "words")) == 2

            dry = heron("update", "e2e_update", "--component-parallelism", "words:3",
                        "--dry-run")
            assert dry.exit_code == 0, dry.output
            assert "words: parallelism 2 -> 3" in dry.output and "dry run" in dry.output
            assert len(instances_of(state, "words")) == 2  # nothing changed

            before = stream_managers(state)
            up = heron("update", "e2e_update", "--component-parallelism", "words:3")
            assert up.exit_code == 0, up.output
            assert wait_until(lambda: len(instances_of(state, "words")) == 3, timeout=60), \
                "the physical plan never showed three words tasks"
            # only containers whose instances changed were restarted
            after = stream_managers(state)
            touched = {s for s in before if before[s][1] != after[s][1]}
            assert touched and touched != set(before), (before, after)
            for stmgr, (pid, _) in before.items():
                assert (after[stmgr][0] != pid) == (stmgr in touched), (stmgr, before, after)
            # the sink mixes in Updatable: each of its tasks was told the new parallelism
            assert wait_until(lambda: len(updates_seen(out)) == 2, timeout=30), updates_seen(out)
            for task, seen in updates_seen(out).items():
                assert seen[-1]["words"] == 3 and seen[-1]["sink"] == 2, (task, seen)
            during_up = len(acked(out))
            assert wait_until(lambda: len(acked(out)) > during_up + 100, timeout=60), \
                "no progress after scaling up"

            down = heron("update", "e2e_update", "--component-parallelism", "words:1",
                         "--component-parallelism", "sink:1")
            assert down.exit_code == 0, down.output
            assert "'sink' is fields-grouped" in down.output
            assert wait_until(lambda: len(instances_of(state, "words")) == 1
                              and len(instances_of(state, "sink")) == 1, timeout=60)
            (survivor,) = instances_of(state, "sink")
            assert wait_until(lambda: {c: updates_seen(out)[str(survivor)][-1].get(c)
                                       for c in ("source", "words", "sink")}
                              == {"source": 1, "words": 1, "sink": 1}, timeout=30), \
                updates_seen(out)

            bad = heron("update", "e2e_update", "--component-parallelism", "nosuch:2")
            assert bad.exit_code == 2 and "no component 'nosuch'" in bad.output
            bad = heron("update", "e2e_update", "--component-parallelism", "words:zero")
            assert bad.exit_code == 2 and "words:zero" in bad.output

            assert wait_until(lambda: set(acked(out)) == set(range(LIMIT)), timeout=120), \
                f"ids never acked: {sorted(set(range(LIMIT)) - set(acked(out)))[:20]}"
        finally:
            killed = heron("kill", "e2e_update")
    assert killed.exit_code == 0, killed.output
    expected = collections.Counter(f"w{n % 13}" for n in range(LIMIT))
    sums = word_sums(out)
    assert all(sums[w] >= c for w, c in expected.items()), (sums, expected)
    assert wait_until(lambda: not live_processes(), timeout=15)
