"""At-least-once: a ReliableSpout whose tuples a bolt fails once each (every fifth n);
the spout replays them and the bolt processes the replays."""

from compat.storm_api import Grouping, Topology

from catalogue_core import Picky, ReliableNumbers


class Reliable(Topology):
    config = {"topology.acker.executors": 1, "topology.message.timeout.secs": 2.0}

    numbers = ReliableNumbers.spec()
    picky = Picky.spec(inputs={numbers: Grouping.fields("n")}, par=2)
