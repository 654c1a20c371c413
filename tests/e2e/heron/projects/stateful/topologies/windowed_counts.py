"""A windowed count, effectively-once, over two containers: the records' keys are counted
in a bolt's state and flushed downstream on each tick tuple (every 0.2 s), into a
two-phase-commit file sink (tests/e2e/heron/test_windowed_bolt_recovery.py)."""

from e2e_stateful_parts import CountFiles
from issue38_parts import RecordSpout, WindowCountBolt

from compat.storm_api import Grouping, Topology


class WindowedCounts(Topology):
    config = {"topology.workers": 2, "topology.reliability.mode": "EFFECTIVELY_ONCE",
              "topology.stateful.checkpoint.interval.seconds": 0.5}
    records = RecordSpout.spec(par=2)
    window = WindowCountBolt.spec(inputs={records: Grouping.fields("key")}, par=2,
                                  config={"topology.tick.tuple.freq.secs": 0.2})
    files = CountFiles.spec(inputs=[window], par=2)
