"""The checkpoint-size scenario (bench/checkpoint.py): the effectively-once word count
with ONE counting task, pre-filled with ``bench.prefill_keys`` keys of state, so that a
checkpoint's duration and bytes are those of one task holding that many keys."""

from wordbench.spout import END_STREAM
from wordbench.stateful import StatefulCountBolt, StatefulWordSpout

from compat.storm_api import Grouping, Topology


class WordCountBenchCheckpoint(Topology):
    config = {"topology.reliability.mode": "EFFECTIVELY_ONCE",
              "topology.stateful.checkpoint.interval.seconds": 2}
    word_spout = StatefulWordSpout.spec()
    count_bolt = StatefulCountBolt.spec(inputs={word_spout: Grouping.fields("word"),
                                                word_spout[END_STREAM]: Grouping.ALL}, par=1)
