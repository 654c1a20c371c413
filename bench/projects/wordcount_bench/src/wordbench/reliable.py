"""The at-least-once variant of the benchmark's spout (bench/wordcount.py
``--reliability at-least-once``).

It emits the same seeded words as :class:`~wordbench.spout.WordSpout`, but every word
with a message id, as a reliable Storm spout does, and keeps each word until its tree is
acked so that a failed (or timed-out) word can be replayed; the counting bolt acks
(``auto_ack``) and anchors its emits (``auto_anchor``) as a streamparse bolt does.

Complete latency is measured from the spout's own view: for each stamped word (one in
``bench.sample_every``, the same ones the counting bolt uses for its clock) the spout
remembers when it emitted it, and in :meth:`ack` emits ``[sample id, nanoseconds from
emit to ack]`` on the ``complete`` stream, which has no consumers (the engines capture
it, one unique key per sample). Storm allows emits from ``ack``; these are unanchored,
so they start no tree of their own.

A replayed word is emitted unstamped (``ts`` 0), so a sample's latency is always that of
the first emit and its tree, and the bolt's clock marks only ever see first emits.

The end-of-stream marker (see :mod:`wordbench.spout`) leaves only once every word's tree
is acked: then every word has been counted, whatever the order of delivery, and no
replay can follow it.
"""

from __future__ import annotations

import time

from compat.storm_api import Stream
from wordbench.spout import END_STREAM, WordSpout


class ReliableWordSpout(WordSpout):
    outputs = [Stream(fields=["word", "ts"]),
               Stream(fields=["word", "ts"], name=END_STREAM),
               Stream(fields=["sample", "nanos"], name="complete")]

    def initialize(self, stormconf: dict, context: dict) -> None:
        super().initialize(stormconf, context)
        #: message id -> (word, stamp or 0), until the tree is acked
        self.pending: dict[int, tuple[str, int]] = {}
        #: ids whose tree failed or timed out, emitted again before any new word
        self.replay: list[int] = []
        self.next_id = 0
        self.samples = 0
        self.failed = 0

    def next_tuple(self) -> None:
        if self.replay:
            msg_id = self.replay.pop()
            word = self.pending[msg_id][0]
            self.pending[msg_id] = (word, 0)
            self.emit([word, 0], tup_id=msg_id)
            return
        if self.remaining <= 0:
            if not self.pending and not self.ended:
                self.end_of_stream()
            return
        msg_id = self.next_id
        self.countdown -= 1
        if self.countdown:
            self.next_id = msg_id + 1
            self.remaining -= 1
            word = self.choice(self.words)
            self.pending[msg_id] = (word, 0)
            self.emit([word, 0], tup_id=msg_id)
            return
        now = time.time_ns()
        if now < self.due:
            self.countdown = 1  # ahead of bench.rate: emit nothing this call
            return
        if self.interval_ns:
            self.due = (self.due or now) + self.interval_ns
        self.countdown = self.sample_every
        self.next_id = msg_id + 1
        self.remaining -= 1
        word = self.choice(self.words)
        self.pending[msg_id] = (word, now)
        self.emit([word, now], tup_id=msg_id)

    def ack(self, tup_id: int) -> None:
        entry = self.pending.pop(tup_id, None)
        if entry is None:
            return  # not ours to count (the engines ignore acks after a timeout anyway)
        if entry[1]:
            ts = entry[1]
            now = time.time_ns()
            self.samples += 1
            self.emit([f"{self.task_id}:{self.samples}", now - ts], stream="complete")

    def fail(self, tup_id: int) -> None:
        if tup_id in self.pending:
            self.failed += 1
            self.replay.append(tup_id)

    def is_exhausted(self) -> bool:
        # not before every tree is acked (a fail may still hand a word back for replay)
        # and the end-of-stream marker has followed the last of them
        return self.ended
