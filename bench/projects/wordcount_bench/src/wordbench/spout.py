"""The benchmark's spout: a finite, seeded stream of words from the vocabulary.

Options (Storm dotted keys, set with ``-o`` or by bench/wordcount.py):

* ``bench.words``: words emitted by the whole component, split evenly over its tasks;
* ``bench.seed``: makes the sequence repeatable (task ``i`` uses its own stream, so tasks
  never repeat each other, and every engine sees the same words);
* ``bench.vocabulary``: number of distinct words (default 175,000);
* ``bench.sample_every``: one tuple in this many carries the wall-clock time it was
  emitted at (``time.time_ns()``) in its ``ts`` field, the others carry 0, so the counting
  bolt can measure emit-to-count latency without a clock read per tuple.
* ``bench.rate``: words per second for the whole component (0 or absent: as fast as the
  engine takes them), for latency at a load the engine can sustain rather than the
  queueing delay of a flood; the pace is kept in steps of ``bench.sample_every`` words.

``is_exhausted()`` (Storm's CompletableSpout) lets a run end by itself once every word
has been emitted.

**End of stream.** After its last word the task emits one marker, ``[END_MARK, -1]`` on
the ``eos`` stream, and only then reports itself exhausted. A counting bolt that emits
nothing per word (Heron's own word count, :class:`~wordbench.bolt.HeronCountBolt`)
subscribes to ``eos`` with all grouping and emits its final counts once every spout task's
marker has arrived, so every run's counts can still be checked. The marker is plain
Storm API (a declared stream, an emit), so it works alike on every engine. It is sent
after this task's last word on the same route to each bolt task (Storm delivers one
task's tuples to another in order; the heron engine batches per stream and sends a
task's buffered streams in their declared order, the words' first); a word that still
arrived after it would not be lost (see :mod:`wordbench.bolt`). Topologies whose bolts do not
subscribe to ``eos`` see it as a leaf
stream of one tuple per spout task.
"""

from __future__ import annotations

import random
import time

from compat.storm_api import Spout, Stream
from wordbench.vocabulary import DEFAULT_SIZE, vocabulary

DEFAULT_WORDS = 1_000_000
DEFAULT_SEED = 7
DEFAULT_SAMPLE_EVERY = 100
#: the stream the end-of-stream marker goes on, and the marker's ``word``
END_STREAM = "eos"
END_MARK = "<end of stream>"


def task_share(total: int, tasks: int, index: int) -> int:
    """How many of ``total`` words task number ``index`` (0-based) of ``tasks`` emits."""
    return total // tasks + (1 if index < total % tasks else 0)


def task_rng(seed: int, index: int) -> random.Random:
    """The word picker of spout task ``index``: a string seed, stable across processes and
    Python versions (``hash()`` randomization does not apply to ``random``'s seeding)."""
    return random.Random(f"wordbench:{seed}:{index}")


class WordSpout(Spout):
    outputs = [Stream(fields=["word", "ts"]), Stream(fields=["word", "ts"], name=END_STREAM)]

    def initialize(self, stormconf: dict, context: dict) -> None:
        total = int(stormconf.get("bench.words", DEFAULT_WORDS))
        seed = int(stormconf.get("bench.seed", DEFAULT_SEED))
        every = int(stormconf.get("bench.sample_every", DEFAULT_SAMPLE_EVERY))
        if total < 0 or every < 1:
            raise ValueError(f"bench.words must be >= 0 and bench.sample_every >= 1; got "
                             f"{total} and {every}")
        tasks = sorted(int(t) for t, c in context["task->component"].items()
                       if c == self.component_name)
        index = tasks.index(int(self.task_id))
        self.words = vocabulary(int(stormconf.get("bench.vocabulary", DEFAULT_SIZE)))
        self.remaining = task_share(total, len(tasks), index)
        self.sample_every = every
        # The first tuple is stamped: the counting bolt's clock starts with it.
        self.countdown = 1
        # bench.rate (words/s for the component, 0: as fast as possible) is kept at
        # stamped tuples: each may leave no earlier than ``interval_ns`` after the last.
        rate = float(stormconf.get("bench.rate") or 0) / len(tasks)
        self.interval_ns = int(every * 1e9 / rate) if rate > 0 else 0
        self.due = 0
        self.choice = task_rng(seed, index).choice
        #: the end-of-stream marker has been emitted
        self.ended = False

    def next_tuple(self) -> None:
        # One word per call, as a streamparse word count does: the engine's per-call cost
        # is part of what the benchmark measures. The common path is a few attribute
        # reads; the clock is read only for a stamped tuple.
        if self.remaining <= 0:
            if not self.ended:
                self.end_of_stream()
            return
        self.countdown -= 1
        if self.countdown:
            self.remaining -= 1
            self.emit([self.choice(self.words), 0])
            return
        now = time.time_ns()
        if now < self.due:
            self.countdown = 1  # ahead of bench.rate: emit nothing this call
            return
        if self.interval_ns:
            self.due = (self.due or now) + self.interval_ns
        self.countdown = self.sample_every
        self.remaining -= 1
        self.emit([self.choice(self.words), now])

    def end_of_stream(self) -> None:
        """Emit the end-of-stream marker (after the last word), once."""
        self.ended = True
        self.emit([END_MARK, -1], stream=END_STREAM)

    def is_exhausted(self) -> bool:
        return self.ended
