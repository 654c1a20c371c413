"""Heron's word count, effectively-once (bench/checkpoint.py): the same spout, fields
grouping on the word, two counting tasks and per-word bolt code as
``wordcount_bench_heron``, but the spout keeps its position and the bolt its counts in
state, and the Topology Master checkpoints them every
``topology.stateful.checkpoint.interval.seconds`` (the bench sets 1, 5 or 30)."""

from wordbench.spout import END_STREAM
from wordbench.stateful import StatefulCountBolt, StatefulWordSpout

from compat.storm_api import Grouping, Topology


class WordCountBenchStateful(Topology):
    config = {"topology.reliability.mode": "EFFECTIVELY_ONCE",
              "topology.stateful.checkpoint.interval.seconds": 5}
    word_spout = StatefulWordSpout.spec()
    count_bolt = StatefulCountBolt.spec(inputs={word_spout: Grouping.fields("word"),
                                                word_spout[END_STREAM]: Grouping.ALL}, par=2)
