"""The word count's effectively-once components (bench/checkpoint.py).

:class:`StatefulWordSpout` emits the same seeded words as
:class:`~wordbench.spout.WordSpout` (its per-word path is WordSpout's, unchanged) and
keeps its source position in its state: the word picker's RNG state and the words still
to emit, recorded in ``pre_save`` (``docs/stateful.md``: "a spout records its source
position here, unless it keeps it in state as it emits"). Recording it per word would
put a state write on every emit, which the other modes do not pay; recording it just
before the save is exact, since the engine flushes what the spout emitted before it
calls ``pre_save``. On a restore it seeks back by restoring the RNG state, so a rollback
replays exactly the words emitted after the checkpoint.

:class:`StatefulCountBolt` is Heron's word count (:class:`~wordbench.bolt.HeronCountBolt`:
a map of counts, nothing emitted per word) whose map **is** its state: the per-word path
is the same code as the other modes', going through the ``State`` mapping a user gets,
so the comparison with at-most-once and at-least-once is of the same bolt.

Options (Storm dotted keys):

* ``bench.prefill_keys``: on a start with empty state, fill the state with this many
  extra keys first (``pre0000001`` -> a small count), for the checkpoint-size figures;
* ``bench.mark_dir``: after each start or restore, the task writes one JSON line to
  ``<dir>/<task>.jsonl`` when it processes its first stamped word (the spout stamps its
  first word after a start and one in ``bench.sample_every`` after that): the wall time,
  its pid and how many keys and words its restored state held. The kill figure uses it
  to know, to the millisecond, when a killed task processes again, and that its state
  was restored, without waiting for once-a-second metrics.

Not covered: the bolt's end-of-stream bookkeeping (which spout markers arrived) is not
in state, so a rollback after the end of the stream is not exact; the bench's
effectively-once runs are stopped long before their streams end.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from compat.storm_api import StatefulComponent
from compat.storm_api.state import State
from wordbench.bolt import HeronCountBolt
from wordbench.spout import WordSpout

PREFILL_PREFIX = "pre"


def prefill_key(i: int) -> str:
    """The ``i``-th pre-filled key: as long as a typical vocabulary word (10 characters)."""
    return f"{PREFILL_PREFIX}{i:07d}"


class StatefulWordSpout(StatefulComponent, WordSpout):
    """WordSpout whose position (RNG state, words left, marker sent) is its state."""

    def init_state(self, stateful_state: State) -> None:
        self.state = stateful_state

    def initialize(self, stormconf: dict, context: dict) -> None:
        super().initialize(stormconf, context)
        #: the Random behind ``self.choice`` (WordSpout keeps only its bound method)
        self.rng = self.choice.__self__
        position = self.state.get("rng")
        if position is not None:  # a restore: seek back to the checkpoint's position
            version, internal, gauss = position
            self.rng.setstate((version, tuple(internal), gauss))
            self.remaining = int(self.state["remaining"])
            self.ended = bool(self.state["ended"])

    def pre_save(self, checkpoint_id: str) -> None:
        self.state["rng"] = list(self.rng.getstate())
        self.state["remaining"] = self.remaining
        self.state["ended"] = self.ended


class StatefulCountBolt(StatefulComponent, HeronCountBolt):
    """HeronCountBolt whose counts are its state (see the module docstring)."""

    def init_state(self, stateful_state: State) -> None:
        self.state = stateful_state

    def initialize(self, conf: dict, ctx: dict) -> None:
        super().initialize(conf, ctx)
        self.counts = self.state  # type: ignore[assignment]  # the per-word path writes state
        prefill = int(conf.get("bench.prefill_keys") or 0)
        if prefill and not len(self.state):
            state = self.state
            for i in range(prefill):
                state[prefill_key(i)] = i % 1000
        mark_dir = conf.get("bench.mark_dir")
        self.mark_path = (Path(mark_dir) / f"{self.task_id}.jsonl") if mark_dir else None
        self.marked = self.mark_path is None
        self.started_at = time.time()
        if self.mark_path is not None:
            # what the restore gave this task (sums the counts once: a few ms)
            self.restored = (len(self.state), sum(v for k, v in self.state.items()
                                                  if not str(k).startswith(PREFILL_PREFIX)))

    def rare(self, tup: Any, word: str, ts: int) -> None:
        if not self.marked:
            self.mark()
        super().rare(tup, word, ts)

    def mark(self) -> None:
        """Record this start's first stamped word (one line, one write)."""
        self.marked = True
        keys, words = self.restored
        line = json.dumps({"task": int(self.task_id), "pid": os.getpid(),
                           "started_at": self.started_at, "first_word_at": time.time(),
                           "restored_keys": keys, "restored_words": words})
        with open(self.mark_path, "a") as out:
            out.write(line + "\n")
