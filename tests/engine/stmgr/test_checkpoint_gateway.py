"""Marker alignment at a Stream Manager (engine/stmgr/checkpoint_gateway.py): what a bolt
task is handed, in what order, for markers from several upstream tasks, a newer
checkpoint overtaking an older one, the byte bound and the timeout."""

from __future__ import annotations

from engine.stmgr.checkpoint_gateway import CheckpointGateway


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def gateway(clock=None, buffer_bytes=1_000, timeout=10.0) -> CheckpointGateway:
    # task 7 is fed by tasks 1, 2 and 3
    return CheckpointGateway({7: [1, 2, 3]}, buffer_bytes=buffer_bytes, timeout_secs=timeout,
                             clock=clock or Clock())


def test_input_from_a_task_whose_marker_arrived_waits_until_every_marker_has():
    g = gateway()
    assert g.admit(7, 1, "a1", 10) == [("data", "a1")]
    assert g.marker(7, 1, "ckpt-5") == []
    assert g.admit(7, 1, "a2", 10) == []            # after 1's marker: held
    assert g.admit(7, 2, "b1", 10) == [("data", "b1")]  # 2's marker not yet: flows
    assert g.marker(7, 2, "ckpt-5") == []
    assert g.admit(7, 2, "b2", 10) == []
    assert g.held_bytes == 20
    # the last marker: save first, then what was held, in each sender's order
    out = g.marker(7, 3, "ckpt-5")
    assert out[0] == ("checkpoint", "ckpt-5")
    assert sorted(out[1:]) == [("data", "a2"), ("data", "b2")]
    assert g.held_bytes == 0 and g.aligning() == {}
    assert g.admit(7, 1, "a3", 10) == [("data", "a3")]


def test_held_input_keeps_each_senders_order():
    g = gateway()
    g.marker(7, 1, "ckpt-5")
    for i in range(5):
        g.admit(7, 1, f"a{i}", 1)
    g.marker(7, 2, "ckpt-5")
    out = g.marker(7, 3, "ckpt-5")
    assert out == [("checkpoint", "ckpt-5")] + [("data", f"a{i}") for i in range(5)]


def test_a_newer_checkpoint_overtakes_an_older_one_and_the_older_ones_markers_are_ignored():
    g = gateway()
    g.marker(7, 1, "ckpt-5")
    g.admit(7, 1, "a1", 10)
    # 2 already sends checkpoint 9's marker (5's was lost with a restarted peer, say):
    # 5 can no longer complete; what was held goes, and 9 aligns from here
    assert g.marker(7, 2, "ckpt-9") == [("data", "a1")]
    assert g.aligning() == {7: "ckpt-9"}
    assert g.marker(7, 3, "ckpt-5") == []  # older: ignored
    assert g.admit(7, 1, "a2", 10) == [("data", "a2")]  # 1's marker for 9 not yet
    g.marker(7, 1, "ckpt-9")
    assert g.marker(7, 3, "ckpt-9") == [("checkpoint", "ckpt-9")]
    # markers of a checkpoint already saved are stale
    assert g.marker(7, 1, "ckpt-9") == []
    assert g.marker(7, 1, "ckpt-7") == []
    assert g.aligning() == {}


def test_numbers_not_text_order_checkpoints():
    g = gateway()
    g.marker(7, 1, "ckpt-10")
    assert g.marker(7, 2, "ckpt-9") == []  # "ckpt-9" > "ckpt-10" as text, older as a number
    assert g.aligning() == {7: "ckpt-10"}


def test_the_byte_bound_abandons_the_checkpoint_for_that_task_and_releases_everything():
    g = gateway(buffer_bytes=25)
    g.marker(7, 1, "ckpt-5")
    assert g.admit(7, 1, "a1", 10) == []
    assert g.admit(7, 1, "a2", 10) == []
    assert g.admit(7, 1, "a3", 10) == [("data", "a1"), ("data", "a2"), ("data", "a3")]
    assert g.abandoned == 1 and g.held_bytes == 0
    # the rest of that checkpoint's markers change nothing, and nothing is held any more
    assert g.marker(7, 2, "ckpt-5") == []
    assert g.marker(7, 3, "ckpt-5") == []
    assert g.admit(7, 1, "a4", 10) == [("data", "a4")]
    # the next checkpoint aligns again
    for src in (1, 2):
        g.marker(7, src, "ckpt-6")
    assert g.marker(7, 3, "ckpt-6") == [("checkpoint", "ckpt-6")]


def test_an_alignment_open_longer_than_the_timeout_is_abandoned_never_a_stall():
    clock = Clock()
    g = gateway(clock=clock, timeout=10.0)
    g.marker(7, 1, "ckpt-5")
    g.admit(7, 1, "a1", 10)
    clock.now += 5
    assert g.expire() == {}
    clock.now += 6
    assert g.expire() == {7: [("data", "a1")]}
    assert g.abandoned == 1
    assert g.admit(7, 1, "a2", 10) == [("data", "a2")]
    assert g.marker(7, 2, "ckpt-5") == []  # given up for good


def test_markers_from_a_task_that_does_not_feed_the_receiver_are_ignored():
    g = gateway()
    assert g.marker(7, 99, "ckpt-5") == []
    assert g.marker(8, 1, "ckpt-5") == []
    assert g.aligning() == {}


def test_a_rollback_forgets_every_alignment_and_drops_what_was_held():
    g = gateway()
    g.marker(7, 1, "ckpt-5")
    g.admit(7, 1, "a1", 10)
    g.clear()
    assert g.aligning() == {} and g.held_bytes == 0
    assert g.admit(7, 1, "a2", 10) == [("data", "a2")]
    # after a rollback the same checkpoint number may not come again, but a newer must work
    for src in (1, 2):
        g.marker(7, src, "ckpt-6")
    assert g.marker(7, 3, "ckpt-6")[0] == ("checkpoint", "ckpt-6")
