'''Example WordCountTopology, as Heron's examples/src/python/word_count_topology.py.'''
import sys

from heron_examples.bolt import CountBolt
from heron_examples.spout import WordSpout

import heronpy.api.api_constants as constants
from heronpy.api.stream import Grouping
from heronpy.api.topology import TopologyBuilder

if __name__ == '__main__':
  if len(sys.argv) != 2:
    print("Topology's name is not specified")
    sys.exit(1)

  builder = TopologyBuilder(name=sys.argv[1])

  word_spout = builder.add_spout("word_spout", WordSpout, par=2)
  count_bolt = builder.add_bolt("count_bolt", CountBolt, par=2,
                                inputs={word_spout: Grouping.fields('word')},
                                config={constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS: 10})

  topology_config = {constants.TOPOLOGY_RELIABILITY_MODE:
                     constants.TopologyReliabilityMode.ATLEAST_ONCE,
                     constants.TOPOLOGY_AUTO_TASK_HOOKS:
                     ["heron_examples.misc.test_task_hook.TestTaskHook"]}
  builder.set_config(topology_config)

  builder.build_and_submit()
