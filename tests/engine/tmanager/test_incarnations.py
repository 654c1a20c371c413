"""A container started again elsewhere (its node died, or was cut off) registers a newer
incarnation of its Stream Manager; the Topology Master then refuses the older one, at
registration and at every heartbeat, so a container that comes back from a partition
never rejoins the topology, and the refusal says why."""

from __future__ import annotations

from engine.common.launch import SUPERSEDED, peer_identity, split_peer_identity
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
    assert split_peer_identity(peer_identity("stmgr-3", 1764000000123)) == (
        "stmgr-3",
        1764000000123,
    )
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


class OneNodeState:
    """tmanagers/<name> only: what check_location reads and writes."""

    def __init__(self, stored) -> None:
        self.stored = stored
        self.created = []

    def get(self, kind, name):
        assert kind == "tmanagers"
        return self.stored

    def create(self, kind, name, message, *, ephemeral=False):
        assert (kind, ephemeral) == ("tmanagers", True)
        self.created.append(message)
        self.stored = message


def located_master(tmp_path, stored) -> TopologyMaster:
    from engine.common.launch import LaunchSpec, Submission

    tm = object.__new__(TopologyMaster)
    tm.name = "wc"
    tm.spec = LaunchSpec(topology_name="wc", topology_id="wc-1", working_dir=str(tmp_path),
                         submission=Submission(project=".", name="wc"))
    tm.controller_endpoint = "tcp://10.0.0.5:4001"
    tm.location = tmanager_pb2.TManagerLocation(topology_name="wc",
                                                controller_endpoint=tm.controller_endpoint)
    tm.state = OneNodeState(stored)
    return tm


def test_a_lost_location_is_taken_back(tmp_path):
    tm = located_master(tmp_path, None)  # the session expired: the ephemeral node is gone
    assert tm.check_location()
    assert tm.state.created == [tm.location]
    assert tm.check_location() and len(tm.state.created) == 1  # ours again: nothing to do


def test_a_topology_master_replaced_elsewhere_stops_its_container(tmp_path):
    newer = tmanager_pb2.TManagerLocation(topology_name="wc",
                                          controller_endpoint="tcp://10.0.0.7:4001")
    tm = located_master(tmp_path, newer)
    assert not tm.check_location()
    assert tm.spec.superseded_marker.read_text().startswith(SUPERSEDED)
    assert tm.state.created == []
