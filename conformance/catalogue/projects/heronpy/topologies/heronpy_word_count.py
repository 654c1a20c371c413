'''heronpy word count, at least once, as Heron's Python examples build a topology.'''
import sys

import heronpy.api.api_constants as constants
from heronpy.api.topology import TopologyBuilder
from heronpy.api.stream import Grouping

from catalogue_heronpy import CountWords, SentenceSpout, SplitSentence

if __name__ == '__main__':
  if len(sys.argv) != 2:
    print("Topology's name is not specified")
    sys.exit(1)

  builder = TopologyBuilder(name=sys.argv[1])

  sentences = builder.add_spout("sentences", SentenceSpout, par=1)
  split = builder.add_bolt("split", SplitSentence, par=2,
                           inputs={sentences: Grouping.fields('sid')})
  count = builder.add_bolt("count", CountWords, par=2,
                           inputs={split: Grouping.fields('word')})

  builder.set_config({constants.TOPOLOGY_RELIABILITY_MODE:
                      constants.TopologyReliabilityMode.ATLEAST_ONCE})

  builder.build_and_submit()
