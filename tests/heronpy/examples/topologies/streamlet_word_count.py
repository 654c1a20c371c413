'''Example WordCountStreamletTopology, in the shape of Heron's
examples/src/python/word_count_streamlet.py.'''
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
  builder.new_source(ArrayLooper(["Mary Had a little lamb", "I Love You"])) \
         .flat_map(lambda line: line.split()) \
         .map(lambda word: (word, 1)) \
         .reduce_by_key_and_window(WindowConfig.create_sliding_window(10, 2), lambda x, y: x + y) \
         .log()

  runner = Runner()
  config = Config()
  runner.run(sys.argv[1], config, builder)
