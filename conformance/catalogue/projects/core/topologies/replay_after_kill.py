"""At-least-once through two bolts: killing ``tail`` mid-run loses the tuples it held;
their roots time out (after about a second) and the spout replays them, so ``relay``
emits some rows again."""

from compat.storm_api import Grouping, Topology

from catalogue_core import Relay, ReliableNumbers


class ReplayAfterKill(Topology):
    config = {"topology.acker.executors": 1, "topology.message.timeout.secs": 1.0}

    numbers = ReliableNumbers.spec()
    relay = Relay.spec(inputs={numbers: Grouping.SHUFFLE}, par=2)
    tail = Relay.spec(inputs={relay: Grouping.SHUFFLE})
