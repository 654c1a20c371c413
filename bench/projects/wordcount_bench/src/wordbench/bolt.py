"""The benchmark's counting bolt.

Per input it does what a streamparse word count does: count the word and emit
``[word, running count]`` on its default stream (a leaf stream: the engines capture the
latest value per word, which is the final count the benchmark compares across engines).

A tuple stamped by the spout (``ts`` != 0) also yields, on two more leaf streams:

* ``latency``: ``[sample id, nanoseconds from spout emit to here]``; the sample id is
  unique per task and sample, so the captured latest-value-per-key is every sample;
* ``clock``: ``[first:<task>, wall ns]`` once and ``[last:<task>, wall ns]`` each time,
  so the benchmark knows when this task counted its first and (to within one sample
  interval) its last word: the window its throughput is measured over, free of process
  start-up and shutdown.
"""

from __future__ import annotations

import time
from typing import Any

from compat.storm_api import Bolt, Stream


class CountBolt(Bolt):
    outputs = [Stream(fields=["word", "count"]),
               Stream(fields=["sample", "nanos"], name="latency"),
               Stream(fields=["mark", "nanos"], name="clock")]

    def initialize(self, conf: dict, ctx: dict) -> None:
        self.counts: dict[str, int] = {}
        self.samples = 0
        self.first_mark = f"first:{self.task_id}"
        self.last_mark = f"last:{self.task_id}"

    def process(self, tup: Any) -> None:
        word, ts = tup.values
        count = self.counts.get(word, 0) + 1
        self.counts[word] = count
        self.emit([word, count])
        if ts:
            self.sample(ts)

    def sample(self, ts: int) -> None:
        now = time.time_ns()
        if not self.samples:
            self.emit([self.first_mark, now], stream="clock")
        self.samples += 1
        self.emit([f"{self.task_id}:{self.samples}", now - ts], stream="latency")
        self.emit([self.last_mark, now], stream="clock")
