"""`heron update` on a running effectively-once topology whose counting bolt keeps its
counts in keyed state (real processes): the bolt goes 2 -> 5 -> 1 tasks mid-stream and
its counts move with their words, so the (word, count) records its two-phase-commit
sink writes are every running count of every word exactly once: no count lost, none
repeated, none restarted from zero. The dry run says how many key groups move."""

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

pytestmark = pytest.mark.timeout(300)

PROJECT = Path(__file__).resolve().parents[2] / "e2e" / "heron" / "projects" / "stateful"
sys.path.insert(0, str(PROJECT / "src"))
from e2e_stateful_parts import expected_counts  # noqa: E402

NAME = "keyed_wordcount"
SENTENCES = 12_000
SPOUT_TASKS = 2


def records(out: Path) -> collections.Counter:
    return collections.Counter(tuple(json.loads(line)) for line in read_committed(out))


def count_tasks(state) -> int:
    pplan = state.get("pplans", NAME)
    return 0 if pplan is None else sum(1 for i in pplan.instances
                                       if i.info.component_name == "count")


def test_a_keyed_counting_bolt_resized_2_5_1_mid_stream_counts_every_word_exactly_once(
        real_engine, sweep, live_processes, isolated_imports, tmp_path):
    out = tmp_path / "out"
    wanted = collections.Counter(
        (word, k) for word, total in expected_counts(SENTENCES).items()
        for k in range(1, SPOUT_TASKS * total + 1))
    submitted = heron("submit", "local", str(PROJECT), "-n", NAME,
                      "-o", f"e2e.sentences={SENTENCES}", "-o", "e2e.pause_ms=6",
                      "-o", f"heron.connectors.file.sink.dir={out}")
    assert submitted.exit_code == 0, submitted.output
    with open_state_manager("local", root=real_engine / "state") as state:
        try:
            assert wait_until(lambda: sum(records(out).values()) > 2_000, timeout=90), \
                "no counts committed"
            dry = heron("update", NAME, "--component-parallelism", "count:5", "--dry-run")
            assert dry.exit_code == 0, dry.output
            assert "count: parallelism 2 -> 5" in dry.output
            assert "key groups" in dry.output
            for n in (5, 1):
                seen = sum(records(out).values())
                resized = heron("update", NAME, "--component-parallelism", f"count:{n}")
                assert resized.exit_code == 0, resized.output
                assert wait_until(lambda: count_tasks(state) == n, timeout=90), \
                    f"the physical plan never ran {n} count tasks"
                assert wait_until(lambda: sum(records(out).values()) > seen + 1_000,
                                  timeout=90), f"nothing committed after the resize to {n}"
            assert sum(records(out).values()) < sum(wanted.values()), \
                "the stream ended before the last resize: make it longer"
            assert wait_until(lambda: sum(records(out).values()) >= sum(wanted.values()),
                              timeout=120), "the stream never finished"
            got = records(out)
            assert got == wanted
            # the Topology Master's figures name the last resize and the groups it moved
            metrics = heron("metrics", NAME, "--json")
            assert metrics.exit_code == 0, metrics.output
            tm = next(v for k, v in json.loads(metrics.output).items()
                      if k.startswith("__tmanager__/"))
            before, after, moved = json.loads(tm["__rescale-last"])["count"]
            assert (before, after) == (5, 1) and 0 < moved <= 128
        finally:
            killed = heron("kill", NAME)
    assert killed.exit_code == 0, killed.output
    assert wait_until(lambda: not live_processes(), timeout=30), \
        [p.cmdline() for p in live_processes()]


def test_a_savepoint_round_trip_with_new_code_and_parallelism_continues_exactly(
        real_engine, sweep, live_processes, isolated_imports, tmp_path):
    """Run, `heron kill --savepoint`, change the counting bolt's code (its output format)
    and parallelism, `heron submit --from-savepoint`: the counts continue exactly where
    they stopped (the sink's records of both runs are every running count once)."""
    out = tmp_path / "out"
    first = heron("submit", "local", str(PROJECT), "-n", NAME,
                  "-o", f"e2e.sentences={SENTENCES}", "-o", "e2e.pause_ms=6",
                  "-o", f"heron.connectors.file.sink.dir={out}")
    assert first.exit_code == 0, first.output
    assert wait_until(lambda: sum(records(out).values()) > 3_000, timeout=90), "no counts"
    killed = heron("kill", NAME, "--savepoint", "--savepoint-id", "before-upgrade")
    assert killed.exit_code == 0, killed.output
    assert "savepoint of 'keyed_wordcount' written" in killed.output
    stopped_at = records(out)
    assert wait_until(lambda: not live_processes(), timeout=30)

    refused = heron("submit", "local", str(PROJECT), "-n", "stateful_wordcount",
                    "--from-savepoint", "before-upgrade")
    assert refused.exit_code == 2 and "'files'" in refused.output  # it has no sink

    upgraded = heron("submit", "local", str(PROJECT), "-n", "keyed_wordcount_v2",
                     "-o", f"e2e.sentences={SENTENCES}", "-o", "e2e.pause_ms=2",
                     "-o", f"heron.connectors.file.sink.dir={out}",
                     "--from-savepoint", "before-upgrade")
    assert upgraded.exit_code == 0, upgraded.output
    said = " ".join(upgraded.output.split())
    assert "starting from savepoint 'before-upgrade'" in said
    assert "from topology 'keyed_wordcount' at checkpoint ckpt-" in said
    assert "state of count (2 tasks)" in said
    wanted = collections.Counter(
        (word, k) for word, total in expected_counts(SENTENCES).items()
        for k in range(1, SPOUT_TASKS * total + 1))
    try:
        assert wait_until(lambda: sum(_normalised(out).values()) >= sum(wanted.values()),
                          timeout=150), "the second run never finished"
        got = _normalised(out)
        assert got == wanted
        # the second run wrote the new format only, and only the counts past the savepoint
        v2 = sum(n for (word, _), n in records(out).items() if word.startswith("v2:"))
        assert v2 == sum(got.values()) - sum(stopped_at.values()) > 0
        assert sum(n for (word, _), n in stopped_at.items() if word.startswith("v2:")) == 0
    finally:
        killed = heron("kill", "keyed_wordcount_v2")
    assert killed.exit_code == 0, killed.output
    assert wait_until(lambda: not live_processes(), timeout=30), \
        [p.cmdline() for p in live_processes()]


def _normalised(out: Path) -> collections.Counter:
    """Both versions' records as (word, count)."""
    got: collections.Counter = collections.Counter()
    for (word, count), n in records(out).items():
        got[(word[3:] if word.startswith("v2:") else word, count)] += n
    return got
