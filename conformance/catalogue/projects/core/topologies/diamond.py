"""A diamond: numbers -> left, right -> join (both halves fields-grouped on n)."""

from compat.storm_api import Grouping, Topology

from catalogue_core import FixtureSpout, Join, Left, Right


class Diamond(Topology):
    config = {"topology.acker.executors": 0}

    numbers = FixtureSpout.spec()
    left = Left.spec(inputs={numbers: Grouping.SHUFFLE}, par=2)
    right = Right.spec(inputs={numbers: Grouping.fields("n")}, par=2)
    join = Join.spec(inputs={left: Grouping.fields("n"), right: Grouping.fields("n")}, par=2)
