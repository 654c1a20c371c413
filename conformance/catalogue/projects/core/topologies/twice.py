"""A bolt that emits every tuple twice: the output is a multiset with duplicates."""

from catalogue_core import FixtureSpout, Twice

from compat.storm_api import Grouping, Topology


class TwiceTopology(Topology):
    config = {"topology.acker.executors": 0}

    numbers = FixtureSpout.spec()
    twice = Twice.spec(inputs={numbers: Grouping.SHUFFLE}, par=2)
