"""The example's own bolts: streamparse bolts, one of them stateful."""

from streamparse import Bolt

from compat.storm_api import StatefulComponent


class SplitBolt(Bolt):
    """One tuple per word of a line."""

    outputs = ["word"]

    def process(self, tup):
        for word in tup.values[0].split():
            self.emit([word])


class WordCountBolt(StatefulComponent, Bolt):
    """Emits each word with its running count; the counts live in keyed state.

    The state is keyed by the fields grouping's key (the word), so each count is restored
    with its word after a failure, at any parallelism, and every word is counted once.
    """

    outputs = ["word", "count"]

    def init_state(self, stateful_state):
        self.counts = stateful_state.keyed()

    def process(self, tup):
        word = tup.values[0]
        count = self.counts.get(word, 0) + 1
        self.counts[word] = count
        self.emit([word, count])
