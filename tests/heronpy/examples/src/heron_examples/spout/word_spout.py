"""WordSpout: emits ROUNDS rounds of WORDS, every tuple with the same tup_id (as Heron's
example does), and reports each ack and fail it sees on its 'ackfail' stream."""

from heronpy.api.spout.spout import Spout
from heronpy.api.stream import Stream

WORDS = ["hello", "bye", "good", "bad", "heron", "storm"]
ROUNDS = 50


class WordSpout(Spout):
    outputs = ['word', Stream(fields=['kind', 'tup_id'], name='ackfail')]

    def initialize(self, config, context):
        self.logger.info("In initialize() of WordSpout")
        self.words = [w for _ in range(ROUNDS) for w in WORDS]
        self.emit_count = 0
        self.ack_count = 0
        self.fail_count = 0

    def next_tuple(self):
        if self.emit_count >= len(self.words):
            return
        word = self.words[self.emit_count]
        self.emit([word], tup_id='message id')
        self.emit_count += 1

    def ack(self, tup_id):
        self.ack_count += 1
        self.emit(['ack', tup_id], stream='ackfail')

    def fail(self, tup_id):
        self.fail_count += 1
        self.emit(['fail', tup_id], stream='ackfail')
