"""Window bolts that emit the size of every window they close."""

from heronpy.api.bolt.window_bolt import SlidingWindowBolt, TumblingWindowBolt


class WindowSizeBolt(SlidingWindowBolt):
    outputs = ['size']

    def initialize(self, config, context):
        super().initialize(config, context)
        self.numerator = 0.0
        self.denominator = 0.0

    def processWindow(self, window_info, tuples):
        self.numerator += len(tuples)
        self.denominator += 1
        self.emit([len(tuples)])


class TumblingSizeBolt(TumblingWindowBolt):
    outputs = ['size']

    def processWindow(self, window_info, tuples):
        self.emit([len(tuples)])
