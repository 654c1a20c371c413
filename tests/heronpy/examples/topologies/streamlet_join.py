'''Example of the join operator, in the shape of Heron's
examples/src/python/join_streamlet_topology.py.'''
import sys

from heronpy.connectors.mock.arraylooper import ArrayLooper
from heronpy.streamlet.builder import Builder
from heronpy.streamlet.config import Config
from heronpy.streamlet.runner import Runner
from heronpy.streamlet.windowconfig import WindowConfig

if __name__ == '__main__':
  if len(sys.argv) != 2:
    print("Topology's name is not specified")
    sys.exit(1)

  builder = Builder()

  source_1 = builder.new_source(ArrayLooper([["key1", "a"], ["key1", "b"]], sleep=1))

  source_2 = builder.new_source(ArrayLooper([["key1", "c"], ["key1", "d"]], sleep=1))

  source_1.join(source_2, WindowConfig.create_sliding_window(2, 1), lambda x, y: x + y).log()

  runner = Runner()
  config = Config()
  runner.run(sys.argv[1], config, builder)
