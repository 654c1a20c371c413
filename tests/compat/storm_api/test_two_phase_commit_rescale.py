"""TwoPhaseCommitBolt across a parallelism change: every old task's prepared transactions
survive ``rescale_state`` (all tasks prepare under the same checkpoint id) and the new
first task commits each of them exactly once in ``init_state``, in checkpoint order; the
rescaled state goes through the topology's serializer (msgpack) as a checkpoint's does.

The sink here commits into an in-memory "outside system" that records every ``commit``
call, so a transaction committed twice or never shows."""

from __future__ import annotations

import pytest

from compat.storm_api.state import (
    INHERITED_TRANSACTIONS_KEY,
    PENDING_TRANSACTIONS_KEY,
    HashMapState,
    TwoPhaseCommitBolt,
)
from compat.storm_api.testing import BoltHarness
from engine.common.serialization import serializer_for_config
from engine.statefulstorage.codec import decode_state, encode_state
from engine.statefulstorage.rescale import rescale_task_states

SERIALIZER = serializer_for_config({})  # msgpack, the default
SOURCES = {"spout": ["record"]}
FIRST_TASK = 7


class Outside:
    """The system a sink writes to: every commit call, in order."""

    def __init__(self) -> None:
        self.commits: list[tuple[str, int, list[str]]] = []  # (checkpoint, preparer, records)
        self.aborted: list[list[str]] = []

    def records(self) -> list[str]:
        return [r for _, _, records in self.commits for r in records]


class RecordingSink(TwoPhaseCommitBolt):
    outside: Outside

    def begin(self) -> None:
        self.open: list[str] = []

    def process(self, tup) -> None:
        self.open.append(tup.values[0])

    def pre_commit(self, checkpoint_id):
        if not self.open:
            return None
        prepared = {"task": self.task_id, "records": self.open}
        self.open = []
        return prepared

    def commit(self, checkpoint_id, prepared) -> None:
        if prepared:
            self.outside.commits.append((checkpoint_id, prepared["task"],
                                         list(prepared["records"])))

    def abort(self) -> None:
        self.outside.aborted.append(list(self.open))
        self.open = []


def sink_class() -> type:
    return type("Sink", (RecordingSink,), {"outside": Outside()})


def start(cls: type, states: list) -> list[BoltHarness]:
    """The tasks of the sink, each given its (restored or rescaled) state by init_state."""
    return [BoltHarness(cls, sources=SOURCES, component_name="sink", task_id=FIRST_TASK + i,
                        state=HashMapState(state)) for i, state in enumerate(states)]


def through_serializer(state) -> HashMapState:
    """The state as a checkpoint stores it and a restore reads it back (msgpack)."""
    return decode_state(encode_state(state, SERIALIZER, component="sink", task=0), SERIALIZER)


def save(task: BoltHarness, checkpoint_id: str) -> HashMapState:
    task.component.pre_save(checkpoint_id)
    return through_serializer(task.component.state)


def rescale(cls: type, saved: list, parallelism: int) -> list[HashMapState]:
    """What a restore at another parallelism gives the new tasks (the engine's own call)."""
    return [through_serializer(s)
            for s in rescale_task_states(cls, "sink", saved, parallelism)]


@pytest.mark.parametrize("path", [(2, 1), (1, 3), (3, 2), (2, 1, 3, 2)])
def test_every_tasks_prepared_transactions_survive_a_rescale_and_commit_exactly_once(path):
    cls = sink_class()
    states: list = [{} for _ in range(path[0])]
    written: list[str] = []
    for step, _parallelism in enumerate(path):
        tasks = start(cls, states)
        for i, task in enumerate(tasks):
            for r in range(2):
                record = f"step{step}-task{i}-{r}"
                task.process([record])
                written.append(record)
        # every task prepares under the same checkpoint id; the checkpoint is consistent
        # and the topology is rescaled before any task got post_save
        saved = [save(task, f"ckpt-{step + 1}") for task in tasks]
        for task in tasks:
            task.close()
        if step + 1 < len(path):
            states = rescale(cls, saved, path[step + 1])
        else:
            states = saved  # the last restore is at the same parallelism
    start(cls, states)
    assert sorted(cls.outside.records()) == sorted(written)  # every record, once
    transactions = [(cid, task) for cid, task, _ in cls.outside.commits]
    assert len(transactions) == len(set(transactions)) == sum(path)


def test_inherited_transactions_are_committed_in_checkpoint_order():
    cls = sink_class()
    tasks = start(cls, [{}, {}])
    for checkpoint_id in ("ckpt-9", "ckpt-10"):  # post_save never came for either
        for i, task in enumerate(tasks):
            task.process([f"{checkpoint_id}-task{i}"])
        saved = [save(task, checkpoint_id) for task in tasks]
    (new,) = start(cls, rescale(cls, saved, 1))
    assert [(cid, task) for cid, task, _ in cls.outside.commits] == [
        ("ckpt-9", 7), ("ckpt-9", 8), ("ckpt-10", 7), ("ckpt-10", 8)]
    # committed, then forgotten: the next checkpoint holds only what the task prepares
    assert INHERITED_TRANSACTIONS_KEY not in new.component.state
    assert new.component.state[PENDING_TRANSACTIONS_KEY] == {}


def test_after_a_rescale_post_save_commits_only_the_new_tasks_own_transactions():
    cls = sink_class()
    old = start(cls, [{}, {}])
    for i, task in enumerate(old):
        task.process([f"old-{i}"])
    saved = [save(task, "ckpt-1") for task in old]
    first, second, third = start(cls, rescale(cls, saved, 3))
    assert sorted(cls.outside.records()) == ["old-0", "old-1"]
    first.process(["new-0"])
    third.process(["new-2"])
    for task in (first, second, third):
        task.component.pre_save("ckpt-2")
    for task in (first, second, third):
        task.component.post_save("ckpt-2")
    assert sorted(cls.outside.records()) == ["new-0", "new-2", "old-0", "old-1"]
    assert [(cid, task) for cid, task, _ in cls.outside.commits][2:] == [
        ("ckpt-2", 7), ("ckpt-2", 9)]


def test_a_state_saved_before_inherited_transactions_existed_still_commits():
    cls = sink_class()
    older = {PENDING_TRANSACTIONS_KEY: {"ckpt-3": {"task": 4, "records": ["a", "b"]}}}
    (task,) = start(cls, [older])
    assert cls.outside.commits == [("ckpt-3", 4, ["a", "b"])]
    assert task.component.state[PENDING_TRANSACTIONS_KEY] == {}
    # and such states rescale too
    cls = sink_class()
    start(cls, rescale(cls, [older, {PENDING_TRANSACTIONS_KEY: {
        "ckpt-3": {"task": 5, "records": ["c"]}}}], 1))
    assert cls.outside.commits == [("ckpt-3", 4, ["a", "b"]), ("ckpt-3", 5, ["c"])]


def test_pre_restore_after_a_rescale_aborts_the_open_transaction_only():
    cls = sink_class()
    old = start(cls, [{}, {}])
    for i, task in enumerate(old):
        task.process([f"old-{i}"])
    saved = [save(task, "ckpt-1") for task in old]
    (new,) = start(cls, rescale(cls, saved, 1))
    new.process(["open"])
    new.component.pre_restore("ckpt-1")
    assert cls.outside.aborted == [["open"]]
    assert sorted(cls.outside.records()) == ["old-0", "old-1"]
