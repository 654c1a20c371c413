"""StatefulCountBolt: counts words in its state (restored on recovery) and emits counts."""

from collections import Counter

from heronpy.api.bolt.bolt import Bolt
from heronpy.api.state.stateful_component import StatefulComponent


class StatefulCountBolt(Bolt, StatefulComponent):
    outputs = ['word', 'count']

    def init_state(self, stateful_state):
        self.recovered_state = stateful_state

    def pre_save(self, checkpoint_id):
        for (k, v) in list(self.counter.items()):
            self.recovered_state.put(k, v)

    def initialize(self, config, context):
        self.counter = Counter({k: v for k, v in self.recovered_state.items()})

    def process(self, tup):
        word = tup.values[0]
        self.counter[word] += 1
        self.emit([word, self.counter[word]])
        self.ack(tup)

    def process_tick(self, tup):
        pass
