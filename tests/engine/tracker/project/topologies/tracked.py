"""spout -> split (shuffle) -> count (fields) over two containers, with acking."""

from tracker_parts import CountBolt, SentenceSpout, SplitBolt

from compat.storm_api import Grouping, Topology


class Tracked(Topology):
    config = {"topology.workers": 2, "topology.acker.executors": 1,
              "topology.message.timeout.secs": 5}
    sentence_spout = SentenceSpout.spec(par=1)
    split_bolt = SplitBolt.spec(inputs={sentence_spout: Grouping.SHUFFLE}, par=2)
    count_bolt = CountBolt.spec(inputs={split_bolt: Grouping.fields("word")}, par=2)
