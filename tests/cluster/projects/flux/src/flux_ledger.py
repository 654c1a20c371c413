"""A durable source for the Flux cluster test: emits ``[id, word]`` with message id
``id`` for the ids 0..e2e.n-1 not in ``acked.log`` (in ``e2e.store``, which every node
sees), at most ``e2e.rate`` per second; each ack is appended to ``acked.log``; a fail
puts the id back. The words are tests/cluster/projects/durable's."""

import os
import time
from pathlib import Path

from streamparse import Spout

VOCABULARY = "ant bee cat dog eel fox gnu hen ibis jay kiwi lark mole newt owl".split()


def word_of(i):
    return VOCABULARY[i % len(VOCABULARY)]


class LedgerSpout(Spout):
    outputs = ["id", "word"]

    def initialize(self, conf, context):
        self.store = Path(conf["e2e.store"])
        self.n = int(conf["e2e.n"])
        self.interval = 1.0 / float(conf.get("e2e.rate", 500))
        ledger = self.store / "acked.log"
        self.acked = {int(x) for x in ledger.read_text().split()} if ledger.exists() else set()
        self.todo = [i for i in reversed(range(self.n)) if i not in self.acked]
        self.next_at = 0.0

    def next_tuple(self):
        now = time.monotonic()
        if not self.todo or now < self.next_at:
            return
        self.next_at = now + self.interval
        i = self.todo.pop()
        self.emit([i, word_of(i)], tup_id=i)

    def ack(self, tup_id):
        if tup_id not in self.acked:
            self.acked.add(tup_id)
            fd = os.open(self.store / "acked.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, f"{tup_id}\n".encode())
                os.fsync(fd)
            finally:
                os.close(fd)

    def fail(self, tup_id):
        if tup_id not in self.acked:
            self.todo.append(tup_id)

    def is_exhausted(self):
        return len(self.acked) >= self.n
