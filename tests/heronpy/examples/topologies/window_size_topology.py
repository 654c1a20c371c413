'''Example WindowSizeTopology, as Heron's, with a tumbling window beside the sliding one.'''
import sys

from heron_examples.bolt import TumblingSizeBolt, WindowSizeBolt
from heron_examples.spout import WordSpout

import heronpy.api.api_constants as constants
from heronpy.api.bolt.window_bolt import SlidingWindowBolt, TumblingWindowBolt
from heronpy.api.stream import Grouping
from heronpy.api.topology import TopologyBuilder

if __name__ == '__main__':
  if len(sys.argv) != 2:
    print("Topology's name is not specified")
    sys.exit(1)

  builder = TopologyBuilder(name=sys.argv[1])

  word_spout = builder.add_spout("word_spout", WordSpout, par=1)
  builder.add_bolt("sliding_bolt", WindowSizeBolt, par=1,
                   inputs={word_spout: Grouping.SHUFFLE},
                   config={SlidingWindowBolt.WINDOW_DURATION_SECS: 2,
                           SlidingWindowBolt.WINDOW_SLIDEINTERVAL_SECS: 1})
  builder.add_bolt("tumbling_bolt", TumblingSizeBolt, par=1,
                   inputs={word_spout: Grouping.SHUFFLE},
                   config={TumblingWindowBolt.WINDOW_DURATION_SECS: 1})

  topology_config = {constants.TOPOLOGY_RELIABILITY_MODE:
                         constants.TopologyReliabilityMode.ATLEAST_ONCE}
  builder.set_config(topology_config)

  builder.build_and_submit()
