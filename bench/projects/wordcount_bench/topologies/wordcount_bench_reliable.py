"""The word-count benchmark, at-least-once: the same words, fields grouping and counting
bolt as ``wordcount_bench``, but the spout emits every word with a message id (and
replays failed ones), the bolt acks and anchors (streamparse's auto-ack/auto-anchor),
and one acker tracks the trees. bench/wordcount.py sets ``topology.max.spout.pending``
(``--max-pending``), as a Storm user of a reliable spout does."""

from wordbench.bolt import CountBolt
from wordbench.reliable import ReliableWordSpout

from compat.storm_api import Grouping, Topology


class WordCountBenchReliable(Topology):
    config = {"topology.acker.executors": 1}
    word_spout = ReliableWordSpout.spec()
    count_bolt = CountBolt.spec(inputs={word_spout: Grouping.fields("word")}, par=2)
