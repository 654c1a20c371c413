"""StatefulWordSpout: emits ROUNDS rounds of WORDS; its position is in its state, so a
rollback replays exactly what the restored checkpoint had not seen."""

from heronpy.api.spout.spout import Spout
from heronpy.api.state.stateful_component import StatefulComponent

WORDS = ["hello", "bye", "good", "bad", "heron", "storm"]
ROUNDS = 40


class StatefulWordSpout(Spout, StatefulComponent):
    outputs = ['word']

    def init_state(self, stateful_state):
        self.recovered_state = stateful_state

    def pre_save(self, checkpoint_id):
        self.recovered_state.put('position', self.position)

    def initialize(self, config, context):
        self.position = self.recovered_state.get('position') or 0
        self.total = ROUNDS * len(WORDS)

    def next_tuple(self):
        if self.position >= self.total:
            return
        self.emit([WORDS[self.position % len(WORDS)]], tup_id='message id')
        self.position += 1
