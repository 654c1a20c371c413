"""Two spouts (one with two tasks) feeding one bolt."""

from compat.storm_api import Grouping, Topology

from catalogue_core import FixtureSpout, LetterSpout, Merge


class SeveralSpouts(Topology):
    config = {"topology.acker.executors": 0}

    letters = LetterSpout.spec()
    numbers = FixtureSpout.spec(par=2)
    merge = Merge.spec(inputs={letters: Grouping.SHUFFLE, numbers: Grouping.SHUFFLE}, par=2)
