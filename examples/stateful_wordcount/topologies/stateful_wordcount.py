"""A running sum per word, effectively once, written the streamparse way.

The topology file keeps ``from streamparse import ...`` and places the shipped
connectors of ``compat.connectors`` next to streamparse bolts:

    FileSpout (data/corpus.txt, line by line)
      -> SplitBolt (a streamparse Bolt: one tuple per word)
      -> WordCountBolt (a streamparse Bolt mixing StatefulComponent: keyed state,
         fields-grouped by word)
      -> FileSink (each (word, running count) once, committed with the checkpoint)

config.json turns on EFFECTIVELY_ONCE and names the sink's directory. Run it until the
text is read to the end:

    heron run examples/stateful_wordcount --time 0

The committed output is the ``part-*.jsonl`` files in the sink directory
(``compat.connectors.read_committed``); its largest count per word is the word's count
in the text. Another text: ``-o heron.connectors.file.path=PATH_OR_GLOB``.
"""

from pathlib import Path

from bolts.words import SplitBolt, WordCountBolt
from streamparse import Grouping, Topology

from compat.connectors import FileSink, FileSpout

CORPUS = Path(__file__).resolve().parent.parent / "data" / "corpus.txt"


class StatefulWordCount(Topology):
    # the topology's config, so a run's -o heron.connectors.file.path=... wins over it
    config = {"heron.connectors.file.path": str(CORPUS)}

    lines = FileSpout.spec()
    split = SplitBolt.spec(inputs=[lines])
    count = WordCountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
    sink = FileSink.spec(inputs={count: Grouping.fields("word")}, par=2)
