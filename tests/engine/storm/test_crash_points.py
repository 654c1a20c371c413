"""The storm engine's own crash points (``storm.*`` in engine/common/runtime/crash_points.py): the
engine is one process, so a death there ends the run. The keyed word count into a FileSink
and a RedisSink runs again and again with the same checkpoint root, one point armed per
run, each run dying there with ``os._exit`` as ``kill -9`` would, until an unarmed run
finishes: both sinks then hold every running count of every word exactly once."""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compat.connectors import read_committed
from engine.common.runtime.crash_points import CRASH_EXIT, CRASH_FILE_ENV, POINTS

pytestmark = pytest.mark.timeout(400)

REPO = Path(__file__).resolve().parents[3]
PROJECT = REPO / "tests" / "e2e" / "heron" / "projects" / "stateful"
sys.path.insert(0, str(PROJECT / "src"))
from e2e_stateful_parts import expected_counts  # noqa: E402

NAME = "crash_matrix"
SPOUT_TASKS = 2
SENTENCES = 3_000

#: in the order the runs die: the save path first (each run's first checkpoint), then a
#: restore of the checkpoint an earlier run made consistent
ORDER = ["storm.save.after_pre_save", "storm.save.stored_some", "storm.save.before_post_save",
         "storm.saved.post_save_some", "storm.restore.after_load"]


def test_the_order_names_every_crash_point_of_the_storm_engine():
    assert set(ORDER) == {p for p in POINTS if p.startswith("storm.")}


def run(project: Path, options: dict[str, str], env: dict[str, str]) -> subprocess.CompletedProcess:
    args = [sys.executable, "-c", "from engine.tools.cli.main import main; main()", "run",
            str(project), "-n", NAME, "--engine", "storm", "--time", "0"]
    for key, value in options.items():
        args += ["-o", f"{key}={value}"]
    return subprocess.run(args, env=env, cwd=project, capture_output=True, text=True,
                          timeout=180)


def test_each_storm_crash_point_keeps_both_sinks_exactly_once(tmp_path, redis_url):
    import redis

    project = tmp_path / "stateful"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("logs"))
    out, arming = tmp_path / "out", tmp_path / "crash.json"
    options = {"e2e.sentences": str(SENTENCES), "e2e.pause_ms": "5",
               "topology.stateful.checkpoint.interval.seconds": "0.5",
               "heron.statefulstorage.localfs.root.path": str(tmp_path / "checkpoints"),
               "heron.connectors.file.sink.dir": str(out),
               "heron.connectors.redis.url": redis_url,
               "heron.connectors.redis.sink.key": "counts"}
    env = {**os.environ, CRASH_FILE_ENV: str(arming)}
    for arm, point in enumerate(ORDER, start=1):
        arming.write_text(json.dumps({"point": point, "arm": arm}))
        died = run(project, options, env)
        assert died.returncode == CRASH_EXIT, (point, died.returncode, died.stdout[-2000:],
                                              died.stderr[-2000:])
        fired = json.loads(Path(f"{arming}.fired-{arm}").read_text())
        assert fired["point"] == point
    arming.unlink()
    finished = run(project, options, env)
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]

    wanted = collections.Counter((word, k) for word, total in expected_counts(SENTENCES).items()
                                 for k in range(1, SPOUT_TASKS * total + 1))
    files = collections.Counter(tuple(json.loads(line)) for line in read_committed(out))
    assert files == wanted
    client = redis.Redis.from_url(redis_url)
    try:
        listed = collections.Counter(tuple(json.loads(item))
                                     for item in client.lrange("counts", 0, -1))
    finally:
        client.close()
    assert listed == wanted
