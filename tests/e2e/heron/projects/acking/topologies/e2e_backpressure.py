"""A spout far faster than its bolt, across two containers, with small watermarks."""

from e2e_heron_acking import Firehose, SlowSink

from compat.storm_api import Grouping, Topology


class Backpressure(Topology):
    config = {"topology.workers": 2, "topology.acker.executors": 0,
              "heron.streammgr.network.backpressure.highwatermark.mb": 1,
              "heron.streammgr.network.backpressure.lowwatermark.mb": 0.5}
    firehose = Firehose.spec(par=2)
    slow = SlowSink.spec(inputs={firehose: Grouping.SHUFFLE}, par=2)
