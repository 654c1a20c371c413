"""The example's own bolts: streamparse bolts between Kafka in and Kafka out."""

from streamparse import Bolt

from compat.storm_api import StatefulComponent


class SplitBolt(Bolt):
    """One tuple per word of a Kafka record's value (a line of text)."""

    outputs = ["word"]

    def process(self, tup):
        for word in (tup.values[4] or "").split():  # (topic, partition, offset, key, value)
            self.emit([word])


class WordCountBolt(StatefulComponent, Bolt):
    """Emits each word with its running count.

    Under ``EFFECTIVELY_ONCE`` the counts live in keyed state and move with their words
    through a restore or a rescale; in the other modes the state is this task's memory,
    as a Storm bolt's would be.
    """

    outputs = ["word", "count"]

    def init_state(self, stateful_state):
        self.counts = stateful_state.keyed()

    def process(self, tup):
        word = tup.values[0]
        count = self.counts.get(word, 0) + 1
        self.counts[word] = count
        self.emit([word, count])
