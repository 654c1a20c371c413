"""A stateful bolt's tick tuples wait, like a spout's emits, for the Topology Master's
word that processing starts after a restore: a tick changes state and emits, and output
to a container still restoring is dropped while the state change survives (a windowed or
periodically flushing bolt would lose what it flushed)."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from engine.common.runtime.stats import TaskStats
from engine.common.serialization import serializer_for_config
from engine.instance.bolt_loop import BoltLoop
from engine.instance.stateful import RESTORE, START, TaskCheckpointing
from engine.messages import ckptmgr_pb2, stmgr_pb2, topology_pb2
from engine.statefulstorage.localfs import LocalFileSystemStorage
from tests.zmq_pairs import pipe_pair


class TickCounter:
    """A hosted bolt that only counts the ticks it executes."""

    def __init__(self) -> None:
        self.ticks = 0

    def make_tuple(self, id, source, stream, task, values):
        return (source, stream, values)

    def execute(self, tup) -> None:
        if tup[1] == "__tick":
            self.ticks += 1

    def activate(self) -> None:
        pass

    def deactivate(self) -> None:
        pass


def running_plan() -> bytes:
    message = stmgr_pb2.NewInstanceAssignmentMessage()
    message.pplan.topology.state = topology_pb2.RUNNING
    return message.SerializeToString()


def run_for(bolt: BoltLoop, secs: float) -> None:
    stop = threading.Event()
    bolt._running = lambda: not stop.is_set()
    raised: list[BaseException] = []

    def run() -> None:
        try:
            bolt.run()
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            raised.append(exc)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    time.sleep(secs)
    stop.set()
    thread.join(5)
    assert not thread.is_alive()
    if raised:
        raise raised[0]


def collector() -> SimpleNamespace:
    """The part of an instance's collector the bolt loop reads when it publishes metrics."""
    stats = TaskStats("window", 3)
    return SimpleNamespace(stats=stats, acking=False, emitted_ids=[], emitted=0,
                           flush=lambda: None, sync_stats=lambda: stats, user_metrics={},
                           processed=0, process_secs=0.0)


def test_a_restored_bolt_ticks_only_once_processing_starts(tmp_path):
    with pipe_pair() as (_gateway, pipe):
        restored_bolt_ticks(pipe, tmp_path)


def restored_bolt_ticks(pipe, tmp_path) -> None:
    hosted = TickCounter()
    task = SimpleNamespace(component="window", task_id=3, kind="bolt")
    bolt = BoltLoop(pipe, task, lambda: hosted, collector(), lambda: True,
                    loads=lambda b: b, tick_secs=0.02, shell=False)
    bolt.stateful = TaskCheckpointing(LocalFileSystemStorage(tmp_path), serializer_for_config({}),
                                      "window", 3)
    bolt.handle_plan(running_plan())
    bolt.stateful.handle(bolt, RESTORE, ckptmgr_pb2.RestoreInstanceStateRequest(
        checkpoint_id="", restore_txid=1).SerializeToString())
    assert bolt.hosted is hosted and bolt.active

    # restored, the topology not yet told to process: many tick periods pass, no tick runs
    run_for(bolt, 0.3)
    assert hosted.ticks == 0

    # the Topology Master's start: ticks run
    bolt.stateful.handle(bolt, START, ckptmgr_pb2.StartInstanceStatefulProcessing()
                         .SerializeToString())
    run_for(bolt, 0.3)
    assert hosted.ticks >= 3


def test_a_bolt_outside_effectively_once_ticks_at_once():
    with pipe_pair() as (_gateway, pipe):
        unrestored_bolt_ticks(pipe)


def unrestored_bolt_ticks(pipe) -> None:
    hosted = TickCounter()
    task = SimpleNamespace(component="window", task_id=3, kind="bolt")
    bolt = BoltLoop(pipe, task, lambda: hosted, collector(), lambda: True,
                    loads=lambda b: b, tick_secs=0.02, shell=False)
    bolt.handle_plan(running_plan())
    run_for(bolt, 0.3)
    assert hosted.ticks >= 3
