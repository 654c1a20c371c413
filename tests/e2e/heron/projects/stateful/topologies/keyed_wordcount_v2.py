"""The next version of keyed_wordcount: a counting bolt with another output format, three
tasks instead of two; started from a savepoint of the first (components match by name)."""

from e2e_stateful_parts import CountFiles, KeyedCountBoltV2, SentenceSpout, SplitBolt

from compat.storm_api import Grouping, Topology


class KeyedWordCountV2(Topology):
    config = {"topology.workers": 2, "topology.reliability.mode": "EFFECTIVELY_ONCE",
              "topology.stateful.checkpoint.interval.seconds": 1}
    sentences = SentenceSpout.spec(par=2)
    split = SplitBolt.spec(inputs=[sentences], par=2)
    count = KeyedCountBoltV2.spec(inputs={split: Grouping.fields("word")}, par=3)
    files = CountFiles.spec(inputs={count: Grouping.fields("word")}, par=2)
