"""A rollback that a ``heron update`` causes is reported as the rescale (which components
and containers changed), not as "stmgr-1 registered again": the Stream Managers of the
changed containers do register again while the new plan is built, and that used to
overwrite the reason the restore log, ``heron run`` and the tracker show."""

from __future__ import annotations

from engine.common.launch import peer_identity
from engine.messages import packing_plan_pb2, tmanager_pb2
from engine.tmanager.master import TopologyMaster, packing_change


def packing(plan_id: str, containers: dict[int, dict[str, int]]) -> packing_plan_pb2.PackingPlan:
    plan = packing_plan_pb2.PackingPlan(id=plan_id)
    task = 1
    for cid, counts in containers.items():
        container = plan.container_plans.add(id=cid)
        for component, n in counts.items():
            for _ in range(n):
                container.instance_plans.add(component_name=component, task_id=task)
                task += 1
    return plan


BEFORE = packing("p1", {1: {"words": 1, "count": 3}, 2: {"words": 1, "count": 2}})
AFTER = packing("p2", {1: {"words": 1, "count": 1}, 2: {"words": 1, "count": 1}})


def test_the_change_names_each_resized_component_and_the_containers():
    three = packing("p3", {1: {"words": 1, "count": 2}, 2: {"words": 1, "count": 2},
                           3: {"count": 1}})
    assert packing_change(BEFORE, AFTER) == "rescale to packing plan p2 (count 5 -> 2 tasks)"
    assert packing_change(AFTER, three) == ("rescale to packing plan p3 (count 2 -> 5 tasks, "
                                            "2 -> 3 containers)")


class NoState:
    def __init__(self, stored) -> None:
        self.stored = stored

    def get(self, kind, name):
        return self.stored if kind == "packingplans" else None


def test_stream_managers_registering_again_during_an_update_keep_the_update_as_the_reason():
    tm = object.__new__(TopologyMaster)  # the registration book and the plan check only
    tm.name, tm.packing, tm.topology = "t", BEFORE, None
    tm.stmgrs = {"stmgr-1": (None, []), "stmgr-2": (None, [])}
    tm.absent, tm.last_heartbeat, tm.metrics, tm.reported_at = set(), {}, {}, {}
    tm.senders = {"stmgr-1": b"stmgr-1", "stmgr-2": b"stmgr-2"}
    tm.incarnations = {"stmgr-1": 0, "stmgr-2": 0}
    tm.server, tm._reply = None, lambda sock, to, message: None
    tm._plan_reason, tm._update_reason = "the topology started", None
    built: list[str] = []
    tm._make_pplan = lambda: built.append(tm._plan_reason)
    tm.state = NoState(AFTER)
    tm._check_packing()
    for sid in ("stmgr-1", "stmgr-2"):  # each changed container's Stream Manager restarts
        request = tmanager_pb2.StMgrRegisterRequest()
        request.stmgr.id = sid
        tm._on_server(peer_identity(sid, 0).encode(), request)
    assert built and set(built) == {"heron update: rescale to packing plan p2 "
                                    "(count 5 -> 2 tasks)"}
