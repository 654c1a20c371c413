"""The keyed word count at a rate the test controls, for the Health Manager's scaling of
a stateful component (tests/engine/healthmgr/test_e2e_stateful_autoscale.py,
bench/autoscale.py --topology stateful).

``RateWords`` emits the words ``word(0) .. word(n - 1)`` (``e2e.words``) of a fixed
corpus, paced to the rate written in ``e2e.rate_file`` (re-read twice a second, as the
autoscale project's spout does): its position in the corpus is its state, so a rollback
(a checkpoint restored when the Health Manager resizes the counting bolt) replays from
exactly where the restored checkpoint left it. Once a second it writes the position it
has reached to ``e2e.out/spout-<task>.txt`` (a progress figure for the benchmark, not
what the test checks: the sink's committed records are).
"""

from __future__ import annotations

import collections
import os
import time

from e2e_stateful_parts import WORDS

from compat.storm_api import Spout, StatefulComponent

#: distinct words in the corpus: many, so that the key groups (128 by default) and the
#: counting bolt's tasks get about the same share (16 words made one task of three hot,
#: which the Health Manager diagnoses as data skew and does not scale)
VOCABULARY = 512


def word(i: int) -> str:
    """The corpus' ``i``-th word: ``<fruit><k>``, one of ``VOCABULARY`` words, from a
    multiplicative hash of ``i`` (deterministic, about evenly spread)."""
    h = ((i * 2654435761) % 2 ** 32) >> 23  # 0..511
    return f"{WORDS[h % len(WORDS)]}{h // len(WORDS)}"


def corpus_counts(n: int) -> collections.Counter:
    """How many times each word occurs in the first ``n`` words."""
    return collections.Counter(word(i) for i in range(n))


class RateWords(StatefulComponent, Spout):
    """``(word, padding)``: ``e2e.pad_bytes`` bytes of padding make each tuple weigh what
    a real record does, so the bytes the backpressure watermarks and the sockets' buffers
    hold are a few seconds of the slow bolt's work, not minutes of bare words (a
    checkpoint's marker waits behind all of them)."""

    outputs = ["word", "pad"]

    def init_state(self, stateful_state):
        self.state = stateful_state

    def initialize(self, conf, ctx):
        self.n = int(conf.get("e2e.words", 30000))
        self.rate_file = conf.get("e2e.rate_file")
        self.rate = float(conf.get("e2e.rate", 0) or 0)
        self.next_read = 0.0
        self.next_at = 0.0
        self.next_progress = 0.0
        self.pad = "." * int(conf.get("e2e.pad_bytes", 0))
        self.state.setdefault("next", 0)
        out = conf.get("e2e.out")
        self.progress = None
        if out:
            os.makedirs(out, exist_ok=True)
            self.progress = os.path.join(out, f"spout-{ctx['taskid']}.txt")

    def _read_rate(self, now):
        if self.rate_file is None or now < self.next_read:
            return
        self.next_read = now + 0.5
        try:
            with open(self.rate_file) as fh:
                self.rate = float(fh.read().strip() or 0)
        except (OSError, ValueError):
            pass

    def _report(self, now):
        if self.progress is None or now < self.next_progress:
            return
        self.next_progress = now + 1.0
        tmp = self.progress + ".tmp"
        with open(tmp, "w") as fh:
            fh.write(str(self.state["next"]))
        os.replace(tmp, self.progress)

    def next_tuple(self):
        now = time.monotonic()
        self._read_rate(now)
        self._report(now)
        i = self.state["next"]
        if self.rate <= 0 or i >= self.n or now < self.next_at:
            if i >= self.n or self.rate <= 0:
                time.sleep(0.005)
            return
        # at most 10 per call, paced to the rate (a late call catches up by 0.1 s at most)
        burst = 10
        self.next_at = max(self.next_at, now - 0.1) + burst / self.rate
        for _ in range(min(burst, self.n - i)):
            self.emit([word(i), self.pad])
            i += 1
        self.state["next"] = i

    def is_exhausted(self):
        return self.state["next"] >= self.n
