"""Heron's own word count, the benchmark's headline (as in Heron's benchmark
``WordCountTopology``): the same spout, fields grouping on the word and two counting
tasks as ``wordcount_bench``, acking off, but the counting bolt keeps a map and emits
nothing per word. It emits its final counts when the spout's end-of-stream marker (the
``eos`` stream, all grouping) has arrived from every spout task, so the counts are
checked as in every other run."""

from wordbench.bolt import HeronCountBolt
from wordbench.spout import END_STREAM, WordSpout

from compat.storm_api import Grouping, Topology


class WordCountBenchHeron(Topology):
    config = {"topology.acker.executors": 0}
    word_spout = WordSpout.spec()
    count_bolt = HeronCountBolt.spec(inputs={word_spout: Grouping.fields("word"),
                                             word_spout[END_STREAM]: Grouping.ALL}, par=2)
