"""A Stream Manager keeps a peer's tuples until it has the physical plan.

The Topology Master sends the plan to every Stream Manager, but not at the same instant:
on a busy machine one container's spouts can start, and their tuples reach another
container's Stream Manager, before that one has read its own copy of the plan. Those
tuples (and the spout's end-of-stream marker behind them) must wait, not be dropped as
unroutable: a dropped end marker left a downstream task waiting for ever.

The Stream Manager runs here in a thread with real zmq sockets; the test plays the
Topology Master, a peer Stream Manager and a local Heron Instance.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import zmq

from engine.common.launch import instance_id
from engine.common.network import bind_router, connect_dealer, decode, encode
from engine.common.submission import load_topology
from engine.messages import (
    common_pb2,
    physical_plan_pb2,
    stmgr_pb2,
    tmanager_pb2,
    topology_pb2,
    tuple_pb2,
)
from engine.packing.tasks import assign_task_ids
from engine.stmgr.manager import StreamManager
from tests.fake_tmanager import FakeTManager

pytestmark = pytest.mark.timeout(60)

PROJECT = Path(__file__).resolve().parents[2] / "e2e" / "heron" / "projects" / "groupings"
NAME = "e2e_groupings"
SINK = "shuffle_sink"


def recv(sock: zmq.Socket, timeout_ms: int = 10_000) -> list[bytes]:
    assert sock.poll(timeout_ms), "nothing arrived"
    return sock.recv_multipart()


@pytest.fixture()
def world(tmp_path):
    """A Stream Manager for container 1 (one local sink task), a fake Topology Master it
    finds through its state, and the pieces the test drives."""
    plan = load_topology(PROJECT, name=NAME, cli_options={"e2e.limit": 5}).plan
    fake = FakeTManager(NAME, PROJECT, tmp_path)
    tasks = assign_task_ids(plan)  # as the packing gives them
    sink_task = tasks[SINK][0]
    sink_id = instance_id(1, SINK, sink_task)
    manager = StreamManager(fake.spec, 1, plan, {sink_id: sink_task}, fake.state)
    running = threading.Event()
    running.set()
    thread = threading.Thread(target=manager.serve, args=(running.is_set,), daemon=True)
    thread.start()
    try:
        yield dict(manager=manager, ctx=fake.ctx, tm=fake.tm, tasks=tasks, sink_task=sink_task,
                   sink_id=sink_id, spec=fake.spec, sockets=fake.sockets, guard=fake.guard)
    finally:
        running.clear()
        thread.join(10)
        manager.close()
        fake.close()


def pplan_for(world, peer_endpoint: str) -> physical_plan_pb2.PhysicalPlan:
    """Every task in container 2 but the one local sink task, in container 1."""
    manager = world["manager"]
    pplan = physical_plan_pb2.PhysicalPlan()
    pplan.topology.id = world["spec"].topology_id
    pplan.topology.name = NAME
    pplan.topology.state = topology_pb2.RUNNING
    pplan.stmgrs.add(id="stmgr-1", data_endpoint=manager.data_endpoint,
                     local_endpoint=manager.local_endpoint)
    pplan.stmgrs.add(id="stmgr-2", data_endpoint=peer_endpoint)
    for component, task_ids in sorted(world["tasks"].items()):
        for task in task_ids:
            container = 1 if task == world["sink_task"] else 2
            pplan.instances.add(instance_id=instance_id(container, component, task),
                                stmgr_id=f"stmgr-{container}",
                                info=physical_plan_pb2.InstanceInfo(task_id=task,
                                                                    component_name=component))
    return pplan


def test_peer_tuples_and_end_marker_sent_before_the_plan_arrives_are_delivered(world):
    ctx, tm, sink_task = world["ctx"], world["tm"], world["sink_task"]
    spout_task = world["tasks"]["numbers"][0]

    # the local instance registers; the Stream Manager then registers with the master
    instance = connect_dealer(ctx, world["manager"].local_endpoint, world["sink_id"])
    world["sockets"].append(instance)
    request = stmgr_pb2.RegisterInstanceRequest(topology_name=NAME,
                                                topology_id=world["spec"].topology_id)
    request.instance.instance_id = world["sink_id"]
    request.instance.stmgr_id = "stmgr-1"
    request.instance.info.task_id = sink_task
    request.instance.info.component_name = SINK
    instance.send_multipart(encode(request))
    registered = decode(recv(instance))
    assert registered.status.status == common_pb2.OK
    assert not registered.HasField("pplan")
    stmgr, *frames = recv(tm)
    assert stmgr == b"stmgr-1"
    assert isinstance(decode(frames), tmanager_pb2.StMgrRegisterRequest)
    ok = tmanager_pb2.StMgrRegisterResponse()
    ok.status.status = common_pb2.OK
    tm.send_multipart([stmgr, *encode(ok)])

    # the peer's spout started first: its tuples and end marker arrive before our plan
    peer_data, peer_endpoint = bind_router(ctx, "tcp://127.0.0.1:0", guard=world["guard"],
                                           kind="data")
    world["sockets"].append(peer_data)
    peer = connect_dealer(ctx, world["manager"].data_endpoint, "stmgr-2",
                          security=world["guard"].security)
    world["sockets"].append(peer)
    batch = tuple_pb2.TupleBatch(src_task_id=spout_task, values=[b"v0", b"v1", b"v2"])
    batch.stream.component_name = "numbers"
    batch.stream.id = "default"
    done = tuple_pb2.TaskDone(src_task_id=spout_task, component="numbers")
    peer.send_multipart(encode(stmgr_pb2.TupleStreamMessage(
        task_id=sink_task, src_task_id=spout_task, num_tuples=3, data=batch.SerializeToString())))
    peer.send_multipart(encode(stmgr_pb2.TupleStreamMessage(
        task_id=sink_task, src_task_id=spout_task, done=done.SerializeToString())))
    time.sleep(1.0)  # many poll rounds of the Stream Manager without a plan

    tm.send_multipart([stmgr, *encode(stmgr_pb2.NewPhysicalPlanMessage(
        new_pplan=pplan_for(world, peer_endpoint)))])

    got = [recv(instance) for _ in range(3)]
    kinds = [type(decode(frames)).__name__ for frames in got]
    assert kinds == ["NewInstanceAssignmentMessage", "TupleBatch", "TaskDone"]
    delivered = decode(got[1])
    assert (delivered.src_task_id, list(delivered.values)) == (spout_task, [b"v0", b"v1", b"v2"])
    assert decode(got[2]).src_task_id == spout_task
    assert world["manager"].counts["dropped"] == 0
