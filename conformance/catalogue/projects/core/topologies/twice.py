"""A bolt that emits every tuple twice: the output is a multiset with duplicates."""

from compat.storm_api import Grouping, Topology

from catalogue_core import FixtureSpout, Twice


class TwiceTopology(Topology):
    config = {"topology.acker.executors": 0}

    numbers = FixtureSpout.spec()
    twice = Twice.spec(inputs={numbers: Grouping.SHUFFLE}, par=2)
