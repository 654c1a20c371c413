"""The word-count benchmark, at-least-once: Heron's word count (``wordcount_bench_heron``:
the same words, fields grouping, and a counting bolt that keeps a map, emits nothing per
word and its final counts at the end of the stream), but the spout emits every word with
a message id (and replays failed ones), the bolt acks each word (streamparse's auto-ack),
and one acker tracks the trees. The spout's end-of-stream marker leaves once every tree
is acked. bench/wordcount.py sets ``topology.max.spout.pending`` (``--max-pending``), as a
Storm user of a reliable spout does."""

from wordbench.bolt import HeronCountBolt
from wordbench.reliable import ReliableWordSpout
from wordbench.spout import END_STREAM

from compat.storm_api import Grouping, Topology


class WordCountBenchReliable(Topology):
    config = {"topology.acker.executors": 1}
    word_spout = ReliableWordSpout.spec()
    count_bolt = HeronCountBolt.spec(inputs={word_spout: Grouping.fields("word"),
                                             word_spout[END_STREAM]: Grouping.ALL}, par=2)
