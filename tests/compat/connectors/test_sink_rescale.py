"""FileSink and RedisSink across parallelism changes (2 -> 1, 1 -> 3, 3 -> 2): the tasks
prepare under the same checkpoint id, the topology is rescaled before they commit, and
every record is committed exactly once, by the new first task on restore; FileSink
leaves no temporary file once the next checkpoint is consistent."""

from __future__ import annotations

import json

import pytest
import redis

from compat.connectors import FileSink, RedisSink, read_committed
from compat.storm_api.state import HashMapState
from compat.storm_api.testing import BoltHarness
from engine.statefulstorage.rescale import rescale_task_states
from tests.compat.connectors.helpers import checkpoint, roundtrip

SOURCES = {"spout": ["word", "n"]}
FIRST_TASK = 7
PATHS = [(2, 1), (1, 3), (3, 2), (2, 1, 3, 2)]


def run(cls: type, conf: dict, path: tuple[int, ...]) -> tuple[list[list], list[BoltHarness]]:
    """Each step: the tasks (restored or rescaled state) write two records each, all
    prepare ``ckpt-<step>``, the checkpoint is consistent, and the topology is rescaled
    to the next step's parallelism before any task got post_save. At the end the tasks
    are restored at the same parallelism. Returns what was written and the last tasks
    (open: the caller checkpoints and closes them)."""
    states: list = [HashMapState() for _ in range(path[0])]
    written: list[list] = []
    for step, _parallelism in enumerate(path):
        tasks = [BoltHarness(cls, conf=conf, sources=SOURCES, component_name="sink",
                             task_id=FIRST_TASK + i, state=HashMapState(state))
                 for i, state in enumerate(states)]
        for i, task in enumerate(tasks):
            for r in range(2):
                values = [f"step{step}-task{i}", r]
                task.process(values)
                written.append(values)
        saved = [checkpoint(task.component, f"ckpt-{step + 1}") for task in tasks]
        for task in tasks:
            task.close()
        if step + 1 < len(path):
            states = [roundtrip(s) for s in rescale_task_states(cls, "sink", saved,
                                                                path[step + 1])]
        else:
            states = saved
    last = [BoltHarness(cls, conf=conf, sources=SOURCES, component_name="sink",
                        task_id=FIRST_TASK + i, state=HashMapState(state))
            for i, state in enumerate(states)]
    return written, last


def next_checkpoint_is_consistent(tasks: list[BoltHarness], checkpoint_id: str) -> None:
    for task in tasks:
        checkpoint(task.component, checkpoint_id)
    for task in tasks:
        task.component.post_save(checkpoint_id)
        task.close()


@pytest.mark.parametrize("path", PATHS, ids=["->".join(map(str, p)) for p in PATHS])
def test_file_sink_commits_every_tasks_records_once_across_a_rescale(tmp_path, path):
    out = tmp_path / "out"
    written, last = run(FileSink, {"heron.connectors.file.sink.dir": str(out)}, path)
    committed = [json.loads(line) for line in read_committed(out)]
    assert sorted(committed) == sorted(written)
    next_checkpoint_is_consistent(last, "ckpt-99")
    assert sorted(json.loads(line) for line in read_committed(out)) == sorted(written)
    assert [p.name for p in out.iterdir() if p.name.endswith(".inprogress")] == []


@pytest.mark.parametrize("path", PATHS, ids=["->".join(map(str, p)) for p in PATHS])
def test_redis_sink_commits_every_tasks_records_once_across_a_rescale(redis_url, path):
    conf = {"heron.connectors.redis.url": redis_url, "heron.connectors.redis.sink.key": "out"}
    written, last = run(RedisSink, conf, path)
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        assert sorted(json.loads(v) for v in client.lrange("out", 0, -1)) == sorted(written)
        next_checkpoint_is_consistent(last, "ckpt-99")
        assert sorted(json.loads(v) for v in client.lrange("out", 0, -1)) == sorted(written)
    finally:
        client.close()
