"""The components of the Kafka benchmark's topologies (bench/kafka.py).

``BenchKafkaSpout`` is the stock ``KafkaSpout`` with two bench-only differences, neither on
the per-record path: it writes the wall-clock time of its first emit to a file (the start
of the end-to-end window, which no engine metric gives to better than a second), and it
reports Storm's lag metrics every half second instead of every 5 s, so the lag chart has
a point per Topology Master publication (once a second) rather than one in five.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from streamparse import Bolt

from compat.connectors.kafka import KafkaSpout
from compat.storm_api import StatefulComponent

#: the option naming the directory the spouts write their first-emit times to
STAMP_DIR = "bench.stamp_dir"


class BenchKafkaSpout(KafkaSpout):
    """``KafkaSpout`` that stamps its first emit and reports lag every 0.5 s."""

    lag_report_secs = 0.5

    def initialize(self, storm_conf: dict, context: dict) -> None:
        super().initialize(storm_conf, context)
        stamp_dir = (storm_conf or {}).get(STAMP_DIR)
        if not stamp_dir:
            return
        path = Path(stamp_dir) / f"first-emit-{self.task_id}"
        # the engine's fast emit was bound in _bind; wrap it for one call, then put it back
        # so every later record takes exactly the stock path
        fast = self.emit

        def first_emit(*args: Any, **kwargs: Any) -> Any:
            self.emit = fast
            stamp = time.time()
            tmp = path.with_suffix(".tmp")
            tmp.write_text(repr(stamp))
            os.replace(tmp, path)
            return fast(*args, **kwargs)

        self.emit = first_emit


class SplitBolt(Bolt):
    """One tuple per word of a record's value (the spout's default fields: topic,
    partition, offset, key, value)."""

    outputs = ["word"]

    def process(self, tup: Any) -> None:
        for word in (tup.values[4] or "").split():
            self.emit([word])


class CountBolt(StatefulComponent, Bolt):
    """A running count per word, emitted as ``(word, count)`` after every word.

    Under EFFECTIVELY_ONCE the counts are keyed state (checkpointed, restored with their
    words); otherwise the state is the task's memory, as a Storm bolt's would be.
    """

    outputs = ["word", "count"]

    def init_state(self, stateful_state: Any) -> None:
        self.counts = stateful_state.keyed()

    def process(self, tup: Any) -> None:
        word = tup.values[0]
        count = self.counts.get(word, 0) + 1
        self.counts[word] = count
        self.emit([word, count])
