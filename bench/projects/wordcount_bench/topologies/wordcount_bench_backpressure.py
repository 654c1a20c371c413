"""The backpressure scenario: the benchmark's spout (at-most-once, as fast as it is let)
into counting bolts with a fixed cost per tuple (``bench.bolt_cost_us``), about ten
times slower than the spout; bench/wordcount.py runs it for a fixed time."""

from wordbench.slow import SlowCountBolt
from wordbench.spout import WordSpout

from compat.storm_api import Grouping, Topology


class WordCountBenchBackpressure(Topology):
    config = {"topology.acker.executors": 0}
    word_spout = WordSpout.spec()
    count_bolt = SlowCountBolt.spec(inputs={word_spout: Grouping.fields("word")}, par=2)
