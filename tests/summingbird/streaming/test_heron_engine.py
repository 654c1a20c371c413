"""The streaming platform on the heron engine (one OS process per task).

The whole catalogue runs on heron in ``test_conformance.py``; here: ``heron run`` taking a
Summingbird project, and a summer killed mid-run under at-least-once.
"""

from __future__ import annotations

import json
import logging
import random
import sqlite3
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner

from compat.summingbird import (
    CacheSize,
    FlushFrequency,
    InMemoryStore,
    Options,
    SQLiteStore,
    SummerParallelism,
    source,
)
from compat.summingbird.monoids import Sum
from compat.summingbird.platforms.streaming import StreamingRun, plan_streaming
from compat.summingbird.platforms.streaming.ledger import LEDGER_SUFFIX
from compat.summingbird.testing import words_of
from engine.common.process.spawn import read_pid_file
from engine.tools.cli.main import main

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parent / "projects" / "sb_wordcount"


def expected_counts() -> dict[str, int]:
    from sb_wordcount_job import LINES  # the project's src/, on sys.path once loaded

    return dict(Counter(w for line in LINES for w in line.split()))


@pytest.fixture
def heron_logging():
    """The CLI points the ``heron`` logger at the console of its invocation; put it back,
    so later tests do not log into a closed CliRunner stream."""
    logger = logging.getLogger("heron")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:], logger.level, logger.propagate = saved[0], saved[1], saved[2]


def heron_run(*args: str) -> dict:
    result = CliRunner().invoke(main, ["run", str(PROJECT), "--json", *args],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output[result.output.index("{"):])


def test_heron_run_takes_a_summingbird_job_and_shows_its_planned_components(
        tmp_path, monkeypatch, isolated_imports, heron_logging):
    store = tmp_path / "counts.sqlite"
    monkeypatch.setenv("SB_WORDCOUNT_STORE", str(store))
    logs = ["--log-dir", str(tmp_path / "logs")]

    summary = heron_run("--engine", "heron", "--time", "120", *logs)
    assert summary["reason"] == "finished"
    assert set(summary["components"]) == {"source-0", "flat_map-1", "sum_by_key-2-word-counts"}
    assert summary["components"]["sum_by_key-2-word-counts"]["tasks"] == 2

    def counts() -> dict[str, int]:
        return SQLiteStore(store).contents()

    assert counts() == expected_counts()
    # The ledger's scope is the topology's name: running the same topology over the same
    # input again (here on the storm engine) is idempotent ...
    heron_run("--engine", "storm", "--time", "60", *logs)
    assert counts() == expected_counts()
    # ... and a new run id starts a new scope, which counts the input again.
    heron_run("--engine", "storm", "--time", "60", "-o", "summingbird.run.id=second", *logs)
    assert counts() == {w: 2 * n for w, n in expected_counts().items()}
    with sqlite3.connect(store) as conn:
        scopes = dict(conn.execute(f'SELECT scope, COUNT(*) FROM "store{LEDGER_SUFFIX}" '
                                   "GROUP BY scope"))
    assert scopes == {"sb_wordcount": sum(expected_counts().values()),
                      "second": sum(expected_counts().values())}


def slow_words(line: str) -> list[tuple[str, int]]:
    """``words_of``, slowly enough (10 ms a line) that a kill lands while the run goes on."""
    time.sleep(0.01)
    return words_of(line)


def test_a_summer_killed_mid_run_leaves_the_store_equal_to_the_oracle(tmp_path):
    rng = random.Random(11)
    lines = [" ".join(rng.choices("abcdefghijklmnop", k=5)) for _ in range(400)]
    store = InMemoryStore({"a": 100})
    job = source(lines).flat_map(slow_words).sum_by_key(store, Sum()).name("counts")
    plan = plan_streaming(
        job, {"counts": Options(SummerParallelism(2), CacheSize(6), FlushFrequency(0.3))},
        config={"topology.message.timeout.secs": 3, "topology.max.spout.pending": 10},
        allow_in_memory_stores=True)
    summer = plan.node("sum_by_key-2-counts")
    killed: dict[str, int] = {}

    def kill_one_summer(run: StreamingRun, stats: dict, elapsed: float) -> None:
        if killed or stats[summer.name].executed < 200:
            return
        pid_file = min(run.pid_dir.glob(f"*_{summer.name}_*.pid"))
        proc = read_pid_file(pid_file)
        assert proc is not None, f"no live process for {pid_file}"
        proc.kill()
        proc.wait(10)
        killed[pid_file.stem] = proc.pid

    run = StreamingRun(plan, "heron", time_limit=150, working_dir=tmp_path / "run")
    result = run.finish(on_progress=kill_one_summer)

    assert killed, "the run ended before a summer could be killed"
    expected = Counter(w for line in lines for w in line.split())
    expected["a"] += 100
    assert store.contents() == dict(expected)
    spout = result.components["source-0"]
    assert spout.failed > 0  # the killed task's inputs timed out and were replayed
    # A replayed line's words also reach the summer task that survived, which had merged
    # them already: the ledger recognised them (a plain merge would have counted twice).
    logs = "".join(p.read_text() for p in (run.heron_dir / "logs").glob("*sum_by_key*.log"))
    assert "had been merged already: not merged again" in logs
    assert not psutil.pid_exists(next(iter(killed.values()))) or \
        psutil.Process(next(iter(killed.values()))).status() == psutil.STATUS_ZOMBIE
