'''Example MultiStreamTopology, as Heron's: a Topology class with two streams.'''

from heron_examples.bolt import CountBolt, StreamAggregateBolt
from heron_examples.spout import MultiStreamSpout

import heronpy.api.api_constants as constants
from heronpy.api.stream import Grouping
from heronpy.api.topology import Topology


class MultiStream(Topology):
  spout = MultiStreamSpout.spec(par=2)
  count_bolt = CountBolt.spec(par=2,
                              inputs={spout: Grouping.fields('word')},
                              config={constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS: 10})
  stream_aggregator = StreamAggregateBolt.spec(par=1,
                                               inputs={spout: Grouping.ALL,
                                                       spout['error']: Grouping.ALL},
                                               config={constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS: 15})
