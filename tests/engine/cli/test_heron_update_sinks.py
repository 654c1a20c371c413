"""`heron update` of a two-phase-commit sink's parallelism, 2 -> 1 and then 1 -> 3, on a
running effectively-once topology (real processes; issue 38): a two-task FileSink, and a
two-task RedisSink, each too slow for its spouts (its Stream Manager in backpressure),
with a checkpoint every 0.5 s.

Each resize rolls the topology back to the newest consistent checkpoint, and the sink's
per-task state (its prepared transactions) is shared out by
``TwoPhaseCommitBolt.rescale_state``. So that the rollback's checkpoint holds prepared
transactions no task has committed yet, the sink's first task is stalled right after it
saved a checkpoint (``issue38_parts``: ``e2e.stall_dir``): that checkpoint completes, the
news that it is consistent waits behind the data queued for the stalled task (the
backpressure), the next checkpoint stays in flight, and the update comes then. The
rollback must commit every old task's prepared transaction of it: the sink used to keep
one task's only (they were merged by checkpoint id, under which every task prepares), and
the other task's records were lost.

At the end every record the spouts produced is committed exactly once: in the committed
files, or in the Redis list.
"""

from __future__ import annotations

import collections
import json
import re
import sys
import time
from pathlib import Path

import pytest

from compat.connectors import read_committed
from engine.statemgr import open_state_manager
from tests.e2e.heron.helpers import wait_until
from tests.engine.cli.conftest import heron

pytestmark = pytest.mark.timeout(150)

PROJECT = Path(__file__).resolve().parents[2] / "e2e" / "heron" / "projects" / "stateful"
sys.path.insert(0, str(PROJECT / "src"))

#: records per spout task (two spout tasks); at about 1,000 records/s through the two
#: slow sink tasks (2 ms a record) the stream outlasts both updates
RECORDS = 6_000
SPOUT_TASKS = 2
RESTORE_LINE = re.compile(r"heron\.stmgr: restore \d+ to (\S+): heron update")


class FileOutput:
    def __init__(self, tmp_path: Path) -> None:
        self.dir = tmp_path / "out"

    def options(self) -> list[str]:
        return ["-o", f"heron.connectors.file.sink.dir={self.dir}"]

    def committed(self) -> collections.Counter:
        return collections.Counter(read_committed(self.dir))

    def close(self) -> None:
        pass


class RedisOutput:
    def __init__(self, url: str) -> None:
        import redis

        self.url = url
        self.client = redis.Redis.from_url(url, decode_responses=True)

    def options(self) -> list[str]:
        return ["-o", f"heron.connectors.redis.url={self.url}",
                "-o", "heron.connectors.redis.sink.key=records"]

    def committed(self) -> collections.Counter:
        return collections.Counter(self.client.lrange("records", 0, -1))

    def close(self) -> None:
        self.client.close()


def logs(home: Path, name: str) -> Path:
    return home / "topologies" / name / "logs"


def log_tails(home: Path, name: str, lines: int = 15) -> str:
    """The end of the Topology Master's, the Stream Managers' and the sinks' logs."""
    out = []
    for path in sorted(logs(home, name).glob("*.log")):
        if path.stem.startswith(("stmgr", "heron-tmanager")) or "_sink_" in path.stem:
            text = path.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {path.name}\n" + "\n".join(text))
    return "\n".join(out)


def given_up(home: Path, name: str) -> int:
    """Checkpoints the Topology Master gave up because a rollback came while in flight."""
    log = logs(home, name) / "heron-tmanager.log"
    return log.read_text(errors="replace").count("given up: the topology rolls back") \
        if log.exists() else 0


def rescale_restores(log: Path) -> list[str]:
    """The checkpoints a Stream Manager restored for `heron update`s, in order."""
    return RESTORE_LINE.findall(log.read_text(errors="replace")) if log.exists() else []


@pytest.mark.parametrize("sink", ["files", "redis"])
def test_a_sink_resized_2_1_3_under_backpressure_commits_every_record_exactly_once(
        sink, real_engine, sweep, live_processes, isolated_imports, tmp_path, request):
    name = f"sink_rescale_{sink}"
    output = (FileOutput(tmp_path) if sink == "files"
              else RedisOutput(request.getfixturevalue("redis_url")))
    stall = tmp_path / "stall"
    stall.mkdir()
    wanted = collections.Counter(f"{t}:{i}" for t in range(SPOUT_TASKS)
                                 for i in range(RECORDS))

    def committed() -> int:
        return sum(output.committed().values())

    def why() -> str:
        return log_tails(real_engine, name)

    submitted = heron("submit", "local", str(PROJECT), "-n", name,
                      "-o", f"e2e.records={RECORDS}", "-o", "e2e.pause_ms=2",
                      "-o", "e2e.sink_ms=2", "-o", f"e2e.stall_dir={stall}",
                      *output.options())
    assert submitted.exit_code == 0, submitted.output
    with open_state_manager("local", root=real_engine / "state") as state:

        def plan() -> tuple[int, str]:
            """(sink tasks, the Stream Manager of the sink's first task)."""
            pplan = state.get("pplans", name)
            sinks = sorted((i.info.task_id, i.stmgr_id) for i in pplan.instances
                           if i.info.component_name == "sink") if pplan else []
            return len(sinks), (sinks[0][1] if sinks else "")

        def newest_consistent() -> str:
            stored = state.get("statefulcheckpoints", name)
            kept = stored.consistent_checkpoints if stored is not None else []
            return kept[0].checkpoint_id if kept else ""

        def backpressure(stmgr: str) -> bool:
            shown = heron("metrics", name, "--json")
            if shown.exit_code != 0:
                return False
            figures = json.loads(shown.output).get(f"__stmgr__/{stmgr}", {})
            return figures.get("__backpressure") == "1"

        try:
            assert wait_until(lambda: committed() > 1_500, timeout=60), \
                "no records committed\n" + why()
            for step, n in ((1, 1), (2, 3)):
                _, stmgr = plan()
                stmgr_log = logs(real_engine, name) / f"{stmgr}.log"
                seen = committed()
                restores_before = len(rescale_restores(stmgr_log))
                in_flight_before = given_up(real_engine, name)
                # the sink's first task stalls after its next save: that checkpoint
                # completes, but its consistency news waits behind the stalled task's
                # queued data, and no later checkpoint can complete
                (stall / f"stall-{step}").touch()
                stalled = stall / f"stalled-{step}"
                assert wait_until(stalled.exists, timeout=30), \
                    f"the sink's first task never stalled (step {step})\n" + why()
                checkpoint = stalled.read_text()
                assert wait_until(lambda: newest_consistent() == checkpoint, timeout=30), \
                    (f"{checkpoint}, saved before the stall, never became consistent "
                     f"(newest: {newest_consistent()!r})\n" + why())
                assert wait_until(lambda: backpressure(stmgr), timeout=20), \
                    f"{stmgr} is not in backpressure while the sink stalls\n" + why()
                resized = heron("update", name, "--component-parallelism", f"sink:{n}")
                assert resized.exit_code == 0, resized.output
                assert wait_until(lambda: len(rescale_restores(stmgr_log)) > restores_before,
                                  timeout=60), \
                    f"{stmgr} never restored for the update to {n}\n" + why()
                # the rollback is to the checkpoint whose transactions are not committed
                assert rescale_restores(stmgr_log)[-1] == checkpoint, why()
                # and the checkpoint after it was in flight (the stalled task holds it)
                assert wait_until(lambda: given_up(real_engine, name) > in_flight_before,
                                  timeout=10), why()
                (stall / f"release-{step}").touch()
                assert wait_until(lambda: plan()[0] == n, timeout=60), \
                    f"the physical plan never ran {n} sink tasks\n" + why()
                assert wait_until(lambda: committed() > seen + 1_000, timeout=60), \
                    f"nothing committed after the resize to {n}\n" + why()
            assert committed() < sum(wanted.values()), \
                "the stream ended before the last resize: make it longer"
            # done once every record is in, or once nothing more comes for 10 s (some lost)
            last = [committed(), time.monotonic()]

            def settled() -> bool:
                count = committed()
                if count != last[0]:
                    last[:] = [count, time.monotonic()]
                return count >= sum(wanted.values()) or time.monotonic() - last[1] > 10
            assert wait_until(settled, timeout=60), "the stream never finished\n" + why()
            for _ in range(2):  # anything committed late (twice, say) is counted too
                newest = newest_consistent()
                wait_until(lambda: newest_consistent() != newest, timeout=5)
            got = output.committed()
            assert got == wanted, (
                f"{sum((wanted - got).values())} records lost, e.g. "
                f"{sorted(wanted - got)[:5]}; {sum((got - wanted).values())} committed "
                f"more than once, e.g. {sorted(got - wanted)[:5]}\n" + why())
        finally:
            for step in (1, 2):
                (stall / f"release-{step}").touch()
            output.close()
            killed = heron("kill", name)
            wait_until(lambda: not live_processes(), timeout=30)
    assert killed.exit_code == 0, killed.output
