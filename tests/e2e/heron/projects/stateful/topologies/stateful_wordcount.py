"""The stateful word count, effectively-once, over two containers."""

from e2e_stateful_parts import CountBolt, SentenceSpout, SplitBolt

from compat.storm_api import Grouping, Topology


class StatefulWordCount(Topology):
    config = {"topology.workers": 2, "topology.reliability.mode": "EFFECTIVELY_ONCE",
              "topology.stateful.checkpoint.interval.seconds": 1}
    sentences = SentenceSpout.spec(par=2)
    split = SplitBolt.spec(inputs=[sentences], par=2)
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
