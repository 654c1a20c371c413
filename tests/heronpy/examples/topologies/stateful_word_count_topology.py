'''Example StatefulWordCountTopology, as Heron's: EFFECTIVELY_ONCE with stateful components.'''
import sys

from heron_examples.bolt import StatefulCountBolt
from heron_examples.spout import StatefulWordSpout

import heronpy.api.api_constants as constants
from heronpy.api.stream import Grouping
from heronpy.api.topology import TopologyBuilder

if __name__ == '__main__':
  if len(sys.argv) != 2:
    print("Topology's name is not specified")
    sys.exit(1)

  builder = TopologyBuilder(name=sys.argv[1])

  word_spout = builder.add_spout("word_spout", StatefulWordSpout, par=1)
  count_bolt = builder.add_bolt("count_bolt", StatefulCountBolt, par=2,
                                inputs={word_spout: Grouping.fields('word')},
                                config={constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS: 10})

  topology_config = {constants.TOPOLOGY_RELIABILITY_MODE:
                         constants.TopologyReliabilityMode.EFFECTIVELY_ONCE,
                     constants.TOPOLOGY_STATEFUL_CHECKPOINT_INTERVAL_SECONDS: 1}
  builder.set_config(topology_config)

  builder.build_and_submit()
