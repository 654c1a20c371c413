'''Two custom groupings: an object (by word length) and a class path (long words to
every task); each bolt says which of its tasks got each word.'''

from heron_examples.bolt.task_recorder_bolt import TaskRecorderBolt
from heron_examples.spout import WordSpout

from heronpy.api.custom_grouping import ICustomGrouping
from heronpy.api.stream import Grouping
from heronpy.api.topology import Topology


class ByLength(ICustomGrouping):
  def prepare(self, context, component, stream, target_tasks):
    self.target_tasks = sorted(target_tasks)

  def choose_tasks(self, values):
    return [self.target_tasks[len(values[0]) % len(self.target_tasks)]]


class CustomGroupingChoices(Topology):
  word_spout = WordSpout.spec(par=1)
  by_length = TaskRecorderBolt.spec(par=3, inputs={word_spout: Grouping.custom(ByLength())})
  long_words = TaskRecorderBolt.spec(
      par=3, inputs={word_spout: Grouping.custom(
          'heron_examples.misc.groupings.LongWordsToEveryTask')})
