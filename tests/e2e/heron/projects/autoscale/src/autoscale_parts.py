"""Components of the auto-scaling fixture (tests/engine/healthmgr/test_e2e_*.py).

The spout offers ids at a rate the test sets by writing a number to ``e2e.rate_file``
(re-read twice a second), keeps a ledger of every emit, ack and fail in
``e2e.out/spout-<task>.jsonl`` and replays failed ids (at-least-once). The bolt's
capacity is set by a sleep per tuple, so one instance cannot keep up with the offered
rate and the Stream Manager goes into backpressure. The sink appends every
``(id, word)`` it receives to ``e2e.out/sink-<task>.txt``: de-duplicated by id, the
per-word counts must be exact.

Variants for the other Health Manager scenarios: ``HotKeySpout`` also emits a key, one
key for a share ``e2e.hot_share`` of the ids (a fields-grouped bolt then has one hot
instance, which ``KeyedWords`` names by writing ``hot-<task>``); ``FlakyWords`` is fast,
except that the instance of index ``e2e.flaky_index`` turns slow after
``e2e.flaky_after`` tuples and stays slow until its process is restarted (it writes
``flaky-<task>`` when it starts slow, and a restarted process finds it and is fast).
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
            self.emit(self.values(n), tup_id=n)
            self.ledger.write(json.dumps({"event": "emit", "id": n}) + "\n")

    def values(self, n):
        return [n]

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


class HotKeySpout(RateSpout):
    """``(id, key)``: key ``hot`` for a share ``e2e.hot_share`` of the ids (spread evenly),
    one of 40 cold keys for the others; a replayed id keeps its key."""

    outputs = ["n", "key"]

    def initialize(self, conf, ctx):
        super().initialize(conf, ctx)
        self.hot_per_100 = round(100 * float(conf.get("e2e.hot_share", 0.9)))

    def values(self, n):
        return [n, "hot" if n % 100 < self.hot_per_100 else f"k{n % 40}"]


class KeyedWords(SlowWords):
    """SlowWords on ``(id, key)``; the instance that gets the hot key writes ``hot-<task>``."""

    def initialize(self, conf, ctx):
        super().initialize(conf, ctx)
        self.marker = os.path.join(conf["e2e.out"], f"hot-{ctx['taskid']}")
        self.marked = False

    def process(self, tup):
        if not self.marked and tup.values[1] == "hot":
            with open(self.marker, "w") as fh:
                fh.write(str(os.getpid()))
            self.marked = True
        super().process(tup)


class FlakyWords(SlowWords):
    """Fast (``e2e.delay``), but the instance of index ``e2e.flaky_index`` of this
    component turns slow (``e2e.flaky_delay`` per tuple) after ``e2e.flaky_after``
    tuples, until its process is restarted: its first process writes ``flaky-<task>``
    (its pid), and a later process of the same task, finding it, stays fast."""

    def initialize(self, conf, ctx):
        super().initialize(conf, ctx)
        task = int(ctx["taskid"])
        component = ctx["task->component"][str(task)]
        peers = sorted(int(t) for t, c in ctx["task->component"].items() if c == component)
        self.count = 0
        self.after = None
        if peers.index(task) == int(conf.get("e2e.flaky_index", 0)):
            marker = os.path.join(conf["e2e.out"], f"flaky-{task}")
            if not os.path.exists(marker):
                with open(marker, "w") as fh:
                    fh.write(str(os.getpid()))
                self.after = int(conf.get("e2e.flaky_after", 300))
                self.slow_delay = float(conf.get("e2e.flaky_delay", 0.05))

    def process(self, tup):
        self.count += 1
        if self.after is not None and self.count > self.after:
            self.delay = self.slow_delay
        super().process(tup)


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
