"""The keyed word count into both shipped two-phase-commit sinks, for the crash-point
matrix (tests/e2e/heron/test_crash_points.py): counts in keyed state (so `heron update`
moves key groups), every running count committed to files and to a Redis list."""

from e2e_stateful_parts import CountFiles, CountList, KeyedCountBolt, SentenceSpout, SplitBolt

from compat.storm_api import Grouping, Topology


class CrashMatrix(Topology):
    config = {"topology.workers": 2, "topology.reliability.mode": "EFFECTIVELY_ONCE",
              "topology.stateful.checkpoint.interval.seconds": 0.5}
    sentences = SentenceSpout.spec(par=2)
    split = SplitBolt.spec(inputs=[sentences], par=2)
    count = KeyedCountBolt.spec(inputs={split: Grouping.fields("word")}, par=2)
    files = CountFiles.spec(inputs={count: Grouping.fields("word")}, par=2)
    redis = CountList.spec(inputs=[count], par=1)
