"""The word-count benchmark's streamparse-style variant: one spout, two counting tasks,
fields grouping on the word, acking off (at-most-once), and a counting bolt that emits
``[word, running count]`` for every word, as a streamparse word count does. The headline
is Heron's own word count, ``wordcount_bench_heron``."""

from wordbench.bolt import CountBolt
from wordbench.spout import WordSpout

from compat.storm_api import Grouping, Topology


class WordCountBench(Topology):
    config = {"topology.acker.executors": 0}
    word_spout = WordSpout.spec()
    count_bolt = CountBolt.spec(inputs={word_spout: Grouping.fields("word")}, par=2)
