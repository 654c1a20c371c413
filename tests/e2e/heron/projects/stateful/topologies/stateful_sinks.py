"""The stateful word count from files (the shipped file spout) with its counts written
exactly once to files and to Redis (the shipped sinks)."""

from e2e_stateful_parts import CountBolt, CountFiles, CountList, PacedFileSpout, SplitBolt

from compat.storm_api import Grouping, Topology


class StatefulSinks(Topology):
    config = {"topology.workers": 2, "topology.reliability.mode": "EFFECTIVELY_ONCE",
              "topology.stateful.checkpoint.interval.seconds": 1}
    sentences = PacedFileSpout.spec(par=2, config={"heron.connectors.file.batch.lines": 5})
    split = SplitBolt.spec(inputs=[sentences], par=2)
    count = CountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
    files = CountFiles.spec(inputs={count: Grouping.fields("word")}, par=2)
    redis = CountList.spec(inputs=[count], par=1)
