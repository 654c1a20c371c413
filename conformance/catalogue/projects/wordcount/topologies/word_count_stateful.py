"""Seeded word count, effectively-once: the spout's position and the counts are state,
checkpointed every half second; the catalogue kills a ``count`` task mid-run and expects
the same final counts as without the kill, on both engines."""

from compat.storm_api import Grouping, Topology

from catalogue_wordcount import SplitSentence, StatefulCountWords, StatefulSentenceSpout


class WordCountStateful(Topology):
    config = {"topology.reliability.mode": "EFFECTIVELY_ONCE",
              "topology.stateful.checkpoint.interval.seconds": 0.5}

    sentences = StatefulSentenceSpout.spec()
    split = SplitSentence.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
    count = StatefulCountWords.spec(inputs={split: Grouping.fields("word")}, par=2)
