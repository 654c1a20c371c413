"""The benchmark's counting bolts.

:class:`CountBolt`, the **streamparse-style** word count: per input it does what a
streamparse word count does: count the word and emit ``[word, running count]`` on its
default stream (a leaf stream: the engines capture the latest value per word, which is
the final count the benchmark compares across engines).

:class:`HeronCountBolt`, **Heron's own word count** (the ``WordCountTopology`` of
Heron's benchmarks): per input it counts the word in a map and emits nothing. It also
subscribes to the spout's ``eos`` stream (all grouping), and once every spout task's
end-of-stream marker has arrived it emits ``[word, final count]`` for every word it
holds, so the run's counts are checked as the streamparse-style ones are. A word that
still arrived after that (only an engine that reorders one task's tuples across streams
could deliver one) is emitted with its new count at once, so the captured latest count
per word is right either way; the benchmark's count check would show any word missing.

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
from wordbench.spout import END_STREAM


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


class HeronCountBolt(CountBolt):
    """Heron's word count: a map of counts, no emit per word; the final counts at the
    end of the stream (see the module docstring)."""

    def initialize(self, conf: dict, ctx: dict) -> None:
        super().initialize(conf, ctx)
        #: component -> its number of tasks (a marker's sender tells whose to wait for)
        self.task_counts: dict[str, int] = {}
        for component in ctx["task->component"].values():
            self.task_counts[component] = self.task_counts.get(component, 0) + 1
        #: the spout tasks whose end-of-stream marker has arrived
        self.ended: set[int] = set()
        #: every spout task's marker has arrived and the final counts have been emitted
        self.drained = False

    def process(self, tup: Any) -> None:
        word, ts = tup.values
        if ts or self.drained:  # a stamped word, the marker (ts -1), or a late word
            self.rare(tup, word, ts)
            return
        counts = self.counts
        counts[word] = counts.get(word, 0) + 1

    def rare(self, tup: Any, word: str, ts: int) -> None:
        if tup.stream == END_STREAM:
            self.end_of_stream(tup)
            return
        count = self.counts.get(word, 0) + 1
        self.counts[word] = count
        if ts > 0:
            self.sample(ts)
        if self.drained:
            self.emit([word, count])

    def end_of_stream(self, tup: Any) -> None:
        self.ended.add(int(tup.task))
        if self.drained or len(self.ended) < self.task_counts.get(tup.component, 1):
            return
        self.drained = True
        emit = self.emit
        for word, count in self.counts.items():
            emit([word, count])
