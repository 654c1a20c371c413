"""StreamAggregateBolt: counts tuples per input stream and emits each new count."""

from collections import Counter

from heronpy.api.bolt.bolt import Bolt


class StreamAggregateBolt(Bolt):
    outputs = ['stream', 'count']

    def initialize(self, config, context):
        self.stream_counter = Counter()
        self.sources = context.get_this_sources()

    def process(self, tup):
        self.stream_counter[tup.stream] += 1
        self.emit([tup.stream, self.stream_counter[tup.stream]])

    def process_tick(self, tup):
        self.log(f"Current stream counter: {self.stream_counter}")
