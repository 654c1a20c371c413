"""Seeded word count, at-least-once with one-second message timeouts: the catalogue
kills a ``split`` task mid-run and expects exact final counts anyway."""

from compat.storm_api import Grouping, Topology

from catalogue_wordcount import CountWords, SentenceSpout, SplitSentence


class WordCountReliable(Topology):
    config = {"topology.acker.executors": 1, "topology.message.timeout.secs": 1.0}

    sentences = SentenceSpout.spec()
    split = SplitSentence.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
    count = CountWords.spec(inputs={split: Grouping.fields("word")}, par=2)
