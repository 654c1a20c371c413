"""The bolts of the Kafka end-to-end topologies (tests/e2e/kafka)."""

import time

from streamparse import Bolt

from compat.storm_api import StatefulComponent


class SplitBolt(Bolt):
    """One tuple per word of a record's value."""

    outputs = ["word"]

    def process(self, tup):
        for word in (tup.values[4] or "").split():  # (topic, partition, offset, key, value)
            self.emit([word])


class WordCountBolt(StatefulComponent, Bolt):
    """A running count per word in keyed state; emits (word, count) after each word."""

    outputs = ["word", "count"]

    def init_state(self, stateful_state):
        self.counts = stateful_state.keyed()

    def process(self, tup):
        word = tup.values[0]
        count = self.counts.get(word, 0) + 1
        self.counts[word] = count
        self.emit([word, count])


class RelayBolt(Bolt):
    """Passes each record on as (key: "partition:offset", message: value), anchored, so
    the sink's ack or fail reaches the spout; fails every 97th offset the first time it
    sees it, so the spout must retry it before its offset may be committed."""

    outputs = ["key", "message"]
    auto_ack = False
    auto_fail = False

    def initialize(self, conf, ctx):
        self.failed_once = set()
        self.pause = float(conf.get("e2e.relay_ms", 0)) / 1000  # a slower relay

    def process(self, tup):
        if self.pause:
            time.sleep(self.pause)
        self.relay(tup)

    def relay(self, tup):
        _topic, partition, offset, _key, value = tup.values
        ident = f"{partition}:{offset}"
        if offset % 97 == 0 and ident not in self.failed_once:
            self.failed_once.add(ident)
            self.fail(tup)
            return
        self.emit([ident, value], anchors=[tup])
        self.ack(tup)
