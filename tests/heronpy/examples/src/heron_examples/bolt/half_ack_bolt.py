"""HalfAckBolt: acks the odd-numbered tuples it receives and fails the even ones."""

from heronpy.api.bolt.bolt import Bolt


class HalfAckBolt(Bolt):
    def initialize(self, config, context):
        self.total = 0

    def process(self, tup):
        self.total += 1
        if self.total % 2 == 0:
            self.fail(tup)
        else:
            self.ack(tup)

    def process_tick(self, tup):
        self.log(f"Total received: {self.total}")
