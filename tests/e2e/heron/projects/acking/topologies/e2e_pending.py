"""topology.max.spout.pending against a slow bolt."""

from e2e_heron_acking import LedgerSpout, SlowSink

from compat.storm_api import Grouping, Topology


class Pending(Topology):
    config = {"topology.workers": 2, "topology.acker.executors": 1,
              "topology.max.spout.pending": 8}
    source = LedgerSpout.spec(par=1)
    slow = SlowSink.spec(inputs={source: Grouping.SHUFFLE}, par=2)
