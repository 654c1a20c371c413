"""One spout feeding two bolts: every tuple reaches both."""

from compat.storm_api import Grouping, Topology

from catalogue_core import Doubler, FixtureSpout, Squarer


class FanOut(Topology):
    config = {"topology.acker.executors": 0}

    numbers = FixtureSpout.spec()
    doubler = Doubler.spec(inputs={numbers: Grouping.SHUFFLE}, par=2)
    squarer = Squarer.spec(inputs={numbers: Grouping.fields("n")}, par=2)
