'''StatefulWordCount for long runs: the paced stateful spout, Heron's stateful counting
bolt over 2 tasks (fields grouping), EFFECTIVELY_ONCE with a checkpoint every second.'''

from heron_examples.bolt import StatefulCountBolt
from heron_examples.bolt.count_log_bolt import CountLogBolt
from heron_examples.spout.paced_word_spout import PacedStatefulWordSpout

import heronpy.api.api_constants as constants
from heronpy.api.stream import Grouping
from heronpy.api.topology import Topology


class StatefulPaced(Topology):
  config = {constants.TOPOLOGY_RELIABILITY_MODE:
                constants.TopologyReliabilityMode.EFFECTIVELY_ONCE,
            constants.TOPOLOGY_STATEFUL_CHECKPOINT_INTERVAL_SECONDS: 1}
  word_spout = PacedStatefulWordSpout.spec(par=1)
  count_bolt = StatefulCountBolt.spec(par=2, inputs={word_spout: Grouping.fields('word')})
  count_log = CountLogBolt.spec(par=1, inputs={count_bolt: Grouping.SHUFFLE})
