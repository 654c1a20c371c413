"""A rollback drops what waits in a Stream Manager's queues (it was emitted before the
checkpoint restored), but not the physical plan an instance needs for its restore.

A resize of a stateful component (`heron update`, the Health Manager) sends the new plan
to each instance and then rolls the topology back to a checkpoint, in which every task
restores the key groups its index owns under the new parallelism. An instance in
backpressure has data queued at its Stream Manager, so the new plan waits behind it; the
rollback used to drop the plan with the data, and the instance restored with the layout
of the old plan (seen end to end: after the Health Manager's 2 -> 3, a count task saved
keys of groups it did not own, "index 1 of 2", and every checkpoint after was abandoned).

The Stream Manager here is bare (no sockets, no threads): its outbox, its registered
instances and a stateful role, driven as the Topology Master's restore drives them."""

from __future__ import annotations

import zmq

from compat.storm_api.config import checkpointing, with_defaults
from engine.common.network import decode, encode
from engine.messages import ckptmgr_pb2, physical_plan_pb2, stmgr_pb2
from engine.stmgr.manager import TUPLE_BATCH, StreamManager
from engine.stmgr.outbox import Outbox
from engine.stmgr.stateful import StatefulRole


class Socket:
    """An instance's socket, full (zmq.Again) until ``room`` is set."""

    def __init__(self) -> None:
        self.room = False
        self.sent: list[list[bytes]] = []

    def send_multipart(self, frames, flags=0, copy=True) -> None:
        if not self.room:
            raise zmq.Again()
        self.sent.append([bytes(f) for f in frames])


def plan(count_tasks: int) -> physical_plan_pb2.PhysicalPlan:
    pplan = physical_plan_pb2.PhysicalPlan()
    pplan.stmgrs.add(id="stmgr-1")
    for task in range(1, count_tasks + 1):
        pplan.instances.add(instance_id=f"container_1_count_{task}", stmgr_id="stmgr-1",
                            info=physical_plan_pb2.InstanceInfo(task_id=task,
                                                                component_name="count"))
    return pplan


def bare_manager(sockets: dict[int, Socket]) -> StreamManager:
    manager = object.__new__(StreamManager)
    manager.id = "stmgr-1"
    manager.outbox = Outbox()
    manager.tm = None
    manager.counts = {"tuples_out": 0, "dropped": 0}
    manager.expected = {f"container_1_count_{t}": t for t in sockets}
    manager.task_identity = {t: f"container_1_count_{t}".encode() for t in sockets}
    manager.instances = {f"container_1_count_{t}".encode(): (sock, None)
                         for t, sock in sockets.items()}
    manager.stateful = StatefulRole(manager, checkpointing(with_defaults({})), 128)
    return manager


def received(sock: Socket) -> list[str]:
    return [type(decode(frames[1:])).__name__ if frames[1] != TUPLE_BATCH else "data"
            for frames in sock.sent]


def test_a_rollback_keeps_the_new_plan_queued_behind_a_busy_instance_s_data():
    busy, idle = Socket(), Socket()
    idle.room = True
    manager = bare_manager({1: busy, 2: idle})
    # task 1 is in backpressure: its data waits in the outbox
    for _ in range(3):
        manager.send_local_data(1, (TUPLE_BATCH, b"words", 10))
    # the resize: a new plan (three count tasks) for every local instance, as
    # StreamManager._new_pplan sends it, in order behind their data
    new = plan(3)
    manager.pplan = new
    assignment = encode(stmgr_pb2.NewInstanceAssignmentMessage(pplan=new))
    for identity, (sock, _) in manager.instances.items():
        manager.outbox.send(identity, sock, [identity, *assignment])
    # ... and the Topology Master's rollback to the checkpoint taken before it
    manager.stateful.from_tm(ckptmgr_pb2.RestoreTopologyStateRequest(
        checkpoint_id="ckpt-1", restore_txid=7, reason="count: parallelism 2 -> 3"))
    busy.room = True
    manager.outbox.retry()

    # the busy instance gets the new plan again, before its restore request; no data
    assert received(busy) == ["NewInstanceAssignmentMessage", "RestoreInstanceStateRequest"]
    assignment_frames, restore_frames = busy.sent
    assert decode(assignment_frames[1:]).pplan == new
    assert decode(restore_frames[1:]).restore_txid == 7
    # the idle one had it already and is not sent it twice
    assert received(idle) == ["NewInstanceAssignmentMessage", "RestoreInstanceStateRequest"]
    assert manager.stateful.discarded == 4  # three batches and the plan behind them
    assert manager.outbox.buffered_bytes == 0


def test_a_rollback_with_nothing_queued_sends_only_the_restore():
    sock = Socket()
    sock.room = True
    manager = bare_manager({1: sock})
    manager.pplan = plan(1)
    manager.stateful.from_tm(ckptmgr_pb2.RestoreTopologyStateRequest(
        checkpoint_id="", restore_txid=1, reason="the topology started"))
    assert received(sock) == ["RestoreInstanceStateRequest"]
    assert manager.stateful.discarded == 0
