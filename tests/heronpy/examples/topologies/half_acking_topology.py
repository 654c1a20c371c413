'''Example HalfAckingTopology, as Heron's: half of the tuples are failed.'''
import sys

from heron_examples.bolt import HalfAckBolt
from heron_examples.spout import WordSpout

import heronpy.api.api_constants as constants
from heronpy.api.stream import Grouping
from heronpy.api.topology import TopologyBuilder

if __name__ == '__main__':
  if len(sys.argv) != 2:
    print("Topology's name is not specified")
    sys.exit(1)

  builder = TopologyBuilder(name=sys.argv[1])

  word_spout = builder.add_spout("word_spout", WordSpout, par=1)
  half_ack_bolt = builder.add_bolt("half_ack_bolt", HalfAckBolt, par=1,
                                   inputs={word_spout: Grouping.fields('word')},
                                   config={constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS: 10})

  topology_config = {constants.TOPOLOGY_RELIABILITY_MODE:
                     constants.TopologyReliabilityMode.ATLEAST_ONCE,
                     constants.TOPOLOGY_MAX_SPOUT_PENDING: 100000000,
                     constants.TOPOLOGY_MESSAGE_TIMEOUT_SECS: 300}

  builder.set_config(topology_config)

  builder.build_and_submit()
