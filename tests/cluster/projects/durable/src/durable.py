"""A durable source and an idempotent-by-id sink, as a production at-least-once topology
has them (a queue with committed offsets, a store keyed by message id), backed by files
in a directory every node sees (``e2e.store``). They outlive any container: a spout or
sink restarted on another node picks up where the acked ledger says.

- ``LedgerSpout`` emits ``[id, word]`` with message id ``id`` for ids 0..e2e.n-1 that are
  not acked yet (read from ``acked.log`` at open), at most ``e2e.rate`` per second; each
  ack is appended to ``acked.log`` before it counts; a fail puts the id back.
- ``RecordingSink`` appends ``id word`` for every tuple it receives to
  ``records-<task>.log`` and lets auto-ack ack it. A replayed id is recorded twice: the
  test de-duplicates by id, as a store keyed by message id would.
"""

import os
import time
from pathlib import Path

from streamparse import Bolt, Spout

VOCABULARY = "ant bee cat dog eel fox gnu hen ibis jay kiwi lark mole newt owl".split()


def word_of(i):
    return VOCABULARY[i % len(VOCABULARY)]


def _append(path, line):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode())
        os.fsync(fd)
    finally:
        os.close(fd)


class LedgerSpout(Spout):
    outputs = ["id", "word"]

    def initialize(self, conf, context):
        self.store = Path(conf["e2e.store"])
        self.n = int(conf["e2e.n"])
        self.interval = 1.0 / float(conf.get("e2e.rate", 500))
        acked = set()
        ledger = self.store / "acked.log"
        if ledger.exists():
            acked = {int(x) for x in ledger.read_text().split()}
        self.todo = [i for i in range(self.n) if i not in acked]
        self.todo.reverse()
        self.in_flight = set()
        self.acked = acked
        self.next_at = 0.0

    def next_tuple(self):
        if not self.todo:
            return
        now = time.monotonic()
        if now < self.next_at:
            return
        self.next_at = now + self.interval
        i = self.todo.pop()
        self.in_flight.add(i)
        self.emit([i, word_of(i)], tup_id=i)

    def ack(self, tup_id):
        self.in_flight.discard(tup_id)
        if tup_id not in self.acked:
            self.acked.add(tup_id)
            _append(self.store / "acked.log", f"{tup_id}\n")

    def fail(self, tup_id):
        self.in_flight.discard(tup_id)
        if tup_id not in self.acked:
            self.todo.append(tup_id)

    def is_exhausted(self):
        return len(self.acked) >= self.n


class RecordingSink(Bolt):
    def initialize(self, conf, context):
        self.path = Path(conf["e2e.store"]) / f"records-{self.task_id}.log"

    def process(self, tup):
        i, word = tup.values
        _append(self.path, f"{i} {word}\n")
