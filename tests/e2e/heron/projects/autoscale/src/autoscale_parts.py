"""Components of the auto-scaling fixture (tests/engine/healthmgr/test_e2e_autoscale.py).

The spout offers ids at a rate the test sets by writing a number to ``e2e.rate_file``
(re-read twice a second), keeps a ledger of every emit, ack and fail in
``e2e.out/spout-<task>.jsonl`` and replays failed ids (at-least-once). The bolt's
capacity is set by a sleep per tuple, so one instance cannot keep up with the offered
rate and the Stream Manager goes into backpressure. The sink appends every
``(id, word)`` it receives to ``e2e.out/sink-<task>.txt``: de-duplicated by id, the
per-word counts must be exact.
"""

import json
import os
import time

from compat.storm_api import Bolt, Spout


class RateSpout(Spout):
    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.rate_file = conf["e2e.rate_file"]
        self.rate = 0.0
        self.next_read = 0.0
        self.next_at = 0.0
        self.n = 0
        self.todo = []
        out = conf["e2e.out"]
        os.makedirs(out, exist_ok=True)
        self.ledger = open(os.path.join(out, f"spout-{ctx['taskid']}.jsonl"), "a",
                           buffering=1)

    def _read_rate(self, now):
        if now < self.next_read:
            return
        self.next_read = now + 0.5
        try:
            with open(self.rate_file) as fh:
                self.rate = float(fh.read().strip() or 0)
        except (OSError, ValueError):
            pass

    def next_tuple(self):
        now = time.monotonic()
        self._read_rate(now)
        # failed ids are replayed even at rate 0 (at 100/s), so that every id gets acked
        rate = self.rate if self.rate > 0 else (100.0 if self.todo else 0.0)
        if rate <= 0 or now < self.next_at:
            return
        # at most 10 per call, paced to the rate (a late call catches up by 0.1 s at most)
        burst = 10
        self.next_at = max(self.next_at, now - 0.1) + burst / rate
        for _ in range(burst):
            if self.todo:
                n = self.todo.pop()
            elif self.rate > 0:
                n = self.n
                self.n += 1
            else:
                return
            self.emit([n], tup_id=n)
            self.ledger.write(json.dumps({"event": "emit", "id": n}) + "\n")

    def ack(self, tup_id):
        self.ledger.write(json.dumps({"event": "ack", "id": tup_id}) + "\n")

    def fail(self, tup_id):
        self.todo.append(tup_id)
        self.ledger.write(json.dumps({"event": "fail", "id": tup_id}) + "\n")

    def close(self):
        self.ledger.close()


class SlowWords(Bolt):
    """``(id, w<id % 7>)`` per id, after ``e2e.delay`` seconds (auto-anchored, auto-acked)."""

    outputs = ["n", "word"]

    def initialize(self, conf, ctx):
        self.delay = float(conf.get("e2e.delay", 0.005))

    def process(self, tup):
        time.sleep(self.delay)
        n = tup.values[0]
        self.emit([n, f"w{n % 7}"])


class Ledger(Bolt):
    outputs = []

    def initialize(self, conf, ctx):
        out = conf["e2e.out"]
        os.makedirs(out, exist_ok=True)
        self.file = open(os.path.join(out, f"sink-{ctx['taskid']}.txt"), "a", buffering=1)

    def process(self, tup):
        n, word = tup.values
        self.file.write(f"{n} {word}\n")

    def close(self):
        self.file.close()
