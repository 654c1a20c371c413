"""Components of the at-least-once fixture topologies (tests/e2e/heron/test_acking.py).

The spout keeps its own ledger of what happened to every message id (each ack and each
fail, in order) and writes it, as JSON lines, to ``e2e.out/<task>.jsonl``: the test
reads what the spout saw, not what the engine says it did.
"""

import json
import os
import time

from compat.storm_api import Bolt, Spout
from compat.storm_api.updatable import Updatable


class LedgerSpout(Spout):
    """Emits ids ``0..e2e.limit-1`` once each, replays an id when it fails, and is
    exhausted when every id has been acked."""

    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.task = ctx["taskid"]
        self.limit = int(conf.get("e2e.limit", 100))
        self.per_call = int(conf.get("e2e.per_call", 1))
        self.todo = list(range(self.limit))
        self.todo.reverse()
        self.in_flight = set()
        self.acked = set()
        self.max_in_flight = 0
        #: tuples per second for this task (0: as fast as next_tuple is called)
        self.interval = 1.0 / float(conf["e2e.rate"]) if conf.get("e2e.rate") else 0.0
        self.next_at = 0.0
        out = conf["e2e.out"]
        os.makedirs(out, exist_ok=True)
        self.ledger = open(os.path.join(out, f"{self.task}.jsonl"), "a", buffering=1)

    def next_tuple(self):
        if self.interval:
            now = time.monotonic()
            if now < self.next_at:
                return
            self.next_at = max(self.next_at, now - 0.1) + self.interval * self.per_call
        for _ in range(self.per_call):
            if not self.todo:
                return
            n = self.todo.pop()
            self.in_flight.add(n)
            self.max_in_flight = max(self.max_in_flight, len(self.in_flight))
            self.emit([n], tup_id=n)
            self.ledger.write(json.dumps({"event": "emit", "id": n,
                                          "in_flight": len(self.in_flight)}) + "\n")

    def ack(self, tup_id):
        self.in_flight.discard(tup_id)
        self.acked.add(tup_id)
        self.ledger.write(json.dumps({"event": "ack", "id": tup_id}) + "\n")

    def fail(self, tup_id):
        self.in_flight.discard(tup_id)
        self.todo.append(tup_id)  # replay
        self.ledger.write(json.dumps({"event": "fail", "id": tup_id}) + "\n")

    def is_exhausted(self):
        return len(self.acked) >= self.limit and not self.todo

    def close(self):
        self.ledger.close()


class Flaky(Bolt):
    """The first time it sees an id from a spout task: fails ids ending in 3, silently drops ids
    ending in 7 (they time out), passes the rest on; every later time, passes the id on."""

    outputs = ["n"]
    auto_ack = False
    auto_fail = False

    def initialize(self, conf, ctx):
        self.seen = set()

    def process(self, tup):
        n = tup.values[0]
        key = (tup.task, n)  # each spout task emits every id
        first = key not in self.seen
        self.seen.add(key)
        if first and n % 10 == 3:
            self.fail(tup)
            return
        if first and n % 10 == 7:
            return  # neither acked nor failed: the tree times out at the spout
        self.emit([n], anchors=[tup])
        self.ack(tup)


class Sink(Bolt):
    """Passes each id on to a leaf stream (captured); auto-acked."""

    outputs = ["n"]

    def process(self, tup):
        self.emit([tup.values[0]])


class SlowSink(Bolt):
    """Takes ``e2e.delay`` seconds per tuple."""

    outputs = ["n"]

    def initialize(self, conf, ctx):
        self.delay = float(conf.get("e2e.delay", 0.005))

    def process(self, tup):
        time.sleep(self.delay)
        self.emit([tup.values[0]])


class SlowRelay(Bolt):
    """Takes ``e2e.delay`` seconds per tuple and passes ``[n, padding]`` on: under a flood
    it is busy on both sides, its input queued and its output filling its hop."""

    outputs = ["n", "padding"]

    def initialize(self, conf, ctx):
        self.delay = float(conf.get("e2e.delay", 0.005))

    def process(self, tup):
        time.sleep(self.delay)
        self.emit(list(tup.values))


class Firehose(Spout):
    """Emits ``[n, padding]`` as fast as it is allowed to, for ``e2e.seconds``."""

    outputs = ["n", "padding"]

    def initialize(self, conf, ctx):
        self.seconds = float(conf.get("e2e.seconds", 5))
        self.padding = "x" * int(conf.get("e2e.padding", 100))
        self.started = None
        self.n = 0

    def next_tuple(self):
        if self.started is None:
            self.started = time.monotonic()
        for _ in range(100):
            self.emit([self.n, self.padding])
            self.n += 1

    def is_exhausted(self):
        return self.started is not None and time.monotonic() - self.started > self.seconds


class Pass(Bolt):
    """Passes each id on, anchored (auto-anchor, auto-ack)."""

    outputs = ["n"]

    def process(self, tup):
        self.emit([tup.values[0]])


class Words(Bolt):
    """Emits ``(word, 1)`` per input id, anchored: ``w<n % 13>``."""

    outputs = ["word", "one"]

    def process(self, tup):
        self.emit([f"w{tup.values[0] % 13}", 1])


class WordLedger(Updatable, Bolt):
    """Appends every word it receives to ``e2e.out/sink-<task>.txt``, and each new
    parallelism ``heron update`` tells it of (tasks per component) to
    ``e2e.out/updates-<task>.ndjson``."""

    outputs = []

    def initialize(self, conf, ctx):
        out = conf["e2e.out"]
        os.makedirs(out, exist_ok=True)
        self.file = open(os.path.join(out, f"sink-{ctx['taskid']}.txt"), "a", buffering=1)
        self.updates = os.path.join(out, f"updates-{ctx['taskid']}.ndjson")

    def update(self, context):
        tasks = {}
        for component in context["task->component"].values():
            tasks[component] = tasks.get(component, 0) + 1
        with open(self.updates, "a") as fh:
            fh.write(json.dumps(tasks) + "\n")

    def process(self, tup):
        word, one = tup.values
        self.file.write(f"{word} {one}\n")

    def close(self):
        self.file.close()
