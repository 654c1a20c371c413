"""Two containers; the spout waits for the file ``e2e.gate`` before it emits."""

from e2e_heron_faulty import KeyCount, Numbers

from compat.storm_api import Grouping, Topology


class Gated(Topology):
    config = {"topology.workers": 2, "topology.acker.executors": 0}
    numbers = Numbers.spec()
    key_count = KeyCount.spec(inputs={numbers: Grouping.fields("key")}, par=2)
