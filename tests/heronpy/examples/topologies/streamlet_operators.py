'''Streamlet operators on bounded sources, each ending in a stage nobody consumes (so the
run's capture holds its output): tests/heronpy/streamlet/ computes the same pipelines in
plain Python from the data below and compares.'''
import os
import sys
from pathlib import Path

from heronpy.connectors.textfiles.textfilesgenerator import TextFileGenerator
from heronpy.streamlet.builder import Builder
from heronpy.streamlet.config import Config
from heronpy.streamlet.generator import Generator
from heronpy.streamlet.runner import Runner
from heronpy.streamlet.transformoperator import TransformOperator
from heronpy.streamlet.windowconfig import WindowConfig

TEXT_FILES = str(Path(__file__).resolve().parents[2] / "streamlet" / "data" / "text*.txt")
NUMBERS = list(range(1, 61))
NAMES = [[0, "zero"], [1, "one"], [2, "two"], [2, "deux"], [4, "four"], [7, "seven"]]
#: a window longer than any run: nothing leaves it, so its last firing joins everything
WHOLE_RUN = WindowConfig.create_sliding_window(600, 1)
#: a file every element of the consume stage is appended to (set by the test)
CONSUME_FILE = os.environ.get("STREAMLET_CONSUME_FILE")


class ListSource(Generator):
  '''Each item once, then nothing (a bounded source; defined in __main__ on purpose).'''

  def __init__(self, items):
    self._items = list(items)

  def setup(self, context):
    self._next = iter(self._items)

  def get(self):
    return next(self._next, None)


class EvenPlusOne(TransformOperator):
  '''Emits (n, n + 1) for each even n, through the context.'''

  def setup(self, context):
    self._context = context

  def transform(self, tup):
    if tup.values[0] % 2 == 0:
      self._context.emit((tup.values[0], tup.values[0] + 1))


def append_line(value):
  with open(CONSUME_FILE, "a", encoding="utf8") as out:
    out.write(f"{value}\n")


if __name__ == '__main__':
  builder = Builder()

  lines = builder.new_source(TextFileGenerator(TEXT_FILES)).set_name("lines").set_num_partitions(2)
  words = lines.flat_map(lambda line: line.split()).set_name("words").set_num_partitions(1)
  long_words = words.filter(lambda word: len(word) > 3).set_name("long_words")
  long_words.map(lambda word: (word.lower(), 1)) \
      .reduce_by_key_and_window(WindowConfig.create_tumbling_window(1), lambda x, y: x + y) \
      .set_num_partitions(2) \
      .map(lambda kv: [kv[0].key, kv[1]]).set_name("word_counts").set_num_partitions(1)

  numbers = builder.new_source(ListSource(NUMBERS)).set_name("numbers")
  words.map(len).union(numbers).set_name("lengths_and_numbers")
  numbers.repartition(3).set_name("spread")
  numbers.repartition(3, lambda n, count: n % count).set_name("by_residue_3")
  numbers.repartition(2, lambda n, count: list(range(count))).set_name("to_every_partition")
  for index, clone in enumerate(numbers.clone(2)):
    clone.map(lambda n: -n).set_name(f"negated_{index}")
  numbers.transform(EvenPlusOne()).set_name("even_plus_one")
  numbers.reduce_by_window(WindowConfig.create_tumbling_window(1), lambda x, y: x + y) \
      .map(lambda window_sum: window_sum[1]).set_name("window_sums")

  by_residue = numbers.map(lambda n: (n % 5, n)).set_name("by_residue").set_num_partitions(2)
  names = builder.new_source(ListSource(NAMES)).set_name("names")
  by_residue.join(names, WHOLE_RUN, lambda n, name: f"{n}:{name}").set_name("inner") \
      .map(lambda kv: [kv[0].key, kv[0].window.end_time, kv[1]]).set_name("inner_joined") \
      .set_num_partitions(1)
  by_residue.outer_join(names, WHOLE_RUN, lambda n, name: f"{n}:{name}").set_name("outer") \
      .set_num_partitions(1) \
      .map(lambda kv: [kv[0].key, kv[0].window.end_time, kv[1]]).set_name("outer_joined")
  by_residue.outer_left_join(names, WHOLE_RUN, lambda n, name: f"{n}:{name}") \
      .set_num_partitions(1) \
      .map(lambda kv: [kv[0].key, kv[0].window.end_time, kv[1]]).set_name("left_joined")

  long_words.log()
  if CONSUME_FILE:
    words.consume(append_line)

  config = Config()
  config.set_delivery_semantics(Config.ATLEAST_ONCE)
  Runner().run(sys.argv[1], config, builder)
