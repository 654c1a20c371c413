"""A container started again elsewhere (its node died, or was cut off) registers a newer
incarnation of its Stream Manager; the Topology Master then refuses the older one, at
registration and at every heartbeat, so a container that comes back from a partition
never rejoins the topology, and the refusal says why."""

from __future__ import annotations

from engine.launch import SUPERSEDED, peer_identity, split_peer_identity
from engine.messages import common_pb2, packing_plan_pb2, tmanager_pb2
from engine.tmanager.master import TopologyMaster


def master() -> tuple[TopologyMaster, list]:
    tm = object.__new__(TopologyMaster)  # no sockets or state: the registration book only
    packing = packing_plan_pb2.PackingPlan(id="p")
    packing.container_plans.add(id=1)
    tm.packing = packing
    tm.stmgrs, tm.absent, tm.last_heartbeat = {}, {"stmgr-1"}, {}
    tm.senders, tm.incarnations = {}, {}
    tm.server = None
    replies: list = []
    tm._reply = lambda sock, to, message: replies.append((to, message))
    tm._make_pplan = lambda: None
    return tm, replies


def register(tm, incarnation: int) -> None:
    request = tmanager_pb2.StMgrRegisterRequest()
    request.stmgr.id = "stmgr-1"
    request.stmgr.incarnation = incarnation
    tm._on_server(peer_identity("stmgr-1", incarnation).encode(), request)


def heartbeat(tm, incarnation: int) -> None:
    tm._on_server(peer_identity("stmgr-1", incarnation).encode(),
                  tmanager_pb2.StMgrHeartbeatRequest(heartbeat_time=1))


def test_identities_carry_the_incarnation():
    assert peer_identity("stmgr-3", 0) == "stmgr-3"
    assert split_peer_identity(peer_identity("stmgr-3", 1764000000123)) == ("stmgr-3", 1764000000123)
    assert split_peer_identity(b"stmgr-3") == ("stmgr-3", 0)


def test_the_older_incarnation_is_refused_once_a_newer_one_registered():
    tm, replies = master()
    register(tm, 5)
    assert replies[-1][1].status.status == common_pb2.OK
    heartbeat(tm, 5)
    assert replies[-1][1].status.status == common_pb2.OK
    register(tm, 9)  # started again on another node
    assert replies[-1] == (b"stmgr-1.i9", replies[-1][1])
    assert replies[-1][1].status.status == common_pb2.OK
    assert tm.senders["stmgr-1"] == b"stmgr-1.i9"
    # the partition heals: the old copy beats and tries to register again
    heartbeat(tm, 5)
    to, refused = replies[-1]
    assert to == b"stmgr-1.i5" and refused.status.status == common_pb2.NOTOK
    assert refused.status.message.startswith(SUPERSEDED)
    assert "incarnation 5 was replaced by incarnation 9" in refused.status.message
    register(tm, 5)
    assert replies[-1][1].status.status == common_pb2.NOTOK
    assert tm.senders["stmgr-1"] == b"stmgr-1.i9"  # still the new one


def test_a_restart_of_the_same_incarnation_on_the_same_identity_is_accepted():
    """The local engine restarts a Stream Manager in place (incarnation 0): the same
    identity registers again and is welcome."""
    tm, replies = master()
    register(tm, 0)
    register(tm, 0)
    assert [r[1].status.status for r in replies] == [common_pb2.OK, common_pb2.OK]
