"""Every crash point of the effectively-once protocols, on the heron engine, with real
processes (issue 38): a keyed word count into a FileSink and a RedisSink runs under a
steady load while the test arms each point of engine/common/runtime/crash_points.py in turn
(through HERON_TEST_CRASH_FILE); one process dies there with ``os._exit``, as ``kill -9``
would; the test waits until a checkpoint taken after the death completes (the topology
recovered and flows again) and arms the next. Points on the restore path are reached by
killing a stateless task once the point is armed; the rescale point by ``heron update``;
the savepoint point by ``heron savepoint``. At the end both sinks hold every running count
of every word exactly once: nothing lost, nothing twice.

One topology serves the whole matrix, restarting only what died. The test fails when a
point is added to the engine without a line here."""

from __future__ import annotations

import collections
import json
import subprocess
import sys
from pathlib import Path

import pytest

from compat.connectors import read_committed
from engine.common.runtime.crash_points import CRASH_FILE_ENV, POINTS
from engine.statefulstorage.savepoints import SavepointError, find_savepoint
from engine.statemgr import open_state_manager
from tests.e2e.heron.helpers import PROJECTS, kill_one, wait_until
from tests.engine.cli.conftest import heron, heron_home, live_processes, real_engine, sweep  # noqa: F401

pytestmark = pytest.mark.timeout(420)

PROJECT = PROJECTS / "stateful"
sys.path.insert(0, str(PROJECT / "src"))
from e2e_stateful_parts import expected_counts  # noqa: E402

NAME = "crash_matrix"
SPOUT_TASKS = 2
#: sentences per spout task: at 20 ms per call of 5 (about 750 words/s per task) they
#: outlast the matrix several times over; then the spouts run fast to the end
SENTENCES = 40_000

#: (point, the process that dies there, what makes the step happen): None for the
#: checkpoint path (a checkpoint starts every 0.5 s), "kill split" for the restore path (a
#: stateless task killed once the point is armed starts a rollback), "update" for the
#: rescale (the counting bolt goes to 3 tasks), "savepoint" for the savepoint's copy
MATRIX: list[tuple[str, str, str | None]] = [
    ("instance.save.after_pre_save", "files", None),
    ("instance.save.after_pre_save", "redis", None),
    ("instance.save.after_store", "count", None),
    ("stmgr.stored.before_markers", "stmgr-1", None),
    ("stmgr.aligned.before_forward", "stmgr-2", None),
    ("instance.saved.after_post_save", "files", None),
    ("instance.saved.after_post_save", "redis", None),
    ("tmanager.consistent.before_record", "tmanager", None),
    ("tmanager.consistent.before_notify", "tmanager", None),
    ("tmanager.consistent.notified_some", "tmanager", None),
    ("instance.restore.after_load", "count", "kill split"),
    ("instance.restore.at_start", "files", "kill split"),
    ("stmgr.restore.mid", "stmgr-2", "kill split"),
    ("stmgr.restore.before_answer", "stmgr-1", "kill split"),
    ("tmanager.restore.sent_some", "tmanager", "kill split"),
    ("tmanager.restore.before_start", "tmanager", "kill split"),
    ("instance.restore.rescaled", "count", "update"),
    ("savepoint.copy.half_written", "tmanager", "savepoint"),
]


def test_the_matrix_names_every_crash_point_of_the_heron_engine():
    assert {point for point, _, _ in MATRIX} == {p for p in POINTS if not p.startswith("storm.")}


def wanted() -> collections.Counter:
    return collections.Counter((word, k) for word, total in expected_counts(SENTENCES).items()
                               for k in range(1, SPOUT_TASKS * total + 1))


def file_records(out: Path) -> collections.Counter:
    return collections.Counter(tuple(json.loads(line)) for line in read_committed(out))


def redis_records(client) -> collections.Counter:
    return collections.Counter(tuple(json.loads(item)) for item in client.lrange("counts", 0, -1))


def newest_checkpoint_ms(state) -> int:
    record = state.get("statefulcheckpoints", NAME)
    if record is None or not len(record.consistent_checkpoints):
        return 0
    return int(record.consistent_checkpoints[0].checkpoint_id.rsplit("-", 1)[-1])


def logs_tail(home: Path, lines: int = 15) -> str:
    out = []
    for path in sorted((home / "topologies" / NAME / "logs").glob("*.log")):
        if path.name.startswith(("heron-tmanager", "stmgr-")):
            text = path.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {path.name}\n" + "\n".join(text))
    return "\n".join(out)


def test_every_crash_point_keeps_both_sinks_exactly_once(real_engine, sweep, live_processes,  # noqa: F811 (a fixture imported above)
                                                         isolated_imports, redis_url,
                                                         monkeypatch, tmp_path):
    import redis

    arming = tmp_path / "crash.json"
    monkeypatch.setenv(CRASH_FILE_ENV, str(arming))  # every process of the topology reads it
    out, fast = tmp_path / "out", tmp_path / "fast"
    submitted = heron("submit", "local", str(PROJECT), "-n", NAME,
                      "-o", f"e2e.sentences={SENTENCES}", "-o", "e2e.pause_ms=20",
                      "-o", f"e2e.fast_flag={fast}",
                      "-o", f"heron.connectors.file.sink.dir={out}",
                      "-o", f"heron.connectors.redis.url={redis_url}",
                      "-o", "heron.connectors.redis.sink.key=counts",
                      "-o", "heron.executor.restart.backoff.initial.ms=200")
    assert submitted.exit_code == 0, submitted.output
    pids = real_engine / "topologies" / NAME / "pids"
    client = redis.Redis.from_url(redis_url)
    fired: list[str] = []
    savepoint_cli = None
    try:
        with open_state_manager("local", root=real_engine / "state") as state:
            assert wait_until(lambda: newest_checkpoint_ms(state), timeout=90), \
                f"no checkpoint completed\n{logs_tail(real_engine)}"
            for arm, (point, where, trigger) in enumerate(MATRIX, start=1):
                arming.write_text(json.dumps({"point": point, "arm": arm, "where": where}))
                marker = Path(f"{arming}.fired-{arm}")
                if trigger == "kill split":
                    assert wait_until(lambda: kill_one(pids, "container_?_split"), 30)
                elif trigger == "update":
                    updated = heron("update", NAME, "--component-parallelism", "count:3")
                    assert updated.exit_code == 0, updated.output
                elif trigger == "savepoint":
                    savepoint_cli = subprocess.Popen(
                        [sys.executable, "-c", "from engine.tools.cli.main import main; main()",
                         "savepoint", NAME, "--id", "torn"],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                assert wait_until(marker.exists, timeout=60), \
                    f"{point} ({where}) never fired\n{logs_tail(real_engine)}"
                fired.append(point)
                # recovered: a checkpoint started after the death is consistent
                died_ms = int(marker.stat().st_mtime * 1000)
                assert wait_until(lambda: newest_checkpoint_ms(state) > died_ms,
                                  timeout=90), \
                    f"no checkpoint after {point} ({where})\n{logs_tail(real_engine)}"
            arming.unlink()

            # the half-copied savepoint is none; the next one is whole
            with pytest.raises(SavepointError):
                find_savepoint("torn", str(real_engine / "savepoints"))
            whole = heron("savepoint", NAME, "--id", "whole")
            assert whole.exit_code == 0, whole.output
            assert find_savepoint("whole", str(real_engine / "savepoints")).is_dir()

            fast.touch()
            total = sum(wanted().values())
            assert wait_until(lambda: sum(file_records(out).values()) >= total
                              and client.llen("counts") >= total, timeout=150), \
                f"the run never finished\n{logs_tail(real_engine)}"
        assert file_records(out) == wanted()
        assert redis_records(client) == wanted()
    finally:
        client.close()
        if savepoint_cli is not None:
            savepoint_cli.kill()
            savepoint_cli.wait(10)
        fast.touch()
        heron("kill", NAME, "--wait", "0")
    assert fired == [point for point, _, _ in MATRIX]
    assert live_processes() == []
