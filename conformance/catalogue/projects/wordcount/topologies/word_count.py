"""Seeded word count, at-most-once: sentences -> split -> count (fields on word)."""

from compat.storm_api import Grouping, Topology

from catalogue_wordcount import CountWords, SentenceSpout, SplitSentence


class WordCount(Topology):
    config = {"topology.acker.executors": 0}

    sentences = SentenceSpout.spec()
    split = SplitSentence.spec(inputs={sentences: Grouping.SHUFFLE}, par=2)
    count = CountWords.spec(inputs={split: Grouping.fields("word")}, par=2)
