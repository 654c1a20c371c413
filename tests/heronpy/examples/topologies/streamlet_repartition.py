'''Repartition by a function: each number to partition n % 3, and every number to both
partitions of another stage (a function returning a list).'''
import sys

from heronpy.streamlet.builder import Builder
from heronpy.streamlet.config import Config
from heronpy.streamlet.generator import Generator
from heronpy.streamlet.runner import Runner

NUMBERS = list(range(1, 31))


class ListSource(Generator):
  '''Each item once, then nothing.'''

  def __init__(self, items):
    self._items = list(items)

  def setup(self, context):
    self._next = iter(self._items)

  def get(self):
    return next(self._next, None)


if __name__ == '__main__':
  builder = Builder()
  numbers = builder.new_source(ListSource(NUMBERS)).set_name("numbers")
  numbers.repartition(3, lambda n, count: n % count).set_name("by_residue")
  numbers.repartition(2, lambda n, count: list(range(count))).set_name("to_every_partition")
  Runner().run(sys.argv[1], Config(), builder)
