"""The word-count benchmark topology: one spout, two counting tasks, fields grouping on
the word, acking off (at-most-once): the shape of the design's performance budget."""

from wordbench.bolt import CountBolt
from wordbench.spout import WordSpout

from compat.storm_api import Grouping, Topology


class WordCountBench(Topology):
    config = {"topology.acker.executors": 0}
    word_spout = WordSpout.spec()
    count_bolt = CountBolt.spec(inputs={word_spout: Grouping.fields("word")}, par=2)
