"""A flooded slow bolt that emits, across two containers, at-most-once: when its Stream
Manager dies, its instance is blocked both ways (input queued, output not taken)."""

from e2e_heron_acking import Firehose, Sink, SlowRelay

from compat.storm_api import Grouping, Topology


class FloodedRestart(Topology):
    config = {"topology.workers": 2, "topology.acker.executors": 0,
              "heron.streammgr.network.backpressure.highwatermark.mb": 1,
              "heron.streammgr.network.backpressure.lowwatermark.mb": 0.5}
    firehose = Firehose.spec(par=1)
    slow = SlowRelay.spec(inputs={firehose: Grouping.SHUFFLE}, par=2)
    sink = Sink.spec(inputs={slow: Grouping.SHUFFLE}, par=1)
