"""When an instance starts its component: a bolt at its first physical plan whatever the
topology's state, a spout only once the topology runs (Storm's order for a topology
submitted inactive, ``heron submit --deploy-deactivated``)."""

from __future__ import annotations

from types import SimpleNamespace

from engine.instance.bolt_loop import BoltLoop
from engine.instance.spout_loop import SpoutLoop
from engine.messages import stmgr_pb2, topology_pb2


class Component:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def activate(self) -> None:
        self.calls.append("activate")

    def deactivate(self) -> None:
        self.calls.append("deactivate")


def plan(state: int) -> bytes:
    message = stmgr_pb2.NewInstanceAssignmentMessage()
    message.pplan.topology.state = state
    return message.SerializeToString()


def loop(cls, pipe, kind: str, made: list, **kwargs):
    def factory():
        made.append(Component())
        return made[-1]
    collector = SimpleNamespace(stats=SimpleNamespace(executed=0, acked=0), acking=False,
                                emitted_ids=[], emitted=0, flush=lambda: None)
    task = SimpleNamespace(component="c", task_id=1, kind=kind)
    return cls(pipe, task, factory, collector, lambda: True, **kwargs)


def test_a_bolt_is_prepared_while_the_topology_is_paused(pipe):
    made: list[Component] = []
    bolt = loop(BoltLoop, pipe, "bolt", made, loads=lambda b: b, tick_secs=None, shell=False)
    bolt.handle_plan(plan(topology_pb2.PAUSED))
    # ready for tuples a spout elsewhere emits before this container hears of `activate`
    assert bolt.hosted is made[0] and not bolt.active
    bolt.handle_plan(plan(topology_pb2.RUNNING))
    assert bolt.active and len(made) == 1  # prepared once


def test_a_spout_opens_only_when_the_topology_runs(pipe):
    made: list[Component] = []
    spout = loop(SpoutLoop, pipe, "spout", made)
    spout.handle_plan(plan(topology_pb2.PAUSED))
    assert spout.hosted is None and made == []
    spout.handle_plan(plan(topology_pb2.RUNNING))
    assert spout.hosted is made[0] and spout.active
    assert made[0].calls == ["activate"]
    spout.handle_plan(plan(topology_pb2.PAUSED))
    assert not spout.active and made[0].calls == ["activate", "deactivate"]
