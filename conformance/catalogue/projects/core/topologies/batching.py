"""A BatchingBolt flushed by tick tuples (every 0.2 s): per key, the batch totals add
up to the key's total whatever the batches were. The spout lingers a second after its
last row, so the last batches are flushed before it reports exhaustion."""

from compat.storm_api import Grouping, Topology

from catalogue_core import FixtureSpout, KeyTotals


class Batching(Topology):
    config = {"topology.acker.executors": 0, "conformance.linger.secs": 1.0}

    numbers = FixtureSpout.spec()
    totals = KeyTotals.spec(inputs={numbers: Grouping.fields("key")}, par=2,
                            config={"topology.tick.tuple.freq.secs": 0.2})
