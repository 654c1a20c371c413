"""The word count with its counts in keyed state, written exactly once to files: the
counting bolt can be resized while it runs (`heron update`, the Health Manager)."""

from e2e_stateful_parts import CountFiles, KeyedCountBolt, SentenceSpout, SplitBolt

from compat.storm_api import Grouping, Topology


class KeyedWordCount(Topology):
    config = {"topology.workers": 2, "topology.reliability.mode": "EFFECTIVELY_ONCE",
              "topology.stateful.checkpoint.interval.seconds": 1}
    sentences = SentenceSpout.spec(par=2)
    split = SplitBolt.spec(inputs=[sentences], par=2)
    count = KeyedCountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
    files = CountFiles.spec(inputs={count: Grouping.fields("word")}, par=2)
