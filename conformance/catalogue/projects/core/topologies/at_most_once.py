"""Acking is on (Storm's default), but the spout emits without tuple ids: nothing is
tracked, so the bolt's fails replay nothing."""

from compat.storm_api import Grouping, Topology

from catalogue_core import FixtureSpout, Flaky


class AtMostOnce(Topology):
    numbers = FixtureSpout.spec()
    flaky = Flaky.spec(inputs={numbers: Grouping.SHUFFLE}, par=2)
