"""MultiStreamSpout: words on 'default', and an error message every 10th word on 'error'."""

from heronpy.api.spout.spout import Spout
from heronpy.api.stream import Stream

WORDS = ["hello", "bye", "good", "bad", "heron", "storm"]
TOTAL = 300


class MultiStreamSpout(Spout):
    outputs = ['word', Stream(fields=['error_msg'], name='error')]

    def initialize(self, config, context):
        self.emit_count = 0

    def next_tuple(self):
        if self.emit_count >= TOTAL:
            return
        self.emit([WORDS[self.emit_count % len(WORDS)]])
        self.emit_count += 1
        if self.emit_count % 10 == 0:
            self.emit(["test error message"], stream='error')
