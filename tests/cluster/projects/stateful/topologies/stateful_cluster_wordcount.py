"""The stateful word count of the effectively-once tests (tests/e2e/heron/projects/
stateful, its parts imported from there: every node runs this checkout, whose root is
on the engine's PYTHONPATH), with the counting bolt's updates committed exactly once to
files in a directory every node mounts (``heron.connectors.file.sink.dir``), so the
counts can be read after containers moved between nodes."""

from compat.storm_api import Grouping, Topology
from tests.e2e.heron.projects.stateful.src.e2e_stateful_parts import (
    CountBolt,
    CountFiles,
    SentenceSpout,
    SplitBolt,
)


class StatefulClusterWordcount(Topology):
    config = {"topology.reliability.mode": "EFFECTIVELY_ONCE",
              "topology.stateful.checkpoint.interval.seconds": 1}
    sentences = SentenceSpout.spec(par=1)
    split = SplitBolt.spec(inputs=[sentences], par=2)
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
    files = CountFiles.spec(inputs={count: Grouping.fields("word")}, par=2)
