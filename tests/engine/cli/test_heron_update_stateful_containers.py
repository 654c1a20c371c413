"""`heron update` that adds a container and then removes it again, on a running
effectively-once keyed word count under load (real processes; issue 38, defect 12): the
counting bolt goes 2 -> 5 tasks on 3 containers, then 5 -> 2 tasks on 2 containers. Both
updates complete, the count goes on after the second (the Stream Managers that stay must
not keep anything addressed to the Stream Manager that was removed), and the (word,
count) records the two-phase-commit sink commits are every running count of every word
exactly once."""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

import pytest

from compat.connectors import read_committed
from engine.statemgr import open_state_manager
from tests.e2e.heron.helpers import wait_until
from tests.engine.cli.conftest import heron

pytestmark = pytest.mark.timeout(240)

PROJECT = Path(__file__).resolve().parents[2] / "e2e" / "heron" / "projects" / "stateful"
sys.path.insert(0, str(PROJECT / "src"))
from e2e_stateful_parts import expected_counts  # noqa: E402

NAME = "keyed_wordcount"
#: sentences per spout task: at 2 ms per call of 5 sentences (about 7,500 words/s per
#: spout task, as the defect's 12,000 words/s) long enough for both updates
SENTENCES = 40_000
SPOUT_TASKS = 2


def records(out: Path) -> collections.Counter:
    return collections.Counter(tuple(json.loads(line)) for line in read_committed(out))


def layout(state) -> tuple[int, int]:
    """(count tasks, stream managers) of the physical plan in force."""
    pplan = state.get("pplans", NAME)
    if pplan is None:
        return 0, 0
    return (sum(1 for i in pplan.instances if i.info.component_name == "count"),
            len(pplan.stmgrs))


def stmgr_log_tails(home: Path, lines: int = 25) -> str:
    """The end of every Stream Manager's and the Topology Master's log, for a failure."""
    out = []
    for path in sorted((home / "topologies" / NAME).rglob("*.log")):
        if "stmgr" in path.name or "tmanager" in path.name:
            text = path.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {path.name}\n" + "\n".join(text))
    return "\n".join(out)


def test_a_keyed_word_count_resized_onto_3_containers_and_back_to_2_keeps_counting_exactly(
        real_engine, sweep, live_processes, isolated_imports, tmp_path):
    out = tmp_path / "out"
    wanted = collections.Counter(
        (word, k) for word, total in expected_counts(SENTENCES).items()
        for k in range(1, SPOUT_TASKS * total + 1))
    submitted = heron("submit", "local", str(PROJECT), "-n", NAME,
                      "-o", f"e2e.sentences={SENTENCES}", "-o", "e2e.pause_ms=2",
                      "-o", f"heron.connectors.file.sink.dir={out}")
    assert submitted.exit_code == 0, submitted.output
    with open_state_manager("local", root=real_engine / "state") as state:
        try:
            assert wait_until(lambda: sum(records(out).values()) > 2_000, timeout=60), \
                "no counts committed\n" + stmgr_log_tails(real_engine)
            for count, containers in ((5, 3), (2, 2)):
                resized = heron("update", NAME, "--component-parallelism", f"count:{count}",
                                "--container-number", str(containers))
                assert resized.exit_code == 0, resized.output
                assert wait_until(lambda: layout(state) == (count, containers), timeout=60), \
                    (f"the physical plan never ran {count} count tasks on {containers} "
                     f"containers: {layout(state)}\n" + stmgr_log_tails(real_engine))
                # counted from the new plan on: what was committed before it is no progress
                seen = sum(records(out).values())
                assert seen + 5_000 < sum(wanted.values()), \
                    f"the stream was nearly over at the resize to {count}: make it longer"
                assert wait_until(lambda: sum(records(out).values()) > seen + 5_000,
                                  timeout=45), \
                    (f"nothing committed after the resize to {count} tasks on {containers} "
                     f"containers\n" + stmgr_log_tails(real_engine))
            assert wait_until(lambda: sum(records(out).values()) >= sum(wanted.values()),
                              timeout=90), \
                "the stream never finished\n" + stmgr_log_tails(real_engine)
            got = records(out)
            assert got == wanted, (sorted((got - wanted).items())[:10],
                                   sorted((wanted - got).items())[:10])
        finally:
            killed = heron("kill", NAME)
            # gone before the fixtures look, whether the test passed or not
            wait_until(lambda: not live_processes(), timeout=30)
    assert killed.exit_code == 0, killed.output
    assert wait_until(lambda: not live_processes(), timeout=30), \
        [p.cmdline() for p in live_processes()]
