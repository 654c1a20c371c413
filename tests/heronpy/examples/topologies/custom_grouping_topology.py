'''Example CustomGroupingTopology, as Heron's: every word reaches the bolt's lowest task.'''

from heron_examples.bolt import HalfAckBolt
from heron_examples.spout import WordSpout

import heronpy.api.api_constants as constants
from heronpy.api.custom_grouping import ICustomGrouping
from heronpy.api.stream import Grouping
from heronpy.api.topology import Topology


class SampleCustomGrouping(ICustomGrouping):
  def prepare(self, context, component, stream, target_tasks):
    self.target_tasks = target_tasks

  def choose_tasks(self, values):
    return [self.target_tasks[0]]


class CustomGrouping(Topology):
  word_spout = WordSpout.spec(par=1)
  consume_bolt = HalfAckBolt.spec(par=3,
                                  inputs={word_spout: Grouping.custom(SampleCustomGrouping())},
                                  config={constants.TOPOLOGY_TICK_TUPLE_FREQ_SECS: 10})
