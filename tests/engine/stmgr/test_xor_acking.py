"""XOR tracking in the Stream Manager: trees complete exactly when every copy is acked,
in any order that keeps a bolt's emits before its ack; fails are reported once; stale
trees rotate out; entries for other managers' spouts are routed to them in order."""

from __future__ import annotations

import random

import pytest

from engine.common.codec import selected_module
from engine.messages import tuple_pb2
from engine.stmgr.routes import ConsumerRoute
from engine.stmgr.routing import SHUFFLE

# the twins this process runs (compiled where built; HERON_PURE_PYTHON=1: the pure ones)
ACK, EMIT, FAIL, AckTracker = (getattr(selected_module("acking"), name)
                               for name in ("ACK", "EMIT", "FAIL", "AckTracker"))
RotatingXorMap, XorManager = (selected_module("xor").RotatingXorMap,
                              selected_module("xor").XorManager)


def test_a_tree_completes_only_when_every_copy_is_acked():
    tracked = RotatingXorMap()
    k1, k2, k3 = 0x1111, 0x2222, 0x4444
    assert not tracked.xor(7, k1 ^ k2)     # the spout's two copies
    assert not tracked.xor(7, k1)          # bolt A acks its copy...
    assert not tracked.xor(7, k3)          # ...after bolt B emitted a child (emit first)
    assert not tracked.xor(7, k2)          # bolt B acks
    assert tracked.xor(7, k3)              # the child is acked: complete
    assert len(tracked) == 0


def test_any_interleaving_with_emits_before_acks_completes_once_at_the_end():
    rng = random.Random(5)
    for _ in range(200):
        tracked = RotatingXorMap()
        copies = [rng.getrandbits(64) or 1 for _ in range(6)]
        # copy 0..1 from the spout; each later copy is a child emitted by the bolt holding
        # the copy before it, and that emit precedes that bolt's ack
        events = [("emit", copies[0] ^ copies[1])]
        acks = list(range(6))
        rng.shuffle(acks)
        for c in acks:
            if c + 2 < 6:
                events.append(("emit", copies[c + 2]))
            events.append(("ack", copies[c]))
        completions = [tracked.xor(1, key) for _, key in events]
        assert completions[-1] and not any(completions[:-1])


def test_a_spout_tuple_sent_nowhere_is_complete_at_once():
    assert RotatingXorMap().xor(9, 0)


def test_rotation_forgets_trees_older_than_the_timeout():
    now = [0.0]
    manager = XorManager([1], timeout_secs=30, buckets=3, clock=lambda: now[0])
    manager.xor(1, 100, 0xAB)
    now[0] = 29.0
    manager.maybe_rotate()
    assert manager.pending() == 1
    now[0] = 30.0
    manager.maybe_rotate()          # first rotation after the timeout
    manager.xor(1, 200, 0xCD)       # a newer tree
    assert manager.pending() == 2
    for t in (40.0, 50.0):          # then every timeout / buckets
        now[0] = t
        manager.maybe_rotate()
    assert manager.pending() == 1   # the old tree fell off the end
    assert manager.forgotten == 1
    assert not manager.xor(1, 200, 0)  # the newer one is still tracked


def test_a_fail_is_reported_once():
    manager = XorManager([1], timeout_secs=30)
    manager.xor(1, 5, 0xF0)
    assert manager.fail(1, 5)
    assert not manager.fail(1, 5)


def tracked_batch(src: int, rows: list[tuple[int, list[tuple[int, int]]]]) -> tuple_pb2.TupleBatch:
    batch = tuple_pb2.TupleBatch(src_task_id=src)
    batch.stream.component_name = "spout"
    batch.stream.id = "default"
    for value, roots in rows:
        batch.values.append(str(value).encode())
        batch.root_counts.append(len(roots))
        for task, key in roots:
            batch.root_tasks.append(task)
            batch.root_keys.append(key)
    return batch


def test_route_tracked_keys_every_copy_and_completes_when_all_are_acked():
    owners = {1: "stmgr-1", 10: "stmgr-1", 11: "stmgr-2"}
    tracker = AckTracker("stmgr-1", [1], 30.0, owners.get)
    batch = tracked_batch(1, [(0, [(1, 500)]), (1, [(1, 501)]), (2, [])])
    routes = [ConsumerRoute("bolt", SHUFFLE, (10, 11)), ConsumerRoute("all", SHUFFLE, (10,))]
    parts = tracker.route_tracked(batch, routes)
    delivered = []
    for task, payload, count in parts:
        sub = tuple_pb2.TupleBatch.FromString(payload)
        assert len(sub.values) == count == len(sub.edge_keys) == len(sub.root_counts)
        pos = 0
        for value, c, edge in zip(sub.values, sub.root_counts, sub.edge_keys):
            roots = list(zip(sub.root_tasks[pos:pos + c], sub.root_keys[pos:pos + c]))
            pos += c
            delivered.append((task, value, roots, edge))
            assert (edge != 0) == bool(roots)  # untracked rows carry no key
    assert sorted(v for _, v, _, _ in delivered) == [b"0", b"0", b"1", b"1", b"2", b"2"]
    assert tracker.xor.pending() == 2
    # ack every tracked copy from a bolt, as ControlBatch entries
    acks = tuple_pb2.ControlBatch(src_task_id=10)
    for _, _, roots, edge in delivered:
        if roots:
            acks.kinds.append(ACK)
            acks.root_counts.append(1)
            acks.root_tasks.append(roots[0][0])
            acks.root_keys.append(roots[0][1])
            acks.tuple_keys.append(edge)
    tracker.on_control(acks)
    peers, spouts = tracker.take_outgoing()
    assert peers == {}
    assert sorted(spouts[1].root_keys) == [500, 501]
    assert set(spouts[1].kinds) == {ACK}
    assert tracker.xor.pending() == 0


def test_entries_for_another_managers_spout_go_to_it_in_order():
    owners = {1: "stmgr-2", 10: "stmgr-1", 11: "stmgr-1"}
    tracker = AckTracker("stmgr-1", [], 30.0, owners.get)
    # a bolt on stmgr-1 emits a child anchored to root (1, 77), then acks its input
    batch = tracked_batch(10, [(5, [(1, 77)])])
    batch.stream.component_name = "bolt"
    tracker.route_tracked(batch, [ConsumerRoute("next", SHUFFLE, (11,))])
    ack = tuple_pb2.ControlBatch(src_task_id=10, kinds=[ACK, FAIL], root_counts=[1, 1],
                                 root_tasks=[1, 1], root_keys=[77, 78], tuple_keys=[0xAA, 0])
    tracker.on_control(ack)
    peers, spouts = tracker.take_outgoing()
    assert spouts == {}
    entries = peers["stmgr-2"]
    assert entries.kinds == [EMIT, ACK, FAIL]  # the emit first
    assert entries.root_keys == [77, 77, 78]
    decoded = tuple_pb2.ControlBatch.FromString(entries.encode(-1))
    assert list(decoded.root_counts) == [1, 1, 1]


@pytest.mark.parametrize("buckets", [0, 1])
def test_a_rotating_map_needs_two_buckets(buckets):
    with pytest.raises(ValueError):
        RotatingXorMap(buckets)


def test_a_malformed_control_batch_is_refused_whole_before_anything_is_applied():
    from engine.common.codec import MalformedBatch

    tracker = AckTracker("stmgr-1", [1], 30.0, {1: "stmgr-1"}.get)
    tracker.xor.xor(1, 500, 0xAA)
    # two entries, the second naming a root the batch does not hold
    bad = tuple_pb2.ControlBatch(src_task_id=10, kinds=[ACK, ACK], root_counts=[1, 1],
                                 root_tasks=[1], root_keys=[500], tuple_keys=[0xAA, 0xBB])
    with pytest.raises(MalformedBatch, match="name 2 roots, it holds 1 root tasks"):
        tracker.on_control(bad)
    assert tracker.xor.pending() == 1  # the first entry was not applied either
    assert tracker.counts["acks_in"] == 0 and not tracker.has_outgoing()


def test_a_tracked_batch_with_too_few_roots_is_refused_before_routing():
    from engine.common.codec import MalformedBatch

    tracker = AckTracker("stmgr-1", [1], 30.0, {1: "stmgr-1"}.get)
    batch = tracked_batch(1, [(0, [(1, 500)]), (1, [(1, 501)])])
    del batch.root_keys[-1]
    route = ConsumerRoute("bolt", SHUFFLE, (10, 11))
    with pytest.raises(MalformedBatch, match="root counts sum to 2"):
        tracker.route_tracked(batch, [route])
    assert route.next_by_src == {} and tracker.xor.pending() == 0
