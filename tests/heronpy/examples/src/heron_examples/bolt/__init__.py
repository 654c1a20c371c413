"""Example bolts."""
from heron_examples.bolt.count_bolt import CountBolt
from heron_examples.bolt.half_ack_bolt import HalfAckBolt
from heron_examples.bolt.stateful_count_bolt import StatefulCountBolt
from heron_examples.bolt.stream_aggregate_bolt import StreamAggregateBolt
from heron_examples.bolt.window_size_bolt import TumblingSizeBolt, WindowSizeBolt

__all__ = ["CountBolt", "HalfAckBolt", "StatefulCountBolt", "StreamAggregateBolt",
           "TumblingSizeBolt", "WindowSizeBolt"]
